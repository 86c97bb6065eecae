"""Corrected rates on synthetic data with a known truth; the label budget by hand."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from trajudge.calibration import (
    corrected_pass_hat_k,
    corrected_pass_rate,
    label_budget,
    reliability,
    rogan_gladen,
)


def test_rogan_gladen_by_hand() -> None:
    # (0.5 + 0.8 - 1) / (0.9 + 0.8 - 1) = 0.3 / 0.7
    assert float(rogan_gladen(0.5, 0.9, 0.8)) == pytest.approx(3 / 7, abs=1e-12)
    # (0.05 + 0.9 - 1) / 0.8 < 0: clipped to 0; (0.99 + 0.9 - 1) / 0.8 > 1: clipped to 1
    assert float(rogan_gladen(0.05, 0.9, 0.9)) == 0.0
    assert float(rogan_gladen(0.99, 0.9, 0.9)) == 1.0
    assert math.isnan(float(rogan_gladen(0.5, 0.5, 0.5)))  # TPR + TNR = 1: no information
    assert math.isnan(float(rogan_gladen(0.5, 0.3, 0.4)))


def _lenient_world(seed: int, n: int = 2000, n_labeled: int = 300):
    # true prevalence 0.3; a lenient judge: TPR 0.95, TNR 0.6 (passes 40% of failures)
    rng = np.random.default_rng(seed)
    truth = (rng.random(n) < 0.3).astype(float)
    verdict = np.where(truth == 1, rng.random(n) < 0.95, rng.random(n) > 0.6).astype(float)
    labeled = np.full(n, np.nan)
    idx = rng.choice(n, n_labeled, replace=False)
    labeled[idx] = truth[idx]
    return truth, verdict, labeled


@pytest.mark.parametrize("seed", range(5))
def test_corrected_rate_is_closer_to_truth_and_covers_it(seed: int) -> None:
    truth, verdict, labeled = _lenient_world(seed)
    r = corrected_pass_rate(verdict, labeled, n_boot=1000, seed=seed)
    true_rate = truth.mean()
    assert r.raw.value == pytest.approx(verdict.mean())
    assert abs(r.corrected.value - true_rate) < abs(r.raw.value - true_rate)
    assert r.corrected.low <= true_rate <= r.corrected.high
    assert not (r.raw.low <= true_rate <= r.raw.high)  # the raw rate is confidently wrong
    lab = ~np.isnan(labeled)
    assert r.tpr == pytest.approx(verdict[lab & (truth == 1)].mean())
    assert r.tnr == pytest.approx(1 - verdict[lab & (truth == 0)].mean())
    assert (r.n_labeled, r.n_unlabeled) == (300, 1700)


def test_corrected_rate_interval_reflects_label_uncertainty() -> None:
    # same verdicts, fewer labels: TPR / TNR less certain, a wider interval
    _, verdict, labeled = _lenient_world(0)
    few = labeled.copy()
    few[np.flatnonzero(~np.isnan(few))[60:]] = np.nan
    wide = corrected_pass_rate(verdict, few, n_boot=1000).corrected
    narrow = corrected_pass_rate(verdict, labeled, n_boot=1000).corrected
    assert wide.high - wide.low > narrow.high - narrow.low


def _task_world(seed: int, n_tasks: int = 200, trials: int = 4):
    rng = np.random.default_rng(seed)
    p_task = rng.beta(0.6, 0.6, n_tasks)  # tasks differ: hard ones fail again and again
    truth = (rng.random((n_tasks, trials)) < p_task[:, None]).astype(float).ravel()
    verdict = np.where(truth == 1, rng.random(truth.size) < 0.95, rng.random(truth.size) > 0.65)
    labeled = np.full(truth.size, np.nan)
    idx = rng.choice(truth.size, 250, replace=False)
    labeled[idx] = truth[idx]
    return truth, verdict.astype(float), labeled, np.repeat(np.arange(n_tasks), trials)


def test_corrected_pass_hat_k_closer_to_truth_and_covers_it() -> None:
    # five worlds: per k, the corrected pass^k must be within 0.035 of the true pass^k on
    # average, beat the raw one wherever the raw one is off by more than 0.04 (at k = 4 this
    # lenient judge's two errors happen to cancel: its raw pass^4 is off by only 0.027, and
    # beating that is luck, not a property), and its interval must cover the true pass^k in
    # at least 4 of 5 (nominal 95%)
    ks = [1, 2, 3, 4]
    err = {k: [] for k in ks}
    raw_err = {k: [] for k in ks}
    covered = dict.fromkeys(ks, 0)
    for seed in range(5):
        truth, verdict, labeled, task = _task_world(seed)
        r = corrected_pass_hat_k(verdict, labeled, task, ks=ks, n_boot=400, seed=seed)
        true = reliability(pd.DataFrame({"task_id": task, "success": truth}), ks=ks)
        raw = reliability(pd.DataFrame({"task_id": task, "success": verdict}), ks=ks)
        for k in ks:
            est = r.corrected[k]
            assert r.raw[k] == pytest.approx(raw.pass_hat[k], abs=1e-12)
            err[k].append(abs(est.value - true.pass_hat[k]))
            raw_err[k].append(abs(r.raw[k] - true.pass_hat[k]))
            covered[k] += est.low <= true.pass_hat[k] <= est.high
    for k in ks:
        assert np.mean(err[k]) < 0.035, (k, err[k])
        if np.mean(raw_err[k]) > 0.04:
            assert np.mean(err[k]) < np.mean(raw_err[k]), (k, err[k], raw_err[k])
        assert covered[k] >= 4, (k, covered)
    assert sum(np.mean(raw_err[k]) > 0.04 for k in ks) == 3  # k = 1, 2, 3 are compared


def test_corrected_pass_hat_k_undefined_for_an_uninformative_judge() -> None:
    rng = np.random.default_rng(0)
    truth = (rng.random(400) < 0.5).astype(float)
    verdict = (rng.random(400) < 0.5).astype(float)  # independent of the truth
    labeled = np.where(np.arange(400) < 200, truth, np.nan)
    r = corrected_pass_hat_k(verdict, labeled, np.repeat(np.arange(100), 4), ks=[1], n_boot=200)
    assert math.isnan(r.corrected[1].value)  # TPR + TNR <= 1 in many draws: NaN, not a guess


def test_label_budget_by_hand() -> None:
    # half-width (0.70 - 0.50) / 2 = 0.10 on 100 items: 100 * (0.10 / 0.05)^2 = 400 in all
    b = label_budget(100, 0.50, 0.70)
    assert (b.half_width, b.n_total, b.n_more) == (pytest.approx(0.10), 400, 300)
    # h = 0.08 on 37 items: 37 * (0.08 / 0.05)^2 = 37 * 2.56 = 94.72 -> 95 in all, 58 more
    b = label_budget(37, 0.30, 0.46)
    assert (b.n_total, b.n_more) == (95, 58)
    # already under the target: nothing more; a target of 0.02 from h = 0.04 on 50: 200
    assert label_budget(500, 0.60, 0.66).n_more == 0
    assert label_budget(50, 0.1, 0.18, target=0.02).n_total == 200
    assert math.isnan(label_budget(10, math.nan, math.nan).n_more)
    assert math.isnan(label_budget(12, 0.0, 0.0).n_more)  # zero width: no basis
    with pytest.raises(ValueError):
        label_budget(10, 0.1, 0.2, target=0)
