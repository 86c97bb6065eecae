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
