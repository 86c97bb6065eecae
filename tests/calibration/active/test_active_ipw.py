"""Active-inference estimators against hand computations and independent libraries."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm
from sklearn.metrics import cohen_kappa_score

from trajudge.calibration import active_estimates, active_pass_rate

NAN = math.nan
Z = norm.ppf(0.975)
# five items: verdicts, labels where drawn (NaN: passed over), the probabilities they had
V = [1, 1, 0, 0, 1]
Y = [1, NAN, 1, NAN, 0]
PI = [0.5, 0.5, 0.8, 0.25, 1.0]


def test_pass_rate_by_hand_with_the_judge_as_prediction() -> None:
    est, lam = active_pass_rate(verdict=V, label=Y, probability=PI, lam=1.0)
    # terms f + (Y - f) xi / pi: 1 + 0, 1, 0 + 1/0.8, 0, 1 - 1/1  -> (1 + 1 + 1.25 + 0 + 0) / 5
    assert est.value == pytest.approx(3.25 / 5)
    # design variance: drawn residuals Y - f = 0, 1, -1 with pi 0.5, 0.8, 1:
    # (0 + 1 * 0.2 / 0.64 + 1 * 0 / 1) / 25
    half = Z * math.sqrt(0.3125 / 25)
    assert (est.low, est.high) == pytest.approx((0.65 - half, 0.65 + half))
    assert lam == 1.0 and est.n == 5


def test_pass_rate_by_hand_horvitz_thompson() -> None:
    est, _ = active_pass_rate(verdict=V, label=Y, probability=PI, lam=0.0)
    # sum of Y / pi over the drawn: 1/0.5 + 1/0.8 + 0/1, over N = 5
    assert est.value == pytest.approx((2 + 1.25) / 5)
    var = (1 * 0.5 / 0.25 + 1 * 0.2 / 0.64) / 25
    assert est.value - est.low == pytest.approx(Z * math.sqrt(var))
    assert est.high == 1.0  # clipped to a rate


def test_rates_and_kappa_by_hand() -> None:
    r = active_estimates(verdict=V, label=Y, probability=PI)
    f = 3 / 5  # the judge's pass rate over the items considered
    m_y = 3.25 / 5  # as above
    m_fy = (1 + 1 + 0 + 0 + (1 + (0 - 1) / 1)) / 5  # f + (fY - f) xi / pi
    assert r.tpr.value == pytest.approx(m_fy / m_y)
    assert r.tnr.value == pytest.approx((1 - f - m_y + m_fy) / (1 - m_y))
    po = 1 - f - m_y + 2 * m_fy
    pe = f * m_y + (1 - f) * (1 - m_y)
    assert r.kappa.value == pytest.approx((po - pe) / (1 - pe))
    assert r.n_labeled == 3 and r.n_items == 5
    assert r.min_probability == 0.25 and r.max_weight == pytest.approx(2.0)


def test_every_item_labelled_gives_the_usual_statistics() -> None:
    rng = np.random.default_rng(3)
    f = (rng.random(300) < 0.6).astype(float)
    y = np.where(rng.random(300) < 0.8, f, 1 - f)
    r = active_estimates(verdict=f, label=y, probability=np.ones(300))
    assert r.kappa.value == pytest.approx(cohen_kappa_score(y, f))
    pos = y == 1
    tpr = f[pos].mean()
    assert r.tpr.value == pytest.approx(tpr)
    assert r.tnr.value == pytest.approx(1 - f[~pos].mean())
    assert r.pass_rate.value == pytest.approx(y.mean())
    # the delta method on the terms is the Wald interval of a proportion, times N / (N - 1)
    half = Z * math.sqrt(tpr * (1 - tpr) / pos.sum() * 300 / 299)
    assert r.tpr.high - r.tpr.low == pytest.approx(2 * half)
    # every item drawn with certainty: the design leaves no doubt about the dataset's rate
    assert r.pass_rate.low == r.pass_rate.high == pytest.approx(y.mean())


def test_weighted_terms_are_unbiased_over_the_draws() -> None:
    """The estimate's mean over many draws is the dataset's value (exactly what the weights
    promise), whatever the probabilities."""
    rng = np.random.default_rng(4)
    f = (rng.random(400) < 0.5).astype(float)
    y = np.where(rng.random(400) < 0.85, f, 1 - f)
    pi = np.where(rng.random(400) < 0.3, 0.6, 0.1)
    values = []
    for _ in range(3000):
        drawn = rng.random(400) < pi
        est, _ = active_pass_rate(
            verdict=f, label=np.where(drawn, y, np.nan), probability=pi, lam=1.0
        )
        values.append(est.value)
    se = np.std(values) / math.sqrt(len(values))
    assert abs(np.mean(values) - y.mean()) < 4 * se


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"verdict": [2, 0], "label": [1, 0], "probability": [1, 1]}, "verdict must be 0/1"),
        ({"verdict": [1, 0], "label": [0.5, 0], "probability": [1, 1]}, "label must be 0/1"),
        ({"verdict": [1, 0], "label": [1, 0], "probability": [0, 1]}, "probability must be"),
        ({"verdict": [1, 0], "label": [1], "probability": [1, 1]}, "differ in length"),
    ],
)
def test_bad_input_names_the_field(kwargs: dict[str, list[float]], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        active_estimates(**kwargs)
