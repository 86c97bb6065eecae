"""pass^k from actively drawn labels (calibration/active/_passk.py): hand computations, exact
unbiasedness over repeated draws of one dataset, and coverage on seeded worlds (the 500-world
run under the ``slow`` mark)."""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pytest
from scipy.stats import t as t_dist

from trajudge.calibration.active._design import draw, judge_uncertainty, sampling_probabilities
from trajudge.calibration.active._passk import active_pass_hat_k, elementary_symmetric


def test_hand_computation_two_tasks() -> None:
    # task a: 3 runs, verdicts 1 1 0; run 1 drawn (p 0.5) labelled 1, run 2 drawn (p 0.25)
    # labelled 0, run 3 not drawn. Terms Z = f + (Y - f) / p where drawn, else f:
    #   1 + 0 / 0.5 = 1;  1 + (0 - 1) / 0.25 = -3;  0
    # pass^2(a) = (1*-3 + 1*0 + -3*0) / C(3, 2) = -1;  pass^1(a) = (1 - 3 + 0) / 3 = -2/3
    # task b: 2 runs, verdicts 0 1; run 1 drawn (p 0.5) labelled 1: Z = 0 + 1 / 0.5 = 2; Z = 1
    # pass^2(b) = 2 * 1 / 1 = 2;  pass^1(b) = 3 / 2
    r = active_pass_hat_k(
        verdict=[1, 1, 0, 0, 1],
        label=[1, 0, np.nan, 1, np.nan],
        probability=[0.5, 0.25, 0.4, 0.5, 0.9],
        tasks=["a", "a", "a", "b", "b"],
        ks=[1, 2, 3],
    )
    two = r.estimates[2]
    assert two.value == pytest.approx(0.5)  # (-1 + 2) / 2
    # variance 2/1 * ((-1 - 0.5)^2 + (2 - 0.5)^2) / 2^2 = 2.25, standard error 1.5; on the
    # logit scale: logit(0.5) = 0 -+ t(1) * 1.5 / (0.5 * 0.5), t(1) = 12.706 (a printed table)
    spread = 12.7062 * 1.5 / 0.25
    assert two.low == pytest.approx(1 / (1 + math.exp(spread)), rel=1e-3)
    assert two.high == pytest.approx(1 / (1 + math.exp(-spread)))
    assert r.estimates[1].value == pytest.approx((-2 / 3 + 1.5) / 2)
    # k = 3: only task a has three runs: Z product 1 * -3 * 0 = 0, no interval from one task
    assert r.estimates[3].value == 0.0 and r.estimates[3].n == 1
    assert math.isnan(r.estimates[3].low)


def test_every_run_labelled_is_the_plain_pass_hat_k() -> None:
    rng = np.random.default_rng(1)
    y = (rng.random(40) < 0.6).astype(float)
    f = (rng.random(40) < 0.5).astype(float)  # irrelevant when every run is labelled
    tasks = np.repeat(np.arange(8), 5)
    r = active_pass_hat_k(verdict=f, label=y, probability=np.ones(40), tasks=tasks, ks=[1, 3])
    for k in (1, 3):
        per_task = [math.comb(int(y[tasks == t].sum()), k) / math.comb(5, k) for t in range(8)]
        e = r.estimates[k]
        assert e.value == pytest.approx(np.mean(per_task))
        # equal weights: the t interval on 8 tasks, 7 degrees of freedom (scipy's quantile)
        # on the logit scale: log(p / (1 - p)) -+ half / (p (1 - p)), mapped back
        mean = float(np.mean(per_task))
        half = t_dist.ppf(0.975, 7) * np.std(per_task, ddof=1) / math.sqrt(8)
        centre, spread = math.log(mean / (1 - mean)), half / (mean * (1 - mean))
        assert e.low == pytest.approx(1 / (1 + math.exp(spread - centre)))
        assert e.high == pytest.approx(1 / (1 + math.exp(-centre - spread)))


