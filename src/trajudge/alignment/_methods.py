"""``align``: fit the alignment methods on dev items, measure them on holdout items.

Every fit sees the labelled DEV items only (``_split`` is the one place that separates
them); every figure of the result is measured on the labelled HOLDOUT items against the
judge's verdicts as they stand, except the cross-validated kappa on dev that a method is
chosen by (:mod:`trajudge.alignment._cv`). A task on both sides is refused: its items
are correlated, so the holdout would not be held out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from trajudge.alignment._calibrate import Calibrator, Method, fit_calibrator, task_folds
from trajudge.alignment._compare import (
    ProbabilityComparison,
    VerdictComparison,
    compare_probabilities,
    compare_verdicts,
)
from trajudge.alignment._cv import DevCrossValidation, dev_cross_validation, threshold_oof
from trajudge.alignment._stack import StackFit, fit_stack
from trajudge.alignment._threshold import (
    Criterion,
    ThresholdFit,
    apply_threshold,
    fit_threshold,
)
from trajudge.calibration._estimate import FloatArray
from trajudge.calibration.verdicts._escalate import (
    TrustOutcome,
    escalated_items,
    evaluate_trust,
    fit_trust_threshold,
)

AlignMethod = Literal["threshold", "calibrate", "stack"]
TrustSource = Literal["auto", "calibrate", "stack", "votes"]
_REQUIRED = ("item", "task_id", "split", "label", "score", "verdict")


@dataclass(frozen=True)
class MethodResult:
    """One method: what was fitted on dev, and before / after on the holdout.

    ``params`` is a :class:`ThresholdFit`, a :class:`Calibrator` or a :class:`StackFit`
    (each has ``to_dict()``). ``probabilities`` (Brier, ECE, reliability diagrams) is None for
    ``threshold``. ``optional`` is True for ``stack`` (off by default; say so in reports).
    """

    method: AlignMethod
    params: ThresholdFit | Calibrator | StackFit
    verdicts: VerdictComparison
    probabilities: ProbabilityComparison | None
    optional: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "optional": self.optional,
            "params": self.params.to_dict(),
            "verdicts": self.verdicts.to_dict(),
            "probabilities": None if self.probabilities is None else self.probabilities.to_dict(),
        }


@dataclass(frozen=True)
class AlignmentResult:
    """Per method a :class:`MethodResult`; trust-or-escalate on the holdout; escalated items.

    ``escalated`` lists every item outside the labelled dev set (labelled holdout items and
    unlabelled items of either side) whose confidence is below the dev-fitted threshold, in item
    order: the queue for people. ``dev_cv`` is each method's cross-validated kappa on dev
    beside the judge's, what a method is chosen by (None when no method ran).
    """

    methods: dict[str, MethodResult]
    dev_cv: DevCrossValidation | None
    trust: TrustOutcome | None
    trust_source: str | None
    escalated: tuple[Any, ...]
    n_dev_items: int
    n_holdout_items: int
    n_dev_tasks: int
    n_holdout_tasks: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "methods": {k: v.to_dict() for k, v in self.methods.items()},
            "dev_cv": None if self.dev_cv is None else self.dev_cv.to_dict(),
            "trust": None if self.trust is None else self.trust.to_dict(),
            "trust_source": self.trust_source,
            "escalated": [str(i) for i in self.escalated],
            "n_dev_items": self.n_dev_items,
            "n_holdout_items": self.n_holdout_items,
            "n_dev_tasks": self.n_dev_tasks,
            "n_holdout_tasks": self.n_holdout_tasks,
        }


@dataclass(frozen=True)
class _Side:
    """Some items: ids, task codes and the numeric columns, rows in item order."""

    ids: npt.NDArray[Any]
    tasks: npt.NDArray[np.int64]
    data: pd.DataFrame

    def col(self, name: str) -> FloatArray:
        return np.asarray(self.data[name].to_numpy(dtype=np.float64))


def _split(items: pd.DataFrame, columns: Sequence[str]) -> tuple[_Side, _Side, _Side]:
    """Labelled dev items, labelled holdout items, and every item not in labelled dev.

    The one place where dev and holdout are told apart; ``columns`` are the numeric columns
    kept (those absent from ``items`` are left out, the fits say so if they need them).
    """
    missing = [c for c in _REQUIRED if c not in items.columns]
    if missing:
        raise ValueError(f"items need columns {list(_REQUIRED)}; missing {missing}")
    items = items.sort_values("item", kind="stable")
    ids = items["item"].to_numpy()
    split = items["split"].to_numpy()
    bad = (split != "dev") & (split != "holdout")
    if bad.any():
        raise ValueError(f"item {ids[bad][0]!r}: split must be dev or holdout")
    if pd.Series(ids).duplicated().any():
        raise ValueError(f"item {ids[pd.Series(ids).duplicated().to_numpy()][0]!r} twice")
    tasks, names = pd.factorize(items["task_id"].to_numpy())
    on_dev = split == "dev"
    both = np.intersect1d(tasks[on_dev], tasks[~on_dev])
    if both.size:
        raise ValueError(f"task {names[both[0]]!r} is on both dev and holdout")
    keep = [c for c in dict.fromkeys(columns) if c in items.columns]
    data = items[keep].astype(np.float64).reset_index(drop=True)
    labelled = data["label"].notna().to_numpy()

    def side(mask: npt.NDArray[np.bool_]) -> _Side:
        return _Side(ids[mask], tasks[mask].astype(np.int64), data[mask].reset_index(drop=True))

    dev, holdout = side(labelled & on_dev), side(labelled & ~on_dev)
    for name, s in (("dev", dev), ("holdout", holdout)):
        if s.ids.size == 0:
            raise ValueError(f"no labelled {name} items")
    return dev, holdout, side(~(labelled & on_dev))


def _confidence(p: FloatArray) -> FloatArray:
    return np.asarray(np.maximum(p, 1.0 - p), dtype=np.float64)


def align(
    items: pd.DataFrame,
    *,
    methods: Sequence[AlignMethod] = ("threshold", "calibrate"),
    criterion: Criterion = "kappa",
    calibration: Method = "isotonic",
    features: Sequence[str] | None = None,
    threshold_on: str = "score",
    stack_features: Sequence[str] = ("score", "score_sd"),
    rule_columns: Sequence[str] = (),
    trust: TrustSource | None = "auto",
    target: float = 0.9,
    alpha: float = 0.05,
    n_folds: int = 5,
    n_bins: int = 10,
    n_boot: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> AlignmentResult:
    """Run the alignment methods: fit on labelled dev items, report on labelled holdout items.

    Parameters
    ----------
    items : DataFrame
        One row per item: ``item, task_id, split`` (``dev``/``holdout``, whole tasks per
        side, e.g. from :func:`trajudge.evalset.split_of`), ``label`` (human 0/1, NaN when
        unlabelled), ``score`` (the judge's mean score), ``verdict`` (its 0/1 verdict as it
        stands, the "before"), and the feature columns (``item_features`` gives them);
        optional ``vote_share`` (the "before" probability; else ``verdict``) and
        ``vote_agreement`` (the confidence for ``trust="votes"``).
    methods : sequence of {"threshold", "calibrate", "stack"}
        ``threshold``: :func:`fit_threshold` on ``threshold_on``; ``calibrate``:
        :func:`fit_calibrator`; ``stack`` (optional): :func:`fit_stack` on the features and
        ``rule_columns``. Each is compared with the judge as it stands.
    criterion :
        For ``threshold``.
    threshold_on :
        The column ``threshold`` fits its threshold on and applies it to (default ``score``, the
        mean sampled score; ``expected_score`` for the mean expected score).
    calibration, features :
        Model and feature columns for ``calibrate`` (default ``["score"]``; isotonic takes
        one column, e.g. ``expected_score``; ``platt`` one or more, e.g. ``["score",
        "score_sd"]``).
    stack_features, rule_columns :
        The judge's and the rule checks' columns for ``stack``.
    trust : {"auto", "calibrate", "stack", "votes"} or None
        Whose verdicts and confidences trust-or-escalate uses: a fitted method's probability
        p (verdict ``p >= 0.5``, confidence ``max(p, 1-p)``; on dev its out-of-fold
        probabilities), or ``votes`` (``verdict`` with confidence ``vote_agreement``).
        ``auto``: ``stack`` if run, else ``calibrate`` if run, else ``votes``. None: skip.
    target, alpha :
        For :func:`fit_trust_threshold`.
    n_folds, n_bins, n_boot, seed, level :
        Cross-fitting folds (also the folds every method is cross-validated on, for
        ``dev_cv``), calibration bins, bootstrap resamples, seed, interval level.

    Returns
    -------
    AlignmentResult

    Raises
    ------
    ValueError
        Missing columns, a split other than dev/holdout, a task on both sides, no labelled
        item on a side, or what the fitting functions refuse (one class only on dev, ...).
    """
    feats = list(features) if features is not None else ["score"]
    if "threshold" in methods and threshold_on not in items.columns:
        raise ValueError(f"threshold_on: items have no column {threshold_on!r}")
    numeric = [*_REQUIRED[3:], "vote_share", "vote_agreement", *feats, threshold_on,
               *stack_features]  # fmt: skip
    dev, hold, rest = _split(items, [*numeric, *rule_columns])
    boot: dict[str, Any] = {"n_boot": n_boot, "seed": seed, "level": level}
    y_dev, y_hold = dev.col("label"), hold.col("label")
    before = hold.col("verdict")
    p_before = hold.col("vote_share" if "vote_share" in hold.data else "verdict")
    results: dict[str, MethodResult] = {}
    probability: dict[str, tuple[Calibrator, FloatArray]] = {}  # model, dev out-of-fold
    # calibrate and stack cross-fit on task_folds(dev.tasks, n_folds) too: the same folds
    folds = task_folds(dev.tasks, n_folds) if methods else np.zeros(0, dtype=np.int64)
    oof_verdicts: dict[str, FloatArray] = {}
    for method in dict.fromkeys(methods):
        if method == "threshold":
            fit = fit_threshold(dev.col(threshold_on), y_dev, criterion=criterion)
            after = apply_threshold(hold.col(threshold_on), fit)
            cmp = compare_verdicts(y_hold, before, after, hold.tasks, **boot)
            results[method] = MethodResult(method, fit, cmp, None)
            oof_verdicts[method] = threshold_oof(dev.col(threshold_on), y_dev, folds,
                                                 criterion=criterion)  # fmt: skip
            continue
        model: Calibrator
        params: Calibrator | StackFit
        if method == "calibrate":
            cal = fit_calibrator(dev.data[feats], y_dev, dev.tasks, method=calibration,
                                 n_folds=n_folds)  # fmt: skip
            model, params, oof = cal.calibrator, cal.calibrator, cal.dev_oof
        elif method == "stack":
            st = fit_stack(dev.data[[*stack_features, *rule_columns]], y_dev, dev.tasks,
                           n_folds=n_folds, seed=seed)  # fmt: skip
            model, params, oof = st.model, st, st.dev_oof
        else:
            raise ValueError(f"unknown method {method!r}: threshold, calibrate or stack")
        p = model.predict_proba(hold.data)
        results[method] = MethodResult(
            method,
            params,
            compare_verdicts(y_hold, before, (p >= 0.5).astype(float), hold.tasks, **boot),
            compare_probabilities(y_hold, p_before, p, hold.tasks, n_bins=n_bins, **boot),
            optional=method == "stack",
        )
        probability[method] = (model, oof)
        oof_verdicts[method] = (oof >= 0.5).astype(np.float64)  # the saved rule: p >= 0.5
    cv = None
    if methods:
        cv = dev_cross_validation(y_dev, dev.col("verdict"), oof_verdicts, folds, dev.tasks)
    source = _trust_source(trust, probability)
    if source is None:
        return _result(results, cv, None, None, (), dev, hold)
    if source == "votes":
        if "vote_agreement" not in items.columns:
            raise ValueError("trust='votes' needs a vote_agreement column")
        conf_dev, ok_dev = dev.col("vote_agreement"), dev.col("verdict") == y_dev
        conf_hold, ok_hold = hold.col("vote_agreement"), before == y_hold
        conf_rest = rest.col("vote_agreement")
    else:
        model, oof = probability[source]
        conf_dev, ok_dev = _confidence(oof), (oof >= 0.5) == (y_dev == 1)
        p_hold = model.predict_proba(hold.data)
        conf_hold, ok_hold = _confidence(p_hold), (p_hold >= 0.5) == (y_hold == 1)
        conf_rest = _confidence(model.predict_proba(rest.data))
    keep_at = fit_trust_threshold(conf_dev, ok_dev.astype(float), target=target, alpha=alpha)
    outcome = evaluate_trust(keep_at, conf_hold, ok_hold.astype(float), hold.tasks, items=hold.ids,
                             **boot)  # fmt: skip
    queue = tuple(escalated_items(conf_rest, keep_at, rest.ids))
    return _result(results, cv, outcome, source, queue, dev, hold)


def _trust_source(
    trust: TrustSource | None, probability: dict[str, tuple[Calibrator, FloatArray]]
) -> str | None:
    if trust is None:
        return None
    if trust == "auto":
        return next((m for m in ("stack", "calibrate") if m in probability), "votes")
    if trust != "votes" and trust not in probability:
        raise ValueError(f"trust={trust!r} needs the {trust} method among the methods")
    return trust


def _result(
    methods: dict[str, MethodResult],
    cv: DevCrossValidation | None,
    outcome: TrustOutcome | None,
    source: str | None,
    queue: tuple[Any, ...],
    dev: _Side,
    hold: _Side,
) -> AlignmentResult:
    return AlignmentResult(
        methods=methods,
        dev_cv=cv,
        trust=outcome,
        trust_source=source,
        escalated=queue,
        n_dev_items=int(dev.ids.size),
        n_holdout_items=int(hold.ids.size),
        n_dev_tasks=int(np.unique(dev.tasks).size),
        n_holdout_tasks=int(np.unique(hold.tasks).size),
    )
