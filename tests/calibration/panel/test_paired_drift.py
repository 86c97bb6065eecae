"""Judge drift: paired kappa, pass rate and pass^k of two judges on the same anchor items."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from trajudge.calibration.panel import paired_drift


def _world(seed: int, n_tasks: int = 60, trials: int = 3, flip_new: float = 0.1):
    rng = np.random.default_rng(seed)
    tasks = np.repeat([f"t{i}" for i in range(n_tasks)], trials)
    p_task = rng.uniform(0.1, 0.9, n_tasks)
    labels = (rng.random(len(tasks)) < np.repeat(p_task, trials)).astype(int)
    old = np.where(rng.random(len(tasks)) < 0.85, labels, 1 - labels)
    new = np.where(rng.random(len(tasks)) < flip_new, 1 - old, old)
    return labels, old, new, tasks


def test_point_figures_match_a_hand_computation() -> None:
    labels, old, new, tasks = _world(1)
    d = paired_drift(labels=labels, old=old, new=new, tasks=tasks, ks=(1, 2), n_boot=300)
    k_old, k_new = cohen_kappa_score(labels, old), cohen_kappa_score(labels, new)
    assert d.kappa_old.value == pytest.approx(k_old)
    assert d.kappa_new.value == pytest.approx(k_new)
    assert d.kappa_diff.value == pytest.approx(k_new - k_old)
    assert d.pass_rate_diff.value == pytest.approx(new.mean() - old.mean())
    assert d.changed.value == pytest.approx(np.mean(old != new))
    assert d.n_down == int(np.sum((old == 1) & (new == 0)))
    assert d.n_up == int(np.sum((old == 0) & (new == 1)))
    # pass^2 by hand: C(c, 2) / C(3, 2) per task, averaged over tasks
    for verdicts, est in ((old, d.pass_hat[2][0]), (new, d.pass_hat[2][1])):
        c = verdicts.reshape(-1, 3).sum(axis=1)
        assert est.value == pytest.approx(np.mean([math.comb(int(x), 2) / 3 for x in c]))
    assert d.pass_hat[1][2].value == pytest.approx(new.mean() - old.mean())
    assert d.n_tasks == 60 and d.kappa_diff.n == 60


def test_an_unchanged_judge_has_no_drift_and_a_collapsed_interval() -> None:
    labels, old, _, tasks = _world(2)
    d = paired_drift(labels=labels, old=old, new=old.copy(), tasks=tasks, n_boot=300)
    assert (d.kappa_diff.value, d.kappa_diff.low, d.kappa_diff.high) == (0.0, 0.0, 0.0)
    assert d.changed.value == 0.0 and d.n_down == d.n_up == 0


def test_the_paired_interval_is_narrower_than_two_independent_ones() -> None:
    # the same items are hard for both versions: pairing cancels that shared variation
    labels, old, new, tasks = _world(3, flip_new=0.05)
    d = paired_drift(labels=labels, old=old, new=new, tasks=tasks, n_boot=1000)
    width_paired = d.kappa_diff.high - d.kappa_diff.low
    unpaired = math.hypot(d.kappa_old.high - d.kappa_old.low, d.kappa_new.high - d.kappa_new.low)
    assert width_paired < 0.6 * unpaired
    assert d.kappa_diff.low <= d.kappa_diff.value <= d.kappa_diff.high


def test_items_without_a_label_count_for_verdicts_not_for_kappa() -> None:
    labels = [1.0, 0.0, math.nan, 1.0, 0.0, math.nan]
    old = [1, 0, 1, 1, 1, 0]
    new = [1, 0, 0, 0, 1, 0]
    d = paired_drift(labels=labels, old=old, new=new, tasks=list("aabbcc"), n_boot=50)
    assert d.n_labeled == 4 and d.n_items == 6
    assert d.kappa_old.value == pytest.approx(cohen_kappa_score([1, 0, 1, 0], [1, 0, 1, 1]))
    assert d.kappa_new.value == pytest.approx(cohen_kappa_score([1, 0, 1, 0], [1, 0, 0, 1]))
    assert d.changed.value == pytest.approx(2 / 6)


def test_a_drifted_judge_is_seen_over_seeds() -> None:
    # the new version passes every item: kappa falls; the upper end of the paired
    # interval of the difference stays below 0 in nearly every world
    below = 0
    for seed in range(20):
        labels, old, _, tasks = _world(100 + seed)
        new = np.where(
            labels == 0, np.where(np.random.default_rng(seed).random(len(old)) < 0.5, 1, old), old
        )
        d = paired_drift(labels=labels, old=old, new=new, tasks=tasks, n_boot=300, seed=seed)
        below += d.kappa_diff.high < 0
    assert below >= 18
