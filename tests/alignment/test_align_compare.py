"""Before / after on the holdout: point values against scikit-learn, the paired bootstrap
recomputed resample by resample, the verdict wording, and no gain reported on clean judges."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binomtest
from sklearn.metrics import accuracy_score, cohen_kappa_score, recall_score

from _align_worlds import many_worlds
from trajudge.alignment import align, compare_probabilities, compare_verdicts, gain_verdict
from trajudge.calibration import Estimate, SyntheticJudge, resampled_sums


def _pair(seed: int, n_tasks: int = 60) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    tasks = np.repeat(np.arange(n_tasks), rng.integers(1, 5, n_tasks))
    y = rng.integers(0, 2, tasks.size).astype(float)
    before = np.where(rng.random(tasks.size) < 0.75, y, 1 - y)
    after = np.where(rng.random(tasks.size) < 0.85, y, 1 - y)
    return y, before, after, tasks


def _metrics(y: np.ndarray, v: np.ndarray) -> dict[str, float]:
    return {
        "kappa": cohen_kappa_score(y, v, labels=[0, 1]),
        "agreement": accuracy_score(y, v),
        "tpr": recall_score(y, v, pos_label=1, zero_division=np.nan),
        "tnr": recall_score(y, v, pos_label=0, zero_division=np.nan),
    }


def test_point_values_equal_sklearn() -> None:
    y, before, after, tasks = _pair(0)
    c = compare_verdicts(y, before, after, tasks, n_boot=100)
    mb, ma = _metrics(y, before), _metrics(y, after)
    for name in ("kappa", "agreement", "tpr", "tnr"):
        change = getattr(c, name)
        assert change.before.value == pytest.approx(mb[name], abs=1e-12)
        assert change.after.value == pytest.approx(ma[name], abs=1e-12)
        assert change.difference.value == pytest.approx(ma[name] - mb[name], abs=1e-12)
    assert (c.n_items, c.n_tasks) == (len(y), 60)


def test_paired_bootstrap_resamples_tasks_and_differences_on_the_same_draw() -> None:
    y, before, after, tasks = _pair(1, n_tasks=40)
    c = compare_verdicts(y, before, after, tasks, n_boot=150, seed=9)
    # the same multiplicities (tasks drawn per resample), rebuilt row by row; each
    # resample's kappa difference computed by scikit-learn on the expanded rows
    mult = resampled_sums(np.eye(40), n_boot=150, seed=9).astype(int)
    diffs, befores = [], []
    for b in range(150):
        rows = np.concatenate([np.flatnonzero(tasks == t) for t in range(40)
                               for _ in range(mult[b, t])])  # fmt: skip
        kb = cohen_kappa_score(y[rows], before[rows], labels=[0, 1])
        diffs.append(cohen_kappa_score(y[rows], after[rows], labels=[0, 1]) - kb)
        befores.append(kb)
    assert (c.kappa.difference.low, c.kappa.difference.high) == (
        pytest.approx(np.quantile(diffs, 0.025), abs=1e-12),
        pytest.approx(np.quantile(diffs, 0.975), abs=1e-12),
    )
    assert c.kappa.before.low == pytest.approx(np.quantile(befores, 0.025), abs=1e-12)
    assert c.kappa.difference.n == 40


def test_pairing_narrows_the_interval_of_a_small_change() -> None:
    # after differs from before on 3 items out of 400: the paired interval of the agreement
    # difference is far narrower than either metric's own interval
    rng = np.random.default_rng(2)
    tasks = np.repeat(np.arange(100), 4)
    y = rng.integers(0, 2, 400).astype(float)
    before = np.where(rng.random(400) < 0.8, y, 1 - y)
    after = before.copy()
    wrong = np.flatnonzero(before != y)[:3]
    after[wrong] = y[wrong]  # three fixes, nothing broken
    c = compare_verdicts(y, before, after, tasks, n_boot=1000)
    own = c.agreement.before.high - c.agreement.before.low
    assert c.agreement.difference.high - c.agreement.difference.low < own / 4
    assert c.agreement.difference.low >= 0.0
    same = compare_verdicts(y, before, before, tasks, n_boot=200)
    # no verdict changed, yet 100 tasks cannot show that none would: the agreement difference
    # is 0 give or take the exact upper bound for 0 changed verdicts in 100 tasks (it was
    # 0.00 [0.00, 0.00]), still narrower than the metric's own interval
    q = binomtest(0, 100).proportion_ci(method="exact").high
    diff = same.agreement.difference
    assert (diff.low, diff.high) == (pytest.approx(-q, abs=1e-9), pytest.approx(q, abs=1e-9))
    assert diff.high - diff.low < own
    assert same.kappa.difference.low < 0.0 < same.kappa.difference.high
    assert same.kappa.verdict == "no measurable gain"


def test_gain_verdict_wording() -> None:
    assert gain_verdict(Estimate(0.1, 0.02, 0.2, 10)) == "gain"
    assert gain_verdict(Estimate(0.1, 0.0, 0.2, 10)) == "no measurable gain"  # 0 inside
    assert gain_verdict(Estimate(0.1, -0.01, 0.2, 10)) == "no measurable gain"
    assert gain_verdict(Estimate(-0.1, -0.2, -0.02, 10)) == "loss"
    assert gain_verdict(Estimate(0.1, math.nan, math.nan, 10)) == "no measurable gain"
    assert gain_verdict(Estimate(-0.1, -0.2, -0.02, 10), higher_is_better=False) == "gain"


def test_compare_probabilities_by_hand() -> None:
    y = np.array([1, 0, 1, 0])
    c = compare_probabilities(y, [0.6] * 4, [0.9, 0.1, 0.8, 0.2], [1, 2, 3, 4], n_bins=2,
                              n_boot=100)  # fmt: skip
    # Brier (.16 + .36 + .16 + .36) / 4 = .26 -> (.01 + .01 + .04 + .04) / 4 = .025
    assert c.brier.before.value == pytest.approx(0.26)
    assert c.brier.after.value == pytest.approx(0.025)
    # ECE before: one bin (.5, 1], p̄ = .6, ȳ = .5 -> .1; after: bins p̄ = .15 / .85,
    # ȳ = 0 / 1 -> .15
    assert c.ece.before.value == pytest.approx(0.1)
    assert c.ece.after.value == pytest.approx(0.15)
    assert c.diagram_after["count"].tolist() == [2.0, 2.0]


@pytest.mark.slow
def test_no_gain_reported_on_a_clean_judge_in_95_percent_of_200_worlds() -> None:
    # a judge without planted defects, its verdict as it stands cut half-way between the
    # levels (mean score >= 3.5): nothing to fix. Each world fits threshold and calibrate on
    # its dev tasks and compares on its holdout tasks; a gain reported is a false alarm
    worlds = many_worlds(SyntheticJudge(noise=0.5), n_worlds=200, items_per_world=400,
                         seed=101, threshold=3.5)  # fmt: skip
    metrics = ("kappa", "agreement", "tpr", "tnr")
    gains = {(m, k): 0 for m in ("threshold", "calibrate") for k in metrics}
    any_gain = 0
    for items in worlds:
        r = align(items, methods=["threshold", "calibrate"], n_boot=400, trust=None)
        found = False
        for method, metric in gains:
            gained = getattr(r.methods[method].verdicts, metric).verdict == "gain"
            gains[(method, metric)] += gained
            found |= gained
        any_gain += found
    assert max(gains.values()) <= 10, gains  # at most 5% of 200 worlds, per method and metric
    assert any_gain <= 10, any_gain
