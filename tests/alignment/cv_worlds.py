"""Stores for the method-choice tests, and their cross-validation worked out with scikit-learn.

A world is a judge's calls (both presentation orders of every trajectory), one annotator's
1..5 labels and optionally rule-check scores, written straight into a store. What
``trajudge align`` must print about it is recomputed here from those inputs alone: the
per-item features with pandas, the dev/holdout split with ``split_of``, the folds with
scikit-learn's ``GroupKFold`` over the dev tasks, each method refitted per fold with
scikit-learn (a brute-force kappa search, ``IsotonicRegression``, ``LogisticRegression``)
and ``cohen_kappa_score`` of the pooled out-of-fold verdicts. None of it calls trajudge's
fitting code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import cohen_kappa_score
from sklearn.model_selection import GroupKFold

from trajudge.evalset import split_of
from trajudge.store import Store
from trajudge.trajectories import Step, Trajectory

RUBRIC = "trajectory_reasonableness"  # 1..5, pass at 4
DATASET = "cv"
JUDGE = "j"
SHARE = 0.5
SALT = "cv"
PASS = 4.0


def world(
    levels: Mapping[str, Sequence[float]],
    scores: Mapping[str, Sequence[tuple[float, float]]],
) -> pd.DataFrame:
    """Items from per-task lists: the label level of each trial and its (ab, ba) scores."""
    rows = []
    for task, lv in levels.items():
        for trial, (level, (ab, ba)) in enumerate(zip(lv, scores[task], strict=True)):
            rows.append({"item": f"{task}-{trial}", "task_id": task, "trial": trial,
                         "level": level, "ab": ab, "ba": ba})  # fmt: skip
    return pd.DataFrame(rows)


def write(store: Store, items: pd.DataFrame, rules: Sequence[str] = ()) -> None:
    """Trajectories, the judge's two calls per trajectory, the labels and the rule checks."""
    trajs = [
        Trajectory(id=r.item, task_id=r.task_id, trial=int(r.trial), input=f"do {r.item}",
                   steps=[Step(tool="t", args={}, output="o")], final_answer="done")
        for r in items.itertuples()
    ]  # fmt: skip
    store.import_dataset(DATASET, trajs)
    calls = []
    for r in items.itertuples():
        for order in ("ab", "ba"):
            score = float(getattr(r, order))
            calls.append({"trajectory_id": r.item, "other_id": None, "judge": JUDGE,
                          "rubric_id": RUBRIC, "rubric_version": "v1", "model": "fake",
                          "mode": "pointwise", "order": order, "sample": 0, "score": score,
                          "verdict": "pass" if score >= PASS else "fail"})  # fmt: skip
    store.add_judgments(DATASET, calls)
    for r in items.itertuples():
        store.save_label(DATASET, r.item, RUBRIC, "ann", float(r.level))
    if rules:
        store.save_rule_results(
            DATASET,
            [
                {"trajectory_id": r.item, "spec_sha256": "s", "gates_passed": True, "score": None,
                 "data": {"results": [{"check": c, "passed": bool(getattr(r, c)),
                                       "score": float(getattr(r, c))} for c in rules]}}
                for r in items.itertuples()
            ],
        )  # fmt: skip


def dev(items: pd.DataFrame) -> pd.DataFrame:
    """The labelled dev items in item order, with the mean score, its spread and the label."""
    out = items.assign(
        score=(items["ab"] + items["ba"]) / 2,
        score_sd=(items["ab"] - items["ba"]).abs() / 2,  # the sd (ddof 0) of two calls
        label=(items["level"] >= PASS).astype(int),
        split=[split_of(t, SHARE, SALT) for t in items["task_id"]],
    )
    return out[out["split"] == "dev"].sort_values("item").reset_index(drop=True)


def _kappa_cut(s: np.ndarray, y: np.ndarray) -> float:
    """The cut ``s >= c`` with the largest kappa on (s, y), the lowest one on a tie."""
    cuts = np.unique(s)
    kappas = [cohen_kappa_score(y, (s >= c).astype(int)) for c in cuts]
    return float(cuts[int(np.nanargmax(kappas))])


def _logistic(x_tr: np.ndarray, y_tr: np.ndarray, x_te: np.ndarray) -> np.ndarray:
    mean, sd = x_tr.mean(axis=0), x_tr.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    lr = LogisticRegression(C=1.0, max_iter=1000).fit((x_tr - mean) / sd, y_tr)
    return lr.predict_proba((x_te - mean) / sd)[:, 1]


