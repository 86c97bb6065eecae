"""OpenAI chat messages: pairing of tool results (with reused ids), errors, the file format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from trajudge.core import InputError
from trajudge.trajectories import from_openai_messages, read_openai


def call(call_id: str, name: str, args: Any) -> dict[str, Any]:
    arguments = args if isinstance(args, str) else json.dumps(args)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def assistant(*calls: dict[str, Any], content: Any = None) -> dict[str, Any]:
    m: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        m["tool_calls"] = list(calls)
    return m


def tool(call_id: str, content: Any) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


CONVERSATION: list[dict[str, Any]] = [
    {"role": "system", "content": "policy"},
    {"role": "user", "content": "Book me to SEA."},
    assistant(call("call_1", "get_user", {"user_id": "mia"})),
    tool("call_1", '{"name": "Mia"}'),
    assistant(content="Which date?"),
    {"role": "user", "content": "May 20."},
    # the same id again (as τ-bench does), and two calls in one message
    assistant(call("call_1", "search", {"date": "05-20"}), call("call_2", "calc", {"e": "1+1"})),
    tool("call_2", "2"),
    tool("call_1", "[HAT136]"),
    assistant(call("call_3", "book", {"f": "HAT136"})),
    tool("call_3", "Error: payment amount does not add up"),
    assistant(call("call_4", "cancel", {})),
    assistant(
        content=[{"type": "text", "text": "Could not book."}, {"type": "text", "text": "Bye"}]
    ),
]


def test_reused_ids_pair_with_the_earliest_unanswered_call() -> None:
    t = from_openai_messages(CONVERSATION, id="x-0", task_id="x")
    assert [(s.tool, s.call_id) for s in t.steps] == [
        ("get_user", "call_1"),
        ("search", "call_1"),
        ("calc", "call_2"),
        ("book", "call_3"),
        ("cancel", "call_4"),
    ]
    # message 8 answers the second call_1 (message 6), not the first one (already answered)
    assert t.steps[0].output == '{"name": "Mia"}'
    assert t.steps[1].output == "[HAT136]"
    assert t.steps[2].output == "2"
    assert (t.steps[3].ok, t.steps[3].error, t.steps[3].output) == (
        False,
        "Error: payment amount does not add up",
        None,
    )
    assert (t.steps[4].ok, t.steps[4].error) == (False, "no tool result")
    assert [s.args for s in t.steps[:3]] == [{"user_id": "mia"}, {"date": "05-20"}, {"e": "1+1"}]


def test_input_final_answer_and_turns() -> None:
    t = from_openai_messages(
        CONVERSATION, id="x-0", task_id="x", trial=2, outcome=True, intent="book", metadata={"k": 1}
    )
    assert t.input == "Book me to SEA."
    assert t.final_answer == "Could not book.\nBye"
    assert t.usage.turns == 2
    assert (t.trial, t.outcome, t.intent, t.metadata) == (2, True, "book", {"k": 1})
    assert t.usage.prompt_tokens is None


def test_final_answer_is_none_when_the_last_assistant_message_only_calls_a_tool() -> None:
    msgs = [*CONVERSATION[:3], tool("call_1", "ok")]
    assert from_openai_messages(msgs, id="y", task_id="y").final_answer is None


def test_token_usage_is_summed_from_messages() -> None:
    msgs = [
        {"role": "user", "content": "hi"},
        {**assistant(content="a"), "usage": {"prompt_tokens": 10, "completion_tokens": 3}},
        {"role": "user", "content": "more"},
        {**assistant(content="b"), "usage": {"prompt_tokens": 25, "completion_tokens": 4}},
    ]
    t = from_openai_messages(msgs, id="u", task_id="u")
    assert (t.usage.prompt_tokens, t.usage.completion_tokens, t.usage.turns) == (35, 7, 2)


def test_legacy_function_call_is_read() -> None:
    msgs = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "function_call": {"name": "f", "arguments": '{"a": 1}'}},
        {"role": "function", "name": "f", "content": "done"},
    ]
    t = from_openai_messages(msgs, id="l", task_id="l")
    assert [(s.tool, s.args, s.ok, s.output) for s in t.steps] == [("f", {"a": 1}, True, "done")]


@pytest.mark.parametrize(
    ("msgs", "expected"),
    [
        (
            [assistant(call("c", "f", '{"a": 1'))],
            "<messages>: messages[0].tool_calls[0].function.arguments: arguments are not valid "
            "JSON: Expecting ',' delimiter (column 8)",
        ),
        (
            [assistant(call("c", "f", "[1, 2]"))],
            "<messages>: messages[0].tool_calls[0].function.arguments: arguments must be a JSON "
            "object, got a list",
        ),
        (
            [{"role": "user", "content": 5}],
            "<messages>: messages[0].content: Value error, expected a string, a list of parts or "
            "null, got a number",
        ),
        ([{"content": "x"}], "<messages>: messages[0].role: Field required"),
        (
            [tool("nope", "x")],
            "<messages>: messages[0].tool_call_id: no earlier unanswered tool call with id 'nope'",
        ),
        (
            [assistant(call("c", "f", {})), tool("c", "1"), tool("c", "2")],
            "<messages>: messages[2].tool_call_id: no earlier unanswered tool call with id 'c'",
        ),
        ({"role": "user"}, "<messages>: messages: expected a list of messages, got an object"),
    ],
)
def test_bad_messages_raise_one_line_errors(msgs: Any, expected: str) -> None:
    with pytest.raises(InputError) as info:
        from_openai_messages(msgs, id="e", task_id="e")
    assert str(info.value) == expected


def test_file_format_jsonl_and_json_list(tmp_path: Path) -> None:
    records = [
        {"task_id": 7, "trial": 1, "messages": CONVERSATION[:4], "outcome": True},
        {
            "id": "custom",
            "task_id": "7",
            "messages": CONVERSATION,
            "intent": "book",
            "metadata": {"m": "gpt-4o"},
            "usage": {"cost_usd": 0.5, "turns": 9},
        },
    ]
    jsonl = tmp_path / "runs.jsonl"
    jsonl.write_text("\n".join(json.dumps(r) for r in records), encoding="utf-8")
    listed = tmp_path / "runs.json"
    listed.write_text(json.dumps(records, indent=2), encoding="utf-8")
    for path in (jsonl, listed):
        a, b = read_openai(path)
        assert (a.id, a.task_id, a.trial, a.outcome, len(a.steps)) == ("7-1", "7", 1, True, 1)
        assert (b.id, b.trial, b.intent, b.metadata) == ("custom", 0, "book", {"m": "gpt-4o"})
        # explicit usage overrides the derived turns (2) and adds the cost
        assert (b.usage.cost_usd, b.usage.turns) == (0.5, 9)


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        (
            {"task_id": "a", "messages": [], "tools": "f"},
            "line 1: tools: Input should be a valid list",
        ),
        ({"task_id": "a"}, "line 1: messages: Field required"),
        ({"task_id": "a", "messages": [], "trail": 1}, "line 1: trail: Extra inputs are not"),
        (
            {"task_id": "a", "messages": [assistant(call("c", "f", "{oops"))]},
            "line 1: messages[0].tool_calls[0].function.arguments: arguments are not valid JSON",
        ),
    ],
)
def test_file_format_errors(tmp_path: Path, record: dict[str, Any], expected: str) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_openai(path)
    assert str(info.value).startswith(f"{path}: {expected}")


def test_file_format_duplicate_default_ids(tmp_path: Path) -> None:
    path = tmp_path / "runs.json"
    path.write_text(json.dumps([{"task_id": "a", "messages": []}] * 2), encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_openai(path)
    assert str(info.value) == f"{path}: record 1: id: duplicate id 'a-0' (first at record 0)"


def test_json_lines_of_message_lists_from_a_real_chat(tmp_path: Path) -> None:
    # two runs of the real openai-client conversation, one message list per line
    chat = json.loads(
        (Path(__file__).parents[1] / "fixtures" / "traces" / "openai_chat.json").read_text()
    )
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps(chat) + "\n" + json.dumps(chat[:4]) + "\n", encoding="utf-8")
    from trajudge.trajectories import read_trajectories

    a, b = read_trajectories(path).trajectories
    assert (a.id, b.id) == ("runs-0", "runs-1")
    assert a.user_turns() == ["Please cancel reservation ABC123 for user mia_li_3668.", "yes"]
    assert [s.tool for s in b.steps] == ["get_reservation_details"]
