"""An estimate with its interval, and the helpers every statistic shares.

Conventions used across the calibration package:

* Degenerate input (one category only, no rows, a zero denominator) gives ``math.nan``, the same
  way in every function; nothing returns 0.0 or 1.0 for "undefined".
* ``None`` means "does not apply" (no second presentation order, no lengths logged): it is kept
  distinct from NaN and from a score of 0.0.
* Intervals are BCa percentile intervals of a cluster bootstrap (:func:`bca_interval`), the
  clusters being tasks whenever task ids are known; where every resample gives the same
  value (no disagreement, a judge that never passes, a rate of 0 or 1) they are the exact
  intervals of ``trajudge.calibration.intervals._boundary`` on the effective number of clusters.
* In ``to_dict()`` output NaN becomes ``null`` (JSON has no NaN); a statistic that does not
  apply is absent as a whole (``null`` in place of its object).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
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
    "bca_interval",
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
    """A point estimate with its interval (bootstrap, or exact at the boundary).

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


def bca_interval(
    draws: FloatArray,
    estimate: float,
    jackknife: FloatArray,
    *,
    level: float = 0.95,
) -> tuple[float, float]:
    r"""Bias-corrected and accelerated (BCa) percentile interval of bootstrap draws.

    The percentile interval shifted for the draws' median bias :math:`z_0` and skewness
    (acceleration :math:`a`, from the leave-one-cluster-out jackknife values):

    .. math:: \alpha_{1,2} = \Phi\left(z_0 + \frac{z_0 + z_{\alpha}}
              {1 - a (z_0 + z_{\alpha})}\right),\quad
              z_0 = \Phi^{-1}\left(\frac{\#\{\theta^* < \hat\theta\}
              + \#\{\theta^* = \hat\theta\}/2}{B}\right),\quad
              a = \frac{\sum d_i^3}{6 (\sum d_i^2)^{3/2}},\ d_i = \bar\theta_{(\cdot)}
              - \theta_{(i)}

    It keeps closer to its nominal coverage than the plain percentile interval for skewed,
    bounded statistics such as kappa. NaN draws and jackknife values are set aside; falls
    back to :func:`percentile_interval` when the bias cannot be estimated (every draw on one
    side of the estimate, or a NaN estimate) and uses ``a = 0`` when the jackknife values do
    not vary. ``(nan, nan)`` under the same rule as :func:`percentile_interval`.

    References
    ----------
    Efron (1987), J. Am. Stat. Assoc. 82(397), 171-185; Efron & Tibshirani (1993), An
    Introduction to the Bootstrap, ch. 14.
    """
    draws = np.asarray(draws, dtype=np.float64)
    ok = draws[~np.isnan(draws)]
    low, high = percentile_interval(draws, level=level)
    if math.isnan(low) or math.isnan(estimate):
        return low, high
    # draws equal to the estimate up to rounding count half (discrete statistics tie often)
    tie = np.isclose(ok, estimate, rtol=1e-9, atol=1e-12)
    share = (np.sum((ok < estimate) & ~tie) + 0.5 * np.sum(tie)) / ok.size
    if not 0.0 < share < 1.0:
        return low, high
    normal = NormalDist()
    z0 = normal.inv_cdf(float(share))
    jack = np.asarray(jackknife, dtype=np.float64)
    jack = jack[~np.isnan(jack)]
    d = jack.mean() - jack if jack.size else np.zeros(0)
    den = 6.0 * float(np.sum(d**2)) ** 1.5
    a = float(np.sum(d**3)) / den if den > 0 else 0.0
    tail = (1.0 - level) / 2.0
    ends = []
    for z in (normal.inv_cdf(tail), normal.inv_cdf(1.0 - tail)):
        shifted = z0 + (z0 + z) / (1.0 - a * (z0 + z))
        ends.append(float(np.quantile(ok, min(1.0, max(0.0, normal.cdf(shifted))))))
    return ends[0], ends[1]


def safe_divide(num_: FloatArray | float, den: FloatArray | float) -> FloatArray:
    """Element-wise ``num / den`` with NaN where ``den == 0``."""
    n = np.asarray(num_, dtype=np.float64)
    d = np.asarray(den, dtype=np.float64)
    out = np.full(np.broadcast(n, d).shape, np.nan)
    np.divide(n, d, out=out, where=d != 0)
    return out
