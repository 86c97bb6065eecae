"""The older GenAI conventions' event form: one event per message.

Span events (or OTLP log records joined to their span) ``gen_ai.system.message`` /
``gen_ai.user.message`` / ``gen_ai.assistant.message`` / ``gen_ai.tool.message`` /
``gen_ai.choice``, the same events as a JSON ``events`` attribute (pydantic-ai / logfire
instrumentation version 1, and its ``all_messages_events``), and ``gen_ai.content.prompt`` /
``gen_ai.content.completion`` events holding ``gen_ai.prompt`` / ``gen_ai.completion`` JSON.
An event's content is text, OpenAI content parts, Bedrock Converse blocks (Strands Agents) or a
Gemini ``Content`` (Google ADK); content elided by the instrumentation is no message.
"""

from __future__ import annotations

from typing import Any

from trajudge.trajectories._options import as_dict
from trajudge.trajectories.readers.otel._otel_adk import ELIDED, gemini_content, is_gemini_content
from trajudge.trajectories.readers.otel._otel_messages import (
    Msg,
    args_of,
    block_text,
    content_text,
    openai_calls,
    parse_json,
    role_of,
)

_EVENT_ROLES = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
    "gen_ai.choice": "assistant",
}


def _converse_blocks(
    content: Any,
) -> tuple[str | None, list[tuple[str | None, str, dict[str, Any]]], list[Msg]] | None:
    """Bedrock Converse content blocks (what Strands Agents records as an event's content):
    the text, the ``toolUse`` calls and a tool message per ``toolResult``; None when the
    content holds no tool block."""
    value = parse_json(content)
    if not isinstance(value, list) or not any(
        isinstance(b, dict) and ("toolUse" in b or "toolResult" in b) for b in value
    ):
        return None
    texts: list[str] = []
    calls: list[tuple[str | None, str, dict[str, Any]]] = []
    results: list[Msg] = []
    for b in value:
        if not isinstance(b, dict):
            continue
        if isinstance(b.get("text"), str):
            texts.append(b["text"])
        use = as_dict(b.get("toolUse"))
        if isinstance(use.get("name"), str) and use["name"]:
            calls.append((use.get("toolUseId"), use["name"], args_of(use.get("input"))))
        result = as_dict(b.get("toolResult"))
        if result:
            results.append(
                Msg(
                    "tool",
                    block_text(result.get("content")),
                    call_id=result.get("toolUseId"),
                    failed=result.get("status") == "error",
                )
            )
    return ("\n".join(texts) if texts else None), calls, results


def _event_messages(name: str, body: dict[str, Any]) -> list[Msg]:
    role = _EVENT_ROLES.get(name)
    if role is None:
        return []
    content = body.get("content")
    if name == "gen_ai.choice":
        msg = parse_json(body.get("message"))
        if isinstance(msg, dict):
            body, content = msg, msg.get("content")
        elif msg is not None:  # the message is its content (Strands: text or blocks)
            content = msg
    content = parse_json(content)
    if content == ELIDED:
        return []
    if is_gemini_content(content):  # ADK: the Content's own role (a model turn is in the input)
        return gemini_content(content, role)
    blocks = _converse_blocks(content)
    if blocks is not None:
        text, calls, results = blocks
        if role == "tool" or (results and not calls):
            return results
        return [Msg(role_of(body.get("role")) or role, text, calls)]
    text = content_text(content)
    if role == "tool":
        return [
            Msg(
                "tool",
                text,
                call_id=body.get("id") or body.get("tool_call_id"),
                name=body.get("name"),
            )
        ]
    return [
        Msg(
            role_of(body.get("role")) or role,
            text,
            openai_calls(parse_json(body.get("tool_calls"))),
        )
    ]


def events_messages(
    events: list[tuple[str, dict[str, Any]]],
) -> tuple[list[Msg], list[Msg]] | None:
    inputs: list[Msg] = []
    outputs: list[Msg] = []
    for name, body in events:
        if name in ("gen_ai.content.prompt", "gen_ai.content.completion"):
            value = parse_json(
                body.get("gen_ai.prompt" if name.endswith("prompt") else "gen_ai.completion")
            )
            target = inputs if name.endswith("prompt") else outputs
            for m in value if isinstance(value, list) else []:
                if isinstance(m, dict) and role_of(m.get("role")):
                    target.append(_openai_message(m))
            continue
        (outputs if name == "gen_ai.choice" else inputs).extend(_event_messages(name, body))
    return (inputs, outputs) if inputs or outputs else None


def _openai_message(m: dict[str, Any]) -> Msg:
    role = role_of(m.get("role")) or "user"
    text = content_text(m.get("content"))
    if role == "tool":
        return Msg("tool", text, call_id=m.get("tool_call_id") or m.get("id"), name=m.get("name"))
    return Msg(role, text, openai_calls(m.get("tool_calls")))


def json_events(value: Any) -> list[tuple[str, dict[str, Any]]]:
    value = parse_json(value)
    if not isinstance(value, list):
        return []
    return [(str(e.get("event.name") or ""), e) for e in value if isinstance(e, dict)]
