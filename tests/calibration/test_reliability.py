"""pass@k / pass^k: hand-worked values, brute force over subsets, and τ-bench's table."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from trajudge.calibration import pass_at_k, pass_hat_k, reliability


def brute_force(n: int, c: int, k: int) -> tuple[float, float]:
    """Enumerate every k-subset of n trials (c successes) and count any / all passing."""
    trials = [1] * c + [0] * (n - c)
    subsets = list(itertools.combinations(range(n), k))
    anyp = sum(any(trials[i] for i in s) for s in subsets) / len(subsets)
    allp = sum(all(trials[i] for i in s) for s in subsets) / len(subsets)
    return anyp, allp


@pytest.mark.parametrize("n", [1, 2, 4, 5, 7])
def test_estimators_match_enumeration_of_subsets(n: int) -> None:
    for c in range(n + 1):
        for k in range(1, n + 1):
            anyp, allp = brute_force(n, c, k)
            assert pass_at_k(n, c, k) == pytest.approx(anyp, abs=1e-12)
            assert pass_hat_k(n, c, k) == pytest.approx(allp, abs=1e-12)


def test_hand_worked_values() -> None:
    # n=4, c=2, k=2: pass^2 = C(2,2)/C(4,2) = 1/6; pass@2 = 1 - C(2,2)/C(4,2) = 5/6
    assert pass_hat_k(4, 2, 2) == pytest.approx(1 / 6)
    assert pass_at_k(4, 2, 2) == pytest.approx(5 / 6)
    # the brief's example: 90% per step over 5 steps -> 0.9**5 = 0.59049
    assert pass_hat_k(10, 9, 1) ** 5 == pytest.approx(0.59049)


def test_fewer_trials_than_k_is_nan_and_reported() -> None:
    assert math.isnan(pass_hat_k(2, 2, 3))
    assert math.isnan(pass_at_k(2, 1, 3))
    df = pd.DataFrame(
        {"task_id": ["a", "a", "a", "b", "b"], "success": [True, True, False, True, True]}
    )
    r = reliability(df, ks=[1, 3])
    # k=1: a -> 2/3, b -> 1; mean 5/6.  k=3: only a has 3 trials: C(2,3)/C(3,3) = 0
    assert r.pass_hat[1] == pytest.approx(5 / 6)
    assert r.pass_hat[3] == pytest.approx(0.0)
    assert r.n_tasks[3] == 1
    assert r.short_tasks[3] == ["b"]
    assert r.unstable_tasks == ["a"]


def test_unknown_verdicts_are_counted_not_scored() -> None:
    df = pd.DataFrame({"task_id": ["a", "a", "a"], "success": [True, None, False]})
    r = reliability(df, ks=[1])
    assert r.n_unknown == 1
    assert r.n_trajectories == 2
    assert r.pass_hat[1] == pytest.approx(0.5)


def test_invalid_arguments() -> None:
    with pytest.raises(ValueError):
        pass_hat_k(3, 4, 1)
    with pytest.raises(ValueError):
        pass_at_k(3, 1, 0)


def test_by_intent_breakdown_and_usage_means() -> None:
    df = pd.DataFrame(
        {
            "task_id": ["a", "a", "b", "b"],
            "success": [True, True, False, True],
            "intent": ["book", "book", "cancel", "cancel"],
            "steps": [2, 4, 6, 8],
        }
    )
    r = reliability(df, ks=[1, 2])
    by = r.by_intent.set_index("intent")
    assert by.loc["book", "pass^2"] == pytest.approx(1.0)
    assert by.loc["cancel", "pass^2"] == pytest.approx(0.0)  # C(1,2)/C(2,2)
    assert by.loc["cancel", "pass@2"] == pytest.approx(1.0)
    assert r.per_task.set_index("task_id").loc["b", "mean_steps"] == pytest.approx(7.0)


def test_reproduces_tau_bench_published_pass_hat_k(tau_bench_file: Path) -> None:
    """τ-bench README, airline, gpt-4o: pass^1..4 = 0.420 / 0.273 / 0.220 / 0.200."""
    records = json.loads(tau_bench_file.read_text())
    df = pd.DataFrame(
        {
            "task_id": [r["task_id"] for r in records],
            "success": [abs(r["reward"] - 1) <= 1e-6 for r in records],
        }
    )
    r = reliability(df, ks=[1, 2, 3, 4])
    got = [round(r.pass_hat[k], 3) for k in (1, 2, 3, 4)]
    assert got == [0.420, 0.273, 0.220, 0.200]
    # pass@k from SOURCE.md's recomputation (no published number): 0.42, 0.5667, 0.66, 0.72
    assert np.round([r.pass_at[k] for k in (1, 2, 3, 4)], 4).tolist() == [
        0.42,
        0.5667,
        0.66,
        0.72,
    ]
    # success counts per task are distributed {0:14, 1:12, 2:10, 3:4, 4:10} (SOURCE.md)
    assert r.per_task["c"].value_counts().sort_index().to_dict() == {
        0: 14,
        1: 12,
        2: 10,
        3: 4,
        4: 10,
    }


def test_reliability_intervals_bracket_the_estimate_and_match_a_loop() -> None:
    from trajudge.calibration import reliability_intervals

    rng = np.random.default_rng(3)
    df = pd.DataFrame(
        {
            "task_id": np.repeat(np.arange(30), 4),
            "success": rng.random(120) < np.repeat(rng.random(30), 4),
        }
    )
    point = reliability(df, ks=[1, 2]).pass_hat
    iv = reliability_intervals(df, ks=[1, 2], n_boot=400, seed=7)
    for k in (1, 2):
        lo, hi = iv["pass^k"][k]
        assert lo <= point[k] <= hi
        assert hi - lo > 0
    # the vectorised bootstrap equals a plain loop over the same resampled task indexes,
    # with the BCa ends worked out from those draws and a leave-one-task-out jackknife
    from test_bootstrap import bca_by_hand

    values = reliability(df, ks=[2]).per_task["pass^2"].to_numpy()
    idx = np.random.default_rng(7).integers(0, 30, size=(400, 30))
    loop = np.array([values[row].mean() for row in idx])
    jack = np.array([np.delete(values, i).mean() for i in range(30)])
    low, high = bca_by_hand(loop, values.mean(), jack)
    assert iv["pass^k"][2] == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))
