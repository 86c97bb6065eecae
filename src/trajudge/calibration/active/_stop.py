r"""May labelling stop? A certificate from the confidence sequences of ``_sequence``.

Because a confidence sequence holds at every moment at once, the status may be read after
every label and labelling stopped the first time it says "certified": the claim it makes is
still true with the stated chance. The "~N more labels" figure is a forecast, not a promise:
it assumes the estimate stays where it is and the gap between the estimate and the
sequence's lower bound narrows like one over the square root of the labels (the log factor
of the sequence ignored): :math:`n\,(g / (\hat\theta - target))^2 - n` with g that gap.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from trajudge.calibration._estimate import num
from trajudge.calibration.active._ipw import (
    agreement_terms,
    check_design,
    kappa_of,
    tnr_of,
    tpr_of,
)
from trajudge.calibration.active._sequence import betting_cs, box_range

__all__ = [
    "STATISTICS",
    "Statistic",
    "StopRule",
    "StopStatus",
    "sequence_interval",
    "stop_status",
]

Statistic = Literal["pass_rate", "tpr", "tnr", "kappa"]
STATISTICS: tuple[Statistic, ...] = ("pass_rate", "tpr", "tnr", "kappa")
_SYMBOL = {"pass_rate": "pass rate", "tpr": "TPR", "tnr": "TNR", "kappa": "κ"}
_OF = {"tpr": tpr_of, "tnr": tnr_of, "kappa": kappa_of}


def _percent(level: float) -> str:
    return f"{level * 100:g}%"


@dataclass(frozen=True)
class StopRule:
    """When labelling may stop: ``statistic >= target`` certified at ``level`` (``trajudge
    label --stop-when``, ``trajudge report --stop-when``, ``report.stop_when``). ValueError
    for a statistic not in :data:`STATISTICS`, a target outside the statistic's range (κ in
    [-1, 1], the rest in [0, 1]) or a level outside (0, 1).

    >>> StopRule("tpr", 0.8, 0.9).text
    'tpr>=0.8@90%'
    """

    statistic: Statistic = "kappa"
    target: float = 0.6
    level: float = 0.95

    def __post_init__(self) -> None:
        if self.statistic not in STATISTICS:
            raise ValueError(f"{self.statistic!r} is not one of {', '.join(STATISTICS)}")
        low = -1.0 if self.statistic == "kappa" else 0.0
        if not (math.isfinite(self.target) and low <= self.target <= 1.0):
            raise ValueError(f"the target of {self.statistic} must be in [{low:g}, 1]")
        if not (math.isfinite(self.level) and 0.0 < self.level < 1.0):
            raise ValueError("the level must be in (0, 1), e.g. 0.95 or 95%")

    @property
    def text(self) -> str:
        """The rule as ``--stop-when`` reads it."""
        return f"{self.statistic}>={self.target:g}@{_percent(self.level)}"

    def to_dict(self) -> dict[str, Any]:
        return {"statistic": self.statistic, "target": self.target, "level": self.level}


def sequence_interval(
    *,
    statistic: Statistic,
    verdict: npt.ArrayLike,
    label: npt.ArrayLike,
    probability: npt.ArrayLike,
    alpha: float = 0.05,
    min_probability: float | None = None,
) -> tuple[float, float, float]:
    """``(estimate, lower, upper)`` of ``statistic`` after the items given, in the order they
    were considered: the confidence sequence's bounds at the last item (module docstring of
    ``_sequence``; TPR, TNR and κ through the box of three sequences at ``alpha / 3``).

    ``min_probability`` is the smallest probability the design could give an item, fixed
    before drawing (:func:`sampling_probabilities`' floor); it bounds the weighted terms.
    By default the smallest probability among the items given.
    """
    d = check_design(verdict, label, probability)
    if not d.f.size:
        return math.nan, math.nan, math.nan
    floor = float(d.pi.min()) if min_probability is None else float(min_probability)
    if not 0 < floor <= float(d.pi.min()):
        raise ValueError("min_probability must be in (0, the smallest probability given]")
    terms = agreement_terms(verdict=verdict, label=label, probability=probability)
    means = terms.mean(axis=0)
    if statistic == "pass_rate":  # Z = f + (Y - f) xi / pi = F - FP + FN, one sequence
        z = terms[:, 0] - terms[:, 1] + terms[:, 2]
        lo, hi = betting_cs(values=z, alpha=alpha, low=min(0.0, 1 - 1 / floor), high=1 / floor)
        return float(z.mean()), max(0.0, float(lo[-1])), min(1.0, float(hi[-1]))
    bounds = [(0.0, 1.0), (0.0, 1 / floor), (0.0, 1 / floor)]
    box = [betting_cs(values=terms[:, j], alpha=alpha / 3, low=a, high=b) for j, (a, b) in
           enumerate(bounds)]  # fmt: skip
    lower = np.clip([float(b[0][-1]) for b in box], 0, 1)
    upper = np.clip([float(b[1][-1]) for b in box], 0, 1)  # every mean is a share
    fn = _OF[statistic]
    lo_, hi_ = box_range(fn, lower, upper)
    return float(fn(means)), lo_, hi_


@dataclass(frozen=True)
class StopStatus:
    """Whether ``statistic >= target`` is certified at ``level`` and what to do next."""

    statistic: Statistic
    target: float
    level: float
    estimate: float
    lower: float
    upper: float
    n_labeled: int
    certified: bool
    below: bool  # certified the other way: the statistic is below the target
    more_labels: int | None

    @property
    def message(self) -> str:
        name, pct = _SYMBOL[self.statistic], _percent(self.level)
        if self.certified:
            return f"certified at {pct}: {name} ≥ {self.target:g}, you can stop labeling"
        if self.below:
            return f"certified at {pct}: {name} < {self.target:g}; more labels will not change it"
        if self.more_labels is None:
            return (f"not yet: {name} ≥ {self.target:g} not certified at {pct}, and the "
                    f"estimate ({self.estimate:.3f}) is not above it")  # fmt: skip
        return (f"not yet: {name} ≥ {self.target:g} not certified at {pct}; "
                f"~{self.more_labels} more labels expected")  # fmt: skip

    def to_dict(self) -> dict[str, Any]:
        return {
            "statistic": self.statistic,
            "target": self.target,
            "level": self.level,
            "estimate": num(self.estimate),
            "lower": num(self.lower),
            "upper": num(self.upper),
            "n_labeled": self.n_labeled,
            "certified": self.certified,
            "below": self.below,
            "more_labels": self.more_labels,
            "message": self.message,
        }


def stop_status(
    *,
    statistic: Statistic,
    target: float,
    verdict: npt.ArrayLike,
    label: npt.ArrayLike,
    probability: npt.ArrayLike,
    alpha: float = 0.05,
    min_probability: float | None = None,
) -> StopStatus:
    """Whether labelling may stop: ``statistic >= target`` certified by the confidence
    sequence (valid however often it is asked), and if not, about how many more labels.

    Parameters are those of :func:`sequence_interval`; the items in the order they were
    considered (labelled, or passed over by the draw: label NaN).

    Examples
    --------
    >>> y = np.array([1, 0] * 150, dtype=float)
    >>> s = stop_status(statistic="kappa", target=0.6, verdict=y, label=y, probability=[1] * 300)
    >>> s.certified, s.message
    (True, 'certified at 95%: κ ≥ 0.6, you can stop labeling')
    """
    if statistic not in STATISTICS:
        raise ValueError(f"statistic must be one of {', '.join(STATISTICS)}")
    d = check_design(verdict, label, probability)
    est, lo, hi = sequence_interval(
        statistic=statistic,
        verdict=verdict,
        label=label,
        probability=probability,
        alpha=alpha,
        min_probability=min_probability,
    )
    n_labeled = int(d.xi.sum())
    certified = bool(lo >= target)
    below = bool(hi < target)
    more: int | None = None
    if not certified and not below and est > target and n_labeled:
        gap, needed = est - lo, est - target
        more = max(1, math.ceil(n_labeled * (gap / needed) ** 2 - n_labeled))
    return StopStatus(statistic, target, 1 - alpha, est, lo, hi, n_labeled, certified, below, more)
