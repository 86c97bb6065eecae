"""smolagents memory, as the library serialises it, imports whole (``--format smolagents``).

The fixtures were written by smolagents itself (``tests/fixtures/smolagents_memory/
generate.py``): a ToolCallingAgent run twice against a scripted model on 127.0.0.1, its memory
dumped with ``agent.memory.get_full_steps()`` and the second run's ``RunResult.dict()``. Each is
checked call by call against the generator's ``manifest.json``; the variants below are edits
of the real file, each saying what it changes.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from _pyagents import assert_census_matches, assert_manifest, census_of
from trajudge.core import InputError
from trajudge.trajectories import detect_format, read_trajectories
from trajudge.trajectories.readers.agents._smolagents_memory import is_smolagents_record

HERE = Path(__file__).parents[1] / "fixtures" / "smolagents_memory"
MANIFEST: dict[str, Any] = json.loads((HERE / "manifest.json").read_text(encoding="utf-8"))
STEPS: list[dict[str, Any]] = json.loads((HERE / "memory_steps.json").read_text())


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_the_library_s_own_dumps_import_whole(name: str) -> None:
    entry = MANIFEST[name]
    result = read_trajectories(HERE / name)
    assert result.fmt == "smolagents"  # auto-detected
    assert not result.ignored, result.ignored.lines()
    (t,) = result.trajectories
    stem = name.removesuffix(".json")
    assert t.id == t.task_id == (stem if name == "memory_steps.json" else f"{stem}-0")
    assert_manifest(t, entry)
    assert t.metadata["model"] == "gpt-4o-2024-08-06"
    assert t.messages[0].role == "system" and "airline support agent" in (
        t.messages[0].content or ""
    )
    assert read_trajectories(HERE / name, strict=True).trajectories == result.trajectories
    held = assert_census_matches("smolagents", HERE / name, result.trajectories)
    assert (held.tool_calls, held.failed_calls, held.user_messages) == (4, 1, 2)


def test_memory_keeps_parallel_calls_sorted_by_id_and_the_reader_the_model_s_order() -> None:
    # what the real file holds: the executed calls sorted by id, the model's own order in
    # model_output_message; the reader gives the model's order with each output by call id
    first = STEPS[1]
    assert [c["id"] for c in first["tool_calls"]] == ["call_get_a", "call_get_b"]
    assert [c["id"] for c in first["model_output_message"]["tool_calls"]] == [
        "call_get_b",
        "call_get_a",
    ]
    (t,) = read_trajectories(HERE / "memory_steps.json").trajectories
    assert [(s.call_id, s.args["reservation_id"]) for s in t.steps[:2]] == [
        ("call_get_b", "ABC123"),
        ("call_get_a", "XYZ789"),
    ]


def _write(path: Path, steps: list[Any]) -> Path:
    path.write_text(json.dumps(steps), encoding="utf-8")
    return path


def test_json_lines_and_succinct_steps_read_the_same(tmp_path: Path) -> None:
    (t,) = read_trajectories(HERE / "memory_steps.json").trajectories
    lines = tmp_path / "steps.jsonl"  # one step a line, as a step callback writes them
    lines.write_text("".join(json.dumps(s) + "\n" for s in STEPS), encoding="utf-8")
    (u,) = read_trajectories(lines).trajectories
    assert (u.messages, u.steps, u.usage) == (t.messages, t.steps, t.usage)
    # get_succinct_steps(): the same without model_input_messages, so without a system prompt
    succinct = [{k: v for k, v in s.items() if k != "model_input_messages"} for s in STEPS]
    (v,) = read_trajectories(_write(tmp_path / "succinct.json", succinct)).trajectories
    assert v.messages == t.messages[1:] and v.steps == t.steps


def test_an_error_in_a_step_of_two_calls_fails_both(tmp_path: Path) -> None:
    # what smolagents writes when one of several parallel calls raises: the step's error,
    # no executed tool_calls and no observations (edited from the real first step)
    steps = copy.deepcopy(STEPS)
    steps[1].update(
        tool_calls=[],
        observations=None,
        error={"type": "AgentToolExecutionError", "message": "Error executing tool: boom"},
    )
    path = _write(tmp_path / "failed.json", steps)
    result = read_trajectories(path)
    (t,) = result.trajectories
    assert [(s.call_id, s.ok, s.error) for s in t.steps[:2]] == [
        ("call_get_b", False, "Error executing tool: boom"),
        ("call_get_a", False, "Error executing tool: boom"),
    ]
    assert_census_matches("smolagents", path, result.trajectories)


def test_observations_that_do_not_split_go_to_every_call(tmp_path: Path) -> None:
    steps = copy.deepcopy(STEPS)
    steps[1]["observations"] = "line one\nline two\nline three"
    (t,) = read_trajectories(_write(tmp_path / "joined.json", steps)).trajectories
    assert [s.output for s in t.steps[:2]] == [steps[1]["observations"]] * 2
    assert t.metadata["joined_observations"] == ["record 1"]


def test_a_step_error_without_calls_is_kept_and_planning_counts_its_tokens(tmp_path: Path) -> None:
    steps = copy.deepcopy(STEPS)
    parse_error = {
        "step_number": 3,
        "model_output_message": {"role": "assistant", "content": "hmm", "tool_calls": None},
        "model_output": "hmm",
        "tool_calls": [],
        "observations": None,
        "error": {"type": "AgentParsingError", "message": "no tool call"},
        "token_usage": {"input_tokens": 7, "output_tokens": 3, "total_tokens": 10},
    }
    plan = {"plan": "1. look up\n2. ask", "model_output_message": {}, "token_usage": {
        "input_tokens": 5, "output_tokens": 2, "total_tokens": 7}}  # fmt: skip
    steps[1:1] = [plan, parse_error]
    path = _write(tmp_path / "extra.json", steps)
    result = read_trajectories(path)
    (t,) = result.trajectories
    assert t.metadata["step_errors"] == [{"step": "record 2", "error": parse_error["error"]}]
    assert [m.content for m in t.messages if m.name == "plan"] == [plan["plan"]]
    assert "hmm" in [m.content for m in t.messages if m.role == "assistant"]
    assert t.usage.prompt_tokens == MANIFEST["memory_steps.json"]["expected"]["prompt_tokens"] + 12
    assert len(t.steps) == 4
    assert_census_matches("smolagents", path, result.trajectories)


def test_several_run_results_one_a_line(tmp_path: Path) -> None:
    run = json.loads((HERE / "run_result.json").read_text())
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps(run) + "\n" + json.dumps(run) + "\n", encoding="utf-8")
    result = read_trajectories(path)
    assert [t.id for t in result.trajectories] == ["runs-0", "runs-1"]
    assert census_of("smolagents", path).tool_calls == 8


def test_detection_takes_smolagents_steps_only() -> None:
    assert is_smolagents_record(STEPS[0]) and is_smolagents_record(STEPS[1])
    assert detect_format(HERE / "run_result.json") == "smolagents"
    assert not is_smolagents_record({"task": "x"})  # no task_images: not a TaskStep
    assert not is_smolagents_record({"steps": [], "output": 1, "state": "success"})
    assert not is_smolagents_record([STEPS[0]])


def _edit(step: int, change: dict[str, Any]) -> list[Any]:
    steps = copy.deepcopy(STEPS)
    if change.get("__replace__") is not None:
        steps[step] = change["__replace__"]
    else:
        steps[step].update(change)
    return steps


HOSTILE = {
    "task not text": (0, {"task": 3}, "record 0: task: expected a string, got a number"),
    "tool_calls an object": (
        5,
        {"tool_calls": {"a": 1}, "model_output_message": None},
        "record 5: tool_calls: expected a list, got an object",
    ),
    "call without a name": (
        1,
        {"model_output_message": {"tool_calls": [{"function": {"arguments": {}}}]}},
        "record 1: model_output_message.tool_calls[0].function.name: expected a tool name",
    ),
    "token usage a string": (
        1,
        {"token_usage": "lots"},
        "record 1: token_usage: expected an object, got a string",
    ),
    "negative tokens": (
        1,
        {"token_usage": {"input_tokens": -1, "output_tokens": 2}},
        "record 1: token_usage.input_tokens: expected a count of tokens",
    ),
    "observations a list": (
        5,
        {"observations": ["x"]},
        "record 5: observations: expected a string, got a list",
    ),
    "error a number": (5, {"error": 7}, "record 5: error: expected an object, got a number"),
    "step a string": (2, {"__replace__": "step"}, "record 2: expected a step, got a string"),
    "step null": (2, {"__replace__": [None]}, "record 2: expected a step, got a list"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_steps_are_one_line_errors(case: str, tmp_path: Path) -> None:
    step, change, message = HOSTILE[case]
    path = _write(tmp_path / "bad.json", _edit(step, change))
    with pytest.raises(InputError) as info:
        read_trajectories(path, fmt="smolagents")
    assert str(info.value) == f"{path}: {message}"
    census_of("smolagents", path)  # the census takes any shape without raising


def test_mixed_runs_and_steps_are_refused(tmp_path: Path) -> None:
    run = json.loads((HERE / "run_result.json").read_text())
    path = tmp_path / "mixed.jsonl"
    path.write_text(json.dumps(run) + "\n" + json.dumps(STEPS[0]) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="line 2: a memory step among run results"):
        read_trajectories(path)


def test_deeply_nested_arguments_are_refused_in_one_line(tmp_path: Path) -> None:
    steps = _edit(1, {"model_output_message": {"tool_calls": [
        {"id": "c", "function": {"name": "t", "arguments": "DEEP"}}]}})  # fmt: skip
    path = tmp_path / "deep.json"
    deep = '{"a": ' * 5000 + "1" + "}" * 5000
    path.write_text(json.dumps(steps).replace('"DEEP"', deep), encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_trajectories(path, fmt="smolagents")
    line = str(info.value)
    assert "\n" not in line and "record 1" in line and "TRAJUDGE_MAX_NESTING" in line, line
