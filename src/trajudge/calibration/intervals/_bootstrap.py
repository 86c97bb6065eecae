"""Clustered bootstrap over items, vectorised with numpy.

All rows of one item (repeated samples, both presentation orders) are resampled together:
rows of one item are correlated, and resampling them one by one would treat them as
independent evidence and give intervals that are too narrow.

Every statistic here is a function of per-item sums (confusion counts, pass counts, moments).
A resample's sums are ``M @ S``, where ``S`` holds the per-item sums (n_items x m) and ``M``
the number of times each item was drawn (B x n_items, built with ``np.bincount`` from the
index matrix). So all B resamples are computed at once, without a Python loop over B. The
index matrix is drawn from one seeded ``numpy.random.Generator`` in blocks of a fixed number
of rows (set by ``n_items`` only), which bounds memory and keeps results reproducible.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from trajudge.calibration._estimate import Estimate, FloatArray, bca_interval, safe_divide
from trajudge.calibration._validation import as_1d, as_binary, as_float, check_same_length
from trajudge.calibration.agreement._agreement import (
    Weights,
    _labels_of,
    ac1_from_counts,
    encode,
    kappa_from_counts,
)
from trajudge.calibration.intervals._boundary import boundary_ac1, boundary_kappa, boundary_rate

#: Cells of the (rows x n_items) multiplicity block held in memory at once.
_BLOCK_CELLS = 4_000_000

SumStatistic = Callable[[FloatArray], FloatArray]


def item_codes(items: object) -> tuple[npt.NDArray[np.int64], int]:
    """Integer codes 0..n_items-1 for the item of each row, and n_items."""
    arr = as_1d(items, "items")
    _, codes = np.unique(arr.astype(str) if arr.dtype == object else arr, return_inverse=True)
    return codes.astype(np.int64), int(codes.max()) + 1 if codes.size else 0


def per_item_sums(codes: npt.NDArray[np.int64], n_items: int, values: npt.ArrayLike) -> FloatArray:
    """Sum the row values (n_rows x m) within each item: an (n_items x m) array."""
    v = np.asarray(values, dtype=np.float64)
    v = v[:, None] if v.ndim == 1 else v
    out = np.empty((n_items, v.shape[1]), dtype=np.float64)
    for j in range(v.shape[1]):
        out[:, j] = np.bincount(codes, weights=v[:, j], minlength=n_items)
    return out


def _blocks(n_items: int, n_boot: int, seed: int) -> Iterator[npt.NDArray[np.int64]]:
    rng = np.random.default_rng(seed)
    rows = max(1, _BLOCK_CELLS // max(n_items, 1))
    done = 0
    while done < n_boot:
        b = min(rows, n_boot - done)
        yield rng.integers(0, n_items, size=(b, n_items), dtype=np.int64)
        done += b


def multiplicities(n_items: int, n_boot: int, seed: int) -> FloatArray:
    """How many times each item is drawn in each resample: an (n_boot x n_items) array.

    The same draws as :func:`resampled_sums` with the same seed
    (``resampled_sums(S) == multiplicities(len(S)) @ S``).
    """
    out = np.empty((n_boot, n_items), dtype=np.float64)
    start = 0
    for idx in _blocks(n_items, n_boot, seed):
        b = idx.shape[0]
        flat = (idx + (np.arange(b, dtype=np.int64) * n_items)[:, None]).ravel()
        out[start : start + b] = np.bincount(flat, minlength=b * n_items).reshape(b, n_items)
        start += b
    return out


def resampled_sums(sums: FloatArray, *, n_boot: int, seed: int) -> FloatArray:
    """Per-resample totals of per-item sums: an (n_boot x m) array.

    Parameters
    ----------
    sums : array of shape (n_items, m)
        Per-item sums (see :func:`per_item_sums`).
    n_boot : int
        Number of bootstrap resamples B; each draws n_items items with replacement.
    seed : int
        Seed of the generator.
    """
    sums = np.asarray(sums, dtype=np.float64)
    n_items = sums.shape[0]
    out = np.empty((n_boot, sums.shape[1]), dtype=np.float64)
    start = 0
    for idx in _blocks(n_items, n_boot, seed):
        b = idx.shape[0]
        flat = (idx + (np.arange(b, dtype=np.int64) * n_items)[:, None]).ravel()
        mult = np.bincount(flat, minlength=b * n_items).reshape(b, n_items)
        out[start : start + b] = mult.astype(np.float64) @ sums
        start += b
    return out


def cluster_bootstrap(
    sums: FloatArray,
    statistic: SumStatistic,
    *,
    n_boot: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[Estimate, FloatArray]:
    """Point estimate and percentile interval of a statistic of per-item sums.

    Parameters
    ----------
    sums : array of shape (n_items, m)
        Per-item (per-cluster) sums of the quantities the statistic needs.
    statistic : callable
        Maps totals of shape (..., m) to values of shape (...), vectorised.
    n_boot, seed, level :
        Resamples, generator seed, interval level.

    Returns
    -------
    (Estimate, draws)
        The estimate on all items with its BCa interval (:func:`bca_interval`; NaN when more
        than 10% of the draws are undefined, or there are no items), and the B draws.

    Examples
    --------
    >>> sums = np.array([[1.0, 2.0], [0.0, 2.0], [2.0, 2.0]])  # passes, rows per item
    >>> est, _ = cluster_bootstrap(sums, lambda s: s[..., 0] / s[..., 1], n_boot=200)
    >>> est.value  # 3 / 6
    0.5
    """
    found = cluster_bootstrap_many(
        sums, {"x": statistic}, n_boot=n_boot, seed=seed, level=level, keep_draws=True
    )
    return found["x"]


def cluster_bootstrap_many(
    sums: FloatArray,
    statistics: Mapping[str, SumStatistic],
    *,
    n_boot: int = 2000,
    seed: int = 0,
    level: float = 0.95,
    keep_draws: bool = False,
) -> dict[str, tuple[Estimate, FloatArray]]:
    """:func:`cluster_bootstrap` of several statistics of the same sums, one set of resamples.

    Every statistic sees the same resamples, so their intervals are consistent with each
    other (e.g. kappa, agreement, TPR and TNR of one confusion table). Draws are returned
    only with ``keep_draws`` (an empty array otherwise).
    """
    sums = np.asarray(sums, dtype=np.float64)
    n = int(sums.shape[0])
    totals = sums.sum(axis=0)
    resampled = None
    if n > 0 and n_boot >= 1:
        resampled = resampled_sums(sums, n_boot=n_boot, seed=seed)
    out: dict[str, tuple[Estimate, FloatArray]] = {}
    for name, statistic in statistics.items():
        with np.errstate(invalid="ignore", divide="ignore"):
            value = float(statistic(totals)) if n > 0 else math.nan
        if resampled is None:
            out[name] = (Estimate(value, math.nan, math.nan, n, level), np.empty(0))
            continue
        with np.errstate(invalid="ignore", divide="ignore"):
            draws = np.asarray(statistic(resampled), dtype=np.float64)
            jackknife = np.asarray(statistic(totals[None, :] - sums), dtype=np.float64)
        low, high = bca_interval(draws, value, jackknife, level=level)
        out[name] = (Estimate(value, low, high, n, level), draws if keep_draws else np.empty(0))
    return out


def ratio_statistic(totals: FloatArray) -> FloatArray:
    """``totals[..., 0] / totals[..., 1]``, NaN where the denominator is zero."""
    num, den = totals[..., 0], totals[..., 1]
    out = np.full(num.shape, np.nan)
    np.divide(num, den, out=out, where=den != 0)
    return out


def bootstrap_ratio(
    numerator: npt.ArrayLike,
    denominator: npt.ArrayLike,
    items: object,
    *,
    n_boot: int = 2000,
    seed: int = 0,
    level: float = 0.95,
    proportion: bool = False,
) -> Estimate:
    """``sum(numerator) / sum(denominator)`` over rows, items resampled as clusters.

    With ``proportion=True`` (each row's numerator a share of its denominator, e.g. 0/1 hits
    over ones) a rate at 0 or 1, or with a zero-width bootstrap interval, gets the
    Clopper-Pearson interval on the effective number of clusters instead
    (:func:`trajudge.calibration.boundary_rate`): there the bootstrap cannot show uncertainty.

    Examples
    --------
    >>> bootstrap_ratio([1, 0, 1, 1], [1, 1, 1, 1], ["a", "a", "b", "b"], n_boot=100).value
    0.75
    >>> est = bootstrap_ratio([1, 1, 1, 1], [1, 1, 1, 1], ["a", "a", "b", "b"], proportion=True)
    >>> est.value, round(est.low, 4), est.high  # 2 clusters: 0.025 ** (1 / 2)
    (1.0, 0.1581, 1.0)
    """
    codes, n_items = item_codes(items)
    num = as_float(numerator, "numerator", allow_missing=False)
    den = as_float(denominator, "denominator", allow_missing=False)
    check_same_length(numerator=num, denominator=den, items=codes)
    sums = per_item_sums(codes, n_items, np.column_stack([num, den]))
    if proportion:
        return proportion_bootstrap(sums, n_boot=n_boot, seed=seed, level=level)
    return cluster_bootstrap(sums, ratio_statistic, n_boot=n_boot, seed=seed, level=level)[0]


def proportion_bootstrap(
    sums: FloatArray, *, n_boot: int = 2000, seed: int = 0, level: float = 0.95
) -> Estimate:
    """A rate from per-cluster (hits, units) sums: the BCa bootstrap interval, or the
    Clopper-Pearson interval on the effective number of clusters where the bootstrap
    cannot show uncertainty (:func:`trajudge.calibration.boundary_rate`).

    >>> est = proportion_bootstrap(np.array([[0.0, 2.0], [0.0, 2.0]]))  # 0 of 4, 2 clusters
    >>> est.value, est.low, round(est.high, 4)  # 1 - 0.025 ** (1 / 2)
    (0.0, 0.0, 0.8419)
    """
    est = cluster_bootstrap(sums, ratio_statistic, n_boot=n_boot, seed=seed, level=level)[0]
    return boundary_rate(est, sums[:, 0], sums[:, 1]) if len(sums) else est


def confusion_per_item(
    y1: object,
    y2: object,
    items: object,
    labels: Sequence[Any] | None = None,
    *,
    sample_weight: object = None,
) -> tuple[FloatArray, list[Any]]:
    """Per-item confusion counts, flattened: (n_items x K*K), and the labels used.

    ``sample_weight`` weighs each row (default 1); NaN ratings raise ValueError.
    """
    a, b = as_1d(y1, "y1"), as_1d(y2, "y2")
    codes, n_items = item_codes(items)
    check_same_length(y1=a, y2=b, items=codes)
    if pd.isna(a).any() or pd.isna(b).any():
        raise ValueError("ratings contain missing values; drop those rows first")
    w = np.ones(len(a)) if sample_weight is None else as_float(sample_weight, "sample_weight")
    check_same_length(y1=a, sample_weight=w)
    labels = _labels_of(a, b) if labels is None else list(labels)
    k = len(labels)
    cell = encode(a, labels) * k + encode(b, labels)
    counts = np.bincount(codes * (k * k) + cell, weights=w, minlength=n_items * k * k)
    return counts.reshape(n_items, k * k).astype(np.float64), labels


def bootstrap_kappa(
    y1: object,
    y2: object,
    items: object,
    *,
    weights: Weights = None,
    labels: Sequence[Any] | None = None,
    sample_weight: object = None,
    n_boot: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[Estimate, FloatArray]:
    """Cohen's kappa with a clustered BCa bootstrap interval.

    The kappa of every resample is computed from its confusion-count tensor
    (B x K x K) in one vectorised step. Where the bootstrap cannot show uncertainty (no
    disagreement, a rater that used one category, a zero-width interval) the interval is the
    one of :func:`trajudge.calibration.kappa_interval` instead (through Clopper-Pearson on the
    effective number of clusters; see ``trajudge.calibration.intervals._boundary``).

    Parameters
    ----------
    y1, y2 : array-like of shape (n_rows,)
        The two raters' labels per row (for a judge: human consensus, judge verdict).
    items : array-like of shape (n_rows,)
        The resampling unit (cluster) of each row: all rows of a cluster are resampled
        together. Pass the task of each row to resample tasks (trials of a task are
        correlated), the item to resample items.
    weights, labels, sample_weight :
        As in :func:`cohen_kappa`.
    n_boot, seed, level :
        Resamples, generator seed, interval level.

    Returns
    -------
    (Estimate, draws)
        ``Estimate.n`` is the number of clusters.

    Examples
    --------
    >>> est, draws = bootstrap_kappa([1, 1, 0, 0], [1, 0, 0, 0], [1, 2, 3, 4], n_boot=50)
    >>> est.value, draws.shape
    (0.5, (50,))
    """
    sums, labels = confusion_per_item(y1, y2, items, labels, sample_weight=sample_weight)
    k = len(labels)

    def stat(totals: FloatArray) -> FloatArray:
        return kappa_from_counts(totals.reshape(*totals.shape[:-1], k, k), weights=weights)

    est, draws = cluster_bootstrap(sums, stat, n_boot=n_boot, seed=seed, level=level)
    return boundary_kappa(est, sums, weights=weights), draws


def binary_agreement(
    y_true: object,
    y_pred: object,
    clusters: object,
    *,
    n_boot: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> dict[str, Estimate]:
    r"""Kappa, Gwet's AC1, percent agreement, TPR and TNR of pass/fail verdicts, with
    clustered bootstrap intervals from one set of resamples.

    With the 2x2 counts (``tn, fp, fn, tp``; 1 = pass) of each resample:
    ``agreement = (tp + tn) / n``, ``tpr = tp / (tp + fn)``, ``tnr = tn / (tn + fp)``,
    kappa and AC1 as in :func:`cohen_kappa` and :func:`gwet_ac1` with both categories
    counted (q = 2). Each is NaN where its denominator is zero.

    Where every resample gives the same value (no disagreement, a judge that never passes or
    never fails, a rate at 0 or 1) the interval is not the bootstrap's but one that shows the
    uncertainty left: Clopper-Pearson on the effective number of clusters for the rates
    (:func:`trajudge.calibration.boundary_rate`), mapped through ``(p - p_e) / (1 - p_e)``
    for κ and AC1, and a bound over judges that could have shown no other class for a
    constant judge's κ (:func:`trajudge.calibration.kappa_interval`).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n,)
        Pass/fail values (see :func:`trajudge.calibration.binary_rates`), one per item.
    clusters : array-like of shape (n,)
        The resampling unit of each item (its task, or the item itself).
    n_boot, seed, level :
        Resamples, generator seed, interval level.

    Returns
    -------
    dict
        ``{"kappa", "ac1", "agreement", "tpr", "tnr"}`` -> :class:`Estimate` (``n`` = number
        of clusters).

    Examples
    --------
    >>> r = binary_agreement([1, 1, 1, 0, 0], [1, 1, 0, 0, 1], [0, 0, 1, 1, 2], n_boot=50)
    >>> round(r["tpr"].value, 4), r["tnr"].value, r["agreement"].value  # 2/3, 1/2, 3/5
    (0.6667, 0.5, 0.6)
    """
    t = as_binary(y_true, "y_true")
    p = as_binary(y_pred, "y_pred")
    sums, _ = confusion_per_item(t, p, clusters, [0.0, 1.0])

    def table(x: FloatArray) -> FloatArray:
        return x.reshape(*x.shape[:-1], 2, 2)

    stats: dict[str, SumStatistic] = {
        "kappa": lambda x: kappa_from_counts(table(x)),
        "ac1": lambda x: ac1_from_counts(table(x)),
        "agreement": lambda x: safe_divide(x[..., 0] + x[..., 3], x.sum(axis=-1)),
        "tpr": lambda x: safe_divide(x[..., 3], x[..., 2] + x[..., 3]),
        "tnr": lambda x: safe_divide(x[..., 0], x[..., 0] + x[..., 1]),
    }
    found = cluster_bootstrap_many(sums, stats, n_boot=n_boot, seed=seed, level=level)
    est = {name: e for name, (e, _) in found.items()}
    if not len(sums):
        return est
    tn, fp, fn, tp = sums.T
    return {
        "kappa": boundary_kappa(est["kappa"], sums),
        "ac1": boundary_ac1(est["ac1"], sums),
        "agreement": boundary_rate(est["agreement"], tn + tp, sums.sum(axis=1)),
        "tpr": boundary_rate(est["tpr"], tp, tp + fn),
        "tnr": boundary_rate(est["tnr"], tn, tn + fp),
    }
