"""Which method the aligned judge is saved with, and when nothing is saved at all.

The choice is made on dev alone: each method's cross-validated kappa on the dev tasks beside
the judge's on the same items (:class:`trajudge.alignment.DevCrossValidation`). The holdout
is left to say how well the saved method does; choosing on it too would make its figures the
best of several draws, not a test.

* Default: of ``calibrate`` and ``threshold`` (those run), the best by cross-validated kappa;
  a tie goes to ``calibrate`` (its probability is also trust-or-escalate's confidence).
  ``fewshot`` has no dev figure (its examples are dev items, and re-scoring each dev fold would
  take new calls), so it is saved only when asked (``use``) or when it is the only method run.
* ``stack`` is cross-validated and shown, never saved: an aligned judge's verdict is a threshold on
  the score, and the stack's needs the rule checks and the spread of every item too.
* Refused (nothing saved): every method when dev holds fewer than :data:`MIN_DEV_TASKS`
  tasks (a cross-validated comparison over two tasks is one task against one); a method dev
  says is worse than the judge as it stands (its
  cross-validated kappa below the judge's), and a degenerate threshold, one that no score on the
  rubric's scale reaches or that every score passes, or that gives every labelled dev item the
  same verdict: it would be saved as an "aligned judge" that does not judge.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from trajudge.alignment._calibrate import Calibrator, calibrated_threshold
from trajudge.alignment._cv import DevCrossValidation
from trajudge.alignment._fewshot import FewshotResult
from trajudge.alignment._items import JudgeItems
from trajudge.alignment._methods import AlignmentResult
from trajudge.alignment._options import AlignOptions
from trajudge.alignment._threshold import ThresholdFit

#: The fewest dev tasks a method is chosen over: with two, each fold fits on one task and is
#: scored on the other, so "better than the judge" is one task against one (noise).
MIN_DEV_TASKS = 3
#: Methods saved as a threshold and cross-validated on dev, in the order ties go.
CUT_METHODS = ("calibrate", "threshold")
ORDER = ("threshold", "calibrate", "fewshot", "stack")


def scale_bounds(data: JudgeItems) -> tuple[float, float]:
    """The lowest and highest value the judge's per-item score can take."""
    if data.binary:
        return 0.0, 1.0  # the share of passing calls
    return float(data.rubric.scale.min), float(data.rubric.scale.max)


def _words(feature: str) -> str:
    return "mean expected score" if feature == "expected_score" else "mean score"


def threshold_flag(
    threshold: float | None, bounds: tuple[float, float], dev_scores: Any
) -> str | None:
    """What is wrong with the rule ``score >= threshold``, in words; None when nothing is.

    >>> threshold_flag(6.0, (1.0, 5.0), [2.0, 4.5])
    'can never pass on this 1..5 scale: every item is a fail'
    >>> threshold_flag(1.0, (1.0, 5.0), [2.0, 4.5])
    'passes every score on this 1..5 scale: every item passes'
    >>> threshold_flag(4.75, (1.0, 5.0), [2.0, 4.5])
    'is above every labelled dev item (highest 4.50): every dev item is a fail'
    >>> threshold_flag(2.0, (1.0, 5.0), [2.0, 4.5])
    'is at or below every labelled dev item (lowest 2.00): every dev item passes'
    >>> threshold_flag(4.0, (1.0, 5.0), [2.0, 4.5]) is None
    True
    """
    lo, hi = bounds
    scale = f"{lo:g}..{hi:g}"
    if threshold is None or math.isnan(threshold):
        return "is undefined: no threshold was fitted"
    if threshold > hi:
        return f"can never pass on this {scale} scale: every item is a fail"
    if threshold <= lo:
        return f"passes every score on this {scale} scale: every item passes"
    s = np.asarray(dev_scores, dtype=float)
    if s.size and threshold > s.max():
        top = f"{s.max():.2f}"
        return f"is above every labelled dev item (highest {top}): every dev item is a fail"
    if s.size and threshold <= s.min():
        low = f"{s.min():.2f}"
        return f"is at or below every labelled dev item (lowest {low}): every dev item passes"
    return None


