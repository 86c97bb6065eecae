"""Before / after on the holdout: each metric with its interval, and the interval of the gain.

Both verdict sets are measured on the same holdout items, so the gain is estimated by a PAIRED
bootstrap: each resample draws whole tasks with replacement (all items of a drawn task, with
both their "before" and "after" verdicts), and computes before, after and their difference on
the same draw. The percentile interval of those differences is the interval of the gain; it is
narrower than what two separate intervals suggest, because the shared items' luck cancels.

A gain whose interval includes 0 is "no measurable gain" (:func:`gain_verdict`), never an
improvement.

Where every resample gives the same κ, agreement, TPR or TNR (no disagreement, a judge that
never passes, a rate at 0 or 1), the interval of that side is the one of
``trajudge.calibration.intervals._boundary`` (Clopper-Pearson on the effective number of tasks). A
difference whose resamples are all equal is not known to be exactly 0: when no verdict changed
it is 0 plus or minus how far the metric could move if a share of verdicts as large as the
data allow had changed; otherwise (e.g. a judge that failed everything before and passes
everything after: κ 0 both times) it is the Bonferroni combination of the two sides.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from trajudge.calibration._estimate import (
    Estimate,
    FloatArray,
    as_1d,
    check_same_length,
    percentile_interval,
    safe_divide,
)
from trajudge.calibration._validation import binary_labels
from trajudge.calibration.agreement._agreement import kappa_from_counts
from trajudge.calibration.intervals._bootstrap import item_codes, per_item_sums, resampled_sums
from trajudge.calibration.intervals._boundary import (
    boundary_kappa,
    boundary_rate,
    clopper_pearson,
    collapsed,
    effective_clusters,
    kappa_shift,
)
from trajudge.calibration.verdicts._probability import bin_index, reliability_diagram

GainVerdict = Literal["gain", "loss", "no measurable gain"]


def gain_verdict(difference: Estimate, *, higher_is_better: bool = True) -> GainVerdict:
    """What a difference (after - before) with its interval allows one to say.

    ``"gain"`` when the whole interval is on the better side of 0, ``"loss"`` when it is on
    the worse side, else (0 inside, or an undefined interval) ``"no measurable gain"``.

    Examples
    --------
    >>> gain_verdict(Estimate(0.08, 0.02, 0.14, 50)), gain_verdict(Estimate(0.05, -0.01, 0.11, 50))
    ('gain', 'no measurable gain')
    >>> gain_verdict(Estimate(-0.03, -0.05, -0.01, 50), higher_is_better=False)  # Brier fell
    'gain'
    """
    low, high = difference.low, difference.high
    if np.isnan(low) or np.isnan(high) or low <= 0.0 <= high:
        return "no measurable gain"
    better = low > 0.0 if higher_is_better else high < 0.0
    return "gain" if better else "loss"


@dataclass(frozen=True)
class MetricChange:
    """One metric before and after on the holdout, and the paired difference (after - before)."""

    before: Estimate
    after: Estimate
    difference: Estimate
    higher_is_better: bool = True

    @property
    def verdict(self) -> GainVerdict:
        return gain_verdict(self.difference, higher_is_better=self.higher_is_better)

    def to_dict(self) -> dict[str, Any]:
        return {
            "before": self.before.to_dict(),
            "after": self.after.to_dict(),
            "difference": self.difference.to_dict(),
            "higher_is_better": self.higher_is_better,
            "verdict": self.verdict,
        }


@dataclass(frozen=True)
class VerdictComparison:
    """Kappa, agreement, TPR and TNR of two verdict sets against the same labels."""

    kappa: MetricChange
    agreement: MetricChange
    tpr: MetricChange
    tnr: MetricChange
    n_items: int
    n_tasks: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "kappa": self.kappa.to_dict(),
            "agreement": self.agreement.to_dict(),
            "tpr": self.tpr.to_dict(),
            "tnr": self.tnr.to_dict(),
            "n_items": self.n_items,
            "n_tasks": self.n_tasks,
        }


def _verdict_stats(t: FloatArray) -> dict[str, FloatArray]:
    """Metrics of confusion totals ``(..., 4)`` ordered tn, fp, fn, tp."""
    tn, fp, fn, tp = t[..., 0], t[..., 1], t[..., 2], t[..., 3]
    return {
        "kappa": kappa_from_counts(t.reshape(*t.shape[:-1], 2, 2)),
        "agreement": safe_divide(tn + tp, t.sum(axis=-1)),
        "tpr": safe_divide(tp, tp + fn),
        "tnr": safe_divide(tn, tn + fp),
    }


Bound = Callable[[str, Estimate, FloatArray], Estimate]


def _verdict_bound(name: str, est: Estimate, sums: FloatArray) -> Estimate:
    """The boundary interval of one of :func:`_verdict_stats`'s metrics from per-task
    ``tn, fp, fn, tp`` sums, where the bootstrap cannot show uncertainty."""
    tn, fp, fn, tp = sums.T
    if name == "kappa":
        return boundary_kappa(est, sums)
    num, den = {"agreement": (tn + tp, sums.sum(axis=1)), "tpr": (tp, tp + fn)}.get(
        name, (tn, tn + fp)
    )
    return boundary_rate(est, num, den)


def _unchanged_width(name: str, sums: FloatArray, level: float) -> tuple[float, float]:
    """How far a metric can move, down and up, when no verdict it counts changed here.

    The share q of items whose verdict could change unseen is at most the Clopper-Pearson
    upper bound for 0 of the effective number of tasks
    (``trajudge.calibration.intervals._boundary``).
    A rate moves by at most q either way; κ as :func:`trajudge.calibration.kappa_shift` says.
    """
    tn, fp, fn, tp = sums.T
    den = {"tpr": tp + fn, "tnr": tn + fp}.get(name, sums.sum(axis=1))
    q = clopper_pearson(0.0, effective_clusters(den), level=level)[1]
    return kappa_shift(sums, q) if name == "kappa" else (-q, q)


def _change(
    totals: FloatArray,
    draws: FloatArray,
    stat: Any,
    n: int,
    level: float,
    *,
    higher_is_better: bool = True,
    sums: FloatArray | None = None,
    bound: Bound | None = None,
    unchanged: Mapping[str, tuple[float, float]] | None = None,
) -> dict[str, MetricChange]:
    """MetricChange per metric; totals/draws/sums hold the before columns then the after ones.

    ``bound(name, estimate, per-task sums of one side)`` replaces an interval the bootstrap
    cannot make (``trajudge.calibration.intervals._boundary``). With ``bound``, a difference whose
    draws are all equal gets ``0 + unchanged[name]`` (how far the metric could move down and
    up, :func:`_unchanged_width`) when no verdict the metric counts changed, else the
    Bonferroni interval ``[after.low - before.high, after.high - before.low]`` of the two
    sides at level ``(1 + level) / 2`` each, which covers at ``level`` at least.
    """
    m = totals.shape[-1] // 2
    point_b, point_a = stat(totals[:m]), stat(totals[m:])
    draw_b, draw_a = stat(draws[:, :m]), stat(draws[:, m:])
    sides = {"before": (point_b, draw_b, slice(0, m)), "after": (point_a, draw_a, slice(m, None))}

    def side(name: str, which: str, at: float) -> Estimate:
        point, draw, cols = sides[which]
        e = Estimate(float(point[name]), *percentile_interval(draw[name], level=at), n, at)
        return e if bound is None or sums is None else bound(name, e, sums[:, cols])

    out = {}
    for name in point_b:
        low, high = percentile_interval(draw_a[name] - draw_b[name], level=level)
        diff = Estimate(float(point_a[name] - point_b[name]), low, high, n, level)
        if bound is not None and collapsed(diff) and name in (unchanged or {}):
            down, up = (unchanged or {})[name]
            diff = replace(diff, low=diff.value + down, high=diff.value + up)
        elif bound is not None and collapsed(diff):
            wide = (1.0 + level) / 2.0
            b, a = side(name, "before", wide), side(name, "after", wide)
            diff = replace(diff, low=a.low - b.high, high=a.high - b.low)
        out[name] = MetricChange(
            before=side(name, "before", level),
            after=side(name, "after", level),
            difference=diff,
            higher_is_better=higher_is_better,
        )
    return out


def _paired(
    labels: npt.ArrayLike, before: npt.ArrayLike, after: npt.ArrayLike, tasks: npt.ArrayLike
) -> tuple[FloatArray, FloatArray, FloatArray, npt.NDArray[np.int64], int]:
    y = binary_labels(labels)
    b, a = as_1d(before, "before").astype(float), as_1d(after, "after").astype(float)
    codes, n_tasks = item_codes(tasks)
    check_same_length(labels=y, before=b, after=a, tasks=codes)
    return y, b, a, codes, n_tasks


def compare_verdicts(
    labels: npt.ArrayLike,
    before: npt.ArrayLike,
    after: npt.ArrayLike,
    tasks: npt.ArrayLike,
    *,
    n_boot: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> VerdictComparison:
    """Kappa, agreement, TPR, TNR of two 0/1 verdict sets on the same HOLDOUT items.

    Parameters
    ----------
    labels : array-like of shape (n,)
        Human 0/1 label per holdout item.
    before, after : array-like of shape (n,)
        The judge's 0/1 verdict per item before alignment (as it stands) and after.
    tasks : array-like of shape (n,)
        Task of each item: the bootstrap resamples tasks (module docstring).
    n_boot, seed, level :
        Resamples, seed, interval level.

    Returns
    -------
    VerdictComparison
        Per metric a :class:`MetricChange`; an interval is NaN when more than 10% of the
        resamples leave the metric undefined (e.g. no human fail for TNR).

    Examples
    --------
    >>> c = compare_verdicts([1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 0, 0], [1, 2, 3, 4], n_boot=200)
    >>> c.tnr.before.value, c.tnr.after.value, c.agreement.difference.value
    (0.5, 1.0, 0.25)
    """
    y, b, a, codes, n_tasks = _paired(labels, before, after, tasks)
    if np.isnan(b).any() or np.isnan(a).any() or not np.isin(np.r_[b, a], (0.0, 1.0)).all():
        raise ValueError("before and after must be 0/1 verdicts without missing values")
    cells = np.zeros((y.size, 8))
    cells[np.arange(y.size), (2 * y + b).astype(int)] = 1.0  # tn, fp, fn, tp of before
    cells[np.arange(y.size), 4 + (2 * y + a).astype(int)] = 1.0
    sums = per_item_sums(codes, n_tasks, cells)
    draws = resampled_sums(sums, n_boot=n_boot, seed=seed)
    counted = {"kappa": y >= 0, "agreement": y >= 0, "tpr": y == 1, "tnr": y == 0}
    same = {
        name: _unchanged_width(name, sums[:, :4], level)
        for name, rows in counted.items()
        if np.array_equal(b[rows], a[rows])
    }
    ch = _change(sums.sum(axis=0), draws, _verdict_stats, n_tasks, level,
                 sums=sums, bound=_verdict_bound, unchanged=same)  # fmt: skip
    return VerdictComparison(
        kappa=ch["kappa"],
        agreement=ch["agreement"],
        tpr=ch["tpr"],
        tnr=ch["tnr"],
        n_items=int(y.size),
        n_tasks=n_tasks,
    )


@dataclass(frozen=True)
class ProbabilityComparison:
    """Brier score and ECE of two probability sets on the holdout (lower is better), and the
    reliability diagrams (see :func:`reliability_diagram`)."""

    brier: MetricChange
    ece: MetricChange
    n_bins: int
    diagram_before: pd.DataFrame = field(compare=False)
    diagram_after: pd.DataFrame = field(compare=False)

    def to_dict(self) -> dict[str, Any]:
        def rows(d: pd.DataFrame) -> list[dict[str, Any]]:
            clean = d.astype(object).where(d.notna(), None)
            return [{str(k): v for k, v in r.items()} for r in clean.to_dict(orient="records")]

        return {
            "brier": self.brier.to_dict(),
            "ece": self.ece.to_dict(),
            "n_bins": self.n_bins,
            "diagram_before": rows(self.diagram_before),
            "diagram_after": rows(self.diagram_after),
        }


def _probability_stats(n_bins: int) -> Any:
    def stat(t: FloatArray) -> dict[str, FloatArray]:
        # columns: squared error, count per bin, sum of p per bin, sum of y per bin
        count, sp, sy = (t[..., 1 + j * n_bins : 1 + (j + 1) * n_bins] for j in range(3))
        n = count.sum(axis=-1)
        ece = safe_divide(np.abs(sy - sp).sum(axis=-1), n)  # sum_b n_b/n |ȳ_b - p̄_b|
        return {"brier": safe_divide(t[..., 0], n), "ece": ece}

    return stat


def _probability_cells(y: FloatArray, p: FloatArray, n_bins: int) -> FloatArray:
    out = np.zeros((y.size, 1 + 3 * n_bins))
    out[:, 0] = (p - y) ** 2
    b = bin_index(p, n_bins)
    rows = np.arange(y.size)
    out[rows, 1 + b] = 1.0
    out[rows, 1 + n_bins + b] = p
    out[rows, 1 + 2 * n_bins + b] = y
    return out


def compare_probabilities(
    labels: npt.ArrayLike,
    before: npt.ArrayLike,
    after: npt.ArrayLike,
    tasks: npt.ArrayLike,
    *,
    n_bins: int = 10,
    n_boot: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> ProbabilityComparison:
    """Brier score and expected calibration error before and after, on the same HOLDOUT items.

    ``before`` is the probability the judge gives as it stands (e.g. the share of its calls
    that pass, ``item_features(...)["vote_share"]``), ``after`` the calibrated one. Intervals
    and the paired difference come from the task bootstrap of the module docstring; ECE is
    recomputed in every resample from its per-bin sums (it is biased upward on few items, so
    compare the two on the same items, as here). Bins as in :func:`expected_calibration_error`.

    Examples
    --------
    >>> c = compare_probabilities([1, 0, 1, 0], [0.6, 0.6, 0.6, 0.6], [0.9, 0.1, 0.8, 0.2],
    ...                           [1, 2, 3, 4], n_bins=2, n_boot=100)
    >>> round(c.brier.before.value, 4), round(c.brier.after.value, 4)  # (.16+.36)/2; (.01+.04)/2
    (0.26, 0.025)
    """
    y, b, a, codes, n_tasks = _paired(labels, before, after, tasks)
    for name, p in (("before", b), ("after", a)):
        if np.isnan(p).any() or (p < 0).any() or (p > 1).any():
            raise ValueError(f"{name} probabilities must lie in [0, 1], without missing values")
    cells = np.hstack([_probability_cells(y, b, n_bins), _probability_cells(y, a, n_bins)])
    sums = per_item_sums(codes, n_tasks, cells)
    draws = resampled_sums(sums, n_boot=n_boot, seed=seed)
    ch = _change(
        sums.sum(axis=0), draws, _probability_stats(n_bins), n_tasks, level, higher_is_better=False
    )
    return ProbabilityComparison(
        brier=ch["brier"],
        ece=ch["ece"],
        n_bins=n_bins,
        diagram_before=reliability_diagram(y, b, n_bins=n_bins),
        diagram_after=reliability_diagram(y, a, n_bins=n_bins),
    )
