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

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from trajudge.calibration._agreement import Weights, _labels_of, encode, kappa_from_counts
from trajudge.calibration._estimate import (
    Estimate,
    FloatArray,
    as_1d,
    check_same_length,
    percentile_interval,
)

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
        Per-item sums of the quantities the statistic needs.
    statistic : callable
        Maps totals of shape (..., m) to values of shape (...), vectorised.
    n_boot, seed, level :
        Resamples, generator seed, interval level.

    Returns
    -------
    (Estimate, draws)
        The estimate on all items with its interval (NaN when more than 10% of the draws are
        undefined), and the B bootstrap draws.

    Examples
    --------
    >>> sums = np.array([[1.0, 2.0], [0.0, 2.0], [2.0, 2.0]])  # passes, rows per item
    >>> est, _ = cluster_bootstrap(sums, lambda s: s[..., 0] / s[..., 1], n_boot=200)
    >>> est.value  # 3 / 6
    0.5
    """
    sums = np.asarray(sums, dtype=np.float64)
    value = float(statistic(sums.sum(axis=0)))
    if sums.shape[0] == 0 or n_boot < 1:
        return Estimate(value, np.nan, np.nan, int(sums.shape[0]), level), np.empty(0)
    draws = np.asarray(statistic(resampled_sums(sums, n_boot=n_boot, seed=seed)), dtype=float)
    low, high = percentile_interval(draws, level=level)
    return Estimate(value, low, high, int(sums.shape[0]), level), draws


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
) -> Estimate:
    """``sum(numerator) / sum(denominator)`` over rows, items resampled as clusters.

    Examples
    --------
    >>> bootstrap_ratio([1, 0, 1, 1], [1, 1, 1, 1], ["a", "a", "b", "b"], n_boot=100).value
    0.75
    """
    codes, n_items = item_codes(items)
    num = np.asarray(numerator, dtype=np.float64)
    den = np.asarray(denominator, dtype=np.float64)
    check_same_length(numerator=num, denominator=den, items=codes)
    sums = per_item_sums(codes, n_items, np.column_stack([num, den]))
    return cluster_bootstrap(sums, ratio_statistic, n_boot=n_boot, seed=seed, level=level)[0]


def confusion_per_item(
    y1: object, y2: object, items: object, labels: Sequence[Any] | None = None
) -> tuple[FloatArray, list[Any]]:
    """Per-item confusion counts, flattened: (n_items x K*K), and the labels used."""
    a, b = as_1d(y1, "y1"), as_1d(y2, "y2")
    codes, n_items = item_codes(items)
    check_same_length(y1=a, y2=b, items=codes)
    labels = _labels_of(a, b) if labels is None else list(labels)
    k = len(labels)
    cell = encode(a, labels) * k + encode(b, labels)
    counts = np.bincount(codes * (k * k) + cell, minlength=n_items * k * k)
    return counts.reshape(n_items, k * k).astype(np.float64), labels


def bootstrap_kappa(
    y1: object,
    y2: object,
    items: object,
    *,
    weights: Weights = None,
    labels: Sequence[Any] | None = None,
    n_boot: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[Estimate, FloatArray]:
    """Cohen's kappa with a clustered percentile bootstrap interval.

    The kappa of every resample is computed from its confusion-count tensor
    (B x K x K) in one vectorised step.

    Parameters
    ----------
    y1, y2 : array-like of shape (n_rows,)
        The two raters' labels per row (for a judge: human consensus, judge verdict).
    items : array-like of shape (n_rows,)
        The item of each row; all rows of an item are resampled together.
    weights, labels :
        As in :func:`cohen_kappa`.
    n_boot, seed, level :
        Resamples, generator seed, interval level.

    Returns
    -------
    (Estimate, draws)

    Examples
    --------
    >>> est, draws = bootstrap_kappa([1, 1, 0, 0], [1, 0, 0, 0], [1, 2, 3, 4], n_boot=50)
    >>> est.value, draws.shape
    (0.5, (50,))
    """
    sums, labels = confusion_per_item(y1, y2, items, labels)
    k = len(labels)

    def stat(totals: FloatArray) -> FloatArray:
        return kappa_from_counts(totals.reshape(*totals.shape[:-1], k, k), weights=weights)

    return cluster_bootstrap(sums, stat, n_boot=n_boot, seed=seed, level=level)