def method_rule(
    method: str,
    result: AlignmentResult,
    data: JudgeItems,
    feature: str,
    fewshot: FewshotResult | None,
) -> dict[str, Any]:
    """The aligned judge's verdict if ``method`` were saved: ``feature >= threshold``, with ``flag``
    saying what is wrong with that threshold (None when nothing is)."""
    bounds = scale_bounds(data)
    dev = data.items[(data.items["split"] == "dev") & data.items["label"].notna()]
    rule: dict[str, Any]
    if method == "threshold":
        fit = result.methods["threshold"].params
        assert isinstance(fit, ThresholdFit)
        rule = {"method": method, "feature": feature, "threshold": fit.value, "fit": fit.to_dict()}
    elif method == "calibrate":
        cal = result.methods["calibrate"].params
        assert isinstance(cal, Calibrator)
        rule = {
            "method": method,
            "feature": feature,
            "threshold": None,
            "calibrator": cal.to_dict(),
        }
        try:
            threshold = calibrated_threshold(cal)
        except ValueError as exc:  # a Platt fit that falls as the score grows
            return {**rule, "flag": str(exc)}
        if math.isinf(
            threshold
        ):  # never / always a pass: a threshold just beyond the scale says the same
            lo, hi = bounds
            threshold = hi + 1.0 if threshold > 0 else lo - 1.0
        rule["threshold"] = threshold
    else:
        assert method == "fewshot" and fewshot is not None
        threshold = float(np.nextafter(0.5, 1.0)) if data.binary else data.threshold  # share > 1/2
        return {"method": method, "feature": "score", "threshold": threshold,
                "rubric_version": fewshot.rubric_version, "flag": None}  # fmt: skip
    return {**rule, "flag": threshold_flag(rule["threshold"], bounds, dev[feature])}


def _pair(a: float, b: float) -> tuple[str, str]:
    """Two figures with as many digits (2 to 4) as it takes to tell them apart."""
    for digits in (2, 3, 4):
        x, y = f"{a:.{digits}f}", f"{b:.{digits}f}"
        if x != y:
            return x, y
    return f"{a:.2f}", f"{b:.2f}"  # equal (or nearly): two digits say so


def _rule_words(rule: dict[str, Any]) -> str:
    threshold = rule.get("threshold")
    return (
        f"{_words(rule['feature'])} >= {threshold:.2f}" if threshold is not None else "no threshold"
    )


@dataclass(frozen=True)
class Choice:
    """The method saved (None: refused), why, and one row per method run."""

    method: str | None
    rule: dict[str, Any]
    reason: str
    refusal: str | None
    dev_cv: DevCrossValidation | None
    rows: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "reason": self.reason,
            "refusal": self.refusal,
            "dev_cv": None if self.dev_cv is None else self.dev_cv.to_dict(),
            "rows": self.rows,
        }


def _why_not(m: str, rule: dict[str, Any], cv: DevCrossValidation) -> str | None:
    """Why ``m`` may not be saved (one clause), None when it may."""
    if rule["flag"] is not None and rule["threshold"] is None:
        return f"{m}: {rule['flag']}"
    if rule["flag"] is not None:
        return f"{m} fits {_rule_words(rule)}, which {rule['flag']}"
    k = cv.kappa[m]
    if math.isnan(k) or math.isnan(cv.judge_kappa):
        return f"{m}'s cross-validated κ on dev is undefined"
    if not cv.no_worse(m):
        mine, judge = _pair(k, cv.judge_kappa)
        return f"{m} is worse than the judge as it stands on dev (κ {mine} against {judge})"
    return None


