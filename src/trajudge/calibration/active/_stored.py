"""The active design of a stored dataset, and its estimates from the stored labels.

:func:`stored_design` builds the design of ``--strategy active`` from the judgments (each
item's uncertainty, :func:`judge_uncertainty` over every judge's samples and orders of the
rubric) and freezes it in the store (``label_draws``, store version 9) the first time; later
calls read it back, so the probability each label was drawn with never changes. The order the
draws walk and each draw's uniform come from BLAKE2b hashes of the item id (independent of
the labels, the same on every machine).

:func:`active_summary` reads the design, the labels and the verdicts: the items considered are
the longest prefix of the order whose drawn items all have a label (a drawn item not labelled
yet, or skipped, or tied between annotators, ends it), and the estimates and the stopping
status of :mod:`._ipw` and :mod:`._stop` are computed on that prefix for each judge.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from trajudge.calibration.active._design import (
    draw,
    fitted_uncertainty,
    judge_uncertainty,
    sampling_probabilities,
)
from trajudge.calibration.active._ipw import active_estimates
from trajudge.calibration.active._passk import active_pass_hat_k
from trajudge.calibration.active._stop import StopRule, stop_status
from trajudge.rubrics import Rubric, find_rubric
from trajudge.store import Store

__all__ = [
    "active_summaries",
    "active_summary",
    "default_learn",
    "finish_learning",
    "item_signals",
    "learning_open",
    "stored_design",
]

DEFAULT_BUDGET = 200
FLOOR_SHARE = 0.3


def _unit_hash(text: str) -> float:
    digest = hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest()
    return (int.from_bytes(digest, "little") >> 11) / float(2**53)


def _rubric_rows(judgments: pd.DataFrame, rubric: Rubric) -> pd.DataFrame:
    j = judgments
    ok = (j["rubric_id"] == rubric.id) & j["error"].isna() & j["score"].notna()
    return j[ok & j["other_id"].isna()].assign(score=lambda f: f["score"].astype(float))


def item_signals(judgments: pd.DataFrame, rubric: Rubric) -> pd.DataFrame:
    """Per judged trajectory of ``rubric``: ``pass_share`` (share of every judge's samples and
    orders that passed), ``flipped`` (a judge's verdict changed with the order), ``spread``
    (score range as a share of the scale), ``margin`` (distance of the mean score from the
    cut, as a share of the half scale) and their ``uncertainty`` (:func:`judge_uncertainty`)."""
    threshold = rubric.scale.pass_threshold
    if threshold is None:
        raise ValueError(f"rubric {rubric.id!r} has no pass threshold")
    span = float(rubric.scale.max - rubric.scale.min) or 1.0
    rows = _rubric_rows(judgments, rubric)
    cols = ["pass_share", "flipped", "spread", "margin", "uncertainty"]
    if rows.empty:
        return pd.DataFrame(columns=cols, index=pd.Index([], name="trajectory_id"))
    rows = rows.assign(passed=(rows["score"] >= threshold).astype(float))
    g = rows.groupby("trajectory_id")
    out = pd.DataFrame({"pass_share": g["passed"].mean()})
    flips = rows.groupby(["trajectory_id", "judge", "sample"])["passed"].nunique() > 1
    out["flipped"] = flips.groupby("trajectory_id").max().astype(float).reindex(out.index)
    out["spread"] = ((g["score"].max() - g["score"].min()) / span).clip(0, 1)
    half = max(threshold - float(rubric.scale.min), float(rubric.scale.max) - threshold) or 1.0
    out["margin"] = ((g["score"].mean() - threshold).abs() / half).clip(0, 1)
    out["uncertainty"] = judge_uncertainty(
        pass_share=out["pass_share"], flipped=out["flipped"], spread=out["spread"],
        margin=out["margin"],
    )  # fmt: skip
    return out[cols]


def default_learn(budget: int) -> int:
    """The learning phase's size when none is given: a quarter of the budget (at least one
    label), so three quarters of the labels are drawn with the fitted probabilities."""
    return max(1, round(budget / 4))


def _hashes(dataset: str, rubric: Rubric, ids: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Each item's position in the draw order and its uniform (hashes of the id)."""
    salt = f"{dataset}\x00{rubric.id}"
    uniforms = np.array([_unit_hash(f"active-draw\x00{salt}\x00{i}") for i in ids])
    order_keys = np.array([_unit_hash(f"active-order\x00{salt}\x00{i}") for i in ids])
    position = np.empty(len(ids), dtype=int)
    position[np.argsort(order_keys, kind="stable")] = np.arange(len(ids))
    return position, uniforms


