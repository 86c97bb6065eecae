"""PPI++ pass rates: the formulas by hand and by numerical minimisation, coverage over many
synthetic worlds with correlated trials, and what the judge buys against labels alone."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize_scalar
from scipy.stats import norm

from trajudge.calibration import (
    corrected_pass_rate,
    pass_hat_k,
    pass_rate_estimates,
    ppi_pass_hat_k,
    ppi_pass_rate,
    reliability,
)

A, B = 0.6, 0.9  # task success probability p ~ Beta(A, B): tasks differ, trials correlate


def _true_pass_hat(k: int) -> float:
    # E[p^k] for p ~ Beta(A, B) = prod_{j<k} (A + j) / (A + B + j)
    return float(np.prod([(A + j) / (A + B + j) for j in range(k)]))


def _world(
    seed: int,
    *,
    n_tasks: int = 500,
    trials: int = 4,
    n_labels: int = 0,
    label_tasks: int = 0,
    tpr: float = 0.95,
    tnr: float = 0.7,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    p = rng.beta(A, B, n_tasks)
    truth = (rng.random((n_tasks, trials)) < p[:, None]).astype(float).ravel()
    u = rng.random(truth.size)
    verdict = np.where(truth == 1, u < tpr, u > tnr).astype(float)  # a lenient judge
    tasks = np.repeat(np.arange(n_tasks), trials)
    labelled = np.zeros(truth.size, dtype=bool)
    if n_labels:
        labelled[rng.choice(truth.size, n_labels, replace=False)] = True
    if label_tasks:
        labelled |= np.isin(tasks, rng.choice(n_tasks, label_tasks, replace=False))
    return verdict, np.where(labelled, truth, np.nan), tasks


def test_ppi_rate_by_hand_without_clusters() -> None:
    rng = np.random.default_rng(0)
    v = (rng.random(300) < 0.6).astype(float)
    y = np.where(rng.random(300) < 0.85, v, 1 - v)
    y[60:] = np.nan  # 60 labelled, 240 unlabelled
    r = ppi_pass_rate(v, y)
    yl, fl, fu = y[:60], v[:60], v[60:]
    n, nu = 60, 240
    # the variance of theta_lambda: Var(Y - lambda f) / n + lambda^2 Var(f_U) / N_u (ddof 0),
    # times the small-sample factor G / (G - 1) with G = 300 units

    def var(lam: float) -> float:
        return 300 / 299 * (np.var(yl - lam * fl) / n + lam**2 * np.var(fu) / nu)

    best = minimize_scalar(var, bounds=(0, 1), method="bounded", options={"xatol": 1e-10})
    assert r.lam == pytest.approx(best.x, abs=1e-6)
    # close to the PPI++ closed form Cov(Y, f) / ((1 + n / N) Var(f))
    closed = np.cov(yl, fl, ddof=0)[0, 1] / ((1 + n / nu) * np.var(np.r_[fl, fu]))
    assert r.lam == pytest.approx(closed, abs=0.05)
    value = np.mean(yl - r.lam * fl) + r.lam * np.mean(fu)
    half = norm.ppf(0.975) * math.sqrt(var(r.lam))
    assert (r.ppi.value, r.ppi.low, r.ppi.high) == (
        pytest.approx(value, abs=1e-12),
        pytest.approx(value - half, abs=1e-12),
        pytest.approx(value + half, abs=1e-12),
    )
    assert r.ppi_variance == pytest.approx(var(r.lam), abs=1e-15)
    # labels only: the mean of the 60 labels, variance n/(n-1) * var(y) / n
    lab_half = norm.ppf(0.975) * math.sqrt(60 / 59 * np.var(yl) / 60)
    assert r.labels_only.value == pytest.approx(yl.mean())
    assert r.labels_only.high - r.labels_only.value == pytest.approx(lab_half, abs=1e-12)
    assert r.judge_only == pytest.approx(v.mean())
    assert (r.n_labeled, r.n_unlabeled) == (60, 240)
    # lambda = 0 is the labels-only estimate
    zero = ppi_pass_rate(v, y, lam=0.0)
    assert zero.ppi.value == pytest.approx(zero.labels_only.value)


def test_clustered_variance_by_hand() -> None:
    # 2 tasks x 2 trajectories; task a labelled on both, task b unlabelled; lambda fixed to 1
    v = np.array([1.0, 1.0, 1.0, 0.0])
    y = np.array([1.0, 0.0, np.nan, np.nan])
    r = ppi_pass_rate(v, y, tasks=["a", "a", "b", "b"], lam=1.0)
    # theta = mean(y - f) + mean(f_U) = -0.5 + 0.5 = 0
    # A_a = ((1 - .5) + (0 - .5)) / 2 = 0; B_a = ((1 - 1) + (1 - 1)) / 2 = 0
    # B_b = -((1 - .5) + (0 - .5)) / 2 = 0 -> variance 0: the within-task deviations cancel
    assert r.ppi.value == 0.0 and r.ppi_variance == 0.0
    # unclustered, the same data has a positive variance
    assert ppi_pass_rate(v, y, lam=1.0).ppi_variance > 0


def test_pass_hat_k_by_hand_and_labels_only_equals_reliability() -> None:
    v, y, tasks = _world(1, n_tasks=60, label_tasks=20)
    r = ppi_pass_hat_k(v, y, tasks, ks=[1, 2, 3])
    lab = ~np.isnan(y)
    human = reliability(pd.DataFrame({"task_id": tasks[lab], "success": y[lab]}), ks=[1, 2, 3])
    judge = reliability(pd.DataFrame({"task_id": tasks, "success": v}), ks=[1, 2, 3])
    for k in (1, 2, 3):
        e = r.estimates[k]
        assert e.labels_only.value == pytest.approx(human.pass_hat[k], abs=1e-12)
        assert e.judge_only == pytest.approx(judge.pass_hat[k], abs=1e-12)
        assert (e.n_labeled, e.n_unlabeled) == (20, 40)
    # lambda = 1 by hand: mean over labelled tasks of (human - judge) pass^2 on their 4 trials,
    # plus the judge's mean pass^2 over the other tasks
    one = ppi_pass_hat_k(v, y, tasks, ks=[2], lam=1.0).estimates[2]
    counts = {t: (int(np.nansum(y[tasks == t])), int(v[tasks == t].sum())) for t in range(60)}
    labelled = [t for t in range(60) if lab[tasks == t].all()]
    rect = np.mean([pass_hat_k(4, counts[t][0], 2) - pass_hat_k(4, counts[t][1], 2)
                    for t in labelled])  # fmt: skip
    judged = np.mean([pass_hat_k(4, counts[t][1], 2) for t in range(60) if t not in labelled])
    assert one.ppi.value == pytest.approx(rect + judged, abs=1e-12)


def test_coverage_of_the_pass_rate_over_1000_worlds() -> None:
    # 2,000 trajectories of 500 tasks, 400 labelled at random; nominal 95%
    hits = lab_hits = 0
    ppi_width, lab_width = [], []
    for w in range(1000):
        v, y, tasks = _world(10_000 + w, n_labels=400)
        r = ppi_pass_rate(v, y, tasks=tasks)
        truth = A / (A + B)
        hits += r.ppi.low <= truth <= r.ppi.high
        lab_hits += r.labels_only.low <= truth <= r.labels_only.high
        ppi_width.append(r.ppi.high - r.ppi.low)
        lab_width.append(r.labels_only.high - r.labels_only.low)
    assert hits / 1000 >= 0.93, hits
    assert lab_hits / 1000 >= 0.93, lab_hits
    # what the judge buys: a narrower interval than the labels alone
    assert np.mean(ppi_width) < 0.9 * np.mean(lab_width)


def test_coverage_of_pass_hat_k_over_1000_worlds() -> None:
    # 250 of 500 tasks labelled on all 4 trials; trials of a task are correlated
    ks = [1, 2, 3, 4]
    hits = dict.fromkeys(ks, 0)
    width, lab_width = dict.fromkeys(ks, 0.0), dict.fromkeys(ks, 0.0)
    for w in range(1000):
        v, y, tasks = _world(20_000 + w, label_tasks=250)
        r = ppi_pass_hat_k(v, y, tasks, ks=ks)
        for k in ks:
            e = r.estimates[k]
            hits[k] += e.ppi.low <= _true_pass_hat(k) <= e.ppi.high
            width[k] += e.ppi.high - e.ppi.low
            lab_width[k] += e.labels_only.high - e.labels_only.low
    for k in ks:
        assert hits[k] / 1000 >= 0.93, (k, hits)
        assert width[k] < lab_width[k]  # the judge on the other 250 tasks narrows it


def test_an_uninformative_judge_costs_nothing() -> None:
    # verdicts independent of the truth: lambda goes to ~0 and PPI is the labels-only mean
    v, y, tasks = _world(3, n_labels=300, tpr=0.5, tnr=0.5)
    r = ppi_pass_rate(v, y, tasks=tasks)
    assert r.lam < 0.15
    assert r.ppi.high - r.ppi.low <= 1.02 * (r.labels_only.high - r.labels_only.low)
    # a good judge buys a lot: effective labels well above the labels given
    v, y, tasks = _world(3, n_labels=300, tpr=0.97, tnr=0.95)
    good = ppi_pass_rate(v, y, tasks=tasks)
    assert good.lam > 0.7 and good.effective_labels > 2 * good.n_labeled


def test_degenerate_and_bad_input() -> None:
    r = ppi_pass_rate([1, 0, 1], [np.nan, np.nan, np.nan])
    assert math.isnan(r.ppi.value) and r.judge_only == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="0/1"):
        ppi_pass_rate([1, 0.5], [1, 0])
    with pytest.raises(ValueError, match="0/1"):
        ppi_pass_rate([1, 0], [2, 0])
    short = ppi_pass_hat_k([1, 1, 0], [1, np.nan, np.nan], ["a", "a", "b"], ks=[3])
    assert math.isnan(short.estimates[3].ppi.value)  # no task has 3 trials


def test_pass_rate_estimates_side_by_side() -> None:
    # the lenient judge's raw rate is confidently wrong; the three corrections cover the truth
    v, y, tasks = _world(4, n_labels=400)
    t = pass_rate_estimates(v, y, tasks=tasks, n_boot=1000).set_index("estimator")
    truth = A / (A + B)
    assert not t.loc["judge", "low"] <= truth <= t.loc["judge", "high"]
    for name in ("rogan_gladen", "labels_only", "ppi"):
        assert t.loc[name, "low"] <= truth <= t.loc[name, "high"], name
    assert t.loc["ppi", "width"] < t.loc["labels_only", "width"]
    ppi = ppi_pass_rate(v, y, tasks=tasks)
    rg = corrected_pass_rate(v, y, n_boot=1000)
    assert t.loc["ppi", "value"] == ppi.ppi.value and t.loc["ppi", "lam"] == ppi.lam
    assert t.loc["rogan_gladen", "value"] == rg.corrected.value
    assert (t["n_labeled"] == 400).all()


def test_rogan_gladen_row_resamples_tasks() -> None:
    # Each task's four trials are copies (same verdict, same label): resampling tasks must give
    # exactly the interval of one trajectory per task resampled alone (every rate is a ratio
    # of sums, so a copy scales both sides). Resampling trajectories instead treats the copies
    # as independent evidence and narrows the interval by about half.
    rng = np.random.default_rng(7)
    v1 = (rng.random(60) < 0.6).astype(float)
    y1 = np.where(rng.random(60) < 0.85, v1, 1 - v1)
    y1[40:] = np.nan
    names = np.array([f"t{i:02d}" for i in range(60)])
    one = corrected_pass_rate(v1, y1, clusters=names, n_boot=400, seed=3).corrected
    v4, y4, tasks = np.repeat(v1, 4), np.repeat(y1, 4), np.repeat(names, 4)
    t = pass_rate_estimates(v4, y4, tasks=tasks, n_boot=400, seed=3).set_index("estimator")
    assert t.loc["rogan_gladen", "value"] == pytest.approx(one.value, abs=1e-12)
    assert (t.loc["rogan_gladen", "low"], t.loc["rogan_gladen", "high"]) == (
        pytest.approx(one.low, abs=1e-12),
        pytest.approx(one.high, abs=1e-12),
    )
