"""AutoGen AgentChat runs, as the library serialises them, import whole (``--format autogen``).

The fixtures were written by autogen-agentchat itself (``tests/fixtures/autogen/generate.py``):
an AssistantAgent with two tools run twice against a scripted model on 127.0.0.1, saved as its
messages' ``dump()``, each run's ``TaskResult.model_dump()``, ``agent.save_state()`` and a
one-agent team's ``save_state()``. Each is checked against the generator's ``manifest.json``;
the variants below are edits of the real files, each saying what it changes.
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
from trajudge.trajectories.readers.agents._autogen import is_autogen_record

HERE = Path(__file__).parents[1] / "fixtures" / "autogen"
MANIFEST: dict[str, Any] = json.loads((HERE / "manifest.json").read_text(encoding="utf-8"))
MESSAGES: list[dict[str, Any]] = json.loads((HERE / "messages.json").read_text())
WHOLE = ["messages.json", "agent_state.json", "team_state.json"]


@pytest.mark.parametrize("name", WHOLE)
def test_one_conversation_of_two_runs_imports_whole(name: str) -> None:
    entry = MANIFEST[name]
    result = read_trajectories(HERE / name)
    assert result.fmt == "autogen"  # auto-detected
    (t,) = result.trajectories
    assert t.id == t.task_id == name.removesuffix(".json")
    assert_manifest(t, entry)
    assert t.metadata["agents"] == ["airline_agent"]
    held = assert_census_matches("autogen", HERE / name, result.trajectories)
    assert (held.tool_calls, held.failed_calls, held.user_messages) == (4, 1, 2)
    if name == "team_state.json":
        # the agent's own model context repeats the manager's thread: counted, not read twice
        assert result.ignored.lines() == [
            "1 agent model context (the team's thread has it) was ignored"
        ]
    else:
        assert not result.ignored, result.ignored.lines()
        assert read_trajectories(HERE / name, strict=True).trajectories == result.trajectories


def test_each_task_result_is_a_trajectory() -> None:
    entry = MANIFEST["task_results.jsonl"]
    result = read_trajectories(HERE / "task_results.jsonl")
    assert result.fmt == "autogen"
    assert not result.ignored
    assert [t.id for t in result.trajectories] == ["task_results-0", "task_results-1"]
    for t, ids, expected in zip(
        result.trajectories, entry["call_ids_per_run"], entry["expected_per_run"], strict=True
    ):
        assert_manifest(t, {"call_ids": ids, "expected": expected})
    assert_census_matches("autogen", HERE / "task_results.jsonl", result.trajectories)


def test_messages_one_a_line_read_as_the_list(tmp_path: Path) -> None:
    (t,) = read_trajectories(HERE / "messages.json").trajectories
    lines = tmp_path / "stream.jsonl"  # run_stream's messages written as they come
    lines.write_text("".join(json.dumps(m) + "\n" for m in MESSAGES), encoding="utf-8")
    (u,) = read_trajectories(lines).trajectories
    assert (u.messages, u.steps, u.usage) == (t.messages, t.steps, t.usage)


def _write(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def test_a_summary_a_thought_and_other_events(tmp_path: Path) -> None:
    messages = copy.deepcopy(MESSAGES)
    request = messages[1]
    thought = {**request, "type": "ThoughtEvent", "content": "Let me look both up.",
               "models_usage": None}  # fmt: skip
    summary = {
        "source": "airline_agent",
        "models_usage": None,
        "type": "ToolCallSummaryMessage",
        "content": "both found",
        "tool_calls": request["content"],
        "results": messages[2]["content"],
    }
    chunk = {"source": "airline_agent", "type": "ModelClientStreamingChunkEvent", "content": "I"}
    messages[1:1] = [thought]
    messages[4:4] = [summary, chunk]
    path = _write(tmp_path / "more.json", messages)
    result = read_trajectories(path)
    (t,) = result.trajectories
    assert result.ignored.lines() == ["1 event of a kind not read was ignored"]
    assistant = [m for m in t.messages if m.role == "assistant"]
    # the thought is its own turn, named so that it is never taken for the answer
    assert (assistant[0].name, assistant[0].content) == ("reasoning", "Let me look both up.")
    assert "both found" in [m.content for m in assistant]
    assert len(t.steps) == 4  # the summary's calls and results are not steps again
    assert_census_matches("autogen", path, result.trajectories)


HOSTILE = {
    "type missing": (1, {"type": None}, "record 1: type: expected a message type, got null"),
    "call without a name": (
        1,
        {"content": [{"id": "c", "arguments": "{}"}]},
        "record 1: content[0].name: expected a tool name",
    ),
    "arguments not JSON": (
        1,
        {"content": [{"id": "c", "name": "t", "arguments": "{oops"}]},
        "record 1: content[0].arguments: arguments are not valid JSON: "
        "Expecting property name enclosed in double quotes (column 2)",
    ),
    "arguments a number": (
        1,
        {"content": [{"id": "c", "name": "t", "arguments": 3}]},
        "record 1: content[0].arguments: expected JSON text, got a number",
    ),
    "results an object": (
        2,
        {"content": {"a": 1}},
        "record 2: content: expected a list of results, got an object",
    ),
    "message a list": (3, None, "record 3: expected a message, got a list"),
    "result a string": (
        2,
        {"content": ["x"]},
        "record 2: content[0]: expected a result, got a string",
    ),
    "usage a list": (
        1,
        {"models_usage": [1]},
        "record 1: models_usage: expected an object, got a list",
    ),
    "negative tokens": (
        1,
        {"models_usage": {"prompt_tokens": -5}},
        "record 1: models_usage.prompt_tokens: expected a count of tokens",
    ),
    "text a number": (3, {"content": 12}, "record 3: content: expected text, got a number"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_messages_are_one_line_errors(case: str, tmp_path: Path) -> None:
    n, change, message = HOSTILE[case]
    messages = copy.deepcopy(MESSAGES)
    if change is None:
        messages[n] = [messages[n]]
    else:
        messages[n].update(change)
    path = _write(tmp_path / "bad.json", messages)
    with pytest.raises(InputError) as info:
        read_trajectories(path, fmt="autogen")
    assert str(info.value) == f"{path}: {message}"
    census_of("autogen", path)  # the census takes any shape without raising


def test_hostile_states(tmp_path: Path) -> None:
    team = json.loads((HERE / "team_state.json").read_text())
    bad = _write(tmp_path / "team.json", {**team, "agent_states": [1]})
    with pytest.raises(InputError, match=r"line 1: agent_states: expected an object, got a list$"):
        read_trajectories(bad, fmt="autogen")
    thread = copy.deepcopy(team)
    thread["agent_states"]["RoundRobinGroupChatManager"]["message_thread"] = "x"
    with pytest.raises(
        InputError,
        match=r"RoundRobinGroupChatManager.message_thread: expected a list, got a string$",
    ):
        read_trajectories(_write(tmp_path / "thread.json", thread), fmt="autogen")
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(json.dumps(MESSAGES[0]) + "\n" + json.dumps(team) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="line 2: messages and task results or states in one file"):
        read_trajectories(mixed)


def test_a_team_state_without_a_thread_reads_each_agent_s_context(tmp_path: Path) -> None:
    team = json.loads((HERE / "team_state.json").read_text())
    del team["agent_states"]["RoundRobinGroupChatManager"]
    path = _write(tmp_path / "agents.json", team)
    result = read_trajectories(path)
    (t,) = result.trajectories
    assert t.id == "agents:airline_agent" and len(t.steps) == 4 and t.usage.prompt_tokens is None
    assert_census_matches("autogen", path, result.trajectories)


def test_detection_takes_agentchat_shapes_only() -> None:
    assert is_autogen_record(MESSAGES[0])
    assert not is_autogen_record({"type": "TextMessage", "content": "hi"})  # no source
    assert not is_autogen_record(
        {"messages": [{"role": "user", "content": "hi"}], "stop_reason": None}
    )
    assert not is_autogen_record({"type": "TeamState"})