def test_an_estimate_outside_a_share_gets_the_clipped_symmetric_interval() -> None:
    # the docstring's example: task a's terms 1, -1 -> pass^2 -1; task b's 0, 1 -> 0; mean
    # -0.5, no logit. Variance 2/1 * (0.5^2 + 0.5^2) / 2^2 = 0.25, half 12.706 * 0.5
    r = active_pass_hat_k(
        verdict=[1, 1, 0, 1], label=[1, 0, np.nan, 1], probability=[1, 0.5, 0.5, 1],
        tasks=list("aabb"), ks=[2],
    )  # fmt: skip
    e = r.estimates[2]
    assert e.value == pytest.approx(-0.5)
    assert (e.low, e.high) == (0.0, 1.0)  # -0.5 -+ 6.35 clipped
    # every term inside [0, 1] with a pass^k of 1: no logit either, the interval is [1, 1]
    one = active_pass_hat_k(verdict=[1, 1, 1, 1], label=[1, 1, 1, 1], probability=[1] * 4,
                            tasks=list("aabb"), ks=[1]).estimates[1]  # fmt: skip
    assert (one.value, one.low, one.high) == (1.0, 1.0, 1.0)


def test_elementary_symmetric_is_the_sum_over_subsets() -> None:
    rng = np.random.default_rng(2)
    v = rng.normal(size=(3, 6))
    for k in (1, 2, 4, 6):
        brute = [sum(math.prod(row[list(s)]) for s in combinations(range(6), k)) for row in v]
        assert elementary_symmetric(v, k) == pytest.approx(brute)


def test_prefix_weights_hand_computation() -> None:
    # design: task a has 4 runs, task b 2 (6 in all); 4 considered: 2 of a, 2 of b.
    # k = 2: P(at least 2 of a's 4 runs among 4 of 6) = 1 (at most 2 of the 4 are b's);
    # P(both of b's runs among them) = C(2,2) C(4,2) / C(6,4) = 6/15 = 0.4.
    # Every run labelled: pass^2(a) = 1 (1, 1), pass^2(b) = 0 (1, 0).
    # Hajek: (1/1 * 1 + 1/0.4 * 0) / (1 + 2.5) = 1/3.5
    r = active_pass_hat_k(
        verdict=[1, 1, 1, 1],
        label=[1, 1, 1, 0],
        probability=[1, 1, 1, 1],
        tasks=list("aabb"),
        ks=[2],
        task_trials={"a": 4, "b": 2},
        population=6,
    )
    assert r.estimates[2].value == pytest.approx(1 / 3.5)


def test_bad_inputs_are_refused() -> None:
    args = {"verdict": [1, 0], "label": [1, np.nan], "probability": [1, 0.5], "tasks": ["a", "a"]}
    with pytest.raises(ValueError, match="k must be"):
        active_pass_hat_k(**args, ks=[0])
    with pytest.raises(ValueError, match="task_trials"):
        active_pass_hat_k(**args, task_trials={"b": 2}, population=4)
    with pytest.raises(ValueError, match="population"):
        active_pass_hat_k(**args, task_trials={"a": 2})


def _dataset(rng: np.random.Generator, n_tasks: int, sizes: tuple[int, ...]):
    """Tasks with a success chance each (hard tasks fail again and again), a judge whose
    doubt tracks its errors (most verdicts confident and right, a few hard runs a coin)."""
    size = rng.choice(sizes, n_tasks)
    tasks = np.repeat(np.arange(n_tasks), size)
    p = rng.beta(2.0, 1.2, n_tasks)[tasks]
    y = (rng.random(tasks.size) < p).astype(float)
    hard = rng.random(tasks.size) < 0.15
    share = np.where(hard, rng.choice([0.4, 0.6], tasks.size), 1.0)
    wrong = np.where(hard, 0.45, 0.01) > rng.random(tasks.size)
    verdict = np.where(wrong, 1 - y, y)
    uncertainty = judge_uncertainty(pass_share=share)
    return tasks, y, verdict, uncertainty


def _truth(tasks: np.ndarray, y: np.ndarray, k: int) -> float:
    values = []
    for t in np.unique(tasks):
        n, c = int((tasks == t).sum()), int(y[tasks == t].sum())
        if n >= k:
            values.append(math.comb(c, k) / math.comb(n, k))
    return float(np.mean(values))


