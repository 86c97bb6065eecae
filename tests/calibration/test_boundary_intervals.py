"""Intervals at the boundary: zero disagreements, a constant judge, rates of 0 or 1.

Each expected bound is computed here from scipy's exact binomial interval
(``binomtest(k, n).proportion_ci(method="exact")``, Clopper-Pearson) or from κ of
scikit-learn on a confusion table, never from trajudge. Before these intervals every case
below gave a zero-width interval at the estimate (1.00 [1.00, 1.00] or 0.00 [0.00, 0.00]).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest
from sklearn.metrics import cohen_kappa_score

from trajudge.calibration import (
    binary_agreement,
    bootstrap_kappa,
    bootstrap_ratio,
    compare_verdicts,
    corrected_pass_rate,
    kappa_shift,
    position_probe,
    reliability_intervals,
    win_rates,
)


def cp(k: int, n: int) -> tuple[float, float]:
    """Clopper-Pearson 95% interval of k successes in n, by scipy."""
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    return float(ci.low), float(ci.high)


def kappa_of(cells: dict[tuple[int, int], float]) -> float:
    """κ of a table of proportions {(human, judge): share}, by scikit-learn (one row a cell)."""
    keys = [k for k, v in cells.items() if v > 0]
    return float(
        cohen_kappa_score(
            [h for h, _ in keys], [j for _, j in keys], sample_weight=[cells[k] for k in keys]
        )
    )


def test_48_agreed_labels_each_its_own_cluster() -> None:
    # the case: 48 labels, all agreed (24 passes, 24 fails), items resampled one by one
    y = np.r_[np.ones(24), np.zeros(24)]
    r = binary_agreement(y, y, np.arange(48), n_boot=200)
    for name, k in (("tpr", 24), ("tnr", 24), ("agreement", 48)):
        est = r[name]
        assert est.value == 1.0
        assert (est.low, est.high) == (pytest.approx(cp(k, k)[0], abs=1e-9), 1.0)
        assert est.low < 1.0
    # κ = (p_o - p_e) / (1 - p_e) with p_o at its Clopper-Pearson bound and p_e = 1/2
    low = (cp(48, 48)[0] - 0.5) / 0.5
    assert (r["kappa"].low, r["kappa"].high) == (pytest.approx(low, abs=1e-9), 1.0)
    # AC1's chance agreement: pi = (1/2, 1/2), p_e = 2 * 1/4 / (2 - 1) = 1/2 as well
    assert r["ac1"].low == pytest.approx(low, abs=1e-9)


def test_48_agreed_labels_in_12_tasks_count_as_12() -> None:
    # 12 tasks of 4 trials, 6 tasks all passes and 6 all fails: the errors of a task's trials
    # could be one error, so the effective sample is the 12 tasks (6 for TPR, 6 for TNR)
    y = np.repeat([1.0, 0.0] * 6, 4)
    tasks = np.repeat(np.arange(12), 4)
    r = binary_agreement(y, y, tasks, n_boot=200)
    assert r["tpr"].low == pytest.approx(cp(6, 6)[0], abs=1e-9)  # 0.025 ** (1/6) = 0.54
    assert r["agreement"].low == pytest.approx(cp(12, 12)[0], abs=1e-9)
    assert r["kappa"].low == pytest.approx((cp(12, 12)[0] - 0.5) / 0.5, abs=1e-9)
    # unequal tasks: Kish's (sum m)^2 / sum m^2 tasks, e.g. sizes 1 and 3 count as 1.6;
    # Clopper-Pearson's lower bound for x = n is 0.025 ** (1 / n), here by hand
    y2 = np.ones(4)
    r2 = binary_agreement(y2, y2, [0, 1, 1, 1], n_boot=200)
    assert r2["tpr"].low == pytest.approx(0.025 ** (1 / 1.6), abs=1e-9)


@pytest.mark.parametrize("constant", [0.0, 1.0])
def test_constant_judge_kappa_bounds_every_judge_that_could_have_looked_constant(
    constant: float,
) -> None:
    # 20 passes and 28 fails by the labels in 48 tasks; the judge says `constant` every time
    y = np.r_[np.ones(20), np.zeros(28)]
    judge = np.full(48, constant)
    r = binary_agreement(y, judge, np.arange(48), n_boot=200)
    kappa = r["kappa"]
    assert kappa.value == 0.0 and kappa.low < 0.0 < kappa.high
    # a judge that used its other class on a share q of items shows it on none of 48 with
    # probability (1 - q)^48; q_hi, the exact upper bound for 0 of 48, is the largest q kept
    q_hi = cp(0, 48)[1]
    pi = 20 / 48 if constant == 0.0 else 28 / 48  # the labels' share of the unused class
    other = 1.0 - constant
    # every table with the labels' margins and at most q_hi of the other verdict, by sklearn
    kappas = []
    for right in np.linspace(0.0, min(q_hi, pi), 41):
        for wrong in np.linspace(0.0, min(q_hi - right, 1 - pi), 41):
            cells = {
                (other, other): right,
                (other, constant): pi - right,
                (constant, other): wrong,
                (constant, constant): 1 - pi - wrong,
            }
            kappas.append(kappa_of(cells))
    assert kappa.low == pytest.approx(min(kappas), abs=1e-9)
    assert kappa.high == pytest.approx(max(kappas), abs=1e-9)
    # its rates: TPR (or TNR) 0 of 20 (28), the other 1 of all
    zero, one = ("tpr", "tnr") if constant == 0.0 else ("tnr", "tpr")
    n_zero = 20 if constant == 0.0 else 28
    assert (r[zero].low, r[zero].high) == (0.0, pytest.approx(cp(0, n_zero)[1], abs=1e-9))
    assert r[one].low == pytest.approx(cp(48 - n_zero, 48 - n_zero)[0], abs=1e-9)


def test_constant_judge_over_few_tasks_knows_nothing() -> None:
    # 5 tasks: a judge could pass up to 1 - 0.025 ** (1/5) = 52% of items and show no pass,
    # more than the labels' 50% passes, so κ could be anything from its minimum to 1
    y = np.repeat([1.0, 1.0, 0.0, 0.0], 5)[:20]
    tasks = np.arange(20) % 5
    r = binary_agreement(y, np.zeros(20), tasks, n_boot=200)
    worst = kappa_of({(1, 0): 0.5, (0, 1): 0.5})  # every verdict wrong: κ = -1
    assert (r["kappa"].low, r["kappa"].high) == (pytest.approx(worst), 1.0)


def test_both_raters_constant_has_no_interval() -> None:
    est, _ = bootstrap_kappa([1, 1, 1], [1, 1, 1], [1, 2, 3], n_boot=50)
    assert math.isnan(est.value) and math.isnan(est.low)  # one class: κ undefined
    est, _ = bootstrap_kappa([1, 1, 1], [0, 0, 0], [1, 2, 3], labels=[0, 1], n_boot=50)
    assert est.value == 0.0 and math.isnan(est.low) and math.isnan(est.high)


def test_weighted_kappa_without_disagreement() -> None:
    # 30 items on a 1..3 scale in 10 tasks, all agreed. Quadratic weights scaled to [0, 1]
    # (w / 4): the scaled observed disagreement is at most the exact bound for 0 of 10 tasks,
    # D_e = sum_ij (i - j)^2 / 4 * p_i p_j with p = (1/3, 1/3, 1/3): (2 * 1 + 2 * 1 + 2 * 4)
    # / 4 / 9 = 1/3, so low = 1 - q_hi * 3
    y = np.tile([1, 2, 3], 10)
    tasks = np.repeat(np.arange(10), 3)
    est, _ = bootstrap_kappa(y, y, tasks, weights="quadratic", labels=[1, 2, 3], n_boot=100)
    assert (est.low, est.high) == (pytest.approx(1 - cp(0, 10)[1] * 3, abs=1e-9), 1.0)


def test_reliability_at_one_and_zero() -> None:
    # 8 tasks of 4 trials, every trial passes: pass^k and pass@k are 1 with the exact interval
    # of 8 of 8 tasks (a task's estimate is 1 only when all its trials pass)
    ones = pd.DataFrame({"task_id": np.repeat(np.arange(8), 4), "success": 1})
    iv = reliability_intervals(ones, ks=[1, 4], n_boot=100)
    for table in ("pass^k", "pass@k"):
        for k in (1, 4):
            assert iv[table][k] == (pytest.approx(cp(8, 8)[0], abs=1e-9), 1.0)
    zeros = ones.assign(success=0)
    assert reliability_intervals(zeros, ks=[4], n_boot=100)["pass^k"][4] == (
        0.0,
        pytest.approx(cp(0, 8)[1], abs=1e-9),
    )


def test_other_shares_shown_with_intervals() -> None:
    # a flip rate of 0 over 10 items, a proportion by bootstrap_ratio, a win rate of ties
    verdict = np.tile([1.0, 1.0], 10)  # the same verdict in both orders on each item
    probe = position_probe(verdict, ["ab", "ba"] * 10, np.repeat(np.arange(10), 2), n_boot=100)
    assert probe is not None
    flip = probe.extra["flip_rate"]
    assert (flip.value, flip.low) == (0.0, 0.0)
    assert flip.high == pytest.approx(cp(0, 10)[1], abs=1e-9)
    est = bootstrap_ratio(np.ones(6), np.ones(6), list("aabbcc"), proportion=True, n_boot=50)
    assert est.low == pytest.approx(cp(3, 3)[0], abs=1e-9)
    # a mean that is no proportion keeps its bootstrap interval
    assert bootstrap_ratio(np.ones(6), np.ones(6), list("aabbcc"), n_boot=50).low == 1.0
    x, _ = win_rates(["tie", "tie"], ["x", "x"], ["y", "y"], [0, 1], n_boot=50)
    assert (x.rate.low, x.rate.high) == pytest.approx(cp(1, 2), abs=1e-9)  # 1 point of 2


def test_align_comparison_of_perfect_and_constant_judges() -> None:
    y = np.repeat([1.0, 0.0] * 5, 4)
    tasks = np.repeat(np.arange(10), 4)
    same = compare_verdicts(y, y, y, tasks, n_boot=100)
    assert same.agreement.before.low == pytest.approx(cp(10, 10)[0], abs=1e-9)
    assert same.tpr.after.low == pytest.approx(cp(5, 5)[0], abs=1e-9)
    # no verdict changed: the difference is 0 give or take the share of verdicts that could
    # change unseen, at most the exact bound for 0 of 10 tasks
    q = cp(0, 10)[1]
    diff = same.agreement.difference
    assert (diff.low, diff.high) == (pytest.approx(-q, abs=1e-9), pytest.approx(q, abs=1e-9))
    assert same.agreement.verdict == "no measurable gain"
    # fails everything before, passes everything after: κ is 0 both times in every resample,
    # yet the verdicts all changed; the difference is the two sides' 97.5% intervals combined
    flipped = compare_verdicts(y, np.zeros(40), np.ones(40), tasks, n_boot=100)
    k = flipped.kappa.difference
    assert k.low < 0.0 < k.high
    assert k.high - k.low >= flipped.kappa.before.high - flipped.kappa.before.low
    assert flipped.kappa.verdict == "no measurable gain"


def test_kappa_shift_bounds_every_table_within_q_changed_verdicts() -> None:
    # a 2 x 2 table (labels in rows, verdicts in columns); at most q = 0.1 of the verdicts
    # change (each move takes a share of one cell to the other cell of its row): every table
    # so reached on a grid lies inside the shift, by scikit-learn
    counts = np.array([[[30.0, 8.0], [5.0, 17.0]]])  # (0,0), (0,1) / (1,0), (1,1)
    p = counts[0].ravel() / counts.sum()
    q = 0.1
    base = kappa_of({(0, 0): p[0], (0, 1): p[1], (1, 0): p[2], (1, 1): p[3]})
    low, high = kappa_shift(counts, q)
    grids = [np.linspace(0.0, min(p[i], q), 6) for i in range(4)]
    shifts = []
    for m in itertools.product(*grids):
        if sum(m) > q + 1e-12:
            continue
        t = p.copy()
        for src, dst, amount in zip((0, 1, 2, 3), (1, 0, 3, 2), m, strict=True):
            t[src] -= amount
            t[dst] += amount
        shifts.append(kappa_of({(0, 0): t[0], (0, 1): t[1], (1, 0): t[2], (1, 1): t[3]}) - base)
    assert low - 1e-9 <= min(shifts) and max(shifts) <= high + 1e-9
    # a fine grid, κ by hand ((p_o - p_e) / (1 - p_e)), reaches both ends within 0.005
    fine = np.stack(np.meshgrid(*[np.linspace(0, min(c, q), 31) for c in p]), -1).reshape(-1, 4)
    fine = fine[fine.sum(axis=1) <= q + 1e-12]
    t = p + fine @ np.array([[-1, 1, 0, 0], [1, -1, 0, 0], [0, 0, -1, 1], [0, 0, 1, -1]])
    label_pass, verdict_pass = t[:, 2] + t[:, 3], t[:, 1] + t[:, 3]
    pe = label_pass * verdict_pass + (1 - label_pass) * (1 - verdict_pass)
    by_hand = (t[:, 0] + t[:, 3] - pe) / (1 - pe) - base
    assert low - 1e-9 <= by_hand.min() < low + 0.005
    assert high - 0.005 < by_hand.max() <= high + 1e-9


def test_raw_pass_rate_of_a_judge_that_passes_everything() -> None:
    # 10 tasks of 3 runs, the judge passes all 30: its raw pass rate is 1 over 10 tasks
    verdict = np.ones(30)
    truth = np.where(np.arange(30) % 3 == 0, np.arange(30) % 2, np.nan)
    r = corrected_pass_rate(verdict, truth, clusters=np.repeat(np.arange(10), 3), n_boot=100)
    assert (r.raw.value, r.raw.high) == (1.0, 1.0)
    assert r.raw.low == pytest.approx(cp(10, 10)[0], abs=1e-9)
