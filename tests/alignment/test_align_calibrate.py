"""The ``calibrate`` method and the probability metrics, against scikit-learn and by hand;
a compressed, noisy judge is brought under ECE 0.05 on the holdout with 2,000 dev items."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.calibration import calibration_curve
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import brier_score_loss

from _align_worlds import labelled_items
from trajudge.alignment import Calibrator, align, fit_calibrator, task_folds
from trajudge.calibration import (
    SyntheticJudge,
    brier_score,
    expected_calibration_error,
    reliability_diagram,
)


def _probs(seed: int, n: int = 500) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    p = rng.beta(0.7, 0.7, n)
    p[:5] = [0.0, 0.1, 0.2, 0.5, 1.0]  # values on the bin edges
    y = (rng.random(n) < np.clip(p * 1.2 - 0.1, 0, 1)).astype(float)  # miscalibrated
    return y, p


@pytest.mark.parametrize("seed", range(3))
def test_brier_and_reliability_bins_equal_sklearn(seed: int) -> None:
    y, p = _probs(seed)
    assert brier_score(y, p) == pytest.approx(brier_score_loss(y, p), abs=1e-15)
    d = reliability_diagram(y, p, n_bins=10)
    filled = d[d["count"] > 0]
    prob_true, prob_pred = calibration_curve(y, p, n_bins=10, strategy="uniform")
    np.testing.assert_allclose(filled["observed_rate"], prob_true, atol=1e-12)
    np.testing.assert_allclose(filled["mean_predicted"], prob_pred, atol=1e-12)
    assert d["count"].sum() == len(y)


@pytest.mark.parametrize("seed", range(3))
def test_ece_equals_a_loop_over_bins(seed: int) -> None:
    y, p = _probs(seed)
    # independent: bins (b/10, (b+1)/10], the first closed at 0, walked one by one
    total = 0.0
    for b in range(10):
        lo, hi = b / 10, (b + 1) / 10
        inside = [i for i in range(len(p)) if (lo < p[i] <= hi) or (b == 0 and p[i] == 0)]
        if inside:
            gap = abs(np.mean(y[inside]) - np.mean(p[inside]))
            total += len(inside) / len(p) * gap
    assert expected_calibration_error(y, p) == pytest.approx(total, abs=1e-12)


def test_ece_by_hand_and_degenerate_input() -> None:
    # (0, .5]: p̄ = .125, ȳ = .5; (.5, 1]: p̄ = .925, ȳ = 1 -> (2 * .375 + 2 * .075) / 4
    assert expected_calibration_error([0, 1, 1, 1], [0.1, 0.15, 0.9, 0.95], n_bins=2) == (
        pytest.approx(0.225)
    )
    assert expected_calibration_error([1, 0], [1.0, 0.0]) == 0.0
    assert math.isnan(expected_calibration_error([], []))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        brier_score([1], [1.2])


def _dev(seed: int, n: int = 600) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n).astype(float)
    x = pd.DataFrame({"score": np.round(3 + y + rng.normal(0, 1, n), 1),
                      "score_sd": rng.gamma(2, 0.2, n)})  # fmt: skip
    return x, y, np.arange(n) // 3


def test_isotonic_equals_sklearn_and_cross_fits_by_task() -> None:
    x, y, tasks = _dev(0)
    fit = fit_calibrator(x[["score"]], y, tasks, method="isotonic", n_folds=4)
    iso = IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip").fit(x["score"], y)
    new = np.linspace(-1, 8, 200)  # beyond both ends too
    np.testing.assert_allclose(fit.calibrator.predict_proba(new), iso.predict(new), atol=1e-12)
    # every task sits in one fold; each fold's probabilities come from a model that never
    # saw it, refitted here independently
    assert (pd.Series(fit.folds).groupby(tasks).nunique() == 1).all()
    assert set(fit.folds) == {0, 1, 2, 3}
    for k in range(4):
        out = fit.folds == k
        ref = IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip")
        ref.fit(x["score"][~out], y[~out])
        np.testing.assert_allclose(fit.dev_oof[out], ref.predict(x["score"][out]), atol=1e-12)


def test_platt_equals_sklearn_logistic_on_standardised_features() -> None:
    x, y, tasks = _dev(1)
    fit = fit_calibrator(x, y, tasks, method="platt", n_folds=3)
    z = (x - x.mean()) / x.std(ddof=0)
    lr = LogisticRegression(C=1.0, max_iter=1000).fit(z.to_numpy(), y)
    expected = lr.predict_proba(z.to_numpy())[:, 1]
    np.testing.assert_allclose(fit.calibrator.predict_proba(x), expected, atol=1e-6)
    assert fit.calibrator.coef == pytest.approx(tuple(lr.coef_[0]), abs=1e-6)
    # stored as numbers: a JSON round trip predicts the same
    again = Calibrator.from_dict(fit.calibrator.to_dict())
    assert again == fit.calibrator
    np.testing.assert_array_equal(again.predict_proba(x), fit.calibrator.predict_proba(x))


def test_calibrator_refuses_what_it_cannot_fit() -> None:
    x, y, tasks = _dev(2)
    with pytest.raises(ValueError, match="one feature"):
        fit_calibrator(x, y, tasks, method="isotonic")
    with pytest.raises(ValueError, match="one class"):
        fit_calibrator(x[["score"]], np.ones(len(y)), tasks)
    with pytest.raises(ValueError, match="missing"):
        fit_calibrator(x.assign(score=np.nan)[["score"]], y, tasks)
    with pytest.raises(ValueError, match="2 tasks"):
        task_folds(np.zeros(10), 5)


@pytest.mark.parametrize(
    "judge",
    [
        SyntheticJudge(compression=0.5, noise=0.8, leniency=0.7),  # crowded and lenient
        SyntheticJudge(compression=0.6, noise=1.0, leniency=-0.5),  # crowded and strict
        SyntheticJudge(noise=1.2, leniency=0.8),  # noisy and lenient
    ],
)
def test_calibrate_brings_ece_under_005_on_holdout_with_2000_dev_items(
    judge: SyntheticJudge,
) -> None:
    # the share of a judge's calls that pass is its probability as it stands: with the
    # planted defects it is far off; isotonic on the mean score, fitted on ~2,000 dev items
    items = labelled_items(judge, n_items=4000, seed=11)
    result = align(items, methods=["calibrate"], n_boot=500, trust=None)
    assert 1800 <= result.n_dev_items <= 2200
    probs = result.methods["calibrate"].probabilities
    assert probs is not None
    assert probs.ece.before.value > 0.12  # the planted defect shows
    assert probs.ece.after.value < 0.05
    assert probs.ece.verdict == "gain" and probs.brier.verdict == "gain"
    # the holdout ECE recomputed here from the calibrator and the holdout labels
    hold = items[items["split"] == "holdout"].sort_values("item")
    cal = result.methods["calibrate"].params
    assert isinstance(cal, Calibrator)
    p = cal.predict_proba(hold)
    assert probs.ece.after.value == pytest.approx(
        expected_calibration_error(hold["label"], p), abs=1e-12
    )
    assert probs.brier.after.value == pytest.approx(brier_score_loss(hold["label"], p))
