"""``align`` end to end: no holdout item reaches a fit, per-item features by hand, the stack's
weights, input errors, and the docstring examples of the alignment modules."""

from __future__ import annotations

import doctest
import importlib
import math

import numpy as np
import pandas as pd
import pytest
from cv_worlds import cross_validated

from _align_worlds import labelled_items
from trajudge.alignment import (
    Calibrator,
    StackFit,
    ThresholdFit,
    align,
    fit_calibrator,
    fit_stack,
    item_features,
)
from trajudge.calibration import SyntheticJudge

METHODS = ["threshold", "calibrate", "stack"]


def _items(seed: int = 5) -> pd.DataFrame:
    items = labelled_items(SyntheticJudge(noise=1.0, leniency=0.6), n_items=1200, seed=seed)
    rng = np.random.default_rng(seed)
    # a rule check that fails on most true fails: a real signal for the stack
    items["rule_ok"] = np.where(items["truth"] == 1, 1.0, (rng.random(len(items)) < 0.3) * 1.0)
    items.loc[items.sample(frac=0.1, random_state=seed).index, "label"] = np.nan  # unlabelled
    return items


def _fitted(r: object) -> dict[str, object]:
    """Everything fitted on dev: the methods' parameters and the trust cut."""
    out: dict[str, object] = {m: r.methods[m].params.to_dict() for m in METHODS}  # type: ignore[attr-defined]
    out["trust"] = r.trust.threshold.to_dict()  # type: ignore[attr-defined]
    return out


def _align(items: pd.DataFrame) -> object:
    return align(items, methods=METHODS, rule_columns=["rule_ok"], trust="calibrate",
                 n_boot=200)  # fmt: skip


def test_no_holdout_item_reaches_a_fit() -> None:
    items = _items()
    base = _align(items)
    hold = items["split"] == "holdout"
    changed = items.copy()
    rng = np.random.default_rng(0)
    # holdout labels flipped, holdout outputs shuffled among holdout items, rule results too
    changed.loc[hold, "label"] = 1.0 - changed.loc[hold, "label"]
    for col in ("score", "score_sd", "vote_share", "vote_agreement", "rule_ok", "verdict"):
        changed.loc[hold, col] = rng.permutation(changed.loc[hold, col].to_numpy())
    after = _align(changed)
    assert _fitted(after) == _fitted(base)  # nothing fitted moved
    # ... while the holdout figures did (the perturbation reached the evaluation)
    k0 = base.methods["threshold"].verdicts.kappa.before.value  # type: ignore[attr-defined]
    k1 = after.methods["threshold"].verdicts.kappa.before.value  # type: ignore[attr-defined]
    assert k1 < k0 - 0.5


