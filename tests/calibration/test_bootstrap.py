"""Clustered bootstrap: vectorised kappa equals sklearn per resample; coverage; clustering."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from trajudge.calibration import (
    bootstrap_kappa,
    bootstrap_ratio,
    cluster_bootstrap,
    resampled_sums,
)
from trajudge.calibration._estimate import percentile_interval


def _data(seed: int, n_items: int = 60) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    reps = rng.integers(1, 5, n_items)  # items have 1..4 rows
    items = np.repeat(np.arange(n_items), reps)
    human = np.repeat(rng.integers(0, 3, n_items), reps)
    judge = np.where(rng.random(len(items)) < 0.7, human, rng.integers(0, 3, len(items)))
    return human, judge, items


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_vectorised_kappa_equals_sklearn_on_individual_resamples(weights: str | None) -> None:
    human, judge, items = _data(1)
    n_items = items.max() + 1
    _, draws = bootstrap_kappa(human, judge, items, weights=weights, labels=[0, 1, 2],
                               n_boot=50, seed=3)  # fmt: skip
    # identity per-item sums give back how often each item was drawn in each resample
    mult = resampled_sums(np.eye(n_items), n_boot=50, seed=3).astype(int)
    for b in (0, 7, 23, 49):
        rows = np.concatenate([np.flatnonzero(items == i) for i in range(n_items)
                               for _ in range(mult[b, i])])  # fmt: skip
        expected = cohen_kappa_score(human[rows], judge[rows], weights=weights, labels=[0, 1, 2])
        assert draws[b] == pytest.approx(expected, abs=1e-12)
    assert (mult.sum(axis=1) == n_items).all()  # each resample draws n_items items


def test_point_estimate_equals_sklearn_and_seed_reproducible() -> None:
    human, judge, items = _data(2)
    est, draws = bootstrap_kappa(human, judge, items, n_boot=300, seed=11)
    assert est.value == pytest.approx(cohen_kappa_score(human, judge), abs=1e-12)
    again, draws2 = bootstrap_kappa(human, judge, items, n_boot=300, seed=11)
    assert np.array_equal(draws, draws2) and again == est
    _, other = bootstrap_kappa(human, judge, items, n_boot=300, seed=12)
    assert not np.array_equal(draws, other)
    assert est.low < est.value < est.high and est.n == items.max() + 1
    # the interval is BCa: recomputed here from the draws and a leave-one-item-out
    # jackknife by scikit-learn
    jack = [cohen_kappa_score(human[items != i], judge[items != i]) for i in np.unique(items)]
    low, high = bca_by_hand(draws, est.value, np.array(jack))
    assert (est.low, est.high) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))


def bca_by_hand(draws: np.ndarray, est: float, jack: np.ndarray) -> tuple[float, float]:
    """Efron's BCa percentile interval (Efron & Tibshirani 1993, eq. 14.9-14.15), written out
    with scipy's normal distribution."""
    from scipy.stats import norm

    tie = np.abs(draws - est) <= 1e-9 * abs(est) + 1e-12  # equal up to rounding
    z0 = norm.ppf((np.sum((draws < est) & ~tie) + 0.5 * np.sum(tie)) / len(draws))
    d = jack.mean() - jack
    a = np.sum(d**3) / (6 * np.sum(d**2) ** 1.5)
    z = norm.ppf([0.025, 0.975])
    alphas = norm.cdf(z0 + (z0 + z) / (1 - a * (z0 + z)))
    return tuple(float(np.quantile(draws, q)) for q in alphas)  # type: ignore[return-value]


def test_rows_of_an_item_move_together() -> None:
    # doubling every row of every item leaves each resample's kappa unchanged (counts scale),
    # so a clustered bootstrap gives the same interval; a row bootstrap would narrow it
    human, judge, items = _data(4)
    single, _ = bootstrap_kappa(human, judge, items, n_boot=400, seed=5)
    doubled, _ = bootstrap_kappa(np.repeat(human, 2), np.repeat(judge, 2), np.repeat(items, 2),
                                 n_boot=400, seed=5)  # fmt: skip
    assert (doubled.low, doubled.high) == (pytest.approx(single.low), pytest.approx(single.high))


def _population_kappa(prev: float, a: float, c: float) -> float:
    # human h ~ Bern(prev); item belief = h w.p. a else 1-h; each row keeps the belief w.p. c
    stay = a * c + (1 - a) * (1 - c)  # P(row verdict == h)
    p11, p10 = prev * stay, prev * (1 - stay)
    p01, p00 = (1 - prev) * (1 - stay), (1 - prev) * stay
    po = p11 + p00
    pe = (p11 + p10) * (p11 + p01) + (p00 + p01) * (p00 + p10)
    return (po - pe) / (1 - pe)


def test_coverage_on_synthetic_data_with_known_kappa() -> None:
    prev, a, c = 0.4, 0.85, 0.9
    truth = _population_kappa(prev, a, c)
    hits, reps, n_items = 0, 200, 150
    for r in range(reps):
        rng = np.random.default_rng(1000 + r)
        h = rng.random(n_items) < prev
        belief = np.where(rng.random(n_items) < a, h, ~h)
        items = np.repeat(np.arange(n_items), 3)  # 3 correlated rows per item
        verdict = np.where(rng.random(3 * n_items) < c, belief[items], ~belief[items])
        est, _ = bootstrap_kappa(h[items].astype(int), verdict.astype(int), items, n_boot=400,
                                 seed=r)  # fmt: skip
        hits += est.low <= truth <= est.high
    assert 0.90 <= hits / reps <= 0.99


def test_ratio_and_generic_statistic() -> None:
    est = bootstrap_ratio([1, 0, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1], list("aabbcc"), n_boot=100)
    assert est.value == 0.5 and est.n == 3
    sums = np.array([[2.0], [4.0]])
    est2, draws = cluster_bootstrap(sums, lambda t: t[..., 0] / 2, n_boot=100, seed=0)
    assert est2.value == 3.0 and set(np.unique(draws)) <= {2.0, 3.0, 4.0}


def test_interval_is_nan_when_many_draws_are_undefined() -> None:
    draws = np.r_[np.full(80, 0.5), np.full(20, np.nan)]  # 20% undefined
    assert all(math.isnan(x) for x in percentile_interval(draws))
    assert percentile_interval(np.r_[np.full(95, 0.5), np.full(5, np.nan)]) == (0.5, 0.5)
    # all items from one category: kappa undefined, interval too
    est, _ = bootstrap_kappa([1, 1, 1], [1, 1, 1], [1, 2, 3], n_boot=50)
    assert math.isnan(est.value) and math.isnan(est.low)
