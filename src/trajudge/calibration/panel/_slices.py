"""Agreement per slice (intent, task family, length, tool set, any metadata key), with the
p-values adjusted over every slice and judge.

Each slice is compared with the rest of the labelled items: the difference of kappa (slice
minus rest) gets a task-clustered bootstrap interval and the two-sided p-value that inverts
it. Those p-values are adjusted over the whole family (every judge, every dimension, every
slice with enough labels) by Holm or Benjamini-Hochberg (:func:`adjust_p`). A slice with too
few labels is not tested; it says how many more labels it needs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from trajudge.calibration._estimate import Estimate, FloatArray, num, safe_divide
from trajudge.calibration._validation import as_1d, as_binary, check_same_length
from trajudge.calibration.agreement._agreement import kappa_from_counts
from trajudge.calibration.intervals._bootstrap import (
    SumStatistic,
    cluster_bootstrap_many,
    item_codes,
    per_item_sums,
)
from trajudge.calibration.intervals._budget import label_budget
from trajudge.calibration.panel._multitest import Method, adjust_p


@dataclass(frozen=True)
class SliceRow:
    """One judge on one slice: its agreement there, against the rest, and the test.

    ``n_more`` is the labels the slice still needs before it is tested (0 when it is);
    ``n_more_for_width`` the labels for its kappa interval to reach the target half-width
    (:func:`trajudge.calibration.label_budget`; NaN when the interval is undefined).
    ``p_value`` / ``p_adjusted`` are NaN for an untested slice; ``flagged`` is True when the
    adjusted p-value is at most alpha and the slice's kappa is below the rest's.
    """

    judge: str
    dimension: str
    value: str
    n: int
    n_pass: int
    n_fail: int
    kappa: Estimate
    tpr: Estimate
    tnr: Estimate
    kappa_rest: Estimate
    delta: Estimate
    p_value: float
    p_adjusted: float
    flagged: bool
    n_more: int
    n_more_for_width: float

    @property
    def tested(self) -> bool:
        return self.n_more == 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "judge": self.judge,
            "dimension": self.dimension,
            "value": self.value,
            "n": self.n,
            "n_pass": self.n_pass,
            "n_fail": self.n_fail,
            "kappa": self.kappa.to_dict(),
            "tpr": self.tpr.to_dict(),
            "tnr": self.tnr.to_dict(),
            "kappa_rest": self.kappa_rest.to_dict(),
            "delta": self.delta.to_dict(),
            "p_value": num(self.p_value),
            "p_adjusted": num(self.p_adjusted),
            "flagged": self.flagged,
            "tested": self.tested,
            "n_more": self.n_more,
            "n_more_for_width": num(self.n_more_for_width),
        }


def labels_needed(
    *, n: int, n_pass: int, n_fail: int, share_pass: float, min_labels: int, min_per_class: int
) -> int:
    r"""Labels a slice still needs: at least ``min_labels`` in all and ``min_per_class`` of
    each class, the class shares expected as ``share_pass`` (the labelled items' overall
    pass share):

    .. math:: \max\left(m - n,\ \left\lceil \frac{c - n_+}{\pi} \right\rceil,\
              \left\lceil \frac{c - n_-}{1 - \pi} \right\rceil,\ 0\right)

    >>> labels_needed(n=8, n_pass=7, n_fail=1, share_pass=0.75, min_labels=20, min_per_class=5)
    16
    """
    need: list[int] = [min_labels - n, 0]
    for have, share in ((n_pass, share_pass), (n_fail, 1.0 - share_pass)):
        if have < min_per_class:
            need.append(math.ceil((min_per_class - have) / share) if share > 0 else 10**9)
    return int(max(need))


def _p_value(draws: FloatArray) -> float:
    """Two-sided p-value of "no difference" from bootstrap draws of the difference: twice
    the smaller share of draws on either side of zero (the level at which the percentile
    interval would just touch zero), at least 1 / draws: B resamples cannot show less."""
    ok = draws[~np.isnan(draws)]
    if ok.size == 0:
        return math.nan
    below, above = float(np.mean(ok <= 0)), float(np.mean(ok >= 0))
    return min(1.0, max(2.0 * min(below, above), 1.0 / ok.size))


def _tables(x: FloatArray, start: int) -> FloatArray:
    return x[..., start : start + 4].reshape(*x.shape[:-1], 2, 2)


def _stats() -> dict[str, SumStatistic]:
    return {
        "kappa": lambda x: kappa_from_counts(_tables(x, 0)),
        "tpr": lambda x: safe_divide(x[..., 3], x[..., 2] + x[..., 3]),
        "tnr": lambda x: safe_divide(x[..., 0], x[..., 0] + x[..., 1]),
        "kappa_rest": lambda x: kappa_from_counts(_tables(x, 4)),
        "delta": lambda x: kappa_from_counts(_tables(x, 0)) - kappa_from_counts(_tables(x, 4)),
    }


def slice_agreement(
    *,
    labels: object,
    verdicts: Mapping[str, object],
    slices: Mapping[str, object],
    clusters: object,
    method: Method = "holm",
    alpha: float = 0.05,
    min_labels: int = 20,
    min_per_class: int = 5,
    target: float = 0.1,
    n_boot: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> list[SliceRow]:
    """Kappa, TPR and TNR of every judge on every slice, tested against the rest.

    Parameters
    ----------
    labels : array-like of shape (n,)
        Reference pass/fail per item (missing: the item is not used).
    verdicts : mapping judge -> array-like of shape (n,)
        Each judge's pass/fail per item (missing where it gave none).
    slices : mapping dimension -> array-like of shape (n,)
        The slice of each item along each dimension (e.g. ``{"intent": [...]}``); a missing
        value puts the item in no slice of that dimension.
    clusters : array-like of shape (n,)
        The task of each item, the bootstrap's resampling unit.
    method, alpha :
        The adjustment over the family (``"holm"`` or ``"bh"``) and the level a flag needs.
    min_labels, min_per_class :
        A slice is tested when it has this many labelled items and this many of each class.
    target :
        Half-width of the slice kappa interval that ``n_more_for_width`` aims at.
    n_boot, seed, level :
        Resamples, generator seed, interval level.

    Returns
    -------
    list of SliceRow
        Judges, then dimensions in the order given, slices by value.
    """
    y = as_binary(labels, "labels", allow_missing=True)
    groups = as_1d(clusters, "clusters")
    check_same_length(labels=y, clusters=groups)
    dims: dict[str, pd.Series] = {}
    for d, v in slices.items():
        arr = as_1d(v, d)
        check_same_length(labels=y, **{d: arr})
        dims[d] = pd.Series(arr)
    share_pass = float(np.nanmean(y)) if np.any(~np.isnan(y)) else math.nan
    found: list[dict[str, Any]] = []
    for judge, raw in verdicts.items():
        v = as_binary(raw, judge, allow_missing=True)
        check_same_length(labels=y, verdicts=v)
        use = ~np.isnan(y) & ~np.isnan(v)
        codes, n_tasks = item_codes(groups[use])
        cell = (y[use] * 2 + v[use]).astype(int)
        for dim, values in dims.items():
            vals = values[use].reset_index(drop=True)
            for value in sorted({str(x) for x in vals.dropna()}):
                inside = (vals.astype(str) == value) & vals.notna()
                rows = np.zeros((int(use.sum()), 8))
                rows[np.arange(len(cell)), cell + np.where(inside, 0, 4)] = 1.0
                sums = per_item_sums(codes, n_tasks, rows)
                got = cluster_bootstrap_many(
                    sums, _stats(), n_boot=n_boot, seed=seed, level=level, keep_draws=True
                )
                n = int(inside.sum())
                n_pass = int(rows[inside.to_numpy(), 2:4].sum())
                need = labels_needed(
                    n=n,
                    n_pass=n_pass,
                    n_fail=n - n_pass,
                    share_pass=share_pass,
                    min_labels=min_labels,
                    min_per_class=min_per_class,
                )
                k = got["kappa"][0]
                found.append(
                    {
                        "judge": str(judge),
                        "dimension": str(dim),
                        "value": value,
                        "n": n,
                        "n_pass": n_pass,
                        "n_fail": n - n_pass,
                        **{name: est for name, (est, _) in got.items()},
                        "p_value": _p_value(got["delta"][1]) if need == 0 else math.nan,
                        "n_more": need,
                        "n_more_for_width": label_budget(n, k.low, k.high, target=target).n_more,
                    }
                )
    adjusted = adjust_p([r["p_value"] for r in found], method=method)
    out = []
    for r, p_adj in zip(found, adjusted, strict=True):
        flagged = bool(p_adj <= alpha and r["delta"].value < 0)  # NaN compares False
        out.append(SliceRow(**r, p_adjusted=float(p_adj), flagged=flagged))
    return out
