"""τ-bench result files: the real gpt-4o airline file and small synthetic ones."""

from __future__ import annotations

import collections
import functools
import hashlib
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from trajudge.calibration import reliability
from trajudge.core import InputError
from trajudge.trajectories import from_tau_bench, read_trajectories


@functools.cache
def load_raw(path: Path) -> list[dict[str, Any]]:
    return list(json.loads(path.read_text(encoding="utf-8")))


@pytest.fixture
def tau(tau_bench_file: Path) -> tuple[Path, list[dict[str, Any]]]:
    return tau_bench_file, load_raw(tau_bench_file)


def test_real_file_counts_and_specs(tau: tuple[Path, list[dict[str, Any]]]) -> None:
    path, raw = tau
    trajectories, specs = from_tau_bench(path)
    assert len(trajectories) == 200
    assert len(specs) == 50
    assert sum(bool(t.outcome) for t in trajectories) == 84  # 0.42 x 200 (SOURCE.md)
    by_id = {t.id: t for t in trajectories}
    for rec in raw:
        t = by_id[f"{rec['task_id']}-{rec['trial']}"]
        n_calls = sum(len(m.get("tool_calls") or []) for m in rec["traj"])
        assert len(t.steps) == n_calls
        assert t.outcome is (rec["reward"] == 1.0)
        assert t.usage.turns == sum(m["role"] == "user" for m in rec["traj"])
        # the user simulator's cost is metadata, never the agent's cost
        assert t.usage.cost_usd is None
        assert t.metadata["user_cost"] == rec["info"]["user_cost"]
        assert t.metadata["instruction"] == rec["info"]["task"]["instruction"]
        spec = specs[str(rec["task_id"])]
        assert spec.match_mode == "in_order"
        assert [(c.tool, c.args) for c in spec.reference or []] == [
            (a["name"], a["kwargs"]) for a in rec["info"]["task"]["actions"]
        ]
    assert sum(len(t.steps) for t in trajectories) == 1164
    system = raw[0]["traj"][0]["content"]
    assert (
        by_id["0-0"].metadata["system_prompt_sha256"] == hashlib.sha256(system.encode()).hexdigest()
    )
    assert by_id["0-0"].metadata["source_file"] == "gpt-4o-airline.json"
    assert by_id["0-0"].intent == "book_reservation"
    no_write = {str(r["task_id"]) for r in raw if not r["info"]["task"]["actions"]}
    assert len(no_write) == 7
    assert {t.task_id for t in trajectories if t.intent == "no_write"} == no_write


def test_reused_call_ids_are_paired_with_the_right_result(
    tau: tuple[Path, list[dict[str, Any]]],
) -> None:
    # Hand-checked in gpt-4o-airline.json, record 0 (task 0, trial 0):
    #   traj[6]  get_user_details      id call_oIHazX6yQrB8hUwl4cRilFKj -> traj[7]  {"name": ...
    #   traj[8]  search_direct_flight  id call_HGn16KZh9oNCruxsMJ4gYXan -> traj[9]  [{"flight_...
    #   traj[12] search_onestop_flight id call_HGn16KZh9oNCruxsMJ4gYXan -> traj[13] [[{"flight_...
    #   traj[16] calculate             id call_oIHazX6yQrB8hUwl4cRilFKj -> traj[17] 255.0
    # Both ids are used twice; pairing by a dict keyed on the id would give get_user_details
    # the result "255.0".
    path, raw = tau
    trajectories, _ = from_tau_bench(path)
    t = next(t for t in trajectories if t.id == "0-0")
    traj = raw[0]["traj"]
    assert [(s.tool, s.call_id) for s in t.steps[:4]] == [
        ("get_user_details", "call_oIHazX6yQrB8hUwl4cRilFKj"),
        ("search_direct_flight", "call_HGn16KZh9oNCruxsMJ4gYXan"),
        ("search_onestop_flight", "call_HGn16KZh9oNCruxsMJ4gYXan"),
        ("calculate", "call_oIHazX6yQrB8hUwl4cRilFKj"),
    ]
    assert [s.output for s in t.steps[:4]] == [traj[i]["content"] for i in (7, 9, 13, 17)]
    assert t.steps[3].output == "255.0"
    assert t.steps[2].output is not None and t.steps[2].output.startswith('[[{"flight_number"')
    assert t.steps[0].output is not None and t.steps[0].output.startswith('{"name": {"first_')
    # traj[18]..: book_reservation answered with "Error: payment amount does not add up, ..."
    assert t.steps[4].tool == "book_reservation"
    assert t.steps[4].ok is False
    assert t.steps[4].error is not None and t.steps[4].error.startswith("Error: payment amount")


