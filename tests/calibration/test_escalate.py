"""Trust or escalate: the exact bound against scipy's binomial test, fixed-sequence testing by
hand, the guarantee over many worlds, and the whole path through ``align``."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binomtest

from _align_worlds import labelled_items, many_worlds
from trajudge.calibration import (
    Calibrator,
    SyntheticJudge,
    TrustThreshold,
    align,
    clopper_pearson_lower,
    escalated_items,
    evaluate_trust,
    fit_trust_threshold,
)


@pytest.mark.parametrize(("x", "n"), [(29, 29), (95, 100), (180, 200), (3, 10), (0, 7)])
def test_clopper_pearson_lower_bound_equals_scipy(x: int, n: int) -> None:
    ci = binomtest(x, n).proportion_ci(confidence_level=0.90, method="exact")
    # a two-sided 90% exact interval has the one-sided 95% bounds at its ends
    assert float(clopper_pearson_lower(x, n, alpha=0.05)) == pytest.approx(ci.low, abs=1e-10)
    # and the bound reaches the target exactly when the one-sided test rejects at 5%
    for target in (0.5, 0.8, 0.9):
        p = binomtest(x, n, target, alternative="greater").pvalue
        assert (float(clopper_pearson_lower(x, n, alpha=0.05)) >= target) == (p <= 0.05)
    assert math.isnan(float(clopper_pearson_lower(0, 0, alpha=0.05)))


def test_fit_trust_cut_by_hand() -> None:
    # n_min = ceil(ln .05 / ln .9) = ceil(28.43) = 29 items before any cut can pass
    conf = np.r_[np.full(40, 0.95), np.full(40, 0.7)]
    ok = np.r_[np.ones(40), np.tile([1.0, 0.0], 20)]
    t = fit_trust_threshold(conf, ok, target=0.9, alpha=0.05, grid=None)
    # cut .95: 40 / 40, L = .05 ** (1/40) = .9278 >= .9; cut .7: 60 / 80 fails
    assert (t.value, t.n_kept, t.agreement, t.n_tested, t.certified) == (0.95, 40, 1.0, 2, True)
    assert t.lower_bound == pytest.approx(0.05 ** (1 / 40))
    # 28 perfect items are too few (.05 ** (1/28) = .8985): nothing is certified
    none = fit_trust_threshold(np.full(28, 0.99), np.ones(28), target=0.9, alpha=0.05)
    assert not none.certified and math.isinf(none.value) and none.n_tested == 0
    assert escalated_items([0.99, 0.5], none, ["a", "b"]) == ["a", "b"]


def test_fixed_sequence_stops_at_the_first_failure() -> None:
    # three confidence levels: the top 50 items are perfect, the next 50 have 30 errors,
    # the last 400 are perfect. Cut .9 keeps 50/50 (passes); cut .8 keeps 100 with 70 right
    # (fails); cut .6 would keep 500 with 470 right and pass, but the sequence stopped
    conf = np.r_[np.full(50, 0.9), np.full(50, 0.8), np.full(400, 0.6)]
    ok = np.r_[np.ones(50), np.r_[np.ones(20), np.zeros(30)], np.ones(400)]
    assert float(clopper_pearson_lower(470, 500, alpha=0.05)) >= 0.9  # the last cut would pass
    t = fit_trust_threshold(conf, ok, target=0.9, alpha=0.05, grid=None)
    assert (t.value, t.n_kept, t.n_tested) == (0.9, 50, 2)


def test_grid_of_kept_shares() -> None:
    conf = np.linspace(1.0, 0.5, 1000)
    ok = np.ones(1000)
    t = fit_trust_threshold(conf, ok, target=0.9, alpha=0.05, grid=10)
    # every cut passes (no error): the last of the grid keeps all 1,000 items
    assert (t.n_kept, t.n_tested, t.value) == (1000, 10, 0.5)
    with pytest.raises(ValueError, match="grid"):
        fit_trust_threshold(conf, ok, grid=0)


def test_evaluate_trust_by_hand() -> None:
    cut = TrustThreshold(0.9, 0.9, 0.05, True, 100, 50, 0.96, 0.91, 3)
    out = evaluate_trust(cut, [0.95, 0.92, 0.5, 0.99, 0.1], [1, 1, 0, 0, 1], [1, 1, 2, 3, 3],
                         items=["a", "b", "c", "d", "e"], n_boot=200)  # fmt: skip
    assert (out.coverage.value, out.agreement.value, out.n_kept) == (0.6, 2 / 3, 3)
    assert out.escalated == ("c", "e") and out.coverage.n == 3  # 3 tasks resampled


def _calibrated_world(seed: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    # confidence c ~ U(.5, 1) and the judge right with probability c: agreement among items
    # with c >= cut is E[c | c >= cut] = (1 + cut) / 2, so cut >= .8 <=> agreement >= .9
    rng = np.random.default_rng(seed)
    c = rng.uniform(0.5, 1.0, n)
    return c, (rng.random(n) < c).astype(float)


def test_guarantee_holds_in_95_percent_of_worlds() -> None:
    worlds, kept, coverage = 300, 0, []
    for w in range(worlds):
        t = fit_trust_threshold(*_calibrated_world(w, 1000), target=0.9, alpha=0.05)
        if not t.certified:
            kept += 1  # escalating everything never breaks the guarantee
            coverage.append(0.0)
            continue
        kept += (1 + t.value) / 2 >= 0.9  # the true agreement at the chosen cut
        coverage.append((1 - t.value) / 0.5)  # the true share kept
    assert kept / worlds >= 0.95
    # and it is not vacuous: the best cut (.8) keeps 40%; the bound pays for exactness
    assert 0.15 < np.mean(coverage) < 0.4


@pytest.mark.slow
def test_agreement_reaches_target_in_95_percent_of_200_worlds() -> None:
    # a noisy, lenient judge (sd 2 on the latent score: about one item in five is judged
    # wrong, so reaching 90% means escalating), calibrated on dev by isotonic cross-fitting.
    # The guarantee is about the agreement on kept items in the population the holdout is
    # drawn from; each world's holdout (~300 items) measures it with noise, so the population
    # agreement is measured on one large shared sample from the same world (40,000 items)
    judge = SyntheticJudge(noise=2.0, leniency=0.5)
    worlds = many_worlds(judge, n_worlds=200, items_per_world=600, seed=303, threshold=3.5)
    population = labelled_items(judge, n_items=40_000, seed=909, threshold=3.5)
    pop_label = population["label"].to_numpy() == 1
    reached, consistent, coverage = 0, 0, []
    for items in worlds:
        r = align(items, methods=["calibrate"], n_boot=200, target=0.9, alpha=0.05)
        assert r.trust is not None and r.trust_source == "calibrate"
        cal = r.methods["calibrate"].params
        assert isinstance(cal, Calibrator)
        p = cal.predict_proba(population)
        kept = np.maximum(p, 1 - p) >= r.trust.threshold.value
        right = (p >= 0.5) == pop_label
        reached += not kept.any() or right[kept].mean() >= 0.9
        coverage.append(kept.mean())
        # the world's own holdout does not contradict it: its interval reaches the target
        consistent += r.trust.n_kept == 0 or r.trust.agreement.high >= 0.9
        # everything below the cut outside labelled dev is queued, holdout items among them
        assert set(r.trust.escalated) <= set(r.escalated)
    assert reached / len(worlds) >= 0.95, reached
    assert consistent / len(worlds) >= 0.95, consistent
    assert 0.3 < np.mean(coverage) < 0.95  # the judge keeps a real share, escalates the rest
