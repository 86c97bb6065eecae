"""How many more human labels bring the kappa interval down to a target width."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from trajudge.calibration._estimate import num


@dataclass(frozen=True)
class LabelBudget:
    """Labels so far, the current and target half-widths, and the labels still needed.

    ``n_total`` and ``n_more`` are whole numbers stored as floats so that they can be NaN
    when the current interval is undefined.
    """

    n: int
    half_width: float
    target: float
    n_total: float
    n_more: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "half_width": num(self.half_width),
            "target": self.target,
            "n_total": num(self.n_total),
            "n_more": num(self.n_more),
        }


def label_budget(
    n: int, low: float, high: float, *, target: float = 0.05, one_verdict: bool = False
) -> LabelBudget:
    r"""Labels needed for the kappa interval's half-width to reach ``target``.

    The half-width of an interval shrinks as :math:`1/\sqrt{n}`, so with half-width
    :math:`h` on n labelled items,

    .. math:: n_{total} = \left\lceil n \left(\frac{h}{target}\right)^2 \right\rceil,
              \quad n_{more} = \max(0,\ n_{total} - n)

    Parameters
    ----------
    n : int
        Items labelled so far (the resampling units behind the interval).
    low, high : float
        The current interval.
    target : float
        The half-width wanted (default 0.05).
    one_verdict : bool
        The judge gave every labelled item one verdict. Its kappa is 0 whatever the labels,
        and its interval is not a bootstrap spread that shrinks as :math:`1/\sqrt{n}` but a
        bound over judges that could have shown the other verdict
        (:func:`trajudge.calibration.kappa_interval`): no label count makes it agree.

    Returns
    -------
    LabelBudget
        ``n_total`` and ``n_more`` are NaN when the interval is undefined (NaN), ``n`` is 0,
        the interval has zero width (every resample gave the same kappa, so the width says
        nothing about how many labels would pin kappa down) or ``one_verdict``; the
        half-width is kept.

    Examples
    --------
    >>> b = label_budget(100, 0.50, 0.70)  # h = 0.10: 100 * (0.10 / 0.05)^2 = 400
    >>> b.n_total, b.n_more
    (400.0, 300.0)
    >>> label_budget(12, 0.0, 0.0).n_more  # a zero-width interval: no basis for a budget
    nan
    """
    if target <= 0:
        raise ValueError(f"target must be positive, got {target}")
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    half = (high - low) / 2.0
    if n == 0 or math.isnan(half) or half == 0 or one_verdict:
        return LabelBudget(n, half, target, math.nan, math.nan)
    # round away floating noise before the ceiling (0.1/0.05 squared is 4.000000000000001)
    total = float(max(n, math.ceil(round(n * (half / target) ** 2, 9))))
    return LabelBudget(n, half, target, total, total - n)