def _rows(
    ids: list[str], position: np.ndarray, pi: np.ndarray, drawn: np.ndarray
) -> list[dict[str, Any]]:
    return [
        {"trajectory_id": i, "position": int(p), "probability": float(q), "drawn": bool(d)}
        for i, p, q, d in zip(ids, position, pi, drawn, strict=True)
    ]


def stored_design(
    store: Store,
    dataset: str,
    rubric: Rubric,
    *,
    budget: int | None = None,
    learn: int | None = None,
) -> pd.DataFrame:
    """The frozen active design of ``dataset`` under ``rubric`` (built and stored the first
    time): ``trajectory_id, position, probability, drawn, design, phase``, in the order of the
    draws.

    ``budget`` is the expected number of labels (default 200, at most the judged items).
    ``learn`` is the size of the uniform learning phase in labels (default
    :func:`default_learn`: a quarter of the budget; 0: no learning phase, the probabilities
    come from the judges' raw uncertainty at once). With a learning phase, the items are
    walked in the draw order with the uniform probability ``budget / N`` until ``learn`` of
    them are drawn (phase 1); only those rows are stored at first. Once each item drawn in
    it has a label or a skip, the next call (:func:`finish_learning`) fits the judges' error
    rate by uncertainty on their labels (:func:`fitted_uncertainty`) and draws the remaining
    items with probabilities from it, the uniform floor kept (phase 2). Only trajectories a
    judge scored under the rubric are in the design;
    ValueError when none is.
    """
    stored = store.label_draws(dataset, rubric.id)
    if not stored.empty:
        return finish_learning(store, dataset, rubric, stored)
    signals = item_signals(store.judgments_frame(dataset), rubric)
    if signals.empty:
        raise ValueError(
            f"dataset {dataset!r}: no judge scored it under rubric {rubric.id!r}; "
            "--strategy active draws by the judges' uncertainty (run trajudge judge first)"
        )
    ids = [str(i) for i in signals.index]
    n = len(ids)
    b = min(n, DEFAULT_BUDGET if budget is None else budget)
    n_learn = default_learn(b) if learn is None else learn
    if n_learn < 0:
        raise ValueError(f"learn must be at least 0, got {n_learn}")
    position, uniforms = _hashes(dataset, rubric, ids)
    design = {"budget": b, "floor_share": FLOOR_SHARE, "items": n}
    if n_learn == 0:
        pi = sampling_probabilities(
            uncertainty=signals["uncertainty"].to_numpy(float), budget=b, floor_share=FLOOR_SHARE
        )
        drawn = draw(probabilities=pi, uniforms=uniforms)
        text = json.dumps({**design, "method": "active-ipw-v1"}, sort_keys=True)
        store.freeze_draws(dataset, rubric.id, _rows(ids, position, pi, drawn), text)
        return store.label_draws(dataset, rubric.id)
    pi = np.full(n, b / n)
    drawn = draw(probabilities=pi, uniforms=uniforms)
    # phase 1 ends with the learn-th draw in the order (or holds every item): where it ends
    # depends on the uniforms alone, never on a label
    walked = np.argsort(position)
    hits = np.flatnonzero(drawn[walked])
    end = int(hits[n_learn - 1]) + 1 if hits.size >= n_learn else n
    keep = walked[:end]
    # fewer draws in all than the learning phase wants: the whole design is uniform, one part
    whole = end == n
    text = json.dumps(
        {**design, "learn": n_learn, "method": "active-ipw-v2", "phase": None if whole else 1},
        sort_keys=True,
    )
    rows = _rows([ids[k] for k in keep], position[keep], pi[keep], drawn[keep])
    store.freeze_draws(dataset, rubric.id, rows, text, phase=None if whole else 1)
    return finish_learning(store, dataset, rubric, store.label_draws(dataset, rubric.id))


def learning_open(store: Store, dataset: str, rubric: Rubric) -> list[str]:
    """The items drawn in the learning phase that nobody has labelled or skipped yet (empty
    when the design has no learning phase, or none is stored)."""
    learning = store.learning_draws(dataset, rubric.id)
    answered = {k for k, _, _ in store.labels_on_items(dataset, rubric.id, learning)}
    return [i for i in learning if i not in answered]


