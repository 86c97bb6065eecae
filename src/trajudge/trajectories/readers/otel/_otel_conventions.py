"""What a span says, in each convention real instrumentations emit.

Messages of a model call (:func:`llm_messages`), in the order tried:

* GenAI semantic conventions, current: ``gen_ai.input.messages`` / ``gen_ai.output.messages``
  (``{"role", "parts": [{"type": "text" | "tool_call" | "tool_call_response", ...}]}``) and
  ``gen_ai.system_instructions``; pydantic-ai's whole-run ``pydantic_ai.all_messages`` uses
  the same shape;
* GenAI, older: one event per message (:mod:`trajudge.trajectories.readers.otel._otel_events`);
* OpenLLMetry (traceloop): indexed ``gen_ai.prompt.N.role`` / ``.content`` /
  ``.tool_calls.M.{id,name,arguments}`` / ``.tool_call_id`` and ``gen_ai.completion.N.*`` (and the
  older ``llm.prompts.N.*`` / ``llm.completions.N.*``);
* OpenInference: ``llm.input_messages.N.message.{role,content,name,tool_call_id}``,
  ``.contents.M.message_content.text`` and ``.tool_calls.M.tool_call.{id,function.name,
  function.arguments}``, and ``llm.output_messages.N.*``;
* Google ADK's legacy schema: ``gcp.vertex.agent.llm_request`` / ``llm_response`` (Gemini
  ``contents`` with ``text``, ``function_call`` and ``function_response`` parts; see
  :mod:`trajudge.trajectories.readers.otel._otel_adk`).

Tool spans (:func:`tool_call`): GenAI ``execute_tool`` (``gen_ai.tool.name``,
``gen_ai.tool.call.arguments`` / ``.result`` / ``.id``; pydantic-ai's older ``tool_arguments`` /
``tool_response``; ADK's ``gcp.vertex.agent.tool_call_args`` / ``tool_response``, less its ``{}``
placeholders), OpenInference ``TOOL`` spans (``tool.name``, ``input.value``, ``output.value``,
``tool_call.id``) and OpenLLMetry ``traceloop.span.kind == "tool"`` (``traceloop.entity.name`` /
``.input`` / ``.output``). A failed tool keeps the message of its ``exception`` event (else the
status message, else ``error.type``) as the error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from trajudge.trajectories._options import as_dict
from trajudge.trajectories.readers.otel._otel_adk import (
    ADK_SCOPE,
    adk_messages,
    unwrap_adk,
    without_placeholders,
)
from trajudge.trajectories.readers.otel._otel_events import events_messages, json_events
from trajudge.trajectories.readers.otel._otel_messages import (
    Msg,
    args_of,
    as_text,
    block_text,
    content_text,
    parse_json,
    role_of,
)
from trajudge.trajectories.readers.otel._otel_spans import Span


@dataclass
class ToolCall:
    """What a tool span recorded."""

    name: str
    args: dict[str, Any]
    output: str | None
    error: str | None
    call_id: str | None
    # the error is only the span's error type (ADK's "TOOL_ERROR" when no content was captured
    # on the span): a recorded tool message that says more is kept over it
    bare_error: bool = False


SMOLAGENTS_SCOPE = "openinference.instrumentation.smolagents"
STRANDS_SCOPE = "strands.telemetry.tracer"
_SMOLAGENTS_SIGNATURE = {"args", "kwargs", "sanitize_inputs_outputs"}


def unwrap_smolagents(value: Any) -> Any:
    """smolagents records a tool's input as its Python call, ``{"args": [], "kwargs": {...},
    "sanitize_inputs_outputs": true}``: the arguments are the keyword ones (and the positional
    ones, under ``args``, when there are any)."""
    parsed = parse_json(value)
    if (
        isinstance(parsed, dict)
        and isinstance(parsed.get("kwargs"), dict)
        and set(parsed) <= _SMOLAGENTS_SIGNATURE
    ):
        positional = parsed.get("args")
        return {**({"args": positional} if positional else {}), **parsed["kwargs"]}
    return value


# --- GenAI current: role + parts -------------------------------------------------------------


def _parts_message(m: Any, adk: bool = False, blocks: bool = False) -> list[Msg]:
    if not isinstance(m, dict):
        return []
    role = role_of(m.get("role"))
    parts = m.get("parts")
    if role is None or not isinstance(parts, list):
        return []
    texts: list[str] = []
    calls: list[tuple[str | None, str, dict[str, Any]]] = []
    results: list[Msg] = []
    for p in parts:
        if not isinstance(p, dict):
            continue
        t = p.get("type")
        if t == "text" and isinstance(p.get("content"), str):
            texts.append(p["content"])
        elif t == "tool_call" and isinstance(p.get("name"), str):
            calls.append((p.get("id"), p["name"], args_of(p.get("arguments"))))
        elif t == "tool_call_response":
            value = p.get("response", p.get("result"))
            error = None
            if adk:
                value, error = unwrap_adk(value)
            if blocks:  # Strands: the tool result's content blocks
                value = block_text(value)
            text = as_text(value) if error is None else error
            results.append(
                Msg("tool", text, call_id=p.get("id"), name=p.get("name"), failed=error is not None)
            )
    if results:
        return results
    return [Msg(role, "\n".join(texts) if texts else None, calls, name=m.get("name"))]


def _parts_messages(value: Any, adk: bool = False, blocks: bool = False) -> list[Msg] | None:
    value = parse_json(value)
    if not isinstance(value, list):
        return None
    out: list[Msg] = []
    for m in value:
        out += _parts_message(m, adk, blocks)
    return out


_DETAILS_EVENT = "gen_ai.client.inference.operation.details"
_DETAILS_KEYS = ("gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions")


def _details(span: Span) -> dict[str, Any]:
    """The messages of the latest GenAI conventions' event form: each
    ``gen_ai.client.inference.operation.details`` event of the span carries some of the input
    messages, output messages and system instructions (Strands writes one per key)."""
    merged: dict[str, list[Any]] = {}
    for name, body in span.events:
        if name != _DETAILS_EVENT:
            continue
        for key in _DETAILS_KEYS:
            value = parse_json(body.get(key))
            if isinstance(value, list):
                merged.setdefault(key, []).extend(value)
    return merged


# --- indexed attributes: OpenLLMetry and OpenInference --------------------------------------


def _indexed(attrs: dict[str, Any], prefix: str) -> dict[int, dict[str, Any]]:
    pattern = re.compile(re.escape(prefix) + r"\.(\d+)\.(.+)$")
    out: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        m = pattern.match(key)
        if m:
            out.setdefault(int(m.group(1)), {})[m.group(2)] = value
    return out


def _openllmetry(attrs: dict[str, Any], prefix: str) -> list[Msg]:
    out = []
    for _, fields in sorted(_indexed(attrs, prefix).items()):
        role = role_of(fields.get("role")) or ("assistant" if "completion" in prefix else None)
        if role is None:
            continue
        calls = []
        for _, c in sorted(_indexed(fields, "tool_calls").items()):
            if isinstance(c.get("name"), str):
                calls.append((c.get("id"), c["name"], args_of(c.get("arguments"))))
        if isinstance(fields.get("function_call.name"), str):
            calls.append(
                (None, fields["function_call.name"], args_of(fields.get("function_call.arguments")))
            )
        text = content_text(parse_json(fields.get("content")))
        if role == "tool":
            out.append(
                Msg("tool", text, call_id=fields.get("tool_call_id"), name=fields.get("name"))
            )
        else:
            out.append(Msg(role, text, calls))
    return out


def _openinference(attrs: dict[str, Any], prefix: str) -> list[Msg]:
    out = []
    for _, fields in sorted(_indexed(attrs, prefix).items()):
        role = role_of(fields.get("message.role"))
        if role is None:
            continue
        text = fields.get("message.content")
        if text is None:
            parts = [
                v
                for k, v in sorted(
                    (k, v)
                    for k, v in fields.items()
                    if k.startswith("message.contents.") and k.endswith(".message_content.text")
                )
                if isinstance(v, str)
            ]
            text = "\n".join(parts) if parts else None
        calls = []
        for _, c in sorted(_indexed(fields, "message.tool_calls").items()):
            name = c.get("tool_call.function.name")
            if isinstance(name, str):
                calls.append(
                    (c.get("tool_call.id"), name, args_of(c.get("tool_call.function.arguments")))
                )
        if role == "tool":
            out.append(
                Msg(
                    "tool",
                    as_text(text),
                    call_id=fields.get("message.tool_call_id"),
                    name=fields.get("message.name"),
                )
            )
        else:
            out.append(Msg(role, as_text(text), calls, name=fields.get("message.name")))
    return out


# --- public ---------------------------------------------------------------------------------


def llm_messages(span: Span) -> tuple[list[Msg], list[Msg]] | None:
    """The input and output messages of a model call (or of a whole agent run), if recorded."""
    a = span.attrs
    for key in ("pydantic_ai.all_messages",):
        if key in a:
            msgs = _parts_messages(a[key])
            if msgs is not None:
                return msgs, []
    details = _details(span)
    if details:
        a = {**a, **details}
    if "gen_ai.input.messages" in a or "gen_ai.output.messages" in a:
        adk = span.scope.startswith(ADK_SCOPE)
        blocks = span.scope.startswith(STRANDS_SCOPE)
        inputs = _parts_messages(a.get("gen_ai.input.messages"), adk, blocks) or []
        system = _parts_messages(
            [{"role": "system", "parts": parse_json(a.get("gen_ai.system_instructions")) or []}]
        )
        if system and system[0].text and not any(m.role == "system" for m in inputs):
            inputs = system + inputs
        return inputs, _parts_messages(a.get("gen_ai.output.messages"), adk, blocks) or []
    for key in ("all_messages_events", "events"):
        if key in a:
            found = events_messages(json_events(a[key]))
            if found is not None:
                return found
    found = events_messages(span.events)
    if found is not None:
        return found
    for prompt, completion in (
        ("gen_ai.prompt", "gen_ai.completion"),
        ("llm.prompts", "llm.completions"),
    ):
        if any(k.startswith(prompt + ".") for k in a):
            return _openllmetry(a, prompt), _openllmetry(a, completion)
    if any(k.startswith("llm.input_messages.") or k.startswith("llm.output_messages.") for k in a):
        return _openinference(a, "llm.input_messages"), _openinference(a, "llm.output_messages")
    return adk_messages(a)


def is_whole_run(span: Span) -> bool:
    """A span whose messages are a whole run (pydantic-ai's agent run span)."""
    return "pydantic_ai.all_messages" in span.attrs or "all_messages_events" in span.attrs


def declares_tool(span: Span) -> bool:
    """The span says it is a tool execution, in any convention."""
    a = span.attrs
    return (
        a.get("gen_ai.operation.name") == "execute_tool"
        or str(a.get("openinference.span.kind", "")).upper() == "TOOL"
        or a.get("traceloop.span.kind") == "tool"
        or span.name.startswith("execute_tool")
        or span.name == "running tool"
    )


def _error(span: Span) -> str | None:
    for name, body in span.events:
        if name == "exception" and body.get("exception.message"):
            return str(body["exception.message"])
    if span.error:
        return span.error
    etype = span.attrs.get("error.type")
    return None if etype is None else str(etype)


def _tool_events(span: Span) -> tuple[Any, Any]:
    """A tool span's input and output as its events (Strands Agents' ``execute_tool``): the
    ``gen_ai.tool.message`` event's content is the arguments, the ``gen_ai.choice`` event's
    message the result (text blocks)."""
    raw_in = raw_out = None
    for name, body in span.events:
        if name == "gen_ai.tool.message" and raw_in is None:
            raw_in = body.get("content")
        elif name == "gen_ai.choice" and raw_out is None:
            raw_out = block_text(body.get("message"))
    return raw_in, raw_out


def tool_call(span: Span) -> ToolCall | None:
    """The tool call a span records, or None (not a tool span, or one without tool attributes)."""
    if not declares_tool(span):
        return None
    a = without_placeholders(span.attrs)
    name = a.get("gen_ai.tool.name") or a.get("tool.name") or a.get("tool_name")
    if a.get("traceloop.span.kind") == "tool":
        name = name or a.get("traceloop.entity.name")
        raw_in = parse_json(a.get("traceloop.entity.input"))
        if isinstance(raw_in, dict) and isinstance(raw_in.get("inputs"), dict | str):
            raw_in = raw_in["inputs"]
        raw_out = parse_json(a.get("traceloop.entity.output"))
        if isinstance(raw_out, dict) and "output" in raw_out:
            raw_out = raw_out["output"]
        if isinstance(raw_out, dict) and isinstance(raw_out.get("kwargs"), dict):
            raw_out = raw_out["kwargs"].get("content", raw_out)
    else:
        raw_in = next(
            (
                a[k]
                for k in (
                    "gen_ai.tool.call.arguments",
                    "tool_arguments",
                    "gcp.vertex.agent.tool_call_args",
                    "input.value",
                )
                if k in a
            ),
            None,
        )
        raw_out = next(
            (
                a[k]
                for k in (
                    "gen_ai.tool.call.result",
                    "tool_response",
                    "gcp.vertex.agent.tool_response",
                    "output.value",
                )
                if k in a
            ),
            None,
        )
    if span.scope.startswith(SMOLAGENTS_SCOPE):
        raw_in = unwrap_smolagents(raw_in)
    if raw_in is None and raw_out is None:
        raw_in, raw_out = _tool_events(span)  # the result already as text
    elif span.scope.startswith(STRANDS_SCOPE):
        raw_out = block_text(raw_out)  # a Strands tool result attribute is content blocks
    if not name:
        prefix = "execute_tool "
        name = span.name[len(prefix) :].strip() if span.name.startswith(prefix) else None
    if not isinstance(name, str) or not name:
        return None
    if name == "(merged tools)":
        return None  # ADK's summary span over parallel calls that have their own spans
    call_id = a.get("gen_ai.tool.call.id") or a.get("tool_call.id")
    error = _error(span)
    if span.scope.startswith(ADK_SCOPE) or "gcp.vertex.agent.tool_response" in a:
        raw_out, adk_error = unwrap_adk(raw_out)
        error = adk_error or error  # the tool's message beats ADK's "TOOL_ERROR"
    # LangChain instrumentors record the ToolMessage itself: {"type": "tool", "data": {...}}
    message = parse_json(raw_out)
    data = as_dict(message.get("data")) if isinstance(message, dict) else {}
    if isinstance(message, dict) and message.get("type") == "tool" and data:
        raw_out = data.get("content")
        call_id = call_id or data.get("tool_call_id")
        if data.get("status") == "error" and error is None:
            error = as_text(raw_out) or "error"
    output = as_text(raw_out)
    if error is not None and output and (not error.strip() or error.rstrip().endswith(":")):
        error = output  # the exception had no message ("ToolRetryError: "): the tool's own words
    etype = a.get("error.type")
    return ToolCall(
        name=name,
        args=args_of(raw_in),
        output=output,
        error=error,
        call_id=None if call_id is None else str(call_id),
        bare_error=error is not None and etype is not None and error == str(etype),
    )


_INPUT_KEYS = (
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.prompt_tokens",
    "llm.token_count.prompt",
    "llm.usage.prompt_tokens",
)
_OUTPUT_KEYS = (
    "gen_ai.usage.output_tokens",
    "gen_ai.usage.completion_tokens",
    "llm.token_count.completion",
    "llm.usage.completion_tokens",
)
TOKEN_KEYS = (_INPUT_KEYS, _OUTPUT_KEYS)

CONVERSATION_KEYS = (
    "gen_ai.conversation.id",
    "session.id",
    "gcp.vertex.agent.session_id",
    "traceloop.association.properties.session_id",
    "langfuse.session.id",
)
