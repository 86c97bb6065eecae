"""The ``threshold`` method: the cut by hand and by brute force with scikit-learn; leniency
planted in a synthetic judge is removed on the holdout."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import balanced_accuracy_score, cohen_kappa_score

from _align_worlds import PASS, labelled_items
from trajudge.alignment import ThresholdFit, align, apply_threshold, fit_threshold
from trajudge.calibration import SyntheticJudge, best_threshold


def test_threshold_by_hand() -> None:
    # scores 3 4 4 5 5 5, labels 0 0 0 1 1 1: the cut 5 separates them (kappa 1); the cut 4
    # passes two fails: po = 4/6, pe = (5/6)(3/6) + (1/6)(3/6) = 1/2, kappa = 1/3
    fit = fit_threshold([3, 4, 4, 5, 5, 5], [0, 0, 0, 1, 1, 1])
    assert (fit.value, fit.dev_score, fit.n_dev, fit.n_candidates) == (5.0, 1.0, 6, 3)
    # balanced accuracy: cut 4 gives TPR 1, TNR 1/3 -> 2/3; cut 5 gives 1
    assert fit_threshold([3, 4, 4, 5, 5, 5], [0, 0, 0, 1, 1, 1],
                         criterion="balanced_accuracy").value == 5.0  # fmt: skip
    # two cuts tie on kappa: the lowest wins (as best_threshold)
    assert fit_threshold([1, 2, 3, 4], [0, 1, 0, 1]).value == best_threshold(
        [1, 2, 3, 4], [0, 1, 0, 1]
    )
    assert apply_threshold([4.9, 5.0, math.nan], fit).tolist()[:2] == [0.0, 1.0]
    assert math.isnan(apply_threshold([math.nan], 4.0)[0])


@pytest.mark.parametrize("criterion", ["kappa", "balanced_accuracy"])
@pytest.mark.parametrize("seed", range(4))
def test_threshold_maximises_the_sklearn_criterion(criterion: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, 300)
    scores = np.round(3 + labels + rng.normal(0.4, 0.9, 300) * 1.5, 1)  # lenient, noisy
    fit = fit_threshold(scores, labels, criterion=criterion)  # type: ignore[arg-type]
    metric = cohen_kappa_score if criterion == "kappa" else balanced_accuracy_score
    brute = {float(t): metric(labels, (scores >= t).astype(int)) for t in np.unique(scores)}
    best = max(brute.values())
    assert fit.dev_score == pytest.approx(best, abs=1e-12)
    assert fit.value == min(t for t, v in brute.items() if v == pytest.approx(best, abs=1e-12))
    if criterion == "kappa":
        assert fit.value == best_threshold(scores, labels)


def test_threshold_refuses_one_class_and_bad_labels() -> None:
    with pytest.raises(ValueError, match="one class"):
        fit_threshold([1, 2, 3], [1, 1, 1])
    with pytest.raises(ValueError, match="0/1"):
        fit_threshold([1, 2, 3], [0, 1, math.nan])
    with pytest.raises(ValueError, match="length"):
        fit_threshold([1, 2, 3], [0, 1])


@pytest.mark.parametrize("leniency", [1.0, 1.5])
def test_threshold_removes_planted_leniency_on_holdout(leniency: float) -> None:
    items = labelled_items(SyntheticJudge(leniency=leniency, noise=0.4), n_items=1600, seed=7)
    result = align(items, methods=["threshold"], n_boot=1000, trust=None)
    fit = result.methods["threshold"].params
    assert isinstance(fit, ThresholdFit)
    # true fails at level 3 now average 3 + L, true passes at level 4 average 4 + L (clipped
    # at 5): the best cut on the mean score is half-way, 3.5 + L
    assert fit.value == pytest.approx(PASS - 0.5 + leniency, abs=0.35)
    v = result.methods["threshold"].verdicts
    # leniency shows as a low TNR before; after the fit the TNR gain is measured, kappa too
    assert v.tnr.before.value < 0.8
    assert v.tnr.after.value > 0.9
    assert v.tnr.verdict == "gain" and v.kappa.verdict == "gain"
    # against the truth on the holdout (not the labels): the false-pass rate falls
    hold = items[items["split"] == "holdout"]
    false_pass = lambda verdict: float(np.mean(verdict[hold["truth"] == 0]))  # noqa: E731
    after = apply_threshold(hold["score"], fit)
    assert false_pass(after) < false_pass(hold["verdict"].to_numpy()) / 4


def test_threshold_fixes_a_cut_at_the_pass_level_itself() -> None:
    # a judge without planted dials whose calls are noisy (sd 0.3) and cut at the mean >= 4:
    # a true pass at level 4 averages 4 and fails whenever its calls round down more often
    # than up. The fitted cut moves half a level down, to 3.5, and the gain is measurable:
    # this is a real defect of cutting a mean at the level, not a false gain
    items = labelled_items(SyntheticJudge(noise=0.3), n_items=1600, seed=7)
    result = align(items, methods=["threshold"], n_boot=1000, trust=None)
    fit = result.methods["threshold"].params
    assert isinstance(fit, ThresholdFit) and fit.value == pytest.approx(3.5, abs=0.2)
    v = result.methods["threshold"].verdicts
    assert v.tpr.difference.value > 0.05 and v.tpr.verdict == "gain"