def finish_learning(
    store: Store, dataset: str, rubric: Rubric, draws: pd.DataFrame
) -> pd.DataFrame:
    """``draws`` with its phase 2 once the learning phase is done (built and stored the
    first time; see :func:`stored_design`); ``draws`` as it is otherwise.

    The fit uses only the labels of items drawn in phase 1, weighted by one over their
    probability: a label given on another item (under another queue, or an item of phase 2
    labelled early) never shapes a probability, so each phase-2 item's probability depends
    on labels of other items only, which keeps the weighted estimates unbiased (Zrnic &
    Candès 2024, §5)."""
    phase = draws["phase"]
    if not (phase == 1).any() or (phase == 2).any():
        return draws
    design = json.loads(str(draws["design"].iloc[0]))
    if len(draws) >= int(design["items"]) or learning_open(store, dataset, rubric):
        return draws
    signals = item_signals(store.judgments_frame(dataset), rubric)
    ids = [str(i) for i in signals.index]
    done = set(draws["trajectory_id"].astype(str))
    rest = [i for i in ids if i not in done]
    if not rest:
        return draws
    learnt = draws[draws["drawn"].astype(bool)].assign(
        label=lambda f: f["trajectory_id"].map(_item_labels(store, dataset, rubric))
    )
    learnt = learnt[learnt["label"].notna() & learnt["trajectory_id"].isin(signals.index)]
    sig = signals.loc[learnt["trajectory_id"]]
    # the verdict as the estimates read it: the mean score (here of every judge) at the cut
    means = _rubric_rows(store.judgments_frame(dataset), rubric).groupby("trajectory_id")["score"]
    threshold = rubric.scale.pass_threshold
    assert threshold is not None
    verdict = (means.mean().loc[sig.index].to_numpy(float) >= threshold).astype(float)
    fitted = fitted_uncertainty(
        uncertainty=signals.loc[rest, "uncertainty"].to_numpy(float),
        labelled_uncertainty=sig["uncertainty"].to_numpy(float),
        labelled_error=(verdict != learnt["label"].to_numpy(float)).astype(float),
        labelled_probability=learnt["probability"].to_numpy(float),
    )
    # the same expected share of the items as phase 1 drew: the budget over the whole
    budget = float(design["budget"]) * len(rest) / float(design["items"])
    pi = sampling_probabilities(uncertainty=fitted, budget=budget, floor_share=FLOOR_SHARE)
    # phase 2 walks its items after phase 1's, in the order of their hashes (items judged
    # since phase 1 was drawn included)
    position, uniforms = _hashes(dataset, rubric, rest)
    pos = position + len(draws)
    drawn = draw(probabilities=pi, uniforms=uniforms)
    text = json.dumps(
        {**design, "phase": 2, "fitted_on": len(learnt), "bins": 4, "prior": 5.0},
        sort_keys=True,
    )
    store.freeze_draws(dataset, rubric.id, _rows(rest, pos, pi, drawn), text, phase=2)
    return store.label_draws(dataset, rubric.id)


def _item_labels(store: Store, dataset: str, rubric: Rubric) -> pd.Series:
    """Per item the people's 0/1 verdict: an adjudication when there is one, else the
    majority of the human labels (a tie is no verdict yet)."""
    threshold = rubric.scale.pass_threshold
    assert threshold is not None
    lab = store.labels_frame(dataset, rubric_id=rubric.id, source="human")
    lab = lab[~lab["skipped"].astype(bool) & lab["value"].notna()]
    if lab.empty:
        return pd.Series(dtype=float)
    lab = lab.assign(passed=(lab["value"].astype(float) >= threshold).astype(float))
    adj = lab[lab["adjudication"].astype(bool)].groupby("trajectory_id")["passed"].last()
    share = lab[~lab["adjudication"].astype(bool)].groupby("trajectory_id")["passed"].mean()
    majority = share[share != 0.5].round()
    out: pd.Series = pd.concat([majority[~majority.index.isin(adj.index)], adj]).astype(float)
    return out


def _excluded(draws: pd.DataFrame, y: pd.Series) -> dict[str, int]:
    """Items with a people's verdict that the weighted estimates leave out, by why: not drawn
    by the design (labelled under another queue, e.g. disagreements first: their labels are
    no probability sample), outside the design (not judged when it was drawn, or after a
    learning phase whose rest is not drawn yet), and drawn but beyond the considered prefix
    (they wait for a drawn item before them)."""
    labelled = set(y.index.astype(str))
    ids = draws["trajectory_id"].astype(str)
    drawn = draws["drawn"].astype(bool)
    beyond = drawn & draws["label"].notna()
    missing = drawn & draws["label"].isna()
    prefix = int(np.argmax(missing.to_numpy())) if missing.any() else len(draws)
    return {
        "not_drawn": len(labelled & set(ids[~drawn])),
        "outside_design": len(labelled - set(ids)),
        "beyond": int(beyond.iloc[prefix:].sum()),
    }