def choose(
    opts: AlignOptions,
    result: AlignmentResult,
    data: JudgeItems,
    feature: str,
    fewshot: FewshotResult | None,
) -> Choice:
    """The method to save (module docstring), or the one-line reason nothing is saved."""
    cv = result.dev_cv
    run = [m for m in ORDER if m in result.methods or (m == "fewshot" and fewshot is not None)]
    rules = {m: method_rule(m, result, data, feature, fewshot) for m in run if m != "stack"}
    cands = [m for m in CUT_METHODS if m in rules]
    if cv is not None:  # best cross-validated kappa first, NaN last, ties in CUT_METHODS order
        cands.sort(key=lambda m: (-np.nan_to_num(cv.kappa[m], nan=-np.inf), CUT_METHODS.index(m)))
    blocked = {m: _why_not(m, rules[m], cv) for m in cands if cv is not None}
    chosen: str | None
    refusal = None
    if opts.use == "fewshot" or (opts.use is None and not cands):
        chosen = "fewshot"
        asked = (
            "as asked (--use fewshot)" if opts.use else "the only method run that gives verdicts"
        )
        reason = (
            f"fewshot, {asked}: it has no cross-validated figure on dev (its examples are dev "
            "items; re-scoring every dev fold would need new calls), so the holdout is its "
            "only test"
        )
    else:
        assert cv is not None
        order = [opts.use] if opts.use is not None else cands
        ok = [m for m in order if blocked[m] is None]
        chosen = ok[0] if ok and cv.n_tasks >= MIN_DEV_TASKS else None
        if cv.n_tasks < MIN_DEV_TASKS:
            refusal = reason = (
                f"not saved: dev holds {cv.n_tasks} task{'s' if cv.n_tasks != 1 else ''}, and "
                "telling a method from the judge by cross-validation takes at least "
                f"{MIN_DEV_TASKS} (whole tasks per fold): label more tasks or give dev a "
                "larger share (--dev-share)"
            )
        elif chosen is None:
            refusal = "not saved: " + "; ".join(str(blocked[m]) for m in order)
            if "stack" in cv.kappa and not math.isnan(cv.kappa["stack"]):
                refusal += f"; stack (reported only, never saved): κ {cv.kappa['stack']:.2f}"
            if any(rules[m]["flag"] is None for m in order):  # a clause quotes a CV figure
                refusal += (
                    f"; κ cross-validated in {cv.n_folds} folds over the {cv.n_tasks} dev tasks"
                )
            if fewshot is not None:
                refusal += " (fewshot has no dev figure: --use fewshot saves it)"
            reason = refusal
        else:
            mine, judge = _pair(cv.kappa[chosen], cv.judge_kappa)
            if opts.use:
                how = f"as asked (--use {chosen})"
            elif len(cands) > 1:
                others = [m for m in cands if m != chosen]
                how = f"the best on dev of {chosen} and {', '.join(others)}"
                if chosen != cands[0]:  # the best by kappa may not be saved
                    how += f" that may be saved ({blocked[cands[0]]})"
                elif any(cv.kappa[o] == cv.kappa[chosen] for o in others):
                    how += f" (a tie goes to {chosen})"
            else:
                how = "the only threshold-saving method run"
            tie = ", no better than the judge but no worse" if mine == judge else ""
            reason = (
                f"{chosen}, {how}: {cv.n_folds}-fold cross-validated κ {mine} against the "
                f"judge's {judge} on the same {cv.n_items} labelled dev items "
                f"({cv.n_tasks} tasks, whole tasks per fold){tie}"
            )
    shown = chosen or (opts.use if opts.use is not None else cands[0])
    rows = [_row(m, chosen, rules.get(m), cv, blocked.get(m)) for m in run]
    return Choice(chosen, rules[shown], reason, refusal, cv, rows)


def _row(
    m: str,
    chosen: str | None,
    rule: dict[str, Any] | None,
    cv: DevCrossValidation | None,
    blocked: str | None,
) -> dict[str, Any]:
    k = None if cv is None or m not in cv.kappa or math.isnan(cv.kappa[m]) else cv.kappa[m]
    worse = cv is not None and m in cv.kappa and not cv.no_worse(m)
    if m == "stack":
        decision = "reported only" + ("; worse than the judge" if worse else "")
    elif m == "fewshot":
        decision = "no dev figure" + ("; saved" if chosen == m else "")
    elif chosen == m:
        decision = "saved"
    elif rule is not None and rule["flag"] is not None:
        decision = "degenerate threshold"
    elif blocked is not None:
        decision = "worse than the judge" if worse else "undefined on dev"
    elif chosen is None or cv is None or chosen not in cv.kappa:  # --use asked for another
        decision = "no worse than the judge; not asked for"
    elif cv.kappa[chosen] > cv.kappa[m]:
        decision = f"not chosen: {chosen} is better"
    elif cv.kappa[chosen] == cv.kappa[m]:
        decision = f"not chosen: ties with {chosen}"
    else:
        decision = f"not chosen: --use {chosen}"
    return {
        "method": m,
        "cv_kappa": k,
        "rule": None if rule is None else _rule_words(rule),
        "flag": None if rule is None else rule["flag"],
        "decision": decision,
    }
