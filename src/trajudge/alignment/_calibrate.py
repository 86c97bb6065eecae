"""The ``calibrate`` alignment method: a probability of pass from the judge's outputs.

Two scikit-learn models, fitted on dev items only:

* ``"isotonic"``: :class:`sklearn.isotonic.IsotonicRegression` of the label on ONE feature
  (the mean score, or the expected score from token probabilities): the monotone step
  function closest to the labels; no shape assumed beyond "a higher score is not less likely
  to pass".
* ``"platt"``: logistic regression (:class:`sklearn.linear_model.LogisticRegression`, L2
  penalty ``C`` on standardised features) on one or more features, e.g. the mean score and
  its spread across orders and samples: Platt scaling, generalised to several inputs.

Cross-fitting: dev tasks are split into ``n_folds`` folds (:class:`sklearn.model_selection.
GroupKFold`, so no task is on both sides); each fold's items get the probability of a model
fitted on the other folds (``dev_oof``: honest probabilities for the dev items, used to pick
the trust-or-escalate threshold), and the model kept for new items is fitted on all dev items.

The fitted model is stored as numbers (knots, or coefficients with the standardisation) in a
frozen :class:`Calibrator`, so it can be saved as JSON and reproduced without pickles.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from trajudge.calibration._estimate import FloatArray, as_1d, check_same_length
from trajudge.calibration._validation import binary_labels

if TYPE_CHECKING:
    from sklearn.linear_model import LogisticRegression

Method = Literal["isotonic", "platt"]


@dataclass(frozen=True)
class Calibrator:
    """A fitted map from features to a probability of pass (see the module docstring).

    ``isotonic``: ``p = interp(x, knots_x, knots_y)``, constant beyond the end knots (the
    same as ``IsotonicRegression(out_of_bounds="clip").predict``). ``platt`` (logistic):
    ``p = expit(intercept + sum_j coef_j * (x_j - means_j) / scales_j)``; ``coef`` are
    standardised coefficients (log-odds per standard deviation of the feature on dev).
    """

    method: Method
    features: tuple[str, ...]
    knots_x: tuple[float, ...] = ()
    knots_y: tuple[float, ...] = ()
    means: tuple[float, ...] = ()
    scales: tuple[float, ...] = ()
    coef: tuple[float, ...] = ()
    intercept: float = 0.0
    n_dev: int = 0

    def predict_proba(self, features: pd.DataFrame | npt.ArrayLike) -> FloatArray:
        """The probability of pass of each row (features by name, or in ``self.features`` order)."""
        x, _ = feature_matrix(features, self.features)
        if self.method == "isotonic":
            p = np.interp(x[:, 0], np.asarray(self.knots_x), np.asarray(self.knots_y))
            return np.asarray(p, dtype=np.float64)
        z = (x - np.asarray(self.means)) / np.asarray(self.scales)
        from scipy.special import expit

        return np.asarray(expit(self.intercept + z @ np.asarray(self.coef)), dtype=np.float64)

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "features": list(self.features),
            "knots_x": list(self.knots_x),
            "knots_y": list(self.knots_y),
            "means": list(self.means),
            "scales": list(self.scales),
            "coef": list(self.coef),
            "intercept": self.intercept,
            "n_dev": self.n_dev,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Calibrator:
        """The calibrator that :meth:`to_dict` wrote."""
        method = data["method"]
        if method not in ("isotonic", "platt"):
            raise ValueError(f"unknown calibration method {method!r}")

        def floats(key: str) -> tuple[float, ...]:
            return tuple(float(v) for v in data.get(key, ()))

        return cls(
            method=method,
            features=tuple(str(f) for f in data["features"]),
            knots_x=floats("knots_x"),
            knots_y=floats("knots_y"),
            means=floats("means"),
            scales=floats("scales"),
            coef=floats("coef"),
            intercept=float(data.get("intercept", 0.0)),
            n_dev=int(data.get("n_dev", 0)),
        )


@dataclass(frozen=True)
class CalibrationFit:
    """A calibrator fitted on dev, with the cross-fitted dev probabilities.

    ``dev_oof[i]`` is the probability for the i-th dev item from the model fitted without
    its fold; ``folds[i]`` that fold.
    """

    calibrator: Calibrator
    dev_oof: FloatArray = field(compare=False)
    folds: npt.NDArray[np.int64] = field(compare=False)


def feature_matrix(
    features: pd.DataFrame | npt.ArrayLike, names: Sequence[str] | None = None
) -> tuple[FloatArray, tuple[str, ...]]:
    """An (n, m) float matrix and its column names; a 1-D array is the feature ``score``."""
    if isinstance(features, pd.DataFrame):
        cols = list(features.columns) if names is None else list(names)
        missing = [c for c in cols if c not in features.columns]
        if missing:
            raise ValueError(f"missing feature columns: {missing}")
        x = features[cols].to_numpy(dtype=np.float64)
        out_names = tuple(str(c) for c in cols)
    else:
        x = np.asarray(features, dtype=np.float64)
        x = x[:, None] if x.ndim == 1 else x
        out_names = tuple(names) if names is not None else ("score",)
        if x.ndim != 2 or x.shape[1] != len(out_names):
            raise ValueError(f"features must have {len(out_names)} column(s), got {x.shape}")
    if np.isnan(x).any():
        col = out_names[int(np.flatnonzero(np.isnan(x).any(axis=0))[0])]
        raise ValueError(f"feature {col!r} has missing values")
    return x, out_names


def task_folds(tasks: npt.ArrayLike, n_folds: int) -> npt.NDArray[np.int64]:
    """Fold 0..k-1 of each row, whole tasks per fold (``GroupKFold``, k = min(n_folds, tasks)).

    >>> task_folds(["a", "a", "b", "c", "c", "c"], 2).tolist()
    [1, 1, 1, 0, 0, 0]
    """
    t = as_1d(tasks, "tasks")
    groups, _ = pd.factorize(pd.Series(t), sort=True)
    n_groups = int(groups.max()) + 1 if groups.size else 0
    if n_groups < 2 or n_folds < 2:
        raise ValueError(f"cross-fitting needs >= 2 folds and >= 2 tasks, got {n_groups} tasks")
    folds = np.empty(t.size, dtype=np.int64)
    from sklearn.model_selection import GroupKFold

    splitter = GroupKFold(n_splits=min(n_folds, n_groups))
    for k, (_, test) in enumerate(splitter.split(np.zeros(t.size), groups=groups)):
        folds[test] = k
    return folds


def fit_logistic(
    x: FloatArray, y: FloatArray, c: float
) -> tuple[LogisticRegression, FloatArray, FloatArray]:
    """Logistic regression on standardised columns (a constant column keeps scale 1)."""
    means = x.mean(axis=0)
    sd = x.std(axis=0)
    scales = np.where(sd > 0, sd, 1.0)
    from sklearn.linear_model import LogisticRegression

    lr = LogisticRegression(C=c, max_iter=1000).fit((x - means) / scales, y)
    return lr, means, scales


def _fit_one(
    x: FloatArray, y: FloatArray, names: tuple[str, ...], method: Method, c: float
) -> Calibrator:
    if y.min() == y.max():
        raise ValueError("labels hold one class only: nothing to calibrate against")
    if method == "isotonic":
        if x.shape[1] != 1:
            raise ValueError(f"isotonic calibrates one feature, got {list(names)}; use 'platt'")
        from sklearn.isotonic import IsotonicRegression

        iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(x[:, 0], y)
        return Calibrator(
            method="isotonic",
            features=names,
            knots_x=tuple(float(v) for v in iso.X_thresholds_),
            knots_y=tuple(float(v) for v in iso.y_thresholds_),
            n_dev=int(y.size),
        )
    if method == "platt":
        lr, means, scales = fit_logistic(x, y, c)
        return Calibrator(
            method="platt",
            features=names,
            means=tuple(float(v) for v in means),
            scales=tuple(float(v) for v in scales),
            coef=tuple(float(v) for v in lr.coef_[0]),
            intercept=float(lr.intercept_[0]),
            n_dev=int(y.size),
        )
    raise ValueError(f"method must be 'isotonic' or 'platt', got {method!r}")


def cross_fit(
    x: FloatArray,
    y: FloatArray,
    folds: npt.NDArray[np.int64],
    fit: Any,
) -> FloatArray:
    """Out-of-fold probabilities: each fold predicted by ``fit(x_train, y_train)``."""
    oof = np.empty(y.size, dtype=np.float64)
    for k in np.unique(folds):
        test = folds == k
        try:
            model = fit(x[~test], y[~test])
        except ValueError as err:
            raise ValueError(f"fold {int(k)}: {err} (fewer folds or more labelled tasks)") from err
        oof[test] = model.predict_proba(x[test])
    return oof


def fit_calibrator(
    features: pd.DataFrame | npt.ArrayLike,
    labels: npt.ArrayLike,
    tasks: npt.ArrayLike,
    *,
    method: Method = "isotonic",
    n_folds: int = 5,
    C: float = 1.0,
) -> CalibrationFit:
    r"""Fit a probability of pass on DEV items, cross-fitted by task.

    Parameters
    ----------
    features : DataFrame or array-like
        Per dev item, the judge's outputs: one column for ``"isotonic"`` (e.g. ``score`` or
        ``expected_score``), one or more for ``"platt"`` (e.g. ``score``, ``score_sd``). A
        1-D array is taken as the one feature ``score``. No missing values.
    labels : array-like of shape (n_dev,)
        Human 0/1 label per dev item.
    tasks : array-like of shape (n_dev,)
        Task of each dev item: the folds keep a task's items together.
    method : {"isotonic", "platt"}
        See the module docstring.
    n_folds : int
        Folds for the out-of-fold dev probabilities (fewer when there are fewer tasks).
    C : float
        Inverse L2 penalty of the logistic regression on standardised features (``"platt"``).

    Returns
    -------
    CalibrationFit
        The calibrator (fitted on all dev items) and the out-of-fold dev probabilities.

    Raises
    ------
    ValueError
        One class only among the labels (or in a fold's training part), fewer than 2 tasks,
        missing feature values, or more than one feature for ``"isotonic"``.

    Examples
    --------
    >>> fit = fit_calibrator([1, 2, 3, 4, 5, 1, 2, 3, 4, 5], [0, 0, 1, 1, 1, 0, 0, 0, 1, 1],
    ...                      [0, 0, 1, 1, 2, 2, 3, 3, 4, 4], n_folds=2)
    >>> fit.calibrator.predict_proba([1.0, 3.0, 5.0]).tolist()  # score 3: one pass, one fail
    [0.0, 0.5, 1.0]

    References
    ----------
    Platt (1999), Advances in Large Margin Classifiers; Zadrozny & Elkan (2002), KDD.
    """
    x, names = feature_matrix(features)
    y = binary_labels(labels)
    check_same_length(features=x[:, 0], labels=y, tasks=as_1d(tasks, "tasks"))
    calibrator = _fit_one(x, y, names, method, C)
    folds = task_folds(tasks, n_folds)

    def fit(xt: FloatArray, yt: FloatArray) -> Calibrator:
        return _fit_one(xt, yt, names, method, C)

    return CalibrationFit(calibrator, cross_fit(x, y, folds, fit), folds)


def calibrated_threshold(calibrator: Calibrator, *, p: float = 0.5) -> float:
    """The threshold c of a one-feature calibrator: ``predict_proba(x) >= p`` exactly when
    ``x >= c``.

    A calibrated probability of pass on one feature (isotonic, or Platt with a positive
    coefficient) never falls as the feature grows, so "probability at least p" is a threshold on
    the feature itself: the aligned judge's verdict ``p >= 0.5`` is ``mean score >= c``. The
    threshold is the exact boundary in floating point (moved by one ulp until both sides hold).
    ``inf`` when no value reaches p, ``-inf`` when every value does.

    Raises
    ------
    ValueError
        More than one feature, or a Platt fit whose coefficient is negative (the probability
        falls as the feature grows: no threshold says "pass").

    Examples
    --------
    >>> cal = Calibrator("isotonic", ("score",), knots_x=(2.0, 3.0, 4.0), knots_y=(0.0, 0.4, 0.8))
    >>> calibrated_threshold(cal)  # 0.4 at 3, 0.8 at 4: 0.5 a quarter of the way
    3.25
    """
    if len(calibrator.features) != 1:
        raise ValueError(
            f"a threshold needs a one-feature calibrator, got {list(calibrator.features)}"
        )

    def f(x: float) -> float:
        return float(calibrator.predict_proba(np.array([x]))[0])

    if calibrator.method == "isotonic":
        xs, ys = np.asarray(calibrator.knots_x), np.asarray(calibrator.knots_y)
        if ys.size == 0 or ys[-1] < p:
            return float("inf")
        if ys[0] >= p:
            return float("-inf")
        i = int(np.argmax(ys >= p))
        x0, x1, y0, y1 = xs[i - 1], xs[i], ys[i - 1], ys[i]
        c = float(x1 if y1 == p else x0 + (p - y0) / (y1 - y0) * (x1 - x0))
    else:
        coef = calibrator.coef[0]
        if coef < 0:
            raise ValueError("the Platt fit falls as the feature grows: no threshold says pass")
        if coef == 0:
            return float("-inf") if f(0.0) >= p else float("inf")
        logit = float(np.log(p / (1.0 - p)))
        c = calibrator.means[0] + calibrator.scales[0] * (logit - calibrator.intercept) / coef
    for _ in range(64):  # the boundary in floating point: f(c) >= p > f(c - ulp)
        if f(c) < p:
            c = float(np.nextafter(c, np.inf))
        elif f(float(np.nextafter(c, -np.inf))) >= p:
            c = float(np.nextafter(c, -np.inf))
        else:
            break
    return c


#: The name of :func:`calibrated_threshold` before "threshold" became the one word for a pass
#: boundary; code written against it keeps working.
pass_cut = calibrated_threshold
