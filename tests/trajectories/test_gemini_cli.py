"""Gemini CLI sessions import whole: the files under ``tests/fixtures/gemini_cli`` were written
by the real ``gemini`` (0.61: JSON Lines; 0.30: one JSON document) against a scripted Gemini
API (``generate.py``), and are checked call by call against what the script did
(``manifest.json``). Hand-made variants of the real file, built in each test, cover what the
scenario does not reach (a rewind, an unanswered call, hostile shapes).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from trajudge.core import InputError
from trajudge.trajectories import read_trajectories
from trajudge.trajectories._census import Held, built
from trajudge.trajectories._stream import iter_json_records
from trajudge.trajectories.readers.agents._gemini_cli_census import census
from trajudge.trajectories.reading._detect import is_native_record, records_format

HERE = Path(__file__).parents[1] / "fixtures" / "gemini_cli"
MANIFEST: dict[str, Any] = json.loads((HERE / "manifest.json").read_text(encoding="utf-8"))
JSONL = next(n for n in MANIFEST if n.endswith(".jsonl"))
DOCUMENT = next(n for n in MANIFEST if n.endswith(".json"))


def _census(path: Path) -> Held:
    held = Held()
    for label, value in iter_json_records(path):
        census(label, value, held)
    return held


def _session_id(path: Path) -> str:
    first = path.read_text().splitlines()[0] if path.suffix == ".jsonl" else path.read_text()
    return str(json.loads(first)["sessionId"])


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_a_real_session_imports_call_by_call(name: str) -> None:
    entry = MANIFEST[name]
    want = entry["expected"]
    result = read_trajectories(HERE / name)
    assert result.fmt == entry["format"] == "gemini-cli"  # auto-detected
    assert not result.ignored, result.ignored.lines()
    (t,) = result.trajectories
    assert t.id == t.task_id == _session_id(HERE / name)
    assert t.user_turns() == want["user_turns"]
    assert t.input == want["user_turns"][0]
    assert len(t.steps) == len(want["steps"])
    for step, w in zip(t.steps, want["steps"], strict=True):
        assert (step.tool, step.args, step.ok) == (w["tool"], w["args"], w["ok"])
        # 0.61 prefixes the model's call id with the tool name; 0.30 kept it as it came
        assert step.call_id in (w["call_id"], w["call_id"].split("__")[1])
        if "output" in w:
            assert step.output == w["output"]
        if "output_contains" in w:
            assert step.output is not None and w["output_contains"] in step.output
        if "error_contains" in w:
            assert step.error is not None and w["error_contains"] in step.error
        if w["ok"]:
            assert step.error is None
    assert [m.steps for m in t.messages if m.steps] == want["assistant_steps"]
    # every step answered by exactly one tool turn, after the turn that made it
    answers = [m.step for m in t.messages if m.role == "tool"]
    assert sorted(a for a in answers if a is not None) == list(range(len(t.steps)))
    maker = {n: i for i, m in enumerate(t.messages) for n in m.steps}
    for i, m in enumerate(t.messages):
        if m.step is not None:
            assert maker[m.step] < i and m.name == t.steps[m.step].tool
    texts = [m.content for m in t.messages if m.role == "assistant" and m.name is None]
    assert [x for x in texts if x] == want["answers"]
    assert [m.content for m in t.messages if m.name == "reasoning"] == [want["reasoning"]]
    assert t.final_answer == want["final_answer"]
    assert (t.usage.prompt_tokens, t.usage.completion_tokens) == (
        want["prompt_tokens"],
        want["completion_tokens"],
    )
    assert t.usage.turns == 2
    assert t.metadata["cached_tokens"] == want["cached_tokens"]
    assert t.metadata["thoughts_tokens"] == want["thoughts_tokens"]
    assert t.metadata["model"] == want["model"]
    # the second user turn comes after the first answer, before the shell call
    user_2 = next(i for i, m in enumerate(t.messages) if m.content == want["user_turns"][1])
    assert t.messages[user_2 - 1].content == want["answers"][0]
    assert maker[len(t.steps) - 1] > user_2
    assert read_trajectories(HERE / name, strict=True).trajectories == result.trajectories


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_the_census_of_a_real_session_matches_what_was_built(name: str) -> None:
    want = MANIFEST[name]["expected"]
    held = _census(HERE / name)
    assert held == built(read_trajectories(HERE / name).trajectories)
    failed = sum(1 for s in want["steps"] if not s["ok"])
    assert held == Held(
        len(want["steps"]), failed, 2, want["prompt_tokens"], want["completion_tokens"]
    )


def test_the_cli_context_message_is_a_system_turn_not_a_user_turn() -> None:
    (t,) = read_trajectories(HERE / JSONL).trajectories
    assert t.messages[0].role == "system"
    assert (t.messages[0].content or "").startswith("<session_context>")


def test_a_one_document_session_is_no_longer_refused_as_trajudge_json_lines() -> None:
    # it was: "record 0: sessionId: Extra inputs are not permitted (+3 more)"
    doc = json.loads((HERE / DOCUMENT).read_text())
    assert records_format([("record 0", doc)]) == "gemini-cli"
    assert read_trajectories(HERE / DOCUMENT).fmt == "gemini-cli"
    first = json.loads((HERE / JSONL).read_text().splitlines()[0])
    assert not is_native_record(first)
    assert records_format([("line 1", first)]) == "gemini-cli"


# Hand-made variants of the real JSON Lines file.


def _lines() -> list[Any]:
    return [json.loads(x) for x in (HERE / JSONL).read_text().splitlines() if x.strip()]


def _write(tmp_path: Path, records: list[Any]) -> Path:
    path = tmp_path / "session-x.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_a_rewind_drops_the_messages_after_it_and_says_so(tmp_path: Path) -> None:
    records = _lines()
    second = next(
        r
        for r in records
        if r.get("content") == [{"text": MANIFEST[JSONL]["expected"]["user_turns"][1]}]
    )
    path = _write(tmp_path, [*records, {"$rewindTo": second["id"]}])
    result = read_trajectories(path)
    (t,) = result.trajectories
    assert t.user_turns() == MANIFEST[JSONL]["expected"]["user_turns"][:1]
    assert [s.tool for s in t.steps] == ["read_file"] * 3
    # the second user turn, the shell call, its result, the answer
    assert result.ignored.lines() == [
        "4 messages the CLI dropped (rewound or rolled back) were ignored"
    ]
    assert _census(path) == built([t])


def test_a_call_without_a_result_fails_and_the_census_agrees(tmp_path: Path) -> None:
    records = _lines()
    call = {
        "id": "m-last",
        "timestamp": "t",
        "type": "gemini",
        "content": "",
        "toolCalls": [{"id": "x1", "name": "read_file", "args": {"file_path": "a"}}],
        "tokens": {"input": 7, "output": 3, "cached": 0, "thoughts": 1, "tool": 2, "total": 13},
    }
    path = _write(tmp_path, [*records, call])
    (t,) = read_trajectories(path).trajectories
    assert (t.steps[-1].ok, t.steps[-1].error) == (False, "no tool result")
    want = MANIFEST[JSONL]["expected"]
    assert t.usage.prompt_tokens == want["prompt_tokens"] + 7 + 2
    assert t.usage.completion_tokens == want["completion_tokens"] + 3 + 1
    assert _census(path) == built([t])


def test_a_cancelled_call_and_an_info_message(tmp_path: Path) -> None:
    records = _lines()
    call = {
        "id": "m-c",
        "type": "gemini",
        "content": "",
        "toolCalls": [
            {
                "id": "c1",
                "name": "run_shell_command",
                "args": {"command": "sleep 9"},
                "status": "cancelled",
                "result": None,
            }
        ],
    }
    info = {"id": "m-i", "type": "info", "content": "Request cancelled."}
    path = _write(tmp_path, [*records, call, info])
    result = read_trajectories(path)
    (t,) = result.trajectories
    assert (t.steps[-1].ok, t.steps[-1].error) == (False, "status cancelled")
    assert result.ignored.lines() == ["1 info, warning or error message was ignored"]
    assert _census(path) == built([t])


HOSTILE: list[tuple[str, Any, str, str]] = [
    # (what, the last record, the record the error names, the field it names)
    ("a list", [1, 2], "line 30", ""),
    ("a message id of a number", {"id": 5, "type": "user"}, "line 30", "id"),
    ("content of a number", {"id": "u", "type": "user", "content": 5}, "line 30", "content"),
    ("a part of a number", {"id": "u", "type": "user", "content": [5]}, "line 30", "content[0]"),
    ("toolCalls an object", {"id": "g", "type": "gemini", "toolCalls": {}}, "line 30", "toolCalls"),
    (
        "a tool call a string",
        {"id": "g", "type": "gemini", "toolCalls": ["x"]},
        "line 30",
        "toolCalls[0]",
    ),
    (
        "a tool call without a name",
        {"id": "g", "type": "gemini", "toolCalls": [{"id": "a"}]},
        "line 30",
        "toolCalls[0].name",
    ),
    (
        "args a string",
        {"id": "g", "type": "gemini", "toolCalls": [{"name": "t", "args": "x"}]},
        "line 30",
        "toolCalls[0].args",
    ),
    ("tokens a string", {"id": "g", "type": "gemini", "tokens": "many"}, "line 30", "tokens"),
    (
        "a negative count",
        {"id": "g", "type": "gemini", "tokens": {"input": -1}},
        "line 30",
        "tokens.input",
    ),
    (
        "a count of true",
        {"id": "g", "type": "gemini", "tokens": {"output": True}},
        "line 30",
        "tokens.output",
    ),
    ("thoughts an object", {"id": "g", "type": "gemini", "thoughts": {}}, "line 30", "thoughts"),
    ("$set a list", {"$set": []}, "line 30", "$set"),
    ("$set.messages an object", {"$set": {"messages": {}}}, "line 30", "$set.messages"),
    ("a $set message of null", {"$set": {"messages": [None]}}, "line 30", "$set.messages[0]"),
    ("$rewindTo a number", {"$rewindTo": 3}, "line 30", "$rewindTo"),
    (
        "a call part without a name",
        {"id": "g", "type": "gemini", "content": [{"functionCall": {"args": {}}}]},
        "line 30",
        "content[0].functionCall.name",
    ),
]


@pytest.mark.parametrize(("what", "last", "record", "field"), HOSTILE, ids=[h[0] for h in HOSTILE])
def test_a_hostile_record_is_one_line_naming_record_and_field(
    tmp_path: Path, what: str, last: Any, record: str, field: str
) -> None:
    records = _lines()
    assert len(records) == 29
    path = _write(tmp_path, [*records, last])
    with pytest.raises(InputError) as info:
        read_trajectories(path, fmt="gemini-cli")
    message = str(info.value)
    assert "\n" not in message
    assert f"{record}:" in message and f"{field}:" in message
    held = Held()  # the census never raises on what the reader refuses
    for label, value in iter_json_records(path):
        census(label, value, held)


def test_a_session_without_its_id_is_refused(tmp_path: Path) -> None:
    records = _lines()
    del records[0]["sessionId"]
    records = [r for r in records if "sessionId" not in r and "sessionId" not in r.get("$set", {})]
    path = _write(tmp_path, records)
    with pytest.raises(InputError, match="sessionId"):
        read_trajectories(path, fmt="gemini-cli")


def test_deep_nesting_is_refused_in_one_line(tmp_path: Path) -> None:
    path = _write(tmp_path, _lines())
    deep = "[" * 5000 + '"x"' + "]" * 5000
    call = '{"name": "t", "args": {"a": ' + deep + "}}"
    last = '{"id": "g", "type": "gemini", "toolCalls": [' + call + "]}"
    path.write_text(path.read_text() + last + "\n")
    with pytest.raises(InputError) as info:
        read_trajectories(path, fmt="gemini-cli")
    assert "\n" not in str(info.value)