def test_the_leakage_test_can_fail_dev_changes_move_the_fits() -> None:
    items = _items()
    base = _fitted(_align(items))
    dev = items.index[(items["split"] == "dev") & items["label"].notna()]
    changed = items.copy()
    flip = np.random.default_rng(1).choice(dev, size=len(dev) // 10, replace=False)
    changed.loc[flip, "label"] = 1.0 - changed.loc[flip, "label"]
    moved = _fitted(_align(changed))
    assert moved["calibrate"] != base["calibrate"]
    assert moved["stack"] != base["stack"]


def test_fits_see_exactly_the_labelled_dev_items(monkeypatch: pytest.MonkeyPatch) -> None:
    import trajudge.alignment._methods as mod

    items = _items()
    seen: dict[str, np.ndarray] = {}
    real_threshold, real_calibrator = mod.fit_threshold, mod.fit_calibrator

    def spy_threshold(scores: object, labels: object, **kw: object) -> ThresholdFit:
        seen["threshold"] = np.asarray(scores, dtype=float)
        return real_threshold(scores, labels, **kw)  # type: ignore[arg-type]

    def spy_calibrator(features: object, labels: object, tasks: object, **kw: object) -> object:
        seen["calibrate"] = np.asarray(tasks)
        return real_calibrator(features, labels, tasks, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(mod, "fit_threshold", spy_threshold)
    monkeypatch.setattr(mod, "fit_calibrator", spy_calibrator)
    align(items, methods=["threshold", "calibrate"], n_boot=50)
    dev = items[(items["split"] == "dev") & items["label"].notna()].sort_values("item")
    np.testing.assert_array_equal(seen["threshold"], dev["score"].to_numpy())
    assert len(seen["calibrate"]) == len(dev)
    assert len(np.unique(seen["calibrate"])) == dev["task_id"].nunique()


def test_a_task_on_both_sides_is_refused() -> None:
    items = _items()
    task = items["task_id"].iloc[0]
    first = items.index[items["task_id"] == task][0]
    other = "holdout" if items.loc[first, "split"] == "dev" else "dev"
    items.loc[first, "split"] = other
    with pytest.raises(ValueError, match=f"task {task!r} is on both dev and holdout"):
        align(items, n_boot=10)
    with pytest.raises(ValueError, match="split must be dev or holdout"):
        align(items.assign(split="train"), n_boot=10)
    with pytest.raises(ValueError, match="missing"):
        align(items.drop(columns=["verdict"]), n_boot=10)
    with pytest.raises(ValueError, match="no labelled holdout"):
        align(items.assign(split="dev"), n_boot=10)


def test_result_shapes_and_the_escalation_queue() -> None:
    items = _items()
    r = align(items, methods=METHODS, rule_columns=["rule_ok"], n_boot=200)
    assert r.trust_source == "stack"  # auto: the last probability method
    assert r.methods["stack"].optional and not r.methods["calibrate"].optional
    assert r.methods["threshold"].probabilities is None
    labelled_dev = set(items.loc[(items["split"] == "dev") & items["label"].notna(), "item"])
    assert not set(r.escalated) & labelled_dev  # the queue is outside labelled dev
    unlabelled = set(items.loc[items["label"].isna(), "item"])
    assert set(r.escalated) & unlabelled  # unlabelled items are queued for people
    hold = items[(items["split"] == "holdout") & items["label"].notna()]
    assert (r.n_holdout_items, r.n_holdout_tasks) == (len(hold), hold["task_id"].nunique())
    d = r.to_dict()
    assert d["methods"]["threshold"]["verdicts"]["kappa"]["verdict"] in {
        "gain", "loss", "no measurable gain"}  # fmt: skip
    assert d["trust"]["threshold"]["target"] == 0.9
    votes = align(items, methods=["threshold"], trust="votes", n_boot=50)
    assert votes.trust_source == "votes" and votes.trust is not None
    with pytest.raises(ValueError, match="stack method"):
        align(items, methods=["threshold"], trust="stack", n_boot=50)


def test_stack_reports_which_inputs_carry_the_weight() -> None:
    items = _items()
    items["noise"] = np.random.default_rng(9).normal(size=len(items))
    dev = items[(items["split"] == "dev") & items["label"].notna()]
    cols = ["score", "score_sd", "rule_ok", "noise"]
    fit = fit_stack(dev[cols], dev["label"], dev["task_id"], n_repeats=5)
    assert isinstance(fit, StackFit)
    weights = {w.name: w for w in fit.weights}
    assert [w.name for w in fit.weights][:2] == ["score", "rule_ok"] or [
        w.name for w in fit.weights][:2] == ["rule_ok", "score"]  # fmt: skip
    assert weights["rule_ok"].importance > 5 * abs(weights["noise"].importance)
    assert weights["rule_ok"].coefficient > 0 and weights["score"].coefficient > 0
    # the model is the logistic calibrator on the same inputs
    platt = fit_calibrator(dev[cols], dev["label"], dev["task_id"], method="platt")
    assert fit.model == platt.calibrator
    np.testing.assert_allclose(fit.dev_oof, platt.dev_oof)


def test_item_features_by_hand() -> None:
    calls = pd.DataFrame(
        {
            "item": ["a", "a", "a", "a", "b", "b", "c"],
            "task_id": ["t1"] * 4 + ["t2"] * 2 + ["t2"],
            "order": ["ab", "ab", "ba", "ba", "ab", "ab", "ab"],
            "score": [5, 4, 3, 4, 2, np.nan, 4],
            "expected_score": [4.6, 4.2, 3.4, 3.8, 2.1, np.nan, np.nan],
            "error": [None, None, None, None, None, "timeout", None],
        }
    )
    f = item_features(calls, threshold=4).set_index("item")
    # a: scores 5 4 3 4 -> mean 4, sd sqrt(.5), range 2; ab mean 4.5, ba 3.5 -> gap 1;
    #    3 of 4 calls pass -> vote share .75; expected score (4.6+4.2+3.4+3.8)/4 = 4
    a = f.loc["a"]
    assert (a["n_calls"], a["score"], a["score_range"], a["order_gap"]) == (4, 4.0, 2.0, 1.0)
    assert a["score_sd"] == pytest.approx(math.sqrt(0.5))
    assert (a["vote_share"], a["vote_agreement"], a["verdict"]) == (0.75, 0.75, 1.0)
    assert a["expected_score"] == pytest.approx(4.0) and a["task_id"] == "t1"
    # b: the errored call is left out; one order only -> no gap
    b = f.loc["b"]
    assert (b["n_calls"], b["score"], b["verdict"]) == (1, 2.0, 0.0)
    assert math.isnan(b["order_gap"]) and b["expected_score"] == pytest.approx(2.1)
    assert math.isnan(f.loc["c", "expected_score"])  # its call has no expected score
    # without a threshold: 0/1 verdicts vote; a tie fails
    binary = pd.DataFrame({"item": ["x", "x", "y"], "score": [1, 0, 1]})
    fb = item_features(binary).set_index("item")
    assert (fb.loc["x", "verdict"], fb.loc["y", "verdict"]) == (0.0, 1.0)
    with pytest.raises(ValueError, match="threshold"):
        item_features(pd.DataFrame({"item": ["x"], "score": [3]}))
    with pytest.raises(ValueError, match="two task ids"):
        item_features(calls.assign(task_id=["t1", "t9", "t1", "t1", "t2", "t2", "t2"]),
                      threshold=4)  # fmt: skip


@pytest.mark.parametrize(
    "module",
    ["alignment._features", "alignment._threshold", "alignment._calibrate", "alignment._stack",
     "alignment._compare", "calibration.verdicts._probability", "calibration.verdicts._escalate",
     "calibration.rates._ppi"],
)  # fmt: skip
def test_docstring_examples(module: str) -> None:
    mod = importlib.import_module(f"trajudge.{module}")
    result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_calibrator_round_trip_through_json() -> None:
    import json

    items = _items()
    r = align(items, methods=["calibrate"], calibration="platt",
              features=["score", "score_sd"], n_boot=50)  # fmt: skip
    cal = r.methods["calibrate"].params
    assert isinstance(cal, Calibrator)
    again = Calibrator.from_dict(json.loads(json.dumps(cal.to_dict())))
    np.testing.assert_array_equal(again.predict_proba(items), cal.predict_proba(items))


def test_dev_cross_validation_matches_sklearn_on_the_same_folds() -> None:
    items = _items()
    r = align(items, methods=METHODS, rule_columns=["rule_ok"], n_boot=20)
    dev = items[(items["split"] == "dev") & items["label"].notna()].sort_values("item")
    expected = cross_validated(dev.reset_index(drop=True), ["rule_ok"])
    cv = r.dev_cv
    assert cv is not None and (cv.n_folds, cv.n_items) == (5, len(dev))
    assert cv.n_tasks == dev["task_id"].nunique()
    assert cv.judge_kappa == pytest.approx(expected["judge"], abs=1e-12)
    for m in METHODS:
        assert cv.kappa[m] == pytest.approx(expected[m], abs=1e-12), m
    # the rule check carries real signal (it fails most true fails): the stack gains on dev
    assert cv.kappa["stack"] > cv.judge_kappa and cv.no_worse("stack")
    assert r.to_dict()["dev_cv"]["kappa"] == {m: cv.kappa[m] for m in METHODS}
    # no method, nothing to cross-validate
    assert align(items, methods=[], trust="votes", n_boot=20).dev_cv is None