def test_unbiased_over_repeated_draws_of_one_dataset() -> None:
    rng = np.random.default_rng(7)
    tasks, y, f, unc = _dataset(rng, 30, (4,))
    pi = sampling_probabilities(uncertainty=unc, budget=12)
    assert pi.max() < 1 and (f != y).sum() >= 5  # every term random, some verdicts wrong
    truth = {k: _truth(tasks, y, k) for k in (1, 2, 4)}
    got: dict[int, list[float]] = {k: [] for k in truth}
    for _ in range(3000):
        label = np.where(draw(probabilities=pi, uniforms=rng.random(y.size)), y, np.nan)
        r = active_pass_hat_k(verdict=f, label=label, probability=pi, tasks=tasks, ks=list(truth))
        for k in truth:
            got[k].append(r.estimates[k].value)
    for k, values in got.items():
        v = np.array(values)
        se = v.std(ddof=1) / math.sqrt(v.size)
        assert abs(v.mean() - truth[k]) < 4 * se, (k, v.mean(), truth[k], se)
        # the judge's raw pass^k is biased here (it errs on hard runs): the check can fail
    raw = _truth(tasks, f, 4)
    assert abs(raw - truth[4]) > 4 * np.std(got[4], ddof=1) / math.sqrt(3000)


def _population(k: int) -> float:
    """pass^k of the tasks' population: E[p^k] for p ~ Beta(2, 1.2), prod (2 + i) / (3.2 + i)."""
    return math.prod((2 + i) / (3.2 + i) for i in range(k))


def coverage(worlds: int, seed: int, *, prefix: bool) -> dict[str, dict[int, float]]:
    """Share of worlds whose interval covers the dataset's own pass^k (``own``) and the pass^k
    of the population its tasks were drawn from (``population``); ``prefix``: tasks of 4 or
    8 runs, labelling stopped after a random 80% of the draw order."""
    rng = np.random.default_rng(seed)
    ks = (1, 2, 4)
    hits = {"own": dict.fromkeys(ks, 0), "population": dict.fromkeys(ks, 0)}
    for _ in range(worlds):
        tasks, y, f, unc = _dataset(rng, 120, (4, 8) if prefix else (4,))
        n = y.size
        pi = sampling_probabilities(uncertainty=unc, budget=0.2 * n)
        label = np.where(draw(probabilities=pi, uniforms=rng.random(n)), y, np.nan)
        keep = rng.permutation(n)[: int(0.8 * n)] if prefix else np.arange(n)
        trials = dict(zip(*np.unique(tasks, return_counts=True), strict=True))
        r = active_pass_hat_k(
            verdict=f[keep], label=label[keep], probability=pi[keep], tasks=tasks[keep], ks=ks,
            task_trials=trials if prefix else None, population=n if prefix else None,
        )  # fmt: skip
        for k in ks:
            e = r.estimates[k]
            hits["own"][k] += e.low <= _truth(tasks, y, k) <= e.high
            hits["population"][k] += e.low <= _population(k) <= e.high
    return {name: {k: h / worlds for k, h in got.items()} for name, got in hits.items()}


def test_coverage_small_run() -> None:
    for prefix in (False, True):
        got = coverage(60, seed=3, prefix=prefix)
        for name in got:
            assert min(got[name].values()) >= 0.85, got  # 60 worlds: 95% gives >= 52 hits w.p. 0.99


@pytest.mark.slow
def test_coverage_500_worlds() -> None:
    """Seeds 24-28, 500 worlds each (Monte Carlo standard error 0.01), tasks' population:
    all runs considered, pass^1 0.938-0.964, pass^2 0.940-0.966, pass^4 0.950-0.976; stopped
    at 80%, pass^1 0.952-0.966, pass^2 0.952-0.964, pass^4 0.936-0.970 (the symmetric interval
    it replaced: pass^4 0.928-0.960, skewed misses, module docstring). The dataset's own
    pass^k: 0.984-1.0."""
    for prefix, seed in ((False, 24), (True, 25)):
        got = coverage(500, seed=seed, prefix=prefix)
        print(prefix, got)
        # the dataset's own pass^k (what the report states): about 1.0, the interval counts
        # the spread between tasks too (module docstring)
        assert min(got["own"].values()) >= 0.95, got
        # the tasks' population: issue 28's bar at nominal 95%
        assert min(got["population"].values()) >= 0.93, got
