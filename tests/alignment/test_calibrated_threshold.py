"""``calibrated_threshold``: a one-feature calibrated probability >= 0.5 is exactly a threshold
on the feature."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.isotonic import IsotonicRegression

from trajudge.alignment import Calibrator, calibrated_threshold, fit_calibrator


@pytest.mark.parametrize("method", ["isotonic", "platt"])
@pytest.mark.parametrize("seed", range(8))
def test_probability_at_least_half_is_the_cut_exactly(method: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 80
    x = rng.integers(1, 6, n) + rng.choice([0.0, 0.5], n)
    y = (rng.random(n) < (x - 1) / 5).astype(float)
    cal = fit_calibrator(x, y, np.arange(n) // 4, method=method, n_folds=3).calibrator
    cut = calibrated_threshold(cal)
    grid = np.r_[np.linspace(0, 6, 1201), x, np.asarray(cal.knots_x)]
    if math.isfinite(cut):  # the boundary itself and the float just below it
        grid = np.r_[grid, cut, np.nextafter(cut, -np.inf)]
    assert ((cal.predict_proba(grid) >= 0.5) == (grid >= cut)).all()


def test_by_hand_and_against_sklearn() -> None:
    # knots (2, 0), (3, 0.4), (4, 0.8): 0.5 lies a quarter of the way from 3 to 4
    cal = Calibrator("isotonic", ("score",), knots_x=(2.0, 3.0, 4.0), knots_y=(0.0, 0.4, 0.8))
    assert calibrated_threshold(cal) == 3.25
    iso = IsotonicRegression(out_of_bounds="clip").fit([2, 3, 4], [0.0, 0.4, 0.8])
    assert iso.predict([3.25])[0] == pytest.approx(0.5)
    never = Calibrator("isotonic", ("score",), knots_x=(1.0, 5.0), knots_y=(0.0, 0.3))
    always = Calibrator("isotonic", ("score",), knots_x=(1.0, 5.0), knots_y=(0.6, 0.9))
    assert calibrated_threshold(never) == math.inf and calibrated_threshold(always) == -math.inf
    # Platt, one feature: z = 0 at x = mean - scale * intercept / coef = 3 - 2 * (-1) / 2 = 4
    platt = Calibrator("platt", ("score",), means=(3.0,), scales=(2.0,), coef=(2.0,),
                       intercept=-1.0)  # fmt: skip
    assert calibrated_threshold(platt) == pytest.approx(4.0)
    with pytest.raises(ValueError, match="falls as the feature grows"):
        calibrated_threshold(
            Calibrator("platt", ("score",), means=(0.0,), scales=(1.0,), coef=(-1.0,))
        )
    with pytest.raises(ValueError, match="one-feature"):
        calibrated_threshold(
            Calibrator("platt", ("a", "b"), means=(0, 0), scales=(1, 1), coef=(1, 1))
        )
