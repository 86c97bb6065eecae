"""The stopping certificate: certified, not yet (with a forecast), certified below."""

from __future__ import annotations

import numpy as np
import pytest

from trajudge.calibration import sequence_interval, stop_status
from trajudge.calibration.active._sequence import betting_cs


def _world(n: int, agree: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    f = (rng.random(n) < 0.5).astype(float)
    return f, np.where(rng.random(n) < agree, f, 1 - f)


def test_certified_when_the_lower_bound_clears_the_target() -> None:
    f, y = _world(600, 0.97, 0)
    s = stop_status(statistic="kappa", target=0.6, verdict=f, label=y, probability=np.ones(600))
    assert s.certified and s.lower >= 0.6
    assert s.message == "certified at 95%: κ ≥ 0.6, you can stop labeling"
    assert s.to_dict()["certified"] is True and s.more_labels is None


def test_not_yet_forecasts_more_labels() -> None:
    f, y = _world(60, 0.9, 1)
    s = stop_status(statistic="kappa", target=0.6, verdict=f, label=y, probability=np.ones(60))
    assert not s.certified and not s.below
    assert s.estimate > 0.6 and s.more_labels is not None and s.more_labels > 0
    assert s.message.endswith(f"~{s.more_labels} more labels expected")
    # the forecast by hand: n (gap to the lower bound / (estimate - target))^2 - n
    gap = s.estimate - s.lower
    assert s.more_labels == int(np.ceil(60 * (gap / (s.estimate - 0.6)) ** 2 - 60))


def test_certified_below_the_target() -> None:
    f, y = _world(800, 0.6, 2)
    s = stop_status(statistic="tpr", target=0.9, verdict=f, label=y, probability=np.ones(800))
    assert s.below and not s.certified
    assert "TPR < 0.9" in s.message


def test_pass_rate_sequence_is_the_betting_sequence_of_the_labels() -> None:
    """With every item labelled the pass rate's sequence is the one on the 0/1 labels."""
    f, y = _world(300, 0.8, 3)
    est, lo, hi = sequence_interval(
        statistic="pass_rate", verdict=f, label=y, probability=np.ones(300)
    )
    low, high = betting_cs(values=y)
    assert (est, lo, hi) == pytest.approx((y.mean(), low[-1], high[-1]))


def test_min_probability_above_the_design_is_refused() -> None:
    with pytest.raises(ValueError, match="min_probability"):
        sequence_interval(statistic="tpr", verdict=[1, 0], label=[1, np.nan],
                          probability=[0.5, 0.5], min_probability=0.6)  # fmt: skip
