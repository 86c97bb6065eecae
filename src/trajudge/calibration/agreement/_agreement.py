"""Agreement between two raters: confusion counts, Cohen's kappa, Gwet's AC1, rates.

Every coefficient here is computed from a confusion-count matrix by a function that also
accepts a stack of matrices (shape ``(..., K, K)``), so the bootstrap computes thousands of
resamples with the same code as the point estimate.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from trajudge.calibration._estimate import FloatArray, num, safe_divide
from trajudge.calibration._validation import as_1d, as_binary, as_float, check_same_length

Weights = Literal["linear", "quadratic"] | None
IntArray = npt.NDArray[np.int64]


def _labels_of(*arrays: npt.NDArray[Any]) -> list[Any]:
    values = set()
    for a in arrays:
        values.update(pd.unique(a).tolist())
    try:
        return sorted(values)
    except TypeError:  # mixed types: order by their text
        return sorted(values, key=str)


def encode(values: npt.NDArray[Any], labels: Sequence[Any]) -> IntArray:
    """Positions of ``values`` in ``labels``; ValueError for a value outside them."""
    codes = np.asarray(pd.Index(list(labels)).get_indexer(pd.Index(values)), dtype=np.int64)
    if (codes < 0).any():
        bad = values[codes < 0][0]
        raise ValueError(f"value {bad!r} is not among labels {list(labels)}")
    return codes


def _pair(y1: object, y2: object) -> tuple[npt.NDArray[Any], npt.NDArray[Any]]:
    a, b = as_1d(y1, "y1"), as_1d(y2, "y2")
    check_same_length(y1=a, y2=b)
    if pd.isna(a).any() or pd.isna(b).any():
        raise ValueError("ratings contain missing values; drop those rows first")
    return a, b


def confusion(
    y_true: object,
    y_pred: object,
    labels: Sequence[Any] | None = None,
    *,
    sample_weight: object = None,
) -> npt.NDArray[Any]:
    """Confusion counts: ``C[i, j]`` = #rows with ``y_true == labels[i]``, ``y_pred == labels[j]``.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n,)
        The two raters' labels (human first, by the scikit-learn convention).
    labels : sequence, optional
        The categories in order; the sorted union of observed values when omitted.
    sample_weight : array-like of shape (n,), optional
        Weight of each row: the matrix then holds summed weights (floats), as in
        ``sklearn.metrics.confusion_matrix``.

    Examples
    --------
    >>> confusion([1, 1, 0, 0], [1, 0, 0, 0]).tolist()
    [[2, 0], [1, 1]]
    """
    a, b = _pair(y_true, y_pred)
    labels = _labels_of(a, b) if labels is None else list(labels)
    k = len(labels)
    cells = encode(a, labels) * k + encode(b, labels)
    if sample_weight is None:
        return np.bincount(cells, minlength=k * k).reshape(k, k).astype(np.int64)
    w = as_float(sample_weight, "sample_weight", allow_missing=False)
    check_same_length(y_true=a, sample_weight=w)
    return np.bincount(cells, weights=w, minlength=k * k).reshape(k, k)


def _weight_matrix(k: int, weights: Weights) -> FloatArray:
    pos = np.arange(k, dtype=np.float64)
    delta = np.abs(pos[:, None] - pos[None, :])
    if weights is None:
        return (delta > 0).astype(np.float64)
    if weights == "linear":
        return delta
    if weights == "quadratic":
        return delta**2
    raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")


def kappa_from_counts(counts: npt.ArrayLike, *, weights: Weights = None) -> FloatArray:
    """Cohen's kappa of one confusion matrix or a stack of them (shape ``(..., K, K)``).

    ``kappa = 1 - sum(w * O) / sum(w * E)`` with ``O`` the observed proportions, ``E`` the
    outer product of their margins and ``w`` the disagreement weights. NaN where the expected
    disagreement is zero (both raters used one and the same category) or there are no rows.
    """
    c = np.asarray(counts, dtype=np.float64)
    k = c.shape[-1]
    w = _weight_matrix(k, weights)
    n = c.sum(axis=(-2, -1))
    row, col = c.sum(axis=-1), c.sum(axis=-2)
    expected = np.einsum("...i,...j,ij->...", row, col, w)
    observed = np.einsum("...ij,ij->...", c, w) * n
    return np.asarray(1.0 - safe_divide(observed, expected), dtype=np.float64)


def cohen_kappa(
    y1: object,
    y2: object,
    *,
    weights: Weights = None,
    labels: Sequence[Any] | None = None,
    sample_weight: object = None,
) -> float:
    r"""Cohen's kappa, optionally weighted for ordinal scales.

    .. math:: \kappa = 1 - \frac{\sum_{ij} w_{ij} O_{ij}}{\sum_{ij} w_{ij} E_{ij}}

    with :math:`O` the observed proportions, :math:`E_{ij} = p_{i\cdot} p_{\cdot j}` and
    :math:`w_{ij} = [i \ne j]` (unweighted), :math:`|i-j|` (linear) or :math:`(i-j)^2`
    (quadratic), where i, j are positions in ``labels``. Equal to
    ``sklearn.metrics.cohen_kappa_score``.

    Parameters
    ----------
    y1, y2 : array-like of shape (n,)
        The two raters' labels, without missing values.
    weights : {None, "linear", "quadratic"}
        Disagreement weights.
    labels : sequence, optional
        The categories in scale order. Pass the whole scale for weighted kappa: distances
        are between positions in this list. Default: sorted union of observed values.
    sample_weight : array-like of shape (n,), optional
        Weight of each row (e.g. ``1 / rows of its item`` so that every item counts once).

    Returns
    -------
    float
        NaN when there are no rows or the expected disagreement is zero (one category only).

    Examples
    --------
    >>> round(cohen_kappa([1, 1, 0, 0], [1, 0, 0, 0]), 4)  # po = 3/4, pe = 1/2
    0.5

    References
    ----------
    Cohen (1960), Educ. Psychol. Meas. 20(1); Cohen (1968), Psychol. Bull. 70(4);
    Artstein & Poesio (2008), Computational Linguistics 34(4).
    """
    a, b = _pair(y1, y2)
    if a.size == 0:
        return math.nan
    counts = confusion(a, b, labels, sample_weight=sample_weight)
    return float(kappa_from_counts(counts, weights=weights))


def percent_agreement(y1: object, y2: object) -> float:
    """Share of rows where the two raters agree exactly; NaN without rows.

    Examples
    --------
    >>> percent_agreement(["a", "b", "b"], ["a", "b", "a"])  # 2 of 3
    0.6666666666666666
    """
    a, b = _pair(y1, y2)
    return float(np.mean(a == b)) if a.size else math.nan


def ac1_from_counts(counts: npt.ArrayLike) -> FloatArray:
    """Gwet's AC1 of one confusion matrix or a stack of them (shape ``(..., K, K)``)."""
    c = np.asarray(counts, dtype=np.float64)
    q = c.shape[-1]
    n = c.sum(axis=(-2, -1))
    pa = safe_divide(np.trace(c, axis1=-2, axis2=-1), n)
    pi = safe_divide(c.sum(axis=-1) + c.sum(axis=-2), 2.0 * n[..., None])
    pe = (pi * (1.0 - pi)).sum(axis=-1) / (q - 1) if q > 1 else np.full(pa.shape, np.nan)
    return np.asarray(safe_divide(pa - pe, 1.0 - pe), dtype=np.float64)