def active_summary(
    store: Store,
    dataset: str,
    rubric: Rubric,
    *,
    rule: StopRule | None = None,
    ks: Sequence[int] = (1, 2, 3, 4),
) -> dict[str, Any] | None:
    """How the labels of ``rubric`` were drawn and what they say, or None without an active
    design: the design, the items considered, and per judge the weighted estimates
    (:func:`active_estimates`; pass^k by task, :func:`active_pass_hat_k`, the items
    considered a random prefix of the judge's items in the design: like every estimate
    here, over the judged runs, a run a rule gate stopped being in no design) and the
    stopping status
    (:func:`stop_status`) under ``rule`` (default κ ≥ 0.6 at 95%); every interval at the
    rule's level."""
    rule = StopRule() if rule is None else rule
    alpha = 1 - rule.level
    draws = store.label_draws(dataset, rubric.id)
    if draws.empty:
        return None
    y = _item_labels(store, dataset, rubric)
    draws = draws.assign(
        drawn=draws["drawn"].astype(bool),
        label=draws["trajectory_id"].map(y).astype(float),
    )
    missing = draws["drawn"] & draws["label"].isna()
    prefix = int(np.argmax(missing.to_numpy())) if missing.any() else len(draws)
    considered = draws.iloc[:prefix]
    rows = _rubric_rows(store.judgments_frame(dataset), rubric)
    threshold = rubric.scale.pass_threshold
    assert threshold is not None
    means = rows.groupby(["judge", "trajectory_id"])["score"].mean()
    task_of = {i: t for i, t, _, _ in store.trajectory_heads(dataset)}
    judges: dict[str, Any] = {}
    for judge in sorted(rows["judge"].unique()):
        verdict = (means.loc[judge] >= threshold).astype(float)
        items = considered[considered["trajectory_id"].isin(verdict.index)]
        f = items["trajectory_id"].map(verdict).to_numpy(float)
        label = np.where(items["drawn"], items["label"], np.nan)
        pi = items["probability"].to_numpy(float)
        entry: dict[str, Any] = {"n_items": len(items)}
        if len(items):
            est = active_estimates(verdict=f, label=label, probability=pi, level=rule.level)
            stop = stop_status(
                statistic=rule.statistic,
                target=rule.target,
                verdict=f,
                label=label,
                probability=pi,
                alpha=alpha,
                min_probability=float(draws["probability"].min()),
            )
            in_design = draws["trajectory_id"][draws["trajectory_id"].isin(verdict.index)]
            pass_k = active_pass_hat_k(
                verdict=f,
                label=label,
                probability=pi,
                tasks=items["trajectory_id"].map(task_of),
                ks=ks,
                level=rule.level,
                task_trials=in_design.map(task_of).value_counts().to_dict(),
                population=len(in_design),
            )
            entry.update(estimates=est.to_dict(), pass_k=pass_k.to_dict(), stop=stop.to_dict())
        judges[str(judge)] = entry
    design = json.loads(str(draws["design"].iloc[0]))
    weights = 1 / considered.loc[considered["drawn"], "probability"]
    learning = draws[draws["phase"] == 1]
    return {
        "rubric_id": rubric.id,
        "design": design,
        "learning": None
        if learning.empty
        else {
            "labels": int(design["learn"]),
            "items": len(learning),
            "probability": float(learning["probability"].iloc[0]),
            "fitted": bool((draws["phase"] == 2).any()),
        },
        "excluded": _excluded(draws, y),
        "n_items": len(draws),
        "n_drawn": int(draws["drawn"].sum()),
        "n_considered": prefix,
        "n_labeled": int(considered["drawn"].sum()),
        "n_labeled_beyond": int((draws["drawn"] & draws["label"].notna()).sum())
        - int(considered["drawn"].sum()),
        "min_probability": float(draws["probability"].min()),
        "max_probability": float(draws["probability"].max()),
        "weights": {
            "min": float(weights.min()) if len(weights) else None,
            "max": float(weights.max()) if len(weights) else None,
            "mean": float(weights.mean()) if len(weights) else None,
        },
        "statistic": rule.statistic,
        "target": rule.target,
        "level": rule.level,
        "stop_when": rule.text,
        "judges": judges,
    }


def active_summaries(
    store: Store,
    dataset: str,
    rubric_ids: Sequence[str],
    rubric_dirs: Sequence[str] = (),
    *,
    rule: StopRule | None = None,
    ks: Sequence[int] = (1, 2, 3, 4),
) -> list[dict[str, Any]]:
    """:func:`active_summary` of each rubric that has a stored design (a rubric not found,
    or without a pass threshold, cannot have one: ``--strategy active`` needs both)."""
    out = []
    for rubric_id in rubric_ids:
        found = find_rubric(rubric_id, rubric_dirs)
        if found is None or found.scale.pass_threshold is None:
            continue
        summary = active_summary(store, dataset, found, rule=rule, ks=ks)
        if summary is not None:
            out.append(summary)
    return out
