"""Strata, samples and splits on the real τ-bench airline runs (50 tasks × 4 trials)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from trajudge.evalset import (
    assign_strata,
    common_intents,
    detect_boundary_tags,
    split_of,
    stratified_sample,
)
from trajudge.trajectories import from_tau_bench


def frame(path: Path) -> pd.DataFrame:
    trajectories, _ = from_tau_bench(path)
    return pd.DataFrame(
        {
            "id": [t.id for t in trajectories],
            "task_id": [t.task_id for t in trajectories],
            "intent": [t.intent for t in trajectories],
            "success": [t.outcome for t in trajectories],
        }
    )


def test_known_hard_are_the_14_tasks_that_never_succeed(tau_bench_file: Path) -> None:
    # SOURCE.md: successes per task are distributed as {0: 14, 1: 12, 2: 10, 3: 4, 4: 10}
    out = assign_strata(frame(tau_bench_file))
    hard = out[out["stratum"] == "known_hard"]
    assert hard["task_id"].nunique() == 14
    assert len(hard) == 56
    assert not hard["success"].any()


def test_common_intents_by_hand(tau_bench_file: Path) -> None:
    # runs per intent (4 trials each): no_write 28; two intents with 16; four with 12; four
    # with 8; the rest 4. Cumulative: 28, 60, 108 (54%), +8 = 116 (58%) < 60%, +8 = 124
    # (62%) crosses the line, and the other two 8s tie -> 11 common intents, 140 runs (70%).
    intents = frame(tau_bench_file)["intent"].tolist()
    common = common_intents(intents)
    assert len(common) == 11
    assert sum(i in common for i in intents) == 140


def test_stratified_sample_and_split_on_real_runs(tau_bench_file: Path) -> None:
    df = assign_strata(frame(tau_bench_file))
    s = stratified_sample(df, 20, seed=0)
    assert s.counts == {"common": 12, "long_tail": 6, "known_hard": 2} and not s.shortfall
    splits = df.groupby("task_id")["task_id"].first().map(split_of)
    assert 0.15 < (splits == "dev").mean() < 0.45  # 50 tasks at 30%: sd ~ 0.065


def test_boundary_tags_on_real_runs(tau_bench_file: Path) -> None:
    trajectories, _ = from_tau_bench(tau_bench_file)
    tags = {t.id: detect_boundary_tags(t) for t in trajectories}
    # "Error: ..." results are failed calls; "[]" flight searches are empty results; the
    # business fares of 403 in search outputs are not permission refusals
    assert sum("tool_failure" in v for v in tags.values()) > 0
    assert sum("empty_result" in v for v in tags.values()) > 0
    assert not any("permission_denied" in v for v in tags.values())
    for t in trajectories:
        failed = any(not s.ok for s in t.steps)
        assert ("tool_failure" in tags[t.id]) == failed
