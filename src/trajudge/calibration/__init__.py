"""Calibration: agreement statistics, bootstrap intervals, bias probes, reliability."""

from trajudge.calibration._reliability import (
    ReliabilityResult,
    pass_at_k,
    pass_hat_k,
    reliability,
    reliability_intervals,
)

__all__ = [
    "ReliabilityResult",
    "pass_at_k",
    "pass_hat_k",
    "reliability",
    "reliability_intervals",
]
