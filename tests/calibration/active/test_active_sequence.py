"""Betting confidence sequences: the capital process by a plain loop from the paper's
formulas, and validity under continuous monitoring (a small run here; 500 worlds in
test_active_simulation.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from trajudge.calibration import betting_cs

ALPHA = 0.05


def _capital_path(x: list[float], m: float, alpha: float) -> list[float]:
    """Waudby-Smith & Ramdas (2024), hedged capital with predictable plug-in bets (their
    eq. 26, truncated at 1/2 over m and 1/2 over 1 - m), theta = 1/2, one step at a time."""
    k_up = k_down = 1.0
    s_x = s_sq = 0.0
    var_before = 0.25
    out = []
    for i, xi in enumerate(x, start=1):
        bet = math.sqrt(2 * math.log(2 / alpha) / (var_before * i * math.log(1 + i)))
        k_up *= 1 + min(bet, 0.5 / m) * (xi - m)
        k_down *= 1 - min(bet, 0.5 / (1 - m)) * (xi - m)
        out.append(max(0.5 * k_up, 0.5 * k_down))
        s_x += xi
        mu = (0.5 + s_x) / (i + 1)
        s_sq += (xi - mu) ** 2
        var_before = (0.25 + s_sq) / (i + 1)
    return out


def test_bounds_follow_the_capital_computed_by_hand() -> None:
    rng = np.random.default_rng(1)
    x = (rng.random(120) < 0.7).astype(float).tolist()
    grid = 1000
    lower, upper = betting_cs(values=x, alpha=ALPHA, grid=grid)
    for edge, side in ((lower[-1], -1), (upper[-1], 1)):
        outside, inside = edge + side * 3 / grid, edge - side * 3 / grid
        # a candidate just outside was rejected at some time; one just inside never was
        assert max(_capital_path(x, outside, ALPHA)) >= 1 / ALPHA
        assert max(_capital_path(x, inside, ALPHA)) < 1 / ALPHA


def test_bounds_are_nested_and_rescaled() -> None:
    rng = np.random.default_rng(2)
    x = rng.uniform(2, 6, 300)
    lower, upper = betting_cs(values=x, low=2, high=6)
    assert np.all(np.diff(lower) >= 0) and np.all(np.diff(upper) <= 0)
    assert lower[-1] < 4 < upper[-1] and upper[-1] - lower[-1] < 1.0


def test_values_outside_the_bounds_are_refused() -> None:
    with pytest.raises(ValueError, match=r"values must lie in \[0.0, 1.0\]"):
        betting_cs(values=[0.5, 1.5])


def peeking_errors(worlds: int, steps: int, seed: int) -> tuple[float, float]:
    """Share of worlds where the truth ever left the sequence, and where it ever left the
    fixed-n Wilson interval, both looked at after every label (Wilson from the 10th)."""
    rng = np.random.default_rng(seed)
    z = norm.ppf(1 - ALPHA / 2)
    t = np.arange(1, steps + 1)
    cs_miss = wilson_miss = 0
    for _ in range(worlds):
        p = rng.uniform(0.05, 0.95)
        x = (rng.random(steps) < p).astype(float)
        lo, hi = betting_cs(values=x, alpha=ALPHA, grid=500)
        cs_miss += bool(((lo > p) | (hi < p)).any())
        m = np.cumsum(x) / t
        centre = (m + z**2 / (2 * t)) / (1 + z**2 / t)
        half = z * np.sqrt(m * (1 - m) / t + z**2 / (4 * t**2)) / (1 + z**2 / t)
        wilson_miss += bool(((centre - half > p) | (centre + half < p))[9:].any())
    return cs_miss / worlds, wilson_miss / worlds


def test_peeking_after_every_label_small_run() -> None:
    cs, wilson = peeking_errors(worlds=80, steps=200, seed=11)
    # 80 worlds: a 5% error rate would give at most 9 misses with 99% probability
    assert cs <= 9 / 80
    assert wilson > cs and wilson > 0.1
