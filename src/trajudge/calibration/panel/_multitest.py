"""Adjusted p-values for a family of tests: Holm (family-wise error) and Benjamini-Hochberg
(false discovery rate).

Many slices times many judges is many tests: at 5% each, one slice in twenty looks bad by
chance alone. Adjusting the p-values over the whole family lets a report say "the judge is
unreliable on refunds" without fishing.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import numpy.typing as npt

from trajudge.calibration._estimate import FloatArray

Method = Literal["holm", "bh", "by"]
METHODS: tuple[Method, ...] = ("holm", "bh", "by")


def adjust_p(p_values: npt.ArrayLike, *, method: Method = "holm") -> FloatArray:
    r"""Adjusted p-values, in the order given; NaN entries are left out of the family.

    Holm (step-down): with :math:`p_{(1)} \le \dots \le p_{(m)}`,
    :math:`\tilde p_{(i)} = \max_{j \le i} \min(1, (m - j + 1)\, p_{(j)})`.
    Benjamini-Hochberg (step-up):
    :math:`\tilde p_{(i)} = \min_{j \ge i} \min(1, \frac{m}{j} p_{(j)})`.
    Benjamini-Yekutieli (``"by"``): BH times :math:`\sum_{i=1}^m 1/i`, the false discovery
    rate under any dependence (what the alternative annotator test uses).
    Reject where the adjusted p-value is at most alpha: Holm controls the family-wise error
    rate, BH the false discovery rate (under independence or positive dependence).

    Examples
    --------
    >>> adjust_p([0.01, 0.04, 0.03], method="holm").round(4).tolist()  # 3*.01, 2*.03, .04->.06
    [0.03, 0.06, 0.06]
    >>> adjust_p([0.01, 0.04, 0.03], method="bh").round(4).tolist()  # 3/1*.01, min(.045,.04)
    [0.03, 0.04, 0.04]

    References
    ----------
    Holm (1979), Scand. J. Statist. 6(2), 65-70; Benjamini & Hochberg (1995), J. R. Statist.
    Soc. B 57(1), 289-300; Benjamini & Yekutieli (2001), Ann. Statist. 29(4), 1165-1188.
    """
    p = np.asarray(p_values, dtype=np.float64).ravel()
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    if ((p < 0) | (p > 1)).any():
        raise ValueError("p-values must lie in [0, 1]")
    out = np.full(p.shape, np.nan)
    known = np.flatnonzero(~np.isnan(p))
    m = known.size
    if m == 0:
        return out
    order = known[np.argsort(p[known], kind="stable")]
    ranked = p[order]
    rank = np.arange(1, m + 1)
    if method == "holm":
        adjusted = np.maximum.accumulate(np.minimum(1.0, (m - rank + 1) * ranked))
    else:
        scale = float(np.sum(1.0 / rank)) if method == "by" else 1.0
        step = np.minimum(1.0, scale * m / rank * ranked)
        adjusted = np.minimum.accumulate(step[::-1])[::-1]
    out[order] = adjusted
    return out
