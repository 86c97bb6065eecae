"""What a span says, in each convention real instrumentations emit.

Messages of a model call (:func:`llm_messages`), in the order tried:

* GenAI semantic conventions, current: ``gen_ai.input.messages`` / ``gen_ai.output.messages``
  (``{"role", "parts": [{"type": "text" | "tool_call" | "tool_call_response", ...}]}``) and
  ``gen_ai.system_instructions``; pydantic-ai's whole-run ``pydantic_ai.all_messages`` uses
  the same shape;
* GenAI, older: span events ``gen_ai.system.message`` / ``gen_ai.user.message`` /
  ``gen_ai.assistant.message`` / ``gen_ai.tool.message`` / ``gen_ai.choice``, the same events as
  a JSON ``events`` attribute (pydantic-ai / logfire instrumentation version 1, and its
  ``all_messages_events``), and ``gen_ai.content.prompt`` / ``gen_ai.content.completion``
  events holding ``gen_ai.prompt`` / ``gen_ai.completion`` JSON;
* OpenLLMetry (traceloop): indexed ``gen_ai.prompt.N.role`` / ``.content`` /
  ``.tool_calls.M.{id,name,arguments}`` / ``.tool_call_id`` and ``gen_ai.completion.N.*`` (and the
  older ``llm.prompts.N.*`` / ``llm.completions.N.*``);
* OpenInference: ``llm.input_messages.N.message.{role,content,name,tool_call_id}``,
  ``.contents.M.message_content.text`` and ``.tool_calls.M.tool_call.{id,function.name,
  function.arguments}``, and ``llm.output_messages.N.*``;
* Google ADK: ``gcp.vertex.agent.llm_request`` / ``gcp.vertex.agent.llm_response`` (Gemini
  ``contents`` with ``text``, ``function_call`` and ``function_response`` parts).

Tool spans (:func:`tool_call`): GenAI ``execute_tool`` (``gen_ai.tool.name``,
``gen_ai.tool.call.arguments`` / ``.result`` / ``.id``; pydantic-ai's older ``tool_arguments`` /
``tool_response``; ADK's ``gcp.vertex.agent.tool_call_args`` / ``tool_response``), OpenInference
``TOOL`` spans (``tool.name``, ``input.value``, ``output.value``, ``tool_call.id``) and
OpenLLMetry ``traceloop.span.kind == "tool"`` (``traceloop.entity.name`` / ``.input`` /
``.output``). A failed tool keeps the message of its ``exception`` event (else the status
message, else ``error.type``) as the error.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from typing import Any

from trajudge.trajectories._json import json_deeper_than
from trajudge.trajectories._limits import NESTING
from trajudge.trajectories._options import as_dict
from trajudge.trajectories.readers._otel_spans import Span


@dataclass
class Msg:
    """A message in one normal form: OpenAI-like roles, text, calls, the call it answers."""

    role: str
    text: str | None = None
    calls: list[tuple[str | None, str, dict[str, Any]]] = field(default_factory=list)
    call_id: str | None = None
    name: str | None = None
    failed: bool = False

    def key(self) -> tuple[Any, ...]:
        return (self.role, self.text, [(c[1], c[0]) for c in self.calls], self.call_id)


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


_ROLES = {
    "user": "user",
    "human": "user",
    "system": "system",
    "developer": "system",
    "assistant": "assistant",
    "model": "assistant",
    "ai": "assistant",
    "tool": "tool",
    "function": "tool",
    "ipython": "tool",
}


def as_text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def parse_json(value: Any) -> Any:
    """JSON text parsed; text that is not JSON, or nests too deep to store, stays text."""
    if not isinstance(value, str):
        return value
    try:
        parsed = json.loads(value)
    except (json.JSONDecodeError, RecursionError):
        return value
    return value if json_deeper_than(value, NESTING.value) else parsed


def args_of(value: Any) -> dict[str, Any]:
    """Tool arguments as an object: JSON text, a Python dict literal (LangChain), or kept whole."""
    if value is None or value == "":
        return {}
    parsed = parse_json(value)
    if isinstance(parsed, str):
        try:
            parsed = ast.literal_eval(parsed)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return {"input": value}
    if isinstance(parsed, dict):
        return parsed
    return {"input": parsed}


def _role(value: Any) -> str | None:
    return _ROLES.get(str(value).lower()) if value is not None else None


def _content_text(content: Any) -> str | None:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict):
                text = part.get("text", part.get("content"))
                if isinstance(text, str) and part.get("type", "text") in (
                    "text",
                    "input_text",
                    "output_text",
                ):
                    texts.append(text)
        return "\n".join(texts) if texts else None
    return as_text(content)


def _openai_calls(calls: Any) -> list[tuple[str | None, str, dict[str, Any]]]:
    out = []
    for c in calls or []:
        if not isinstance(c, dict):
            continue
        fn = as_dict(c.get("function")) or c
        name = fn.get("name")
        if isinstance(name, str) and name:
            out.append((c.get("id"), name, args_of(fn.get("arguments", fn.get("args")))))
    return out


ADK_SCOPE = "gcp.vertex.agent"
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


def unwrap_adk(value: Any) -> tuple[Any, str | None]:
    """ADK wraps a tool's return as ``{"result": value}`` and its failure as ``{"error": msg}``."""
    parsed = parse_json(value)
    if isinstance(parsed, dict) and len(parsed) == 1:
        if "result" in parsed:
            return parsed["result"], None
        if "error" in parsed:
            return None, as_text(parsed["error"])
    return value, None


