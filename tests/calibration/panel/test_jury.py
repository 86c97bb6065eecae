"""The Dawid-Skene jury on holdout against majority, mean and the best single judge."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from trajudge.calibration.panel import jury_comparison

# judge -> (TPR, TNR): "lenient" passes nearly everything, "strict" fails nearly everything;
# each alone is poor, but their errors sit on opposite sides, which Dawid-Skene can read
JUDGES = {"careful": (0.8, 0.8), "lenient": (0.98, 0.45), "strict": (0.45, 0.98)}


def _world(seed: int, n_tasks: int = 300, trials: int = 2):
    rng = np.random.default_rng(seed)
    items = [f"t{t}-{i}" for t in range(n_tasks) for i in range(trials)]
    tasks = pd.Series([i.split("-")[0] for i in items], index=items)
    truth = pd.Series((rng.random(len(items)) < 0.5).astype(int), index=items)
    judges = pd.DataFrame(index=items)
    for name, (tpr, tnr) in JUDGES.items():
        p_pass = np.where(truth == 1, tpr, 1 - tnr)
        judges[name] = (rng.random(len(items)) < p_pass).astype(float)
    rows = []
    for ann in ("a1", "a2", "a3"):
        right = rng.random(len(items)) < 0.95
        rows.append(pd.DataFrame({"item": items, "annotator": ann,
                                  "label": np.where(right, truth, 1 - truth)}))  # fmt: skip
    annotators = pd.concat(rows, ignore_index=True)
    reference = (annotators.groupby("item")["label"].mean() > 0.5).astype(int)
    holdout = pd.Series([int(t[1:]) % 2 == 1 for t in tasks], index=items)
    return judges, annotators, reference, tasks, holdout


def test_kappas_on_holdout_match_sklearn_and_the_jury_beats_the_best_judge() -> None:
    judges, annotators, reference, tasks, holdout = _world(3)
    got = jury_comparison(
        judges=judges, annotators=annotators, reference=reference, tasks=tasks,
        holdout=holdout, n_boot=300,
    )  # fmt: skip
    test = [i for i in judges.index if holdout[i]]
    dev = [i for i in judges.index if not holdout[i]]
    truth = reference[test]
    for name in JUDGES:
        assert got.kappa[name].value == pytest.approx(
            cohen_kappa_score(truth, judges.loc[test, name])
        )
    majority = (judges.loc[test].sum(axis=1) >= 2).astype(int)
    assert got.kappa["majority"].value == pytest.approx(cohen_kappa_score(truth, majority))
    best = max(JUDGES, key=lambda j: cohen_kappa_score(reference[dev], judges.loc[dev, j]))
    assert got.best == best == "careful"
    assert (got.n_dev, got.n_holdout) == (len(dev), len(test))
    # the jury weighs a lenient judge's fail and a strict judge's pass heavily: it beats the
    # best judge alone, and the paired interval says so
    assert got.kappa["dawid-skene"].value > got.kappa[best].value
    assert got.diff.value == pytest.approx(got.kappa["dawid-skene"].value - got.kappa[best].value)
    assert got.diff.low > 0
    w = {j: got.model.weight(j) for j in JUDGES}
    assert min(w.values()) > 1.0  # every judge carries information
    assert got.model.weight("human:a1") > max(w.values())  # the annotators most of all


def test_a_single_judge_is_refused() -> None:
    judges, annotators, reference, tasks, holdout = _world(4, n_tasks=20)
    with pytest.raises(ValueError, match="at least two judges"):
        jury_comparison(judges=judges[["careful"]], annotators=annotators,
                        reference=reference, tasks=tasks, holdout=holdout)  # fmt: skip


# nominal: three categories; "confuses" mixes the first two, "third-happy" says the third
# too often; their errors differ, which Dawid-Skene reads
CATS = ["billing", "refund", "shipping"]
K_JUDGES = {
    "careful": [[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8]],
    "confuses": [[0.55, 0.4, 0.05], [0.4, 0.55, 0.05], [0.03, 0.02, 0.95]],
    "third-happy": [[0.9, 0.02, 0.08], [0.02, 0.9, 0.08], [0.25, 0.25, 0.5]],
}


def _k_world(seed: int, n_tasks: int = 300, trials: int = 2):
    rng = np.random.default_rng(seed)
    items = [f"t{t}-{i}" for t in range(n_tasks) for i in range(trials)]
    tasks = pd.Series([i.split("-")[0] for i in items], index=items)
    truth = rng.choice(3, len(items), p=[0.35, 0.35, 0.3])
    cats = np.array(CATS, dtype=object)

    def say(conf: np.ndarray) -> np.ndarray:
        return cats[(rng.random(len(items))[:, None] > conf[truth].cumsum(axis=1)).sum(axis=1)]

    judges = pd.DataFrame({name: say(np.array(c)) for name, c in K_JUDGES.items()}, index=items)
    ann = np.full((3, 3), 0.03) + np.eye(3) * 0.91
    rows = [pd.DataFrame({"item": items, "annotator": a, "label": say(ann)})
            for a in ("a1", "a2", "a3")]  # fmt: skip
    annotators = pd.concat(rows, ignore_index=True)
    reference = annotators.groupby("item")["label"].agg(lambda s: s.value_counts().index[0])
    holdout = pd.Series([int(t[1:]) % 2 == 1 for t in tasks], index=items)
    return judges, annotators, reference, tasks, holdout


def test_nominal_jury_kappas_match_sklearn() -> None:
    judges, annotators, reference, tasks, holdout = _k_world(5)
    judges.iloc[0, 1] = np.nan  # a judge without a verdict on one item
    got = jury_comparison(
        judges=judges, annotators=annotators, reference=reference, tasks=tasks,
        holdout=holdout, classes=CATS, n_boot=200,
    )  # fmt: skip
    test = [i for i in judges.index if holdout[i]]
    truth = reference[test]
    for name in K_JUDGES:
        v = judges.loc[test, name]
        ok = v.notna()
        assert got.kappa[name].value == pytest.approx(cohen_kappa_score(truth[ok], v[ok]))
    # the plurality of three judges by hand: a category two or three of them gave; three
    # different ones go to the judge best on dev
    plural = {}
    for i in test:
        said = judges.loc[i].dropna().tolist()
        top = [c for c in CATS if said.count(c) >= 2]
        plural[i] = top[0] if top else judges.loc[i, got.best]
    majority = cohen_kappa_score(truth, [plural[i] for i in test])
    assert got.kappa["majority"].value == pytest.approx(majority)
    assert "mean" not in got.kappa
    # Dawid-Skene on holdout: the most probable category from the fitted matrices
    calls = got.model.predict(
        judges.loc[test].stack().rename("label").rename_axis(["item", "rater"]).reset_index()
    ).idxmax(axis=1)
    assert got.kappa["dawid-skene"].value == pytest.approx(
        cohen_kappa_score(truth, calls.reindex(test))
    )
    assert got.kappa["dawid-skene"].value > got.kappa[got.best].value
    assert got.model.to_dict()["raters"]["careful"]["weight"] is None
