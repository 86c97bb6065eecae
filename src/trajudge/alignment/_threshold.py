"""The ``threshold`` alignment method: the pass threshold on an ordinal score, fitted on dev labels.

A lenient judge gives a failing trajectory a 4 on a 1..5 scale whose rubric passes at 4; moving
the threshold to where its scores separate the human passes from the fails removes the leniency
without touching the judge. The threshold is fitted on dev items only and applied unchanged to the
holdout (:func:`trajudge.alignment.align` reports it there).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from trajudge.calibration._estimate import FloatArray, as_1d, check_same_length, num, safe_divide
from trajudge.calibration._validation import binary_labels
from trajudge.calibration.agreement._agreement import kappa_from_counts

Criterion = Literal["kappa", "balanced_accuracy"]


@dataclass(frozen=True)
class ThresholdFit:
    """A fitted threshold: an item passes when its (mean) score is ``>= value``.

    ``dev_score`` is the criterion at the threshold on the dev items it was fitted on (optimistic:
    the holdout says how well it does); ``n_candidates`` the thresholds compared.
    """

    value: float
    criterion: Criterion
    dev_score: float
    n_dev: int
    n_candidates: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "value": num(self.value),
            "criterion": self.criterion,
            "dev_score": num(self.dev_score),
            "n_dev": self.n_dev,
            "n_candidates": self.n_candidates,
        }


def _criterion_of_thresholds(
    scores: FloatArray, y: FloatArray, thresholds: FloatArray, criterion: Criterion
) -> FloatArray:
    """The criterion of the rule ``score >= threshold`` for every threshold, vectorised."""
    pos, neg = np.sort(scores[y == 1.0]), np.sort(scores[y == 0.0])
    fn = np.searchsorted(pos, thresholds, side="left")  # human passes scored below the threshold
    tn = np.searchsorted(neg, thresholds, side="left")
    tp, fp = pos.size - fn, neg.size - tn
    if criterion == "kappa":
        counts = np.stack([np.stack([tn, fp], -1), np.stack([fn, tp], -1)], -2)
        return kappa_from_counts(counts)
    if criterion == "balanced_accuracy":
        tpr = safe_divide(tp.astype(float), (tp + fn).astype(float))
        tnr = safe_divide(tn.astype(float), (tn + fp).astype(float))
        return np.asarray((tpr + tnr) / 2.0, dtype=np.float64)
    raise ValueError(f"criterion must be 'kappa' or 'balanced_accuracy', got {criterion!r}")


def fit_threshold(
    scores: npt.ArrayLike,
    labels: npt.ArrayLike,
    *,
    criterion: Criterion = "kappa",
    candidates: npt.ArrayLike | None = None,
) -> ThresholdFit:
    r"""Fit the pass threshold ``score >= t`` that agrees best with the labels, on dev items only.

    Every candidate t is scored by the criterion of the verdicts it gives on these items,

    * ``"kappa"``: Cohen's kappa, :math:`(p_o - p_e) / (1 - p_e)`;
    * ``"balanced_accuracy"``: :math:`(TPR + TNR) / 2`, the mean of the agreement on human
      passes and on human fails (Youden's J + 1, then halved),

    and the best one is kept; ties go to the lowest t (the same rule as
    :func:`trajudge.calibration.best_threshold`).

    Parameters
    ----------
    scores : array-like of shape (n_dev,)
        The judge's per-item score on the DEV items (e.g. ``item_features(...)["score"]``).
    labels : array-like of shape (n_dev,)
        The human 0/1 label of the same items.
    criterion : {"kappa", "balanced_accuracy"}
        What "agrees best" means.
    candidates : array-like, optional
        The thresholds to compare; default the distinct observed dev scores (a threshold
        between two of them gives the same dev verdicts as the upper one).

    Returns
    -------
    ThresholdFit

    Raises
    ------
    ValueError
        When the labels hold one class only (no threshold can be told apart from another), or the
        inputs are empty or of different lengths.

    Examples
    --------
    >>> fit_threshold([1, 2, 3, 4, 5, 5], [0, 0, 0, 1, 1, 1]).value
    4.0
    >>> # lenient: human fails get 3 and 4; the threshold moves to 5
    >>> fit_threshold([3, 4, 4, 5, 5, 5], [0, 0, 0, 1, 1, 1]).value
    5.0
    """
    s = as_1d(scores, "scores").astype(np.float64)
    y = binary_labels(labels)
    check_same_length(scores=s, labels=y)
    if np.isnan(s).any():
        raise ValueError("scores contain missing values")
    if s.size == 0 or y.min() == y.max():
        raise ValueError("labels hold one class only (or none): no threshold can be fitted")
    thresholds = np.unique(
        s if candidates is None else as_1d(candidates, "candidates").astype(float)
    )
    values = _criterion_of_thresholds(s, y, thresholds, criterion)
    if np.isnan(values).all():
        best = math.nan
        best_value = math.nan
    else:
        i = int(np.nanargmax(values))  # the first maximum: the lowest threshold
        best, best_value = float(thresholds[i]), float(values[i])
    return ThresholdFit(
        value=best,
        criterion=criterion,
        dev_score=best_value,
        n_dev=int(s.size),
        n_candidates=int(thresholds.size),
    )


def apply_threshold(scores: npt.ArrayLike, fit: ThresholdFit | float) -> FloatArray:
    """0/1 verdicts ``score >= threshold`` (NaN scores stay NaN).

    >>> apply_threshold([3.5, 4.0, 5.0], 4.0).tolist()
    [0.0, 1.0, 1.0]
    """
    threshold = fit.value if isinstance(fit, ThresholdFit) else float(fit)
    s = as_1d(scores, "scores").astype(np.float64)
    out = (s >= threshold).astype(np.float64)
    out[np.isnan(s)] = np.nan
    return out
