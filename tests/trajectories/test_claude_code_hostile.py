"""Claude Code transcripts that are broken or unusual: one line naming record and field for bad
shapes, and the census agreeing with what is built for the shapes the reader accepts.

The records are small hand-made copies of the shapes the real CLI writes (see
``tests/fixtures/claude_code``), changed one field at a time.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from trajudge.core import InputError
from trajudge.trajectories import Trajectory, read_trajectories
from trajudge.trajectories._census import Held, built
from trajudge.trajectories._stream import iter_json_records
from trajudge.trajectories.readers.agents._claude_code import census

S = "0b7a1c2e-0000-4000-8000-000000000001"


def user(content: Any, **extra: Any) -> dict[str, Any]:
    return {"parentUuid": None, "isSidechain": False, "type": "user", "sessionId": S,
            "uuid": "u", "message": {"role": "user", "content": content}, **extra}  # fmt: skip


def assistant(mid: str, blocks: list[Any], usage: Any = None, **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"id": mid, "role": "assistant", "model": "m", "content": blocks}
    if usage is not None:
        message["usage"] = usage
    return {"parentUuid": "u", "isSidechain": False, "type": "assistant", "sessionId": S,
            "uuid": "a", "message": message, **extra}  # fmt: skip


def call(cid: str, name: str = "Bash", args: Any = None) -> dict[str, Any]:
    return {"type": "tool_use", "id": cid, "name": name, "input": args or {"command": "ls"}}


def result(cid: str, content: Any = "ok", error: bool = False) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": cid, "content": content, "is_error": error}


def usage(i: int, o: int, cr: int = 0) -> dict[str, int]:
    return {"input_tokens": i, "cache_creation_input_tokens": 0, "cache_read_input_tokens": cr,
            "output_tokens": o}  # fmt: skip


def write(tmp_path: Path, records: list[Any]) -> Path:
    path = tmp_path / f"{S}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def read_one(path: Path) -> Trajectory:
    (t,) = read_trajectories(path).trajectories
    held = Held()
    for label, value in iter_json_records(path):
        census(label, value, held)
    assert held == built([t])  # the census agrees with what was built
    return t


BAD: dict[str, tuple[Any, str]] = {
    "not an object": ([1, 2], "line 2: expected a record object, got a list"),
    "no type": ({"sessionId": S, "parentUuid": None}, "line 2: type: expected a string, got null"),
    "message text": (
        {**user("x"), "message": "hi"},
        "line 2: message: expected an object, got a string",
    ),
    "content number": (user(3), "line 2: message.content: expected text or a list, got a number"),
    "block string": (
        user(["x"]),
        "line 2: message.content[0]: expected a block object, got a string",
    ),
    "call id": (
        assistant("r", [{**call("c"), "id": None}]),
        "line 2: message.content[0].id: expected a string, got null",
    ),
    "call name": (
        assistant("r", [{**call("c"), "name": ""}]),
        "line 2: message.content[0].name: expected a tool name, got a string",
    ),
    "call input": (
        assistant("r", [call("c", args=[1])]),
        "line 2: message.content[0].input: expected an object, got a list",
    ),
    "result id": (
        user([{"type": "tool_result", "content": "x"}]),
        "line 2: message.content[0].tool_use_id: expected a string, got null",
    ),
    "result content": (
        user([result("c", content=5)]),
        "line 2: message.content[0].content: expected text or a list, got a number",
    ),
    "usage list": (
        assistant("r", [], usage=[1]),
        "line 2: message.usage: expected an object, got a list",
    ),
    "usage negative": (
        assistant("r", [], usage={"input_tokens": -1}),
        "line 2: message.usage.input_tokens: expected a count, got -1",
    ),
    "usage text": (
        assistant("r", [], usage={"output_tokens": "9"}),
        "line 2: message.usage.output_tokens: expected a count, got '9'",
    ),
    "text number": (
        assistant("r", [{"type": "text", "text": 7}]),
        "line 2: message.content[0].text: expected text, got a number",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_records_are_named_in_one_line(tmp_path: Path, case: str) -> None:
    record, expected = BAD[case]
    path = write(tmp_path, [user("start"), record])
    with pytest.raises(InputError) as info:
        read_trajectories(path)
    assert str(info.value) == f"{path}: {expected}"
    # the census takes the same records without a traceback
    held = Held()
    for label, value in iter_json_records(path):
        census(label, value, held)


def test_deep_nesting_is_one_line(tmp_path: Path) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    record = json.dumps(assistant("r", [call("c", args={"a": "DEEP"})])).replace('"DEEP"', deep)
    path = tmp_path / f"{S}.jsonl"
    path.write_text(json.dumps(user("start")) + "\n" + record + "\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_trajectories(path)
    assert "\n" not in str(info.value) and "line 2" in str(info.value)


def test_repeated_usage_counts_once_per_response_taking_the_largest(tmp_path: Path) -> None:
    # one response written as three records; the first written before the last usage came
    path = write(
        tmp_path,
        [
            user("go"),
            assistant("r1", [{"type": "text", "text": "a"}], usage=usage(10, 1, 100)),
            assistant("r1", [call("c1")], usage=usage(10, 7, 100)),
            assistant("r1", [call("c2")], usage=usage(10, 7, 100)),
            user([result("c2"), result("c1", "no", error=True)]),
            assistant("r2", [{"type": "text", "text": "done"}], usage=usage(5, 3)),
        ],
    )
    t = read_one(path)
    assert (t.usage.prompt_tokens, t.usage.completion_tokens) == (110 + 5, 7 + 3)
    assert t.metadata["responses"] == 2
    assert [m.steps for m in t.messages if m.role == "assistant"] == [[0, 1], []]
    assert [(s.call_id, s.ok, s.output, s.error) for s in t.steps] == [
        ("c1", False, None, "no"),
        ("c2", True, "ok", None),
    ]
    assert t.final_answer == "done"


def test_markers_meta_and_local_output_are_no_user_turns(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        [
            user("first"),
            user([{"type": "text", "text": "[Request interrupted by user for tool use]"}]),
            user("Caveat: the messages below were generated locally", isMeta=True),
            user("<local-command-stdout>cleared</local-command-stdout>"),
            user("This session is being continued ...", isCompactSummary=True),
            user([{"type": "text", "text": "second"}, {"type": "image", "source": {}}]),
            {"type": "system", "subtype": "compact_boundary", "sessionId": S, "parentUuid": None},
            {"type": "summary", "summary": "A title", "leafUuid": "a"},
        ],
    )
    result = read_trajectories(path)
    t = read_one(path)
    assert t.user_turns() == ["first", "second"]
    assert t.metadata["interruptions"] == 1
    assert t.metadata["summaries"] == ["A title"]
    assert [m.content for m in t.messages if m.role == "system"] == [
        "This session is being continued ..."
    ]
    assert sorted(result.ignored.lines()) == [
        "1 interruption marker was ignored",
        "1 local command output was ignored",
        "1 meta message was ignored",
        "1 record that is no message was ignored",
        "1 user block that is not text was ignored",
    ]


def test_unanswered_calls_fail_and_stray_results_are_kept(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        [
            user("go"),
            assistant("r1", [call("c1"), call("c1"), call("c2")]),
            # a reused id answers its earliest unanswered call, never by tool name
            user([result("c1", "first")]),
            user([result("c1", "second", error=True)]),
            user([result("zz", "nobody asked")]),
        ],
    )
    t = read_one(path)
    assert [(s.ok, s.output, s.error) for s in t.steps] == [
        (True, "first", None),
        (False, None, "second"),
        (False, None, "no tool result"),
    ]
    assert [m.content for m in t.messages if m.role == "tool" and m.step is None] == [
        "nobody asked"
    ]
    assert t.usage.prompt_tokens is None and t.usage.completion_tokens is None


def test_server_tools_and_thinking(tmp_path: Path) -> None:
    search = {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"query": "q"}}
    error = {"type": "web_search_tool_result_error", "error_code": "unavailable"}
    failed = {"type": "web_search_tool_result", "tool_use_id": "s1", "content": error}
    path = write(
        tmp_path,
        [
            user("look it up"),
            assistant("r1", [{"type": "thinking", "thinking": "hmm", "signature": "x"}]),
            assistant("r1", [search, failed, {"type": "text", "text": "not found"}]),
        ],
    )
    t = read_one(path)
    assert [(s.tool, s.args, s.ok) for s in t.steps] == [("web_search", {"query": "q"}, False)]
    assert [(m.name, m.content) for m in t.messages if m.role == "assistant"] == [
        ("reasoning", "hmm"),
        (None, None),
        (None, "not found"),
    ]
    assert t.final_answer == "not found"


def test_a_sidechain_inside_the_session_is_marked(tmp_path: Path) -> None:
    side = {"isSidechain": True}
    path = write(
        tmp_path,
        [
            user("delegate"),
            assistant("r1", [call("t1", "Task", {"prompt": "p", "description": "d"})]),
            {**user("p"), **side},
            {**assistant("s1", [call("c1")], usage=usage(3, 2)), **side},
            {**user([result("c1", "x")]), **side},
            {**assistant("s2", [{"type": "text", "text": "found x"}]), **side},
            user([result("t1", [{"type": "text", "text": "found x"}])]),
            assistant("r2", [{"type": "text", "text": "x it is"}], usage=usage(4, 1)),
        ],
    )
    t = read_one(path)
    assert t.user_turns() == ["delegate"]
    assert t.metadata["sidechain_steps"] == [1]
    assert [s.output for s in t.steps] == ["found x", "x"]
    assert t.final_answer == "x it is"
    assert (t.usage.prompt_tokens, t.usage.completion_tokens) == (7, 3)


def test_a_file_without_messages_is_refused_in_one_line(tmp_path: Path) -> None:
    queued = {"type": "queue-operation", "operation": "enqueue", "sessionId": S, "content": "x"}
    path = write(tmp_path, [queued])
    with pytest.raises(InputError) as info:
        read_trajectories(path)
    assert str(info.value) == f"{path}: no conversation: no user or assistant record"