# --- GenAI current: role + parts -------------------------------------------------------------


def _parts_message(m: Any, adk: bool = False, blocks: bool = False) -> list[Msg]:
    if not isinstance(m, dict):
        return []
    role = _role(m.get("role"))
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
                value = _block_text(value)
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


# --- GenAI older: events --------------------------------------------------------------------


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
                    _block_text(result.get("content")),
                    call_id=result.get("toolUseId"),
                    failed=result.get("status") == "error",
                )
            )
    return ("\n".join(texts) if texts else None), calls, results


def _block_text(content: Any) -> str | None:
    """The text of a tool result's blocks (``text``, or ``json`` as JSON text); a value that is
    not a list of blocks is kept as it is (as text)."""
    value = parse_json(content)
    parts = [
        b["text"] if isinstance(b.get("text"), str) else as_text(b["json"])
        for b in (value if isinstance(value, list) else [])
        if isinstance(b, dict) and ("text" in b or "json" in b)
    ]
    if not parts:
        return as_text(content)
    return "\n".join(p for p in parts if p is not None)


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
    blocks = _converse_blocks(content)
    if blocks is not None:
        text, calls, results = blocks
        if role == "tool" or (results and not calls):
            return results
        return [Msg(_role(body.get("role")) or role, text, calls)]
    text = _content_text(parse_json(content))
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
            _role(body.get("role")) or role, text, _openai_calls(parse_json(body.get("tool_calls")))
        )
    ]


def _events_messages(
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
                if isinstance(m, dict) and _role(m.get("role")):
                    target.append(_openai_message(m))
            continue
        (outputs if name == "gen_ai.choice" else inputs).extend(_event_messages(name, body))
    return (inputs, outputs) if inputs or outputs else None


def _openai_message(m: dict[str, Any]) -> Msg:
    role = _role(m.get("role")) or "user"
    text = _content_text(m.get("content"))
    if role == "tool":
        return Msg("tool", text, call_id=m.get("tool_call_id") or m.get("id"), name=m.get("name"))
    return Msg(role, text, _openai_calls(m.get("tool_calls")))


def _json_events(value: Any) -> list[tuple[str, dict[str, Any]]]:
    value = parse_json(value)
    if not isinstance(value, list):
        return []
    return [(str(e.get("event.name") or ""), e) for e in value if isinstance(e, dict)]


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
        role = _role(fields.get("role")) or ("assistant" if "completion" in prefix else None)
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
        text = _content_text(parse_json(fields.get("content")))
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
        role = _role(fields.get("message.role"))
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


# --- Google ADK -----------------------------------------------------------------------------


def _gemini_content(content: Any) -> list[Msg]:
    if not isinstance(content, dict):
        return []
    role = _role(content.get("role")) or "user"
    texts: list[str] = []
    calls: list[tuple[str | None, str, dict[str, Any]]] = []
    results: list[Msg] = []
    for p in content.get("parts") or []:
        if not isinstance(p, dict):
            continue
        if isinstance(p.get("text"), str) and not p.get("thought"):
            texts.append(p["text"])
        fc = p.get("function_call") or p.get("functionCall")
        if isinstance(fc, dict) and isinstance(fc.get("name"), str):
            calls.append((fc.get("id"), fc["name"], args_of(fc.get("args"))))
        fr = p.get("function_response") or p.get("functionResponse")
        if isinstance(fr, dict):
            response = fr.get("response")
            failed = isinstance(response, dict) and set(response) == {"error"}
            results.append(
                Msg(
                    "tool",
                    as_text(response),
                    call_id=fr.get("id"),
                    name=fr.get("name"),
                    failed=failed,
                )
            )
    if results:
        return results
    return [Msg(role, "\n".join(texts) if texts else None, calls)]


def _adk(attrs: dict[str, Any]) -> tuple[list[Msg], list[Msg]] | None:
    request = parse_json(attrs.get("gcp.vertex.agent.llm_request"))
    response = parse_json(attrs.get("gcp.vertex.agent.llm_response"))
    if not isinstance(request, dict) and not isinstance(response, dict):
        return None
    inputs: list[Msg] = []
    if isinstance(request, dict):
        config = as_dict(request.get("config"))
        system = config.get("system_instruction")
        if isinstance(system, str) and system:
            inputs.append(Msg("system", system))
        for c in request.get("contents") or []:
            inputs += _gemini_content(c)
    outputs = _gemini_content(response.get("content")) if isinstance(response, dict) else []
    return inputs, outputs


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
            found = _events_messages(_json_events(a[key]))
            if found is not None:
                return found
    found = _events_messages(span.events)
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
    return _adk(a)


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
            raw_out = _block_text(body.get("message"))
    return raw_in, raw_out


def tool_call(span: Span) -> ToolCall | None:
    """The tool call a span records, or None (not a tool span, or one without tool attributes)."""
    if not declares_tool(span):
        return None
    a = span.attrs
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
        raw_out = _block_text(raw_out)  # a Strands tool result attribute is content blocks
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
