"""OpenAI Codex CLI rollouts (``--format codex``): the file ``codex exec`` wrote imports whole.

``tests/fixtures/codex/rollout.jsonl`` was written by the real Codex CLI against a scripted
loopback model (``tests/fixtures/codex/generate.py``); every expected value comes from the
manifest that generator wrote, never from the reader's own output. Variants of that file (its
``token_count`` lines only, the older ``user_message`` events, no provenance) stand for what
older Codex releases wrote; small hand-made lines test hostile input. The rollouts of the
older shape (a meta line, then bare Responses items) were written by real Codex releases
0.1.2505291658 to 0.29.0 (``tests/fixtures/codex_legacy/generate.py``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from trajudge.core import InputError
from trajudge.trajectories import read_trajectories, write_jsonl
from trajudge.trajectories._census import Held, built
from trajudge.trajectories._stream import iter_json_records
from trajudge.trajectories.readers.agents._codex import is_codex_rollout, is_legacy_meta
from trajudge.trajectories.readers.agents._codex_census import census
from trajudge.trajectories.readers.agents._codex_items import exit_code
from trajudge.trajectories.reading._detect import first_record_format, records_format

FIXTURES = Path(__file__).parents[1] / "fixtures"
ROLLOUT = FIXTURES / "codex" / "rollout.jsonl"
ENTRY: dict[str, Any] = json.loads((FIXTURES / "codex" / "manifest.json").read_text())[
    "rollout.jsonl"
]
EXPECTED: dict[str, Any] = ENTRY["expected"]
LINES: list[dict[str, Any]] = [json.loads(line) for line in ROLLOUT.read_text().splitlines()]
LEGACY = FIXTURES / "codex_legacy"
LEGACY_ENTRIES: dict[str, Any] = json.loads((LEGACY / "manifest.json").read_text())


def _lines(path: Path) -> list[Any]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def census_of(path: Path) -> Held:
    held = Held()
    for label, value in iter_json_records(path):
        census(label, value, held)
    return held


def write(tmp_path: Path, lines: list[Any], name: str = "rollout.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


# --- the real file ---------------------------------------------------------------------------


def test_the_rollout_imports_call_by_call_as_the_script_played_it() -> None:
    result = read_trajectories(ROLLOUT)
    assert result.fmt == "codex"  # auto-detected
    assert not result.ignored, result.ignored.lines()
    (t,) = result.trajectories
    assert t.id == t.task_id == ENTRY["session_id"]
    assert t.user_turns() == EXPECTED["user_turns"]
    assert t.input == EXPECTED["user_turns"][0]
    assert len(t.steps) == len(EXPECTED["steps"])
    for step, want, call_id in zip(t.steps, EXPECTED["steps"], ENTRY["call_ids"], strict=True):
        assert (step.tool, step.args, step.ok, step.call_id) == (
            want["tool"],
            want["args"],
            want["ok"],
            call_id,
        )
        assert step.output is not None and want["output_has"] in step.output
        code = want["exit_code"]
        assert f"Process exited with code {code}\n" in step.output
        assert step.error == (None if want["ok"] else f"exit code {code}")
    assert t.final_answer == EXPECTED["final_answer"]
    assert (t.usage.prompt_tokens, t.usage.completion_tokens) == (
        EXPECTED["prompt_tokens"],
        EXPECTED["completion_tokens"],
    )
    assert t.usage.turns == len(EXPECTED["user_turns"])
    assert t.metadata["cached_tokens"] == EXPECTED["cached_tokens"]
    assert t.metadata["reasoning_tokens"] == EXPECTED["reasoning_tokens"]
    assert t.metadata["model_responses"] == len(ENTRY["usage_per_response"])
    assert t.metadata["model"] == ENTRY["model"]
    assert t.metadata["cwd"] == ENTRY["cwd"]
    assert f"@openai/codex=={t.metadata['cli_version']}" in ENTRY["tools"]


def test_turns_are_linked_in_the_order_codex_wrote_them() -> None:
    (t,) = read_trajectories(ROLLOUT).trajectories
    # the two shell calls of one model response are made by one assistant turn
    assert [m.steps for m in t.messages if m.steps] == ENTRY["assistant_steps"]
    assert sorted(m.step for m in t.messages if m.role == "tool") == list(range(len(t.steps)))
    reasoning = [m.content for m in t.messages if m.name == "reasoning"]
    assert reasoning == ENTRY["reasoning"]
    said = [m.content for m in t.messages if m.role == "assistant" and m.content]
    assert [s for s in said if s not in reasoning] == ENTRY["assistant_texts"]
    # the second user turn comes after the first answer and before the last call
    order = [(m.role, m.content) for m in t.messages if m.role in ("user", "assistant")]
    second = order.index(("user", EXPECTED["user_turns"][1]))
    assert order[second - 1] == ("assistant", ENTRY["assistant_texts"][0])
    # what Codex wrote for the model as a user message is a system turn, never a user turn
    context = [m.content or "" for m in t.messages if m.name == "context"]
    assert context and all(c.startswith("<environment_context>") for c in context)
    assert t.messages[0].role == "system" and t.messages[0].name == "base_instructions"


def test_the_census_of_the_raw_lines_matches_the_script_and_the_trajectory() -> None:
    held = census_of(ROLLOUT)
    failed = sum(1 for s in EXPECTED["steps"] if not s["ok"])
    assert held == Held(
        tool_calls=len(EXPECTED["steps"]),
        failed_calls=failed,
        user_messages=len(EXPECTED["user_turns"]),
        prompt_tokens=EXPECTED["prompt_tokens"],
        completion_tokens=EXPECTED["completion_tokens"],
    )
    assert built(read_trajectories(ROLLOUT).trajectories) == held


# --- what older Codex releases wrote, made from the real file --------------------------------


def test_token_count_alone_is_counted_once_per_model_response(tmp_path: Path) -> None:
    # before token_usage_record (Codex < 0.15x) only token_count told usage, and Codex writes
    # the same count again on UI refreshes: each line here twice, and a rate-limit-only one
    lines = []
    for line in LINES:
        if line["type"] == "token_usage_record":
            continue
        lines.append(line)
        if line["payload"].get("type") == "token_count":
            lines.append(line)
            lines.append({"type": "event_msg", "payload": {"type": "token_count", "info": None}})
    path = write(tmp_path, lines)
    (t,) = read_trajectories(path).trajectories
    assert (t.usage.prompt_tokens, t.usage.completion_tokens) == (
        EXPECTED["prompt_tokens"],
        EXPECTED["completion_tokens"],
    )
    assert t.metadata["model_responses"] == len(ENTRY["usage_per_response"])
    assert census_of(path) == built([t])


def _legacy(line: dict[str, Any]) -> list[dict[str, Any]]:
    """A line as Codex wrote it before provenance and item events: a user_message event."""
    payload = {
        k: v
        for k, v in line["payload"].items()
        if k != "internal_chat_message_metadata_passthrough"
    }
    if line["type"] == "event_msg" and payload.get("type") == "item_completed":
        item = payload["item"]
        if item["type"] == "UserMessage":
            text = item["content"][0]["text"]
            return [{"type": "event_msg", "payload": {"type": "user_message", "message": text}}]
        return []
    return [{**line, "payload": payload}]


def test_older_lines_without_provenance_tell_user_turns_by_their_text(tmp_path: Path) -> None:
    lines = [out for line in LINES for out in _legacy(line)]
    agents = "# AGENTS.md instructions for /repo\n\n<INSTRUCTIONS>\nbe brief\n</INSTRUCTIONS>"
    lines.insert(3, _message("user", agents))
    lines.insert(4, _message("user", "<turn_aborted>\nThe user interrupted.\n</turn_aborted>"))
    path = write(tmp_path, lines)
    (t,) = read_trajectories(path).trajectories
    assert t.user_turns() == EXPECTED["user_turns"]
    assert sum(1 for m in t.messages if m.name == "context") == 3
    held = census_of(path)
    assert held.user_messages == len(EXPECTED["user_turns"])
    assert held == built([t])


def _message(role: str, text: str) -> dict[str, Any]:
    content = [{"type": "input_text", "text": text}]
    return {
        "type": "response_item",
        "payload": {"type": "message", "role": role, "content": content},
    }


def test_outputs_of_earlier_shell_tools_tell_their_exit_code(tmp_path: Path) -> None:
    # the shell tool's JSON (before 0.4x) and its later text header; a command that prints
    # "Exit code: 5" itself does not fail the call
    assert exit_code('{"output": "x", "metadata": {"exit_code": 2, "duration_seconds": 0.1}}') == 2
    assert exit_code("Exit code: 0\nWall time: 0.1 seconds\nOutput:\nExit code: 5\n") == 0
    assert exit_code("Process running with session ID 3\nOutput:\nExit code: 5\n") is None
    assert exit_code("apply_patch verification failed") is None
    assert exit_code("{" * 100_000) is None  # nested past Python's limit: not JSON to it
    meta = LINES[0]
    calls = [
        (
            "shell",
            '{"command": ["bash", "-lc", "false"]}',
            '{"output": "", "metadata": {"exit_code": 1}}',
        ),
        (
            "shell",
            '{"command": ["echo", "Exit code: 7"]}',
            "Exit code: 0\nWall time: 0 s\nOutput:\nExit code: 7\n",
        ),
    ]
    said = {"type": "event_msg", "payload": {"type": "user_message", "message": "go"}}
    lines: list[Any] = [meta, _message("user", "go"), said]
    for n, (name, args, _) in enumerate(calls):
        lines.append(_item("function_call", name=name, arguments=args, call_id=f"c{n}"))
    for n, (_, _, output) in enumerate(calls):
        lines.append(_item("function_call_output", call_id=f"c{n}", output=output))
    lines.append(_item("local_shell_call", call_id="c2", status="completed",
                       action={"type": "exec", "command": ["ls"]}))  # fmt: skip
    lines.append(_item("function_call_output", call_id="c2", output="Exit code: 2\nOutput:\n"))
    lines.append(
        _item("custom_tool_call", name="apply_patch", input="*** Begin Patch", call_id="c3")
    )
    lines.append(_item("custom_tool_call_output", call_id="c3", output="Exit code: 0\nOutput:\nok"))
    lines.append(_item("web_search_call", status="failed", action={"type": "search", "query": "q"}))
    # an output that is an object, not text, tells no exit code (to the reader and the census)
    lines.append(_item("function_call", name="shell", arguments="{}", call_id="c4"))
    lines.append(_item("function_call_output", call_id="c4", output={"metadata": {"exit_code": 1}}))
    path = write(tmp_path, lines)
    (t,) = read_trajectories(path, fmt="codex").trajectories
    assert [(s.tool, s.ok) for s in t.steps] == [
        ("shell", False),
        ("shell", True),
        ("local_shell", False),
        ("apply_patch", True),
        ("web_search", False),
        ("shell", True),
    ]
    assert t.steps[2].args == {"type": "exec", "command": ["ls"]}
    assert t.steps[3].args == {"input": "*** Begin Patch"}
    assert census_of(path) == built([t])


def _item(kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": "response_item", "payload": {"type": kind, **fields}}


# --- rollouts before Codex 0.3x, written by the real old releases ----------------------------


@pytest.mark.parametrize("name", sorted(LEGACY_ENTRIES))
def test_an_older_rollout_imports_call_by_call_as_the_script_played_it(name: str) -> None:
    entry = LEGACY_ENTRIES[name]
    expected = entry["expected"]
    result = read_trajectories(LEGACY / name)
    assert result.fmt == "codex"  # auto-detected from the meta line
    assert not result.ignored, result.ignored.lines()
    (t,) = result.trajectories
    assert t.id == t.task_id == entry["session_id"]
    assert t.user_turns() == expected["user_turns"]
    assert len(t.steps) == len(expected["steps"])
    for step, want, call_id in zip(t.steps, expected["steps"], entry["call_ids"], strict=True):
        assert (step.tool, step.args, step.ok, step.call_id) == (
            want["tool"],
            want["args"],
            want["ok"],
            call_id,
        )
        # the shell tool of these versions answers with JSON: the output and its exit code
        assert step.output is not None
        answer = json.loads(step.output)
        assert want["output_has"] in answer["output"]
        assert answer["metadata"]["exit_code"] == want["exit_code"]
        assert step.error == (None if want["ok"] else f"exit code {want['exit_code']}")
    assert t.final_answer == expected["final_answer"]
    # these versions write no token counts: none are made up
    assert (t.usage.prompt_tokens, t.usage.completion_tokens) == (None, None)
    assert "prompt_tokens" not in expected
    assert t.usage.turns == len(expected["user_turns"])
    # the calls of one model response are one assistant turn, though each output follows its call
    assert [m.steps for m in t.messages if m.steps] == entry["assistant_steps"]
    assert sorted(m.step for m in t.messages if m.role == "tool") == list(range(len(t.steps)))
    reasoning = [m.content for m in t.messages if m.name == "reasoning"]
    assert reasoning == entry["reasoning"]
    said = [m.content for m in t.messages if m.role == "assistant" and m.content]
    assert [x for x in said if x not in reasoning] == entry["assistant_texts"]
    # AGENTS.md: the meta's instructions; a block Codex wrote as a user message is a system turn
    assert (t.messages[0].role, t.messages[0].name) == ("system", "instructions")
    assert t.messages[0].content == entry["instructions"]
    context = [m.content or "" for m in t.messages if m.name == "context"]
    assert all(c.startswith(("<user_instructions>", "<environment_context>")) for c in context)
    if entry["tools"] == ["@openai/codex==0.28.0"]:  # both blocks, again with each turn
        assert len(context) == 2 * len(expected["user_turns"])
    held = census_of(LEGACY / name)
    failed = sum(1 for s in expected["steps"] if not s["ok"])
    assert held == Held(len(expected["steps"]), failed, len(expected["user_turns"]), None, None)
    assert built([t]) == held == result.held


def test_an_older_rollout_is_told_by_its_meta_line_and_steals_no_other_file(
    tmp_path: Path,
) -> None:
    for name in LEGACY_ENTRIES:
        first = _lines(LEGACY / name)[0]
        assert is_legacy_meta(first) and first_record_format(first) == "codex", name
    lines = _lines(LEGACY / "rollout-0.28.0.jsonl")
    meta = lines[0]
    # its other lines are Responses items: without the meta line they are a Responses file
    items = [line for line in lines[1:] if "record_type" not in line]
    assert first_record_format(items[0]) != "codex"
    assert records_format([(f"line {n}", i) for n, i in enumerate(items, 1)]) == "responses"
    # the trajectory written as trajudge's own JSON Lines is read as that, not as a rollout
    native = tmp_path / "native.jsonl"
    write_jsonl(native, read_trajectories(LEGACY / "rollout-0.28.0.jsonl").trajectories)
    assert read_trajectories(native).fmt == "jsonl"
    # a meta line is keys of the session meta only, with a UUID id and a timestamp
    for other in (
        {**meta, "type": "message"},
        {**meta, "task_id": "t"},
        {**meta, "id": "not-a-uuid"},
        {**meta, "id": 7},
        {"id": meta["id"]},
        {"id": meta["id"], "timestamp": None},
        [meta],
    ):
        assert first_record_format(other) != "codex", other


def test_older_lines_of_kinds_not_read_are_counted(tmp_path: Path) -> None:
    lines = _lines(LEGACY / "rollout-0.8.0.jsonl")
    lines[3:3] = [
        {"record_type": "snapshot", "x": 1},
        {**lines[0], "id": "00000000-0000-4000-8000-000000000000"},
        {"type": "ghost_snapshot"},
    ]
    path = write(tmp_path, lines)
    result = read_trajectories(path)
    assert result.fmt == "codex"
    assert len(result.ignored.details()) == 3, result.ignored.details()
    (t,) = result.trajectories
    assert t.id == lines[0]["id"]
    assert len(t.steps) == len(LEGACY_ENTRIES["rollout-0.8.0.jsonl"]["expected"]["steps"])


@pytest.mark.parametrize(
    ("replace", "where"),
    [
        ({0: {"id": 7, "timestamp": "t"}}, "line 1: id: missing or empty session id"),
        ({0: {"timestamp": "t"}}, "line 1: id: missing or empty session id"),
        ({2: "not an object"}, "line 3: type: expected a Responses item, got"),
        ({2: {"role": "user", "content": "hi"}}, "line 3: type: expected a Responses item's type"),
        (
            {2: {"type": "function_call", "name": "shell", "arguments": "{bad", "call_id": "c"}},
            "line 3: arguments: arguments are not valid JSON",
        ),
        (
            {2: {"type": "function_call", "name": None, "arguments": "{}", "call_id": "c"}},
            "line 3: name: missing or empty",
        ),
        (
            {2: {"type": "function_call", "name": "f", "arguments": 5, "call_id": "c"}},
            "line 3: arguments: expected JSON text, got",
        ),
    ],
)
def test_bad_older_lines_are_one_line_errors_naming_the_line(
    tmp_path: Path, replace: dict[int, Any], where: str
) -> None:
    lines = _lines(LEGACY / "rollout-0.8.0.jsonl")
    for n, value in replace.items():
        lines[n] = value
    path = write(tmp_path, lines)
    with pytest.raises(InputError) as info:
        read_trajectories(path, fmt="codex")
    message = str(info.value)
    assert message.startswith(f"{path}: {where}"), message
    assert "\n" not in message
    census_of(path)  # the census takes any shape without raising


def test_the_census_of_older_lines_tells_user_turns_apart_on_its_own(tmp_path: Path) -> None:
    lines = _lines(LEGACY / "rollout-0.1.2505291658.jsonl")
    agents = "# AGENTS.md instructions for /repo\n\n<INSTRUCTIONS>\nbe brief\n</INSTRUCTIONS>"
    image = [{"type": "input_image", "image_url": "data:"}]
    lines[1:1] = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": agents}]},
        {"type": "message", "role": "user", "content": "<user_instructions>x</user_instructions>"},
        {"type": "message", "role": "user", "content": "<b>bold</b> is not a block alone"},
        {"type": "message", "role": "user", "content": image},  # a turn with no text
    ]
    path = write(tmp_path, lines)
    result = read_trajectories(path)
    (t,) = result.trajectories
    assert len(t.user_turns()) == 3
    assert sum(1 for m in t.messages if m.name == "context") == 2
    assert census_of(path) == built([t])


# --- detection -------------------------------------------------------------------------------


def test_the_first_line_tells_a_rollout_and_no_other_fixture_is_taken_for_one() -> None:
    assert first_record_format(LINES[0]) == "codex"
    assert not is_codex_rollout({"type": "session_meta", "payload": None})
    assert not is_codex_rollout({"type": "message", "role": "user", "content": "hi"})
    for path in sorted(FIXTURES.rglob("*.json*")):
        if path.parent.name in ("codex", "codex_legacy") or path.name == "manifest.json":
            continue
        first = next(iter_json_records(path))[1]
        assert first_record_format(first) != "codex", path


# --- hostile input ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lines", "where"),
    [
        (["not an object"], "line 1: type: expected a rollout line"),
        ([{"type": "session_meta", "payload": "x"}], "line 1: payload: expected an object, got"),
        ([{"type": "session_meta", "payload": {"id": 7}}], "line 1: payload.id: missing or empty"),
        ([{"type": "response_item", "payload": {}}], "line 1: session_meta: no session_meta line"),
        (
            [LINES[0], _item("function_call", name="f", arguments="{bad", call_id="c")],
            "line 2: payload.arguments: arguments are not valid JSON",
        ),
        (
            [LINES[0], _item("function_call", name="f", arguments=[1], call_id="c")],
            "line 2: payload.arguments: expected JSON text, got",
        ),
        (
            [LINES[0], _item("function_call", name=None, arguments="{}", call_id="c")],
            "line 2: payload.name: missing or empty",
        ),
        (
            [LINES[0], _item("function_call", name="f", arguments="[1]", call_id="c")],
            "line 2: payload.arguments: arguments must be a JSON object",
        ),
    ],
)
def test_bad_lines_are_one_line_errors_naming_the_line(
    tmp_path: Path, lines: list[Any], where: str
) -> None:
    path = write(tmp_path, lines)
    with pytest.raises(InputError) as info:
        read_trajectories(path, fmt="codex")
    message = str(info.value)
    assert message.startswith(f"{path}: {where}"), message
    assert "\n" not in message
    census_of(path)  # the census takes any shape without raising


def test_odd_shapes_are_counted_not_crashed_on(tmp_path: Path) -> None:
    odd: list[Any] = [
        LINES[0],
        {
            "type": "event_msg",
            "payload": {"type": "token_count", "info": {"total_token_usage": "x"}},
        },
        {
            "type": "token_usage_record",
            "payload": {"usage": {"input_tokens": "many", "output_tokens": -1}},
        },
        {"type": "event_msg", "payload": {"type": "something_new"}},
        {"type": "future_line", "payload": {}},
        _item("message", role="user", content=[{"type": "input_image", "image_url": "data:"}]),
        _item("message", role="tool", content="?"),
        _item("reasoning", summary=None, encrypted_content="..."),
        _item("function_call_output", call_id="nobody", output={"nested": [[[]]]}),
        _item("ghost_snapshot", ghost_commit={}),
        _item("function_call", name="f", arguments=None, call_id="c1"),
        _item("function_call_output", call_id="c1", output=[{"type": "input_text", "text": "hi"}]),
        {"type": "session_meta", "payload": {"id": "again"}},
        {"type": "compacted", "payload": {"message": "summary"}},
    ]
    path = write(tmp_path, odd)
    # the image-only user item has no user_message event beside it: the census and the
    # reader disagree on it, and only an accepted loss imports the file
    with pytest.raises(InputError, match="user_messages"):
        read_trajectories(path, fmt="codex")
    result = read_trajectories(path, fmt="codex", accept_loss=["user_messages"])
    assert [loss.name for loss in result.losses] == ["user_messages"]
    (t,) = result.trajectories
    assert t.id == LINES[0]["payload"]["id"]
    assert [(s.tool, s.args, s.output) for s in t.steps] == [("f", {}, "hi")]
    assert t.usage.prompt_tokens is None and t.usage.completion_tokens is None
    kinds = {line.split(" were ")[0].split(" was ")[0] for line in result.ignored.lines()}
    assert len(result.ignored.details()) == 9, result.ignored.details()
    assert kinds  # each kind named once
    with pytest.raises(InputError):
        read_trajectories(path, fmt="codex", strict=True, accept_loss=["user_messages"])
    held = census_of(path)
    assert (held.tool_calls, held.user_messages, held.prompt_tokens) == (1, 0, None)
