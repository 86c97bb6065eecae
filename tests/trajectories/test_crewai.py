"""A CrewAI crew result, as pydantic dumps it, imports whole (``--format crewai``).

The fixture was written by CrewAI itself (``tests/fixtures/crewai/generate.py``): one agent with
two tools, a crew of two tasks (the scenario's two user turns), run against a scripted model on
127.0.0.1; ``crew.kickoff().model_dump_json()``. It is checked against the generator's
``manifest.json``; the variants below are edits of the real file, each saying what it changes.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from _pyagents import assert_census_matches, assert_manifest, census_of
from trajudge.core import InputError
from trajudge.trajectories import read_trajectories
from trajudge.trajectories.readers.agents._crewai import is_crewai_record

HERE = Path(__file__).parents[1] / "fixtures" / "crewai"
ENTRY: dict[str, Any] = json.loads((HERE / "manifest.json").read_text())["crew_output.json"]
CREW: dict[str, Any] = json.loads((HERE / "crew_output.json").read_text())


def test_the_crew_output_imports_whole() -> None:
    result = read_trajectories(HERE / "crew_output.json")
    assert result.fmt == "crewai"  # auto-detected
    assert not result.ignored, result.ignored.lines()
    (t,) = result.trajectories
    assert t.id == "crew_output-0"
    # CrewAI wraps each request in its task prompt: the user turn holds the request
    turns = t.user_turns()
    wanted = ENTRY["expected"]["user_turns_contain"]
    assert len(turns) == len(wanted)
    assert all(f"Current Task: {w}\n" in u for u, w in zip(turns, wanted, strict=True))
    assert_manifest(t, {**ENTRY, "expected": {**ENTRY["expected"], "user_turns": turns}})
    assert t.metadata["tasks"] == wanted
    assert t.metadata["successful_requests"] == len(ENTRY["usage_per_model_turn"])
    # both tasks' agent has the same system prompt: said once
    assert [m.role for m in t.messages].count("system") == 1
    assert [m.content for m in t.messages if m.role == "assistant" and m.content] == ENTRY[
        "task_outputs"
    ]
    held = assert_census_matches("crewai", HERE / "crew_output.json", result.trajectories)
    assert (held.tool_calls, held.failed_calls, held.user_messages) == (4, 1, 2)
    assert "tool" not in " ".join(ENTRY["output_log_file_fields"])  # why the log is not read


def _write(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def test_a_failure_matching_no_call_is_counted_and_the_census_disagrees(tmp_path: Path) -> None:
    crew = copy.deepcopy(CREW)
    crew["tasks_output"][1]["tool_failures"][0]["tool_args"] = {"reservation_id": "NOPE"}
    path = _write(tmp_path / "unmatched.json", crew)
    with pytest.raises(InputError, match="failed_calls"):
        read_trajectories(path)  # the census holds a failure the reader cannot place
    result = read_trajectories(path, accept_loss=["failed_calls"])
    assert [loss.name for loss in result.losses] == ["failed_calls"]
    assert result.ignored.lines() == ["1 tool failure matching no call was ignored"]
    held = census_of("crewai", path)
    assert held.failed_calls == 1
    assert sum(not s.ok for s in result.trajectories[0].steps) == 0


def test_a_single_task_output_and_a_task_without_messages(tmp_path: Path) -> None:
    task = copy.deepcopy(CREW["tasks_output"][1])
    path = _write(tmp_path / "task.json", task)
    result = read_trajectories(path)
    assert result.fmt == "crewai"
    (t,) = result.trajectories
    assert [(s.call_id, s.ok) for s in t.steps] == [
        ("call_cancel_1", False),
        ("call_cancel_2", True),
    ]
    assert t.usage.prompt_tokens is None
    assert_census_matches("crewai", path, result.trajectories)
    bare = {k: v for k, v in task.items() if k not in ("messages", "tool_failures")}
    (u,) = read_trajectories(_write(tmp_path / "bare.json", bare)).trajectories
    assert [(m.role, m.content) for m in u.messages] == [
        ("user", "yes"),
        ("assistant", task["raw"]),
    ]


LIST_ARGS = {"id": "c", "function": {"name": "t", "arguments": "[1]"}}
HOSTILE = {
    "tasks a string": ({"tasks_output": "x"}, "expected a CrewOutput, got an object"),
    "task a number": (
        {"tasks_output": [3]},
        "tasks_output[0]: expected a task output, got a number",
    ),
    "messages an object": (
        {"tasks_output": [{"messages": {}}]},
        "tasks_output[0].messages: expected a list, got an object",
    ),
    "unknown role": (
        {"tasks_output": [{"messages": [{"role": "robot", "content": "x"}]}]},
        "tasks_output[0].messages[0].role: expected system, user, assistant or tool, got 'robot'",
    ),
    "call without a name": (
        {"tasks_output": [{"messages": [{"role": "assistant", "tool_calls": [{"id": "c"}]}]}]},
        "tasks_output[0].messages[0].tool_calls[0].function.name: expected a tool name",
    ),
    "arguments not an object": (
        {"tasks_output": [{"messages": [{"role": "assistant", "tool_calls": [LIST_ARGS]}]}]},
        "tasks_output[0].messages[0].tool_calls[0].function.arguments: "
        "arguments must be a JSON object, got a list",
    ),
    "failures an object": (
        {"tasks_output": [{"messages": [], "tool_failures": {}}]},
        "tasks_output[0].tool_failures: expected a list, got an object",
    ),
    "tokens negative": (
        {"token_usage": {"prompt_tokens": -1}},
        "token_usage.prompt_tokens: expected a count of tokens",
    ),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_results_are_one_line_errors(case: str, tmp_path: Path) -> None:
    change, message = HOSTILE[case]
    path = _write(tmp_path / "bad.json", {**CREW, **change})
    with pytest.raises(InputError) as info:
        read_trajectories(path, fmt="crewai")
    line = str(info.value)
    assert "\n" not in line
    assert line == f"{path}: line 1: {message}"
    census_of("crewai", path)  # the census takes any shape without raising


def test_detection_takes_crew_results_only() -> None:
    assert is_crewai_record(CREW) and is_crewai_record(CREW["tasks_output"][0])
    assert not is_crewai_record({"raw": "x", "tasks_output": []})  # no token_usage
    assert not is_crewai_record({"messages": [], "description": "x"})
