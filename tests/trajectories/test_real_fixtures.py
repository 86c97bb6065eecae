"""Files written by the real tools import whole: checked against what their generator did.

Every fixture under ``tests/fixtures`` was written by the library that writes that format
(``tests/fixtures/generate.sh``), driven by a scripted model through one scenario; the generator
recorded in ``manifest.json`` what it did: every tool name, argument, output, error, user turn
and token count. Nothing here is compared with the reader's own earlier output.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from trajudge.calibration import reliability
from trajudge.trajectories import ReadOptions, Trajectory, read_trajectories

FIXTURES = Path(__file__).parents[1] / "fixtures"
TRACES = FIXTURES / "traces"
EVERY: dict[str, Any] = json.loads((TRACES / "manifest.json").read_text(encoding="utf-8"))
# the airline scenario's files; the others play a scenario of their own (``scenario``)
MANIFEST = {n: e for n, e in EVERY.items() if "scenario" not in e}
PARALLEL = {n: e for n, e in EVERY.items() if e.get("scenario") == "parallel"}


def assert_scenario(t: Trajectory, expected: dict[str, Any], call_ids: list[str] | None) -> None:
    assert t.user_turns() == expected["user_turns"]
    assert t.input == expected["user_turns"][0]
    assert len(t.steps) == len(expected["steps"])
    for step, want in zip(t.steps, expected["steps"], strict=True):
        assert (step.tool, step.args, step.ok) == (want["tool"], want["args"], want["ok"])
        if "output" in want:
            assert step.output == want["output"]
        if "error" in want:
            assert step.error == want["error"]
        if "error_contains" in want:
            assert step.error is not None and want["error_contains"] in step.error
        if want["ok"]:
            assert step.error is None
    if call_ids is not None and all(s.call_id is not None for s in t.steps):
        assert [s.call_id for s in t.steps] == call_ids
    assert t.final_answer == expected["final_answer"]
    assert t.usage.prompt_tokens == expected["prompt_tokens"]
    assert t.usage.completion_tokens == expected["completion_tokens"]
    assert t.usage.turns == len(expected["user_turns"])
    # each step is made by exactly one assistant turn, in order, and answered by a tool turn
    made = [n for m in t.messages if m.role == "assistant" for n in m.steps]
    assert made == list(range(len(t.steps)))
    answered = [m.step for m in t.messages if m.role == "tool"]
    assert sorted(a for a in answered if a is not None) == list(range(len(t.steps)))
    # the "yes" comes after the assistant asked and before the state-changing calls
    roles = [
        (m.role, m.content) for m in t.messages if m.role in ("user", "assistant") and m.content
    ]
    yes = roles.index(("user", expected["user_turns"][1]))
    assert roles[yes - 1][0] == "assistant"
    first_cancel = next(
        i
        for i, m in enumerate(t.messages)
        if any(t.steps[n].tool == "cancel_reservation" for n in m.steps)
    )
    assert first_cancel > next(
        i for i, m in enumerate(t.messages) if m.content == expected["user_turns"][1]
    )


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_trace_and_chat_fixtures_import_whole(name: str) -> None:
    entry = MANIFEST[name]
    result = read_trajectories(TRACES / name)
    assert result.fmt == entry["format"]  # auto-detected
    assert not result.ignored, result.ignored.lines()
    (t,) = result.trajectories
    assert_scenario(t, entry["expected"], entry["call_ids"])
    if "conversation_id" in entry["expected"]:
        assert t.id == entry["expected"]["conversation_id"]
        assert t.metadata["conversation_id"] == entry["expected"]["conversation_id"]
        assert len(t.metadata["trace_ids"]) == 2  # two turns, two traces, one conversation
    # --strict accepts a file where nothing was left out
    assert read_trajectories(TRACES / name, strict=True).trajectories == result.trajectories


@pytest.mark.parametrize("name", sorted(PARALLEL))
def test_parallel_calls_of_one_tool_stay_apart(name: str) -> None:
    """Two calls of one tool in one model turn, then a third: three steps, none merged."""
    entry = PARALLEL[name]
    expected = entry["expected"]
    result = read_trajectories(TRACES / name)
    assert result.fmt == entry["format"]
    assert not result.ignored, result.ignored.lines()
    (t,) = result.trajectories
    assert [m.content for m in t.messages if m.role == "user"] == expected["user_turns"]
    assert [(s.tool, s.args, s.ok, s.output) for s in t.steps] == [
        (w["tool"], w["args"], w["ok"], w["output"]) for w in expected["steps"]
    ]
    assert [s.call_id for s in t.steps] == entry["call_ids"]
    assert [m.steps for m in t.messages if m.role == "assistant" and m.steps] == expected[
        "assistant_steps"
    ]
    assert sorted(m.step for m in t.messages if m.role == "tool") == list(range(len(t.steps)))
    assert t.final_answer == expected["final_answer"]
    assert (t.usage.prompt_tokens, t.usage.completion_tokens) == (
        expected["prompt_tokens"],
        expected["completion_tokens"],
    )


def test_repackaged_containers_give_the_same_trajectory() -> None:
    # tempo_v1.json / jaeger_ui.json re-package the spans of a real export (see their manifest)
    for name in ("tempo_v1.json", "jaeger_ui.json"):
        original = read_trajectories(TRACES / MANIFEST[name]["same_as"]).trajectories[0]
        (t,) = read_trajectories(TRACES / name).trajectories
        assert t.messages == original.messages
        assert [s.model_dump(exclude={"latency_ms"}) for s in t.steps] == [
            s.model_dump(exclude={"latency_ms"}) for s in original.steps
        ]
        # Jaeger keeps microseconds
        for a, b in zip(t.steps, original.steps, strict=True):
            assert a.latency_ms == pytest.approx(b.latency_ms, abs=1e-3)


OTEL_CONVERSATIONS = sorted(
    n for n, e in MANIFEST.items() if e["format"] == "otel" and "conversation_id" in e["expected"]
)


@pytest.mark.parametrize("name", OTEL_CONVERSATIONS)
def test_per_turn_gives_each_turn_its_own_user_message(name: str) -> None:
    expected = MANIFEST[name]["expected"]
    first, second = read_trajectories(
        TRACES / name, options=ReadOptions(per_turn=True)
    ).trajectories
    conv = expected["conversation_id"]
    assert (first.id, second.id) == (f"{conv}:0", f"{conv}:1")
    # turn 2's input is turn 2's user message, not turn 1's question
    assert (first.input, second.input) == tuple(expected["user_turns"])
    assert [s.tool for s in first.steps] == ["get_reservation_details"]
    assert [s.tool for s in second.steps] == ["cancel_reservation", "cancel_reservation"]
    assert [s.ok for s in second.steps] == [False, True]
    total = (first.usage.prompt_tokens or 0) + (second.usage.prompt_tokens or 0)
    assert total == expected["prompt_tokens"]


INSPECT: dict[str, Any] = json.loads((FIXTURES / "inspect" / "manifest.json").read_text())


@pytest.mark.parametrize("name", sorted(INSPECT))
def test_inspect_logs_each_epoch_a_trial(name: str) -> None:
    entry = INSPECT[name]
    result = read_trajectories(FIXTURES / "inspect" / name)
    assert result.fmt == "inspect"
    trajectories = sorted(result.trajectories, key=lambda t: t.trial)
    assert [(t.task_id, t.trial) for t in trajectories] == [
        (entry["expected"]["sample"], 0),
        (entry["expected"]["sample"], 1),
    ]
    for t, expected in zip(trajectories, entry["expected"]["epochs"], strict=True):
        assert_scenario(t, expected, entry["call_ids"])
        assert t.outcome is expected["outcome"]


TAU2 = json.loads((FIXTURES / "tau2" / "manifest.json").read_text())["results.json"]


def tau2_pass_hat_k(path: Path) -> dict[int, float]:
    """τ²-bench's own formula, from its ``tau2.metrics.agent_metrics`` (not importable here).

    success = 1 - 1e-6 <= reward <= 1 + 1e-6; infrastructure errors are left out; per task
    pass^k = C(successes, k) / C(trials, k); k runs to the smallest trial count of any task;
    the figure is the mean over tasks. Read straight from the JSON, not through trajudge.
    """
    sims = json.loads(path.read_text())["simulations"]
    per_task: dict[str, list[bool]] = defaultdict(list)
    for s in sims:
        if s.get("termination_reason") == "infrastructure_error":
            continue
        reward = s["reward_info"]["reward"]
        per_task[s["task_id"]].append((1 - 1e-6) <= reward <= (1 + 1e-6))
    max_k = min(len(v) for v in per_task.values())
    return {
        k: sum(math.comb(sum(v), k) / math.comb(len(v), k) for v in per_task.values())
        / len(per_task)
        for k in range(1, max_k + 1)
    }


def test_tau2_results_import_with_agent_steps_and_the_same_pass_hat_k() -> None:
    path = FIXTURES / "tau2" / "results.json"
    result = read_trajectories(path)
    assert result.fmt == "tau2-bench"
    assert not result.ignored
    played: dict[str, list[str]] = defaultdict(list)
    for kind, plan in TAU2["played"]:
        played[kind].append(plan)
    seen: dict[str, list[str]] = defaultdict(list)
    for t in result.trajectories:
        plan_name = next(
            name
            for name, plan in TAU2["plans"].items()
            if [(s.tool, s.args) for s in t.steps]
            == [(p["tool"], p["args"]) for p in plan["steps"]]
        )
        plan = TAU2["plans"][plan_name]
        seen[t.task_id].append(plan_name)
        assert t.user_turns() == plan["user_turns"]
        assert [n for n, s in enumerate(t.steps) if not s.ok] == plan["failed_steps"]
        assert t.outcome is (plan["reward"] == 1.0)
        # the agent's tokens only: the user simulator's own usage is not counted
        assert (t.usage.prompt_tokens, t.usage.completion_tokens) == (
            plan["agent_prompt_tokens"],
            plan["agent_completion_tokens"],
        )
        spec = result.specs[t.task_id]
        assert [c.tool for c in spec.reference] in (["create_task"], ["update_task_status"])
    assert {k: sorted(v) for k, v in seen.items()} == {
        k: sorted(v) for k, v in TAU2["tasks"].items()
    }
    frame = pd.DataFrame(
        {
            "task_id": [t.task_id for t in result.trajectories],
            "success": [t.outcome for t in result.trajectories],
        }
    )
    ours = reliability(frame, ks=[1, 2]).pass_hat
    theirs = tau2_pass_hat_k(path)
    assert theirs == pytest.approx({1: 0.75, 2: 0.5})  # create: 1 of 2, update: 2 of 2
    assert ours[1] == pytest.approx(theirs[1], abs=1e-12)
    assert ours[2] == pytest.approx(theirs[2], abs=1e-12)


SWE = json.loads((FIXTURES / "swe_agent" / "manifest.json").read_text())


@pytest.mark.parametrize("name", sorted(SWE))
def test_swe_agent_traj_steps_thoughts_and_patch(name: str) -> None:
    expected = SWE[name]["expected"]
    result = read_trajectories(FIXTURES / "swe_agent" / name)
    assert result.fmt == "swe-agent"
    assert not result.ignored
    (t,) = result.trajectories
    assert t.id == name.removesuffix(".traj")
    assert expected["task"] in t.input
    assert [(s.tool, s.args, s.output) for s in t.steps] == [
        (e["tool"], e["args"], e["output"]) for e in expected["steps"]
    ]
    assistant = [m for m in t.messages if m.role == "assistant"]
    assert [m.content for m in assistant] == expected["thoughts"]
    assert [m.steps for m in assistant] == [[n] for n in range(len(t.steps))]
    assert t.final_answer == expected["final_answer"]
    assert t.metadata["exit_status"] == expected["exit_status"]
    assert t.outcome is None  # graded elsewhere


OPENHANDS = json.loads((FIXTURES / "openhands" / "manifest.json").read_text())["events"]


def test_openhands_sdk_events_folder_and_the_same_events_as_one_list(tmp_path: Path) -> None:
    folder = FIXTURES / "openhands" / "events"
    result = read_trajectories(folder)
    assert result.fmt == "openhands"
    assert not result.ignored
    (t,) = result.trajectories
    assert_scenario(t, OPENHANDS["expected"], OPENHANDS["call_ids"])
    # the same events joined into one JSON list (jq -s . events/*.json > trajectory.json)
    joined = tmp_path / "trajectory.json"
    events = [json.loads(f.read_text()) for f in sorted(folder.glob("event-*.json"))]
    joined.write_text(json.dumps(events), encoding="utf-8")
    (u,) = read_trajectories(joined).trajectories
    assert u.messages == t.messages and u.steps == t.steps
