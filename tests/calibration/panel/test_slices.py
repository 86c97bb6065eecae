"""Per-slice agreement: figures against sklearn, adjusted p-values against scipy and a hand
computation, the family-wise error under the null and the power on a bad slice."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import false_discovery_control
from sklearn.metrics import cohen_kappa_score, recall_score

from trajudge.calibration.panel import adjust_p, labels_needed, slice_agreement


def _holm_by_hand(p: list[float]) -> list[float]:
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out, running = [0.0] * m, 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def test_adjusted_p_values_match_scipy_and_a_hand_computation() -> None:
    rng = np.random.default_rng(0)
    for _ in range(20):
        p = rng.uniform(0, 0.2, size=int(rng.integers(1, 15)))
        assert adjust_p(p, method="bh") == pytest.approx(false_discovery_control(p, method="bh"))
        assert adjust_p(p, method="holm") == pytest.approx(_holm_by_hand(list(p)))
    # missing p-values stay out of the family
    got = adjust_p([0.01, np.nan, 0.04], method="holm")
    assert got[0] == pytest.approx(0.02) and np.isnan(got[1]) and got[2] == pytest.approx(0.04)


def _world(seed: int, bad: float, n_tasks: int = 120, per_task: int = 3):
    """Tasks in six intents; the judge is right 90% of the time, ``bad`` on intent 'refund'."""
    rng = np.random.default_rng(seed)
    intents = np.array(["refund", "billing", "login", "search", "cancel", "upgrade"])
    task_intent = intents[rng.integers(0, 6, n_tasks)]
    tasks = np.repeat(np.arange(n_tasks), per_task)
    intent = task_intent[tasks]
    labels = (rng.random(tasks.size) < 0.5).astype(float)
    right = np.where(intent == "refund", bad, 0.9)
    verdict = np.where(rng.random(tasks.size) < right, labels, 1 - labels)
    return labels, verdict, intent, tasks


def test_slice_figures_match_sklearn() -> None:
    labels, verdict, intent, tasks = _world(1, bad=0.6)
    rows = slice_agreement(
        labels=labels, verdicts={"j": verdict}, slices={"intent": intent}, clusters=tasks,
        n_boot=200,
    )  # fmt: skip
    assert [r.value for r in rows] == sorted(set(intent))
    for r in rows:
        s = intent == r.value
        assert r.n == s.sum() and r.n_pass == labels[s].sum()
        assert r.kappa.value == pytest.approx(cohen_kappa_score(labels[s], verdict[s]))
        assert r.kappa_rest.value == pytest.approx(cohen_kappa_score(labels[~s], verdict[~s]))
        assert r.tpr.value == pytest.approx(recall_score(labels[s], verdict[s]))
        assert r.tnr.value == pytest.approx(recall_score(1 - labels[s], 1 - verdict[s]))
    bad = next(r for r in rows if r.value == "refund")
    assert bad.flagged and bad.delta.value < 0
    assert sum(r.flagged for r in rows) == 1


def test_holm_keeps_the_family_wise_error_under_the_null() -> None:
    # no slice differs: the share of worlds with any flag stays near 5%, where unadjusted
    # p-values over six slices would flag about a quarter of the worlds
    any_flag = any_raw = 0
    worlds = 120
    for seed in range(worlds):
        labels, verdict, intent, tasks = _world(seed, bad=0.9, n_tasks=90)
        rows = slice_agreement(
            labels=labels, verdicts={"j": verdict}, slices={"intent": intent}, clusters=tasks,
            n_boot=300, seed=seed,
        )  # fmt: skip
        any_flag += any(r.flagged for r in rows)
        any_raw += any(r.p_value <= 0.05 for r in rows)
    assert any_flag / worlds <= 0.1
    assert any_raw / worlds >= 0.15


def test_a_small_slice_says_how_many_labels_it_needs() -> None:
    labels, verdict, intent, tasks = _world(2, bad=0.9)
    intent = intent.astype(object)
    few = np.flatnonzero(intent == "refund")[:6]
    intent[intent == "refund"] = "billing"
    intent[few] = "refund"
    rows = slice_agreement(
        labels=labels, verdicts={"j": verdict}, slices={"intent": intent}, clusters=tasks,
        n_boot=100, min_labels=20, min_per_class=5,
    )  # fmt: skip
    small = next(r for r in rows if r.value == "refund")
    n_pass = int(labels[few].sum())
    share = labels.mean()
    want = max(
        20 - 6,
        int(np.ceil((5 - n_pass) / share)) if n_pass < 5 else 0,
        int(np.ceil((5 - (6 - n_pass)) / (1 - share))) if 6 - n_pass < 5 else 0,
    )
    assert small.n_more == want > 0
    assert not small.tested and np.isnan(small.p_value) and not small.flagged
    assert labels_needed(n=30, n_pass=15, n_fail=15, share_pass=0.5, min_labels=20,
                         min_per_class=5) == 0  # fmt: skip
