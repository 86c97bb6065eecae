"""An estimate with its interval, and the helpers every statistic shares.

Conventions used across the calibration package:

* Degenerate input (one category only, no rows, a zero denominator) gives ``math.nan``, the same
  way in every function; nothing returns 0.0 or 1.0 for "undefined".
* ``None`` means "does not apply" (no second presentation order, no lengths logged): it is kept
  distinct from NaN and from a score of 0.0.
* In ``to_dict()`` output NaN becomes ``null`` (JSON has no NaN); a statistic that does not
  apply is absent as a whole (``null`` in place of its object).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from trajudge.calibration._validation import as_1d, check_same_length

FloatArray = npt.NDArray[np.float64]

__all__ = [
    "MAX_UNDEFINED_SHARE",
    "Estimate",
    "FloatArray",
    "as_1d",
    "check_same_length",
    "num",
    "percentile_interval",
    "safe_divide",
]

#: If more than this share of bootstrap resamples give an undefined statistic, the interval
#: would be conditioned on "the statistic happened to be defined", so it is NaN instead.
MAX_UNDEFINED_SHARE = 0.1


def num(value: float | None) -> float | None:
    """A float for JSON: NaN and None become None."""
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value


@dataclass(frozen=True)
class Estimate:
    """A point estimate with a percentile bootstrap interval.

    ``n`` is the number of resampling units (items) behind the estimate.
    """

    value: float
    low: float
    high: float
    n: int
    level: float = 0.95

    @property
    def half_width(self) -> float:
        """Half the interval width; NaN when the interval is undefined."""
        return (self.high - self.low) / 2.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "value": num(self.value),
            "low": num(self.low),
            "high": num(self.high),
            "n": self.n,
            "level": self.level,
        }


def percentile_interval(draws: FloatArray, *, level: float = 0.95) -> tuple[float, float]:
    """Percentile interval of bootstrap draws, NaN draws set aside.

    Returns ``(nan, nan)`` when more than ``MAX_UNDEFINED_SHARE`` of the draws are NaN or there
    are no draws.
    """
    draws = np.asarray(draws, dtype=np.float64)
    ok = draws[~np.isnan(draws)]
    if draws.size == 0 or ok.size < draws.size * (1.0 - MAX_UNDEFINED_SHARE):
        return math.nan, math.nan
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(ok, [tail, 1.0 - tail])
    return float(low), float(high)


def safe_divide(num_: FloatArray | float, den: FloatArray | float) -> FloatArray:
    """Element-wise ``num / den`` with NaN where ``den == 0``."""
    n = np.asarray(num_, dtype=np.float64)
    d = np.asarray(den, dtype=np.float64)
    out = np.full(np.broadcast(n, d).shape, np.nan)
    np.divide(n, d, out=out, where=d != 0)
    return out
