r"""Confidence sequences: intervals that stay valid however often they are looked at.

A 95% confidence interval computed after a fixed number of labels covers the truth 95% of the
time only if that number was fixed in advance. Looking after every label and stopping when it
looks good breaks that (the chance that a fixed-n interval misses the truth at *some* look
grows with the number of looks; tests/calibration/active measure it). A confidence sequence
:math:`(C_t)` covers the truth at every t at once, :math:`P(\forall t: \mu \in C_t) \ge
1 - \alpha`, so one may stop whenever it says enough.

:func:`betting_cs` is the hedged-capital sequence of Waudby-Smith & Ramdas (2024, Theorem 3
with the predictable plug-in bets of their eq. 26, the bets truncated at c/m and c/(1-m),
c = 1/2): for observations :math:`x_i \in [0, 1]` with conditional mean :math:`\mu`, for every
candidate m the capital :math:`K_t(m) = \max(\tfrac12 \prod_i (1 + \lambda_i^+(x_i - m)),
\tfrac12 \prod_i (1 - \lambda_i^-(x_i - m)))` is a nonnegative supermartingale under
:math:`\mu = m`, so by Ville's inequality it exceeds :math:`1/\alpha` with chance at most
:math:`\alpha`, ever. :math:`C_t` is the set of m (on a grid) whose capital is still below
:math:`1/\alpha`, intersected over time; values in [a, b] are rescaled to [0, 1].

Per label the observations are the terms of :mod:`trajudge.calibration.active._ipw` (each
with the same conditional mean whatever was drawn before, because the order is random and
each draw's probability is fixed before it), bounded by the smallest drawing probability:
:math:`Z \in [1 - 1/\pi_{min}, 1/\pi_{min}]`. Labels drawn uniformly (every item considered
labelled) are plain 0/1 observations.

TPR, TNR and κ are functions of three means: the judge's pass rate F and the two error
cells, false passes FP = E[f(1-Y)] and false fails FN = E[(1-f)Y] (``_ipw``). Their sequences
here are honest but conservative: one sequence per mean at level :math:`1 - \alpha/3` (so all
three hold at once with chance :math:`\ge 1 - \alpha`, a union bound), and the statistic's
interval is its smallest and largest value over the box of the three (on a grid of each
side, kept within what a 2x2 table allows: FP <= F, FN <= 1 - F). For κ this is a sequence
on the observed disagreement FP + FN and, through F and :math:`m_Y = F - FP + FN`, a
conservative bound on the chance agreement :math:`F m_Y + (1-F)(1-m_Y)`, taken jointly.

References
----------
Waudby-Smith & Ramdas (2024), "Estimating means of bounded random variables by betting",
J. R. Stat. Soc. B 86(1), 1-27, arXiv:2010.09686; Howard, Ramdas, McAuliffe & Sekhon (2021),
"Time-uniform, nonparametric, nonasymptotic confidence sequences", Ann. Stat. 49(2).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from trajudge.calibration._estimate import FloatArray, as_1d

__all__ = ["betting_cs", "box_range"]

_C = 0.5  # the bets' truncation (Waudby-Smith & Ramdas suggest 1/2 or 3/4)


def betting_cs(
    *,
    values: npt.ArrayLike,
    alpha: float = 0.05,
    low: float = 0.0,
    high: float = 1.0,
    grid: int = 1000,
) -> tuple[FloatArray, FloatArray]:
    """The hedged-capital confidence sequence for the mean of ``values`` (module docstring).

    Parameters
    ----------
    values : array-like of shape (T,)
        The observations in the order they came, each in [low, high].
    alpha : float
        1 - level: the chance the sequence ever misses the mean.
    low, high : float
        Bounds every observation is known to respect (before seeing it).
    grid : int
        Candidate means tried, evenly spaced; the bounds are widened by one step.

    Returns
    -------
    (lower, upper)
        Arrays of shape (T,): the sequence after each observation, on the values' scale.

    Examples
    --------
    >>> lo, hi = betting_cs(values=[1, 1, 0, 1] * 50, alpha=0.05)
    >>> bool(lo[-1] < 0.75 < hi[-1]), bool(hi[-1] - lo[-1] < hi[9] - lo[9])
    (True, True)
    """
    x = as_1d(values, "values").astype(np.float64)
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if not high > low:
        raise ValueError("high must be above low")
    if np.isnan(x).any() or (x < low).any() or (x > high).any():
        raise ValueError(f"values must lie in [{low}, {high}]")
    x = (x - low) / (high - low)
    t = np.arange(1, x.size + 1, dtype=np.float64)
    # predictable plug-in bets: mean and variance estimates from the observations before
    mu = (0.5 + np.cumsum(x)) / (t + 1)
    var = (0.25 + np.cumsum((x - mu) ** 2)) / (t + 1)
    var_before = np.r_[0.25, var[:-1]]
    bet = np.sqrt(2 * math.log(2 / alpha) / (var_before * t * np.log1p(t)))
    m = (np.arange(grid) + 0.5) / grid
    up = np.minimum(bet[:, None], _C / m[None, :])
    down = np.minimum(bet[:, None], _C / (1 - m[None, :]))
    diff = x[:, None] - m[None, :]
    log_up = np.cumsum(np.log1p(up * diff), axis=0)
    log_down = np.cumsum(np.log1p(-down * diff), axis=0)
    capital = np.maximum(log_up, log_down) + math.log(0.5)
    alive = capital < math.log(1 / alpha)
    step = 1.0 / grid
    lower = np.where(alive.any(axis=1), m[np.argmax(alive, axis=1)] - step, np.nan)
    upper = np.where(
        alive.any(axis=1), m[grid - 1 - np.argmax(alive[:, ::-1], axis=1)] + step, np.nan
    )
    # the running intersection (valid: the sequence holds at every t at once); an empty set
    # (possible only on the grid's resolution) keeps the previous bounds
    lower = np.fmax.accumulate(np.clip(np.nan_to_num(lower, nan=0.0), 0, 1))
    upper = np.fmin.accumulate(np.clip(np.nan_to_num(upper, nan=1.0), 0, 1))
    upper = np.maximum(upper, lower)
    scale = high - low
    out_low: FloatArray = low + lower * scale
    out_high: FloatArray = low + upper * scale
    return out_low, out_high


def box_range(
    fn: Callable[[FloatArray], FloatArray],
    lower: FloatArray,
    upper: FloatArray,
    *,
    points: int = 41,
) -> tuple[float, float]:
    """Smallest and largest of ``fn`` over the box of three means (F, FP, FN) between
    ``lower`` and ``upper``, on a grid of ``points`` per side, keeping only means a 2x2 table
    allows (FP <= F, FN <= 1 - F). NaN when no point is defined.

    Examples
    --------
    >>> from trajudge.calibration.active._ipw import tpr_of
    >>> lo, hi = box_range(tpr_of, np.array([0.5, 0.0, 0.1]), np.array([0.6, 0.1, 0.2]))
    >>> round(lo, 6), round(hi, 6)  # (0.5 - 0.1) / (0.5 - 0.1 + 0.2), 0.6 / (0.6 + 0.1)
    (0.666667, 0.857143)
    """
    sides = [np.linspace(lo, hi, points) for lo, hi in zip(lower, upper, strict=True)]
    mesh = np.stack(np.meshgrid(*sides, indexing="ij"), axis=-1).reshape(-1, 3)
    f, fp, fneg = mesh[:, 0], mesh[:, 1], mesh[:, 2]
    ok = (fp <= f + 1e-12) & (fneg <= 1 - f + 1e-12)
    values = fn(mesh[ok])
    values = values[np.isfinite(values)]
    if not values.size:
        return math.nan, math.nan
    return float(values.min()), float(values.max())
