"""Import OpenTelemetry GenAI traces, as written by the OTLP JSON file exporter.

Input: one ``ExportTraceServiceRequest`` JSON object per line (``resourceSpans[].scopeSpans[]
.spans[]``), or a single such JSON document (or a JSON list of them). Attribute values use the
OTLP ``AnyValue`` encoding (``stringValue``, ``intValue`` (often a decimal string),
``doubleValue``, ``boolValue``, ``arrayValue``, ``kvlistValue``).

One trace (``traceId``) becomes one trajectory with ``id`` = the trace id. Attribute names
follow the GenAI semantic conventions:

* spans with ``gen_ai.operation.name == "execute_tool"`` are the steps, in start-time order:
  ``tool`` = ``gen_ai.tool.name`` (else the span name ``execute_tool {tool}``), ``args`` =
  ``gen_ai.tool.call.arguments`` (a JSON object as text), ``output`` =
  ``gen_ai.tool.call.result``, ``call_id`` = ``gen_ai.tool.call.id``, ``ok`` = the span status is
  not ERROR (code 2) and there is no ``error.type``, ``latency_ms`` from the span times;
* ``usage.prompt_tokens`` / ``completion_tokens`` sum ``gen_ai.usage.input_tokens`` /
  ``gen_ai.usage.output_tokens`` (or the older ``prompt_tokens`` / ``completion_tokens``) over the
  spans carrying them (chat, invoke_agent, ...), skipping a span whose descendants carry their
  own counts, so an agent span that repeats its chat spans' totals is not counted twice;
  ``usage.latency_s`` is the trace's extent (first start to last end);
* ``metadata.model`` = the first ``gen_ai.response.model`` (else ``gen_ai.request.model``);
  ``metadata`` also keeps ``trace_id`` and, when present, ``service_name``, ``agent_name`` and
  ``conversation_id``;
* ``task_id``, ``trial``, ``outcome`` and ``intent`` come from the attributes
  ``trajudge.task_id``, ``trajudge.trial``, ``trajudge.outcome`` and ``trajudge.intent`` (root spans
  first); without them ``task_id`` = the trace id and ``trial`` = 0;
* ``input`` = the first user message of ``gen_ai.input.messages`` and ``final_answer`` = the text
  of the last ``gen_ai.output.messages`` entry on the outermost ``invoke_agent`` span, else on
  the first / last chat span. Messages are ``{"role", "parts": [{"type": "text", "content"}]}``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from trajudge.trajectories._errors import InputError
from trajudge.trajectories._io import (
    Record,
    check_file,
    check_unique,
    decode_utf8,
    kind,
    load_json_records,
    validation_error,
)
from trajudge.trajectories._models import Step, Trajectory, Usage, canonical_json

STATUS_ERROR = 2
_INPUT_KEYS = ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens")
_OUTPUT_KEYS = ("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens")


@dataclass
class _Span:
    trace_id: str
    span_id: str
    parent_id: str
    name: str
    start: int
    end: int
    attrs: dict[str, Any]
    error: str | None  # the status message when the status is ERROR
    resource: dict[str, Any]
    record: str
    path: str
    order: int
    depth: int = field(default=0)

    @property
    def op(self) -> Any:
        return self.attrs.get("gen_ai.operation.name")

    def where(self, key: str) -> str:
        return f"{self.path}.attributes.{key}"


def _any_value(value: Any) -> Any:
    """Decode an OTLP JSON ``AnyValue``."""
    if not isinstance(value, dict):
        return value
    if "stringValue" in value:
        return value["stringValue"]
    if "boolValue" in value:
        return value["boolValue"]
    if "intValue" in value:
        raw = value["intValue"]
        return int(raw) if isinstance(raw, str) and raw.lstrip("-").isdigit() else raw
    if "doubleValue" in value:
        return value["doubleValue"]
    if "arrayValue" in value:
        return [_any_value(v) for v in (value["arrayValue"] or {}).get("values", [])]
    if "kvlistValue" in value:
        return _attributes((value["kvlistValue"] or {}).get("values", []))
    if "bytesValue" in value:
        return value["bytesValue"]
    return None


def _attributes(items: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items or []:
        if isinstance(item, dict) and isinstance(item.get("key"), str):
            out[item["key"]] = _any_value(item.get("value"))
    return out


def _nanos(span: dict[str, Any], key: str, file: str, record: str, path: str) -> int:
    raw = span.get(key)
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw
    if isinstance(raw, str) and raw.isdigit():
        return int(raw)
    raise InputError(file, record, f"{path}.{key}", f"expected nanoseconds, got {kind(raw)}")


def _list(obj: Any, key: str, file: str, record: str, path: str) -> list[Any]:
    if not isinstance(obj, dict):
        raise InputError(file, record, path or None, f"expected an object, got {kind(obj)}")
    value = obj.get(key, [])
    if not isinstance(value, list):
        where = f"{path}.{key}" if path else key
        raise InputError(file, record, where, f"expected a list, got {kind(value)}")
    return value


def _spans(file: str, records: list[Record]) -> list[_Span]:
    spans: list[_Span] = []
    for label, doc in records:
        if not isinstance(doc, dict) or "resourceSpans" not in doc:
            raise InputError(file, label, "resourceSpans", "missing: not an OTLP trace export")
        for ri, rs in enumerate(_list(doc, "resourceSpans", file, label, "")):
            rpath = f"resourceSpans[{ri}]"
            resource = _attributes((rs.get("resource") or {}).get("attributes"))
            for si, ss in enumerate(_list(rs, "scopeSpans", file, label, rpath)):
                spath = f"{rpath}.scopeSpans[{si}]"
                for pi, raw in enumerate(_list(ss, "spans", file, label, spath)):
                    path = f"{spath}.spans[{pi}]"
                    if not isinstance(raw, dict):
                        raise InputError(file, label, path, f"expected an object, got {kind(raw)}")
                    for key in ("traceId", "spanId"):
                        if not isinstance(raw.get(key), str) or not raw[key]:
                            raise InputError(file, label, f"{path}.{key}", "missing or empty")
                    start = _nanos(raw, "startTimeUnixNano", file, label, path)
                    end = _nanos(raw, "endTimeUnixNano", file, label, path)
                    if end < start:
                        raise InputError(
                            file, label, f"{path}.endTimeUnixNano", "is before startTimeUnixNano"
                        )
                    status = raw.get("status") or {}
                    code = status.get("code")
                    failed = code == STATUS_ERROR or code == "STATUS_CODE_ERROR"
                    spans.append(
                        _Span(
                            trace_id=raw["traceId"],
                            span_id=raw["spanId"],
                            parent_id=raw.get("parentSpanId") or "",
                            name=str(raw.get("name") or ""),
                            start=start,
                            end=end,
                            attrs=_attributes(raw.get("attributes")),
                            error=(status.get("message") or "status ERROR") if failed else None,
                            resource=resource,
                            record=label,
                            path=path,
                            order=len(spans),
                        )
                    )
    return spans


def _json_attr(span: _Span, key: str, file: str) -> Any:
    value = span.attrs.get(key)
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise InputError(
            file, span.record, span.where(key), f"invalid JSON: {exc.msg} (column {exc.colno})"
        ) from None


def _step(span: _Span, file: str) -> Step:
    tool = span.attrs.get("gen_ai.tool.name")
    if not isinstance(tool, str) or not tool:
        prefix = "execute_tool "
        tool = span.name[len(prefix) :] if span.name.startswith(prefix) else ""
        if not tool:
            raise InputError(file, span.record, span.where("gen_ai.tool.name"), "missing")
    args = _json_attr(span, "gen_ai.tool.call.arguments", file)
    if args is None:
        args = {}
    if not isinstance(args, dict):
        key = "gen_ai.tool.call.arguments"
        raise InputError(
            file, span.record, span.where(key), f"expected a JSON object, got {kind(args)}"
        )
    result = span.attrs.get("gen_ai.tool.call.result")
    output = result if isinstance(result, str) or result is None else canonical_json(result)
    error_type = span.attrs.get("error.type")
    error = span.error or (str(error_type) if error_type is not None else None)
    call_id = span.attrs.get("gen_ai.tool.call.id")
    return Step(
        tool=tool,
        args=args,
        ok=error is None,
        output=output,
        error=error,
        latency_ms=(span.end - span.start) / 1e6,
        call_id=None if call_id is None else str(call_id),
    )


def _tokens(span: _Span, keys: tuple[str, ...], file: str) -> int | None:
    for key in keys:
        value = span.attrs.get(key)
        if value is None:
            continue
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise InputError(file, span.record, span.where(key), "expected a non-negative integer")
        return value
    return None


def _usage(spans: list[_Span], file: str) -> tuple[int | None, int | None]:
    by_id = {s.span_id: s for s in spans}
    counted = [s for s in spans if any(k in s.attrs for k in _INPUT_KEYS + _OUTPUT_KEYS)]
    covered: set[str] = set()  # spans with a descendant carrying counts
    for s in counted:
        parent, seen = by_id.get(s.parent_id), set()
        while parent is not None and parent.span_id not in seen:
            seen.add(parent.span_id)
            covered.add(parent.span_id)
            parent = by_id.get(parent.parent_id)
    prompt = completion = None
    for s in counted:
        if s.span_id in covered:
            continue
        i, o = _tokens(s, _INPUT_KEYS, file), _tokens(s, _OUTPUT_KEYS, file)
        if i is not None:
            prompt = (prompt or 0) + i
        if o is not None:
            completion = (completion or 0) + o
    return prompt, completion


def _message_text(message: Any) -> str | None:
    if not isinstance(message, dict):
        return None
    parts = message.get("parts")
    if isinstance(parts, list):
        texts = [
            p["content"]
            for p in parts
            if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("content"), str)
        ]
        return "\n".join(texts) if texts else None
    content = message.get("content")
    return content if isinstance(content, str) else None


def _messages(span: _Span, key: str, file: str) -> list[Any] | None:
    value = _json_attr(span, key, file)
    if value is None:
        return None
    if not isinstance(value, list):
        raise InputError(file, span.record, span.where(key), f"expected a list, got {kind(value)}")
    return value


def _io_text(spans: list[_Span], file: str) -> tuple[str, str | None]:
    agents = sorted((s for s in spans if s.op == "invoke_agent"), key=lambda s: (s.depth, s.start))
    chats = [s for s in spans if s.op == "chat"]
    text_in: str | None = None
    for s in agents[:1] + chats:
        msgs = _messages(s, "gen_ai.input.messages", file)
        if msgs is not None:
            users = [m for m in msgs if isinstance(m, dict) and m.get("role") == "user"]
            text_in = _message_text(users[0]) if users else None
            break
    final: str | None = None
    for s in agents[:1] + sorted(chats, key=lambda s: (-s.end, -s.order)):
        msgs = _messages(s, "gen_ai.output.messages", file)
        if msgs is not None:
            final = _message_text(msgs[-1]) if msgs else None
            break
    return text_in or "", final


def _trajudge_attr(spans: list[_Span], key: str) -> tuple[Any, _Span | None]:
    roots = [s for s in spans if s.depth == 0]
    for s in roots + [s for s in spans if s.depth > 0]:
        if key in s.attrs:
            return s.attrs[key], s
    return None, None


def _typed(spans: list[_Span], key: str, types: tuple[type, ...], what: str, file: str) -> Any:
    value, span = _trajudge_attr(spans, key)
    if span is None or value is None:
        return None
    if not isinstance(value, types) or (bool not in types and isinstance(value, bool)):
        raise InputError(file, span.record, span.where(key), f"expected {what}, got {kind(value)}")
    return value


def _first_attr(spans: list[_Span], *keys: str) -> Any:
    for key in keys:
        for s in spans:
            if s.attrs.get(key) is not None:
                return s.attrs[key]
    return None


def _trajectory(trace_id: str, spans: list[_Span], file: str) -> Trajectory:
    by_id = {s.span_id: s for s in spans}
    for s in spans:  # depth = number of ancestors present in this trace
        parent, seen = by_id.get(s.parent_id), {s.span_id}
        while parent is not None and parent.span_id not in seen:
            s.depth += 1
            seen.add(parent.span_id)
            parent = by_id.get(parent.parent_id)
    spans.sort(key=lambda s: (s.start, s.order))
    steps = [_step(s, file) for s in spans if s.op == "execute_tool"]
    prompt, completion = _usage(spans, file)
    text_in, final = _io_text(spans, file)
    task_id = _typed(spans, "trajudge.task_id", (str, int), "a string", file)
    trial = _typed(spans, "trajudge.trial", (int,), "an integer", file)
    outcome = _typed(spans, "trajudge.outcome", (bool,), "a boolean", file)
    intent = _typed(spans, "trajudge.intent", (str,), "a string", file)
    metadata: dict[str, Any] = {"trace_id": trace_id}
    extras = {
        "model": ("gen_ai.response.model", "gen_ai.request.model"),
        "agent_name": ("gen_ai.agent.name",),
        "conversation_id": ("gen_ai.conversation.id",),
    }
    for name, keys in extras.items():
        value = _first_attr(spans, *keys)
        if value is not None:
            metadata[name] = value
    service = next(
        (s.resource["service.name"] for s in spans if "service.name" in s.resource), None
    )
    if service is not None:
        metadata["service_name"] = service
    first = min(spans, key=lambda s: s.order)
    try:
        return Trajectory(
            id=trace_id,
            task_id=str(task_id) if task_id is not None else trace_id,
            trial=trial if trial is not None else 0,
            input=text_in,
            steps=steps,
            final_answer=final,
            outcome=outcome,
            usage=Usage(
                prompt_tokens=prompt,
                completion_tokens=completion,
                latency_s=(max(s.end for s in spans) - min(s.start for s in spans)) / 1e9,
            ),
            intent=intent,
            metadata=metadata,
        )
    except ValidationError as exc:
        raise validation_error(file, first.record, exc, f"trace {trace_id}") from None


def from_otel(path: str | os.PathLike[str]) -> list[Trajectory]:
    """Read an OTLP JSON trace file: one trajectory per trace (see the module docstring)."""
    p = check_file(path)
    records = load_json_records(p, decode_utf8(p, p.read_bytes()))
    return [t for _, t in otel_from_records(p, records)]


def otel_from_records(path: Path, records: list[Record]) -> list[tuple[str, Trajectory]]:
    file = str(path)
    traces: dict[str, list[_Span]] = {}
    for span in _spans(file, records):
        traces.setdefault(span.trace_id, []).append(span)
    if not traces:
        raise InputError(file, None, None, "no spans found")
    # a trace is named by the record (line) where its first span appears
    items = [(spans[0].record, _trajectory(tid, spans, file)) for tid, spans in traces.items()]
    check_unique(file, items)
    return items
