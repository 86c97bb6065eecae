"""The ``stack`` alignment method (optional): judge outputs and rule checks in one model.

A logistic regression on standardised inputs (the judge's per-item features and the rule-check
scores), fitted on dev items only. It says which inputs carry the weight two ways:

* the standardised coefficient of each input (log-odds per standard deviation on dev), from
  the model fitted on all dev items;
* its permutation importance, cross-fitted: for each fold of dev tasks, the model fitted on
  the other folds is scored on the fold with the input's values shuffled
  (:func:`sklearn.inspection.permutation_importance`, scoring the Brier score); the importance
  is the mean rise in Brier score over folds and repeats. Out-of-fold, so an input that only
  helps the model memorise dev items gets no credit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from trajudge.alignment._calibrate import (
    Calibrator,
    _fit_one,
    cross_fit,
    feature_matrix,
    fit_logistic,
    task_folds,
)
from trajudge.calibration._estimate import FloatArray, as_1d, check_same_length, num
from trajudge.calibration._validation import binary_labels


@dataclass(frozen=True)
class FeatureWeight:
    """One input of the stacked model: its standardised coefficient and permutation importance.

    ``importance`` is the mean rise of the out-of-fold Brier score when the input is shuffled
    (0: the model does not use it); ``importance_sd`` its standard deviation over folds and
    repeats.
    """

    name: str
    coefficient: float
    importance: float
    importance_sd: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "coefficient": num(self.coefficient),
            "importance": num(self.importance),
            "importance_sd": num(self.importance_sd),
        }


@dataclass(frozen=True)
class StackFit:
    """The stacked model (a logistic :class:`Calibrator`), its inputs' weights (largest
    importance first) and the cross-fitted dev probabilities."""

    model: Calibrator
    weights: tuple[FeatureWeight, ...]
    dev_oof: FloatArray = field(compare=False)
    folds: npt.NDArray[np.int64] = field(compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model.to_dict(), "weights": [w.to_dict() for w in self.weights]}


def fit_stack(
    features: pd.DataFrame,
    labels: npt.ArrayLike,
    tasks: npt.ArrayLike,
    *,
    n_folds: int = 5,
    C: float = 1.0,
    n_repeats: int = 10,
    seed: int = 0,
) -> StackFit:
    """Fit the stacked model on DEV items and measure which inputs carry the weight.

    Parameters
    ----------
    features : DataFrame
        Per dev item, one column per input: judge outputs (``score``, ``score_sd``, ...)
        and rule-check scores (e.g. one 0/1 or 0..1 column per check). No missing values.
    labels : array-like of shape (n_dev,)
        Human 0/1 label per dev item.
    tasks : array-like of shape (n_dev,)
        Task of each dev item (folds keep tasks whole).
    n_folds, C :
        As in :func:`fit_calibrator` (``method="platt"``).
    n_repeats, seed :
        Shuffles per input and fold for the permutation importance, and their seed.

    Returns
    -------
    StackFit

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 400)
    >>> X = pd.DataFrame({"score": y * 2 + rng.normal(0, 1, 400), "noise": rng.normal(size=400)})
    >>> fit = fit_stack(X, y, np.arange(400) // 4, n_repeats=3)
    >>> [w.name for w in fit.weights]  # the informative input first
    ['score', 'noise']

    References
    ----------
    Breiman (2001), Machine Learning 45(1) (permutation importance); Wolpert (1992), Neural
    Networks 5(2) (stacking).
    """
    x, names = feature_matrix(features)
    y = binary_labels(labels)
    check_same_length(features=x[:, 0], labels=y, tasks=as_1d(tasks, "tasks"))
    model = _fit_one(x, y, names, "platt", C)
    folds = task_folds(tasks, n_folds)

    def fit(xt: FloatArray, yt: FloatArray) -> Calibrator:
        return _fit_one(xt, yt, names, "platt", C)

    oof = cross_fit(x, y, folds, fit)
    rises = []
    for k in np.unique(folds):
        test = folds == k
        lr, means, scales = fit_logistic(x[~test], y[~test], C)
        z = (x[test] - means) / scales
        from sklearn.inspection import permutation_importance

        r = permutation_importance(
            lr, z, y[test], scoring="neg_brier_score", n_repeats=n_repeats, random_state=seed
        )
        rises.append(r.importances)  # (n_features, n_repeats): drop in -Brier = rise in Brier
    all_rises = np.concatenate(rises, axis=1)
    weights = [
        FeatureWeight(
            name=n,
            coefficient=model.coef[j],
            importance=float(all_rises[j].mean()),
            importance_sd=float(all_rises[j].std()),
        )
        for j, n in enumerate(names)
    ]
    weights.sort(key=lambda w: -w.importance)
    return StackFit(model=model, weights=tuple(weights), dev_oof=oof, folds=folds)
