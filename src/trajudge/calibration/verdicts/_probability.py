"""How good a probability of pass is: Brier score, expected calibration error, reliability bins.

Binning (used by :func:`expected_calibration_error` and :func:`reliability_diagram`): ``n_bins``
equal-width bins on [0, 1], the same as ``sklearn.calibration.calibration_curve(...,
strategy="uniform")``: bin b holds the probabilities in ``(b/n_bins, (b+1)/n_bins]``, the first
bin also holds 0. Empty bins have no weight in the error.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
import pandas as pd

from trajudge.calibration._estimate import FloatArray, as_1d, check_same_length
from trajudge.calibration._validation import binary_labels


def _probabilities(y_true: object, p: object) -> tuple[FloatArray, FloatArray]:
    y = binary_labels(y_true, "y_true")
    q = as_1d(p, "p").astype(np.float64)
    check_same_length(y_true=y, p=q)
    if np.isnan(q).any() or (q < 0).any() or (q > 1).any():
        raise ValueError("probabilities must lie in [0, 1], without missing values")
    return y, q


def brier_score(y_true: npt.ArrayLike, p: npt.ArrayLike) -> float:
    r"""Brier score: the mean squared gap between probability and outcome.

    .. math:: BS = \frac{1}{n}\sum_i (p_i - y_i)^2

    Equal to ``sklearn.metrics.brier_score_loss``. 0 is perfect; always answering 0.5 scores
    0.25. NaN without items.

    Examples
    --------
    >>> brier_score([1, 0, 1], [0.8, 0.4, 1.0])  # (0.04 + 0.16 + 0) / 3
    0.06666666666666667

    References
    ----------
    Brier (1950), Monthly Weather Review 78(1), 1-3.
    """
    y, q = _probabilities(y_true, p)
    return float(np.mean((q - y) ** 2)) if y.size else math.nan


def bin_index(q: FloatArray, n_bins: int) -> npt.NDArray[np.int64]:
    """The bin of each probability, 0 .. n_bins - 1 (the binning of the module docstring)."""
    if n_bins < 1:
        raise ValueError(f"n_bins must be >= 1, got {n_bins}")
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    return np.searchsorted(edges[1:-1], q, side="left").astype(np.int64)


def reliability_diagram(
    y_true: npt.ArrayLike, p: npt.ArrayLike, *, n_bins: int = 10
) -> pd.DataFrame:
    """The data of a reliability diagram: per probability bin, predicted vs observed.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        0/1 outcomes (human labels).
    p : array-like of shape (n,)
        Predicted probabilities of pass.
    n_bins : int
        Number of equal-width bins (see the module docstring for the edges).

    Returns
    -------
    DataFrame
        One row per bin, empty ones included: ``bin, low, high, count, mean_predicted,
        observed_rate`` (the last two NaN for an empty bin). A calibrated judge has
        ``observed_rate`` close to ``mean_predicted`` in every well-filled bin.

    Examples
    --------
    >>> d = reliability_diagram([0, 1, 1, 1], [0.1, 0.15, 0.9, 0.95], n_bins=2)
    >>> d[["count", "mean_predicted", "observed_rate"]].values.tolist()
    [[2.0, 0.125, 0.5], [2.0, 0.925, 1.0]]
    """
    y, q = _probabilities(y_true, p)
    b = bin_index(q, n_bins)
    count = np.bincount(b, minlength=n_bins).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_p = np.bincount(b, weights=q, minlength=n_bins) / count
        rate = np.bincount(b, weights=y, minlength=n_bins) / count
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    return pd.DataFrame(
        {
            "bin": np.arange(n_bins),
            "low": edges[:-1],
            "high": edges[1:],
            "count": count,
            "mean_predicted": mean_p,
            "observed_rate": rate,
        }
    )


def expected_calibration_error(
    y_true: npt.ArrayLike, p: npt.ArrayLike, *, n_bins: int = 10
) -> float:
    r"""Expected calibration error over equal-width bins.

    .. math:: ECE = \sum_b \frac{n_b}{n} \left| \bar y_b - \bar p_b \right|

    with :math:`n_b` the items in bin b, :math:`\bar y_b` their observed pass rate and
    :math:`\bar p_b` their mean predicted probability (bins as in the module docstring;
    empty bins weigh nothing). 0 is perfect. On n items even a calibrated judge scores about
    :math:`\sum_b (n_b/n) \sqrt{2 \bar p_b (1-\bar p_b) / (\pi n_b)}` from sampling noise,
    so compare judges on the same items. NaN without items.

    Examples
    --------
    >>> # bins (0, .5]: p̄ = .125, ȳ = .5; (.5, 1]: p̄ = .925, ȳ = 1 -> (.375 + .075) / 2
    >>> round(expected_calibration_error([0, 1, 1, 1], [0.1, 0.15, 0.9, 0.95], n_bins=2), 6)
    0.225

    References
    ----------
    Naeini, Cooper & Hauskrecht (2015), AAAI; Guo, Pleiss, Sun & Weinberger (2017), ICML.
    """
    d = reliability_diagram(y_true, p, n_bins=n_bins)
    filled = d[d["count"] > 0]
    n = float(filled["count"].sum())
    if n == 0:
        return math.nan
    gap = (filled["observed_rate"] - filled["mean_predicted"]).abs()
    return float((filled["count"] * gap).sum() / n)
