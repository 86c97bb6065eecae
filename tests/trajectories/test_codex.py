"""OpenAI Codex CLI rollouts (``--format codex``): the file ``codex exec`` wrote imports whole.

``tests/fixtures/codex/rollout.jsonl`` was written by the real Codex CLI against a scripted
loopback model (``tests/fixtures/codex/generate.py``); every expected value comes from the
manifest that generator wrote, never from the reader's own output. Variants of that file (its
``token_count`` lines only, the older ``user_message`` events, no provenance) stand for what
older Codex releases wrote; small hand-made lines test hostile input. The rollouts of the
older shape (a meta line, then bare Responses items) are read in ``test_codex_legacy.py``.
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
from trajudge.trajectories.readers.agents._codex import is_codex_rollout
from trajudge.trajectories.readers.agents._codex_census import census
from trajudge.trajectories.readers.agents._codex_items import exit_code
from trajudge.trajectories.reading._detect import first_record_format

FIXTURES = Path(__file__).parents[1] / "fixtures"
ROLLOUT = FIXTURES / "codex" / "rollout.jsonl"
ENTRY: dict[str, Any] = json.loads((FIXTURES / "codex" / "manifest.json").read_text())[
    "rollout.jsonl"
]
EXPECTED: dict[str, Any] = ENTRY["expected"]
LINES: list[dict[str, Any]] = [json.loads(line) for line in ROLLOUT.read_text().splitlines()]


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
