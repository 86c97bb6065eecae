"""Numbers as the report prints them, shared by every section."""

from __future__ import annotations

import math

from trajudge.calibration import Estimate


def fmt(value: float | None, digits: int = 2) -> str:
    """A number for people; "n/a" for None or NaN."""
    if value is None or math.isnan(value):
        return "n/a"
    return f"{value:.{digits}f}"


def fmt_est(est: Estimate | None, digits: int = 2) -> str:
    """``0.71 [0.62, 0.79]``; the interval is left out when undefined."""
    if est is None:
        return "n/a"
    if math.isnan(est.value):
        return "n/a"
    if math.isnan(est.low) or math.isnan(est.high):
        return fmt(est.value, digits)
    return f"{fmt(est.value, digits)} [{fmt(est.low, digits)}, {fmt(est.high, digits)}]"