def gwet_ac1(y1: object, y2: object, *, labels: Sequence[Any] | None = None) -> float:
    r"""Gwet's first-order agreement coefficient (AC1), binary or multi-category.

    .. math:: AC_1 = \frac{p_a - p_e}{1 - p_e},\quad
              p_e = \frac{1}{q-1}\sum_{k=1}^{q} \pi_k (1 - \pi_k),\quad
              \pi_k = \frac{n_{k\cdot} + n_{\cdot k}}{2n}

    with :math:`p_a` the observed agreement and q the number of categories. Unlike kappa it
    stays defined (and high) when one category dominates.

    Parameters
    ----------
    y1, y2 : array-like of shape (n,)
        The two raters' labels.
    labels : sequence, optional
        The categories (q = len(labels)). Default: union of observed values.

    Returns
    -------
    float
        NaN without rows or with fewer than two categories.

    Examples
    --------
    >>> round(gwet_ac1([1, 1, 0, 0], [1, 0, 0, 0]), 4)  # pi = (5/8, 3/8): pe = 15/32
    0.5294

    References
    ----------
    Gwet (2008), Br. J. Math. Stat. Psychol. 61(1), 29-48.
    """
    a, b = _pair(y1, y2)
    if a.size == 0:
        return math.nan
    return float(ac1_from_counts(confusion(a, b, labels)))


@dataclass(frozen=True)
class BinaryRates:
    """Rates of a pass/fail judge against a reference, with the counts behind them.

    ``tpr = tp / (tp + fn)`` (sensitivity), ``tnr = tn / (tn + fp)`` (specificity),
    ``precision = tp / (tp + fp)``; each NaN when its denominator is zero.
    """

    tp: int
    fp: int
    tn: int
    fn: int

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.tn + self.fn

    @property
    def tpr(self) -> float:
        return float(safe_divide(self.tp, self.tp + self.fn))

    @property
    def tnr(self) -> float:
        return float(safe_divide(self.tn, self.tn + self.fp))

    @property
    def precision(self) -> float:
        return float(safe_divide(self.tp, self.tp + self.fp))

    def to_dict(self) -> dict[str, Any]:
        return {
            "tp": self.tp,
            "fp": self.fp,
            "tn": self.tn,
            "fn": self.fn,
            "n": self.n,
            "tpr": num(self.tpr),
            "tnr": num(self.tnr),
            "precision": num(self.precision),
        }


def binary_rates(y_true: object, y_pred: object) -> BinaryRates:
    """True-positive, true-negative rates and precision of ``y_pred`` against ``y_true``.

    Both arrays hold pass/fail values: booleans, 0/1 or the words pass/fail, true/false,
    yes/no (read by :func:`trajudge.calibration.parse_verdict`; 1 = pass). Anything else
    raises ValueError, as do missing values. Every rate is NaN when its denominator is zero
    (no row at all, or no row of that class).

    Examples
    --------
    >>> r = binary_rates([1, 1, 1, 0, 0], [1, 1, 0, 0, 1])
    >>> (r.tp, r.fn, r.tn, r.fp), r.tpr, r.tnr  # tpr = 2/3, tnr = 1/2
    ((2, 1, 1, 1), 0.6666666666666666, 0.5)
    """
    t = as_binary(y_true, "y_true").astype(bool)
    p = as_binary(y_pred, "y_pred").astype(bool)
    check_same_length(y_true=t, y_pred=p)
    return BinaryRates(
        tp=int(np.sum(t & p)),
        fp=int(np.sum(~t & p)),
        tn=int(np.sum(~t & ~p)),
        fn=int(np.sum(t & ~p)),
    )