def test_error_results_follow_the_tau_bench_convention(
    tau: tuple[Path, list[dict[str, Any]]],
) -> None:
    path, raw = tau
    trajectories, _ = from_tau_bench(path)
    n_errors = sum(
        m["role"] == "tool" and m["content"].startswith("Error") for r in raw for m in r["traj"]
    )
    assert n_errors == 73
    assert sum(not s.ok for t in trajectories for s in t.steps) == n_errors


def test_pass_hat_k_reproduces_the_published_numbers(
    tau: tuple[Path, list[dict[str, Any]]],
) -> None:
    path, _ = tau
    result = read_trajectories(path)
    assert result.fmt == "tau-bench"
    frame = pd.DataFrame(
        {"task_id": t.task_id, "success": t.outcome, "intent": t.intent}
        for t in result.trajectories
    )
    per_task = frame.groupby("task_id")["success"].sum().value_counts().to_dict()
    assert per_task == {0: 14, 1: 12, 2: 10, 3: 4, 4: 10}  # SOURCE.md
    r = reliability(frame, ks=[1, 2, 3, 4])
    # by hand from c = {0:14, 1:12, 2:10, 3:4, 4:10}, n = 4:
    #   pass^1 = (12*1/4 + 10*2/4 + 4*3/4 + 10) / 50 = 21/50
    #   pass^2 = (10*1/6 + 4*3/6 + 10) / 50 = (41/3) / 50 = 41/150
    #   pass^3 = (4*1/4 + 10) / 50 = 11/50;  pass^4 = 10/50
    assert r.pass_hat[1] == pytest.approx(21 / 50, abs=1e-12)
    assert r.pass_hat[2] == pytest.approx(41 / 150, abs=1e-12)
    assert r.pass_hat[3] == pytest.approx(11 / 50, abs=1e-12)
    assert r.pass_hat[4] == pytest.approx(10 / 50, abs=1e-12)
    # the τ-bench README leaderboard (airline, gpt-4o): 0.420 / 0.273 / 0.220 / 0.200
    assert [round(r.pass_hat[k], 3) for k in (1, 2, 3, 4)] == [0.420, 0.273, 0.220, 0.200]


def record(task_id: int, trial: int, actions: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "task_id": task_id,
        "trial": trial,
        "reward": 1.0,
        "info": {"task": {"user_id": "u", "actions": actions, "instruction": "do it"}},
        "traj": [{"role": "system", "content": "p"}, {"role": "user", "content": "hi"}],
    }
    rec.update(kw)
    return rec


BOOK = {"name": "book", "kwargs": {"id": 1}}


def write(tmp_path: Path, records: list[dict[str, Any]]) -> Path:
    path = tmp_path / "results.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


def test_synthetic_outcome_tolerance_and_intent(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        [
            record(1, 0, [BOOK, {"name": "cancel", "kwargs": {}}, BOOK], reward=1 - 1e-7),
            record(1, 1, [BOOK, {"name": "cancel", "kwargs": {}}, BOOK], reward=0.999),
            record(2, 0, []),
        ],
    )
    trajectories, specs = from_tau_bench(path)
    assert [t.outcome for t in trajectories] == [True, False, True]
    assert [t.intent for t in trajectories] == ["book+cancel", "book+cancel", "no_write"]
    assert specs["2"].reference == []
    assert collections.Counter(c.tool for c in specs["1"].reference or []) == {
        "book": 2,
        "cancel": 1,
    }


@pytest.mark.parametrize(
    ("records", "expected"),
    [
        (
            [record(1, 0, [BOOK]), record(1, 1, [{"name": "book", "kwargs": {"id": 2}}])],
            "record 1: info.task.actions: task 1 expects different actions than at record 0",
        ),
        ([record(1, 0, [BOOK], reward="1")], "record 0: reward: Input should be a valid number"),
        ([record(1, -1, [BOOK])], "record 0: trial: Input should be greater than or equal to 0"),
        ([record(1, 0, [{"kwargs": {}}])], "record 0: info.task.actions[0].name: Field required"),
        (
            [record(1, 0, [BOOK]), record(1, 0, [BOOK])],
            "record 1: id: duplicate id '1-0' (first at record 0)",
        ),
        (
            [record(1, 0, [BOOK], traj=[{"role": "tool", "tool_call_id": "c", "content": "x"}])],
            "record 0: traj[0].tool_call_id: no earlier unanswered tool call with id 'c'",
        ),
    ],
)
def test_synthetic_errors(tmp_path: Path, records: list[dict[str, Any]], expected: str) -> None:
    path = write(tmp_path, records)
    with pytest.raises(InputError) as info:
        from_tau_bench(path)
    assert str(info.value) == f"{path}: {expected}"
