"""Method choice on dev: every alignment method cross-validated on the same task folds.

The holdout says how well the saved method does; it must not also say WHICH method to save,
or its figures would be the optimistic best of several. So the choice is made on dev alone:
the labelled dev items are split into folds of whole tasks (:func:`task_folds`, scikit-learn's
``GroupKFold``), each method is fitted on all folds but one and gives its 0/1 verdicts on the
one left out, and Cohen's kappa of those out-of-fold verdicts of every dev item against the
labels is the method's cross-validated kappa. The judge as it stands is fitted on nothing, so
its figure on the same items is its plain kappa there: the two are on the same footing.

Out-of-fold verdicts are pooled over folds before kappa is taken (one kappa over all dev
items), not averaged per fold: a fold of one or two tasks often holds one class only, where
a per-fold kappa is undefined.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from trajudge.alignment._threshold import Criterion, apply_threshold, fit_threshold
from trajudge.calibration._estimate import FloatArray, as_1d, check_same_length, num
from trajudge.calibration._validation import binary_labels
from trajudge.calibration.agreement._agreement import kappa_from_counts


def verdict_kappa(labels: npt.ArrayLike, verdicts: npt.ArrayLike) -> float:
    """Cohen's kappa of 0/1 verdicts against 0/1 labels (NaN when both hold one class only).

    >>> verdict_kappa([0, 0, 1, 1], [0, 1, 1, 1])  # p_o 3/4, p_e (2*1 + 2*3)/16 = 1/2
    0.5
    """
    y = binary_labels(labels)
    v = binary_labels(verdicts, "verdicts")
    check_same_length(labels=y, verdicts=v)
    counts = np.zeros((2, 2))
    np.add.at(counts, (y.astype(int), v.astype(int)), 1.0)
    return float(kappa_from_counts(counts))


def threshold_oof(
    scores: npt.ArrayLike,
    labels: npt.ArrayLike,
    folds: npt.NDArray[np.int64],
    *,
    criterion: Criterion = "kappa",
) -> FloatArray:
    """Out-of-fold verdicts of the ``threshold`` method: each fold cut by the threshold fitted
    on the other folds (:func:`fit_threshold`).

    >>> threshold_oof([1, 4, 2, 5, 1, 4], [0, 1, 0, 1, 0, 1], np.array([0, 0, 1, 1, 2, 2])).tolist()
    [0.0, 1.0, 0.0, 1.0, 0.0, 1.0]
    """
    s = as_1d(scores, "scores").astype(np.float64)
    y = binary_labels(labels)
    check_same_length(scores=s, labels=y, folds=folds)
    out = np.empty(y.size, dtype=np.float64)
    for k in np.unique(folds):
        test = folds == k
        try:
            fit = fit_threshold(s[~test], y[~test], criterion=criterion)
        except ValueError as err:
            raise ValueError(f"fold {int(k)}: {err} (fewer folds or more labelled tasks)") from err
        out[test] = apply_threshold(s[test], fit)
    return out


@dataclass(frozen=True)
class DevCrossValidation:
    """Cross-validated kappa on dev of each method, beside the judge's on the same items.

    ``kappa[m]`` is the kappa of method m's out-of-fold verdicts over the ``n_items`` labelled
    dev items (``n_tasks`` tasks in ``n_folds`` folds); ``judge_kappa`` the kappa of the
    judge's verdicts as they stand on the same items. ``folds[i]`` is the fold of the i-th dev
    item in item order.
    """

    n_folds: int
    n_items: int
    n_tasks: int
    judge_kappa: float
    kappa: Mapping[str, float]
    folds: npt.NDArray[np.int64] = field(compare=False, repr=False)

    def no_worse(self, method: str) -> bool:
        """Whether dev says ``method`` is at least as good as the judge (False when either
        kappa is undefined: nothing shows it is no worse)."""
        k = self.kappa.get(method, math.nan)
        return not (math.isnan(k) or math.isnan(self.judge_kappa)) and k >= self.judge_kappa

    def to_dict(self) -> dict[str, Any]:
        return {
            "n_folds": self.n_folds,
            "n_items": self.n_items,
            "n_tasks": self.n_tasks,
            "judge_kappa": num(self.judge_kappa),
            "kappa": {m: num(k) for m, k in self.kappa.items()},
        }


def dev_cross_validation(
    labels: npt.ArrayLike,
    judge_verdicts: npt.ArrayLike,
    oof_verdicts: Mapping[str, npt.ArrayLike],
    folds: npt.NDArray[np.int64],
    tasks: npt.ArrayLike,
) -> DevCrossValidation:
    """Compare each method's out-of-fold dev verdicts with the judge's (module docstring).

    Parameters
    ----------
    labels : array-like of shape (n_dev,)
        Human 0/1 label per labelled dev item.
    judge_verdicts : array-like of shape (n_dev,)
        The judge's 0/1 verdict as it stands on the same items.
    oof_verdicts : mapping of method -> array-like of shape (n_dev,)
        Each method's out-of-fold 0/1 verdicts, all on the same ``folds``.
    folds, tasks : arrays of shape (n_dev,)
        The fold and the task of every item.

    Examples
    --------
    >>> cv = dev_cross_validation([0, 0, 1, 1], [0, 1, 1, 1], {"threshold": [0, 0, 1, 1]},
    ...                           np.array([0, 0, 1, 1]), ["a", "a", "b", "b"])
    >>> cv.judge_kappa, cv.kappa["threshold"], cv.no_worse("threshold")
    (0.5, 1.0, True)
    """
    y = binary_labels(labels)
    t = as_1d(tasks, "tasks")
    check_same_length(labels=y, folds=folds, tasks=t)
    return DevCrossValidation(
        n_folds=int(np.unique(folds).size),
        n_items=int(y.size),
        n_tasks=int(np.unique(t.astype(str)).size),
        judge_kappa=verdict_kappa(y, judge_verdicts),
        kappa={m: verdict_kappa(y, v) for m, v in oof_verdicts.items()},
        folds=folds,
    )
