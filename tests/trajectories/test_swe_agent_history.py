"""A SWE-agent ``.traj`` with only ``history`` (how SWE-agent writes its demonstrations) imports
whole: every tool call of its assistant messages is a step, answered by its tool message.

The file is SWE-agent's own ``trajectories/demonstrations/function_calling_simple.traj``, copied
byte for byte (``tests/fixtures/swe_agent/public/SOURCE.md``); it was refused before ("trajectory:
expected a list, got null").
"""

from __future__ import annotations

import json
from pathlib import Path

from trajudge.trajectories import read_trajectories
from trajudge.trajectories.reading._detect import is_swe_agent

FILE = (
    Path(__file__).parents[1] / "fixtures" / "swe_agent" / "public" / "function_calling_simple.traj"
)


def test_a_history_only_traj_keeps_every_call_and_result() -> None:
    raw = json.loads(FILE.read_text())
    assert set(raw) == {"history"}
    history = raw["history"]
    calls = [
        (c["function"]["name"], json.loads(c["function"]["arguments"]), c["id"])
        for m in history
        if m["role"] == "assistant"
        for c in m["tool_calls"]
    ]
    results = {m["tool_call_ids"][0]: m["content"] for m in history if m["role"] == "tool"}
    # read by eye from the file: the demonstration finds, opens, edits, runs and submits
    assert [c[0] for c in calls] == ["find_file", "open", "edit", "bash", "submit"]

    result = read_trajectories(FILE)
    assert result.fmt == "swe-agent"  # auto-detected
    assert not result.ignored, result.ignored.lines()
    (t,) = result.trajectories
    assert t.id == t.task_id == "function_calling_simple"
    assert [(s.tool, s.args, s.call_id) for s in t.steps] == calls
    assert [s.output for s in t.steps] == [results[c[2]] for c in calls]
    assert all(s.ok for s in t.steps)
    assert t.input == history[1]["content"]
    assert t.messages[0].role == "system" and t.messages[0].content == history[0]["content"]
    thoughts = [m["content"] for m in history if m["role"] == "assistant"]
    assert [m.content for m in t.messages if m.role == "assistant"] == thoughts
    # each step made by one assistant turn, in order, and answered by a tool turn
    assert [n for m in t.messages if m.role == "assistant" for n in m.steps] == [0, 1, 2, 3, 4]
    assert [m.step for m in t.messages if m.role == "tool"] == [0, 1, 2, 3, 4]


def test_a_history_without_swe_agent_marks_is_not_taken_for_one() -> None:
    assert not is_swe_agent({"history": [{"role": "user", "content": "hi"}]})
    assert not is_swe_agent({"history": [{"message_type": "action"}], "trajectory": None})
    assert is_swe_agent(json.loads(FILE.read_text()))