def cross_validated(d: pd.DataFrame, stack_columns: Sequence[str] = ()) -> dict[str, float]:
    """The judge's kappa and each method's pooled out-of-fold kappa over GroupKFold(5)."""
    y = d["label"].to_numpy()
    s = d["score"].to_numpy(float)
    oof = {m: np.zeros(len(d), dtype=int) for m in ("threshold", "calibrate", "stack")}
    x = d[["score", "score_sd", *stack_columns]].to_numpy(float)
    for train, test in GroupKFold(n_splits=5).split(s, y, groups=d["task_id"]):
        oof["threshold"][test] = s[test] >= _kappa_cut(s[train], y[train])
        iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(s[train], y[train])
        oof["calibrate"][test] = iso.predict(s[test]) >= 0.5
        oof["stack"][test] = _logistic(x[train], y[train], x[test]) >= 0.5
    out = {"judge": float(cohen_kappa_score(y, (s >= PASS).astype(int)))}
    out.update({m: float(cohen_kappa_score(y, v)) for m, v in oof.items()})
    return out


def clean(seed: int = 0, rules: Sequence[str] = ()) -> pd.DataFrame:
    """A clean judge: both calls give the trajectory's true level; the annotator is off by one
    level on about one trajectory in ten; passes are rare (a fifth). ``rules``: noise checks,
    each passed at random, that tell nothing about the label."""
    rng = np.random.default_rng(seed)
    levels, scores = {}, {}
    for t in range(16):
        true = rng.choice([1, 2, 3, 4, 5], size=3, p=[0.3, 0.25, 0.25, 0.1, 0.1]).astype(float)
        off = np.where(rng.random(3) < 0.1, rng.choice([-1, 1], size=3), 0)
        levels[f"t{t:02d}"] = list(np.clip(true + off, 1, 5))
        scores[f"t{t:02d}"] = [(v, v) for v in true]
    items = world(levels, scores)
    for c in rules:
        items[c] = (rng.random(len(items)) < 0.5) * 1.0
    return items


def lenient(seed: int = 4) -> pd.DataFrame:
    """A lenient judge: each call scores the label level plus one, with noise (sd 0.6)."""
    rng = np.random.default_rng(seed)
    levels, scores = {}, {}
    for t in range(16):
        lv = rng.choice([1, 2, 3, 4, 5], size=3).astype(float)
        calls = np.clip(np.round(lv[:, None] + 1 + rng.normal(0, 0.6, (3, 2))), 1, 5)
        levels[f"t{t:02d}"] = list(lv)
        scores[f"t{t:02d}"] = [(float(a), float(b)) for a, b in calls]
    return world(levels, scores)


def rarely_passing() -> pd.DataFrame:
    """A judge whose top score passes only two trajectories in five: every task has a run
    scored 2 (level 1), one scored 3 (level 2) and one scored 5, a pass (level 5) in tasks
    0 and 1 of every five, else a fail (level 3). No score has a pass rate of one half, so a
    calibrated probability of pass never reaches 0.5."""
    levels = {f"t{t:02d}": [1.0, 2.0, 5.0 if t % 5 < 2 else 3.0] for t in range(20)}
    scores = {t: [(2.0, 2.0), (3.0, 3.0), (5.0, 5.0)] for t in levels}
    return world(levels, scores)


def inverted() -> pd.DataFrame:
    """A judge that scores 6 - level: the higher its score, the worse the trajectory."""
    levels = {f"t{t:02d}": [1.0, 2.0, 4.0 if t % 3 else 5.0] for t in range(20)}
    scores = {t: [(6.0 - v, 6.0 - v) for v in lv] for t, lv in levels.items()}
    return world(levels, scores)


def drifting() -> pd.DataFrame:
    """A judge lenient on the dev tasks only: there it scores fails (level 3) a 4, so dev
    moves the cut to 5; on the holdout tasks it is exact, and a cut at 5 fails every level-4
    pass there."""
    levels, scores = {}, {}
    for t in range(60):  # holdout tasks enough for its loss to show through the intervals
        task = f"t{t:02d}"
        on_dev = split_of(task, SHARE, SALT) == "dev"
        lv = [2.0, 3.0, 5.0] if on_dev else [2.0, 4.0, 5.0]
        levels[task] = lv
        scores[task] = [(v + 1.0, v + 1.0) if on_dev and v < 5 else (v, v) for v in lv]
    return world(levels, scores)
