"""Spans out of the containers that exporters and trace stores write.

* OTLP JSON (``resourceSpans[].scopeSpans[].spans[]``), one export per line (the OTLP JSON file
  exporter, the collector's file exporter) or one document, or a JSON list of exports; the
  older ``instrumentationLibrarySpans`` and protobuf's snake_case names are read too;
* Grafana Tempo trace exports: ``{"batches": [...]}`` (the v1 API) and ``{"trace":
  {"resourceSpans" | "batches": [...]}}`` (v2); ids in base64 are turned into hex;
* Jaeger UI / query API JSON: ``{"data": [{"traceID", "spans": [...], "processes": {...}}]}``
  with ``tags``, ``references`` (CHILD_OF / FOLLOWS_FROM), ``logs`` and times in microseconds;
* the OpenTelemetry SDK's own span JSON (``ReadableSpan.to_json()``, what the
  ``ConsoleSpanExporter`` prints: one pretty-printed object per span, one after the other):
  ``context.trace_id`` / ``span_id`` as ``0x...`` hex, ``parent_id``, ISO-8601 times, plain
  ``attributes`` (nested objects are flattened to dotted keys).

OTLP log records (``resourceLogs[].scopeLogs[].logRecords[]``, in the same file, as the OTLP
file exporters write them when an instrumentation emits its messages as events) become events of
the span they name (:func:`read_spans`).

Attribute values (OTLP ``AnyValue`` or Jaeger typed tags) are decoded to plain Python values.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from trajudge.core import InputError
from trajudge.trajectories._io import Record, kind
from trajudge.trajectories._options import Ignored

STATUS_ERROR = 2


@dataclass
class Span:
    """One span, whatever container it came from."""

    trace_id: str
    span_id: str
    parent_id: str
    name: str
    start: int  # nanoseconds
    end: int
    attrs: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]]
    error: str | None  # the status message (or "status ERROR") when the status is ERROR
    resource: dict[str, Any]
    scope: str
    record: str
    path: str
    order: int
    depth: int = field(default=0)

    def where(self, key: str) -> str:
        return f"{self.path}.attributes.{key}"


def any_value(value: Any) -> Any:
    """Decode an OTLP JSON ``AnyValue`` (camelCase or snake_case keys)."""
    if not isinstance(value, dict):
        return value
    for key in ("stringValue", "string_value"):
        if key in value:
            return value[key]
    for key in ("boolValue", "bool_value"):
        if key in value:
            return value[key]
    for key in ("intValue", "int_value"):
        if key in value:
            raw = value[key]
            return int(raw) if isinstance(raw, str) and raw.lstrip("-").isdigit() else raw
    for key in ("doubleValue", "double_value"):
        if key in value:
            return value[key]
    for key in ("arrayValue", "array_value"):
        if key in value:
            # a value of another shape is kept as it is, never dropped
            inner = value[key]
            items = inner.get("values", []) if isinstance(inner, dict) else inner
            return [any_value(v) for v in items] if isinstance(items, list) else items
    for key in ("kvlistValue", "kvlist_value"):
        if key in value:
            inner = value[key]
            items = inner.get("values", []) if isinstance(inner, dict) else inner
            return attributes(items) if isinstance(items, list) else items
    for key in ("bytesValue", "bytes_value"):
        if key in value:
            return value[key]
    return None


def attributes(
    items: Any, file: str = "", record: str | None = None, path: str = "attributes"
) -> dict[str, Any]:
    """An OTLP attribute list as a dict; a value that is not a list is an :class:`InputError`
    naming ``path``."""
    out: dict[str, Any] = {}
    if items is not None and not isinstance(items, list):
        raise InputError(
            file, record=record, field=path, reason=f"expected a list, got {kind(items)}"
        )
    for item in items or []:
        if isinstance(item, dict) and isinstance(item.get("key"), str):
            out[item["key"]] = any_value(item.get("value"))
    return out


def _hex_id(raw: Any, size: int) -> str:
    """Ids in hex stay; base64 ids (protobuf JSON, Tempo) become hex."""
    if not isinstance(raw, str) or not raw:
        return ""
    text = raw.lower()
    if len(text) == size * 2 and all(c in "0123456789abcdef" for c in text):
        return text
    try:
        data = base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError):
        return raw
    return data.hex() if len(data) == size else raw


def _nanos(span: dict[str, Any], keys: tuple[str, ...], file: str, record: str, path: str) -> int:
    for key in keys:
        raw = span.get(key)
        if isinstance(raw, int) and not isinstance(raw, bool):
            return raw
        if isinstance(raw, str) and raw.isdigit():
            return int(raw)
    raise InputError(
        file,
        record=record,
        field=f"{path}.{keys[0]}",
        reason=f"expected nanoseconds, got {kind(span.get(keys[0]))}",
    )


def _get(obj: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        if key in obj:
            return obj[key]
    return None


def _list(value: Any, file: str, record: str, path: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputError(
            file, record=record, field=path, reason=f"expected a list, got {kind(value)}"
        )
    return value


def _object(value: Any, file: str, record: str, path: str) -> dict[str, Any]:
    """The object at ``path`` (absent or null: an empty one); anything else is an
    :class:`InputError` naming it."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputError(
            file, record=record, field=path, reason=f"expected an object, got {kind(value)}"
        )
    return value


def _objects(value: Any, file: str, record: str, path: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(path[i], item)`` for each item of the list at ``path``; an item that is not an object
    is an :class:`InputError` naming it."""
    for i, item in enumerate(_list(value, file, record, path)):
        where = f"{path}[{i}]"
        if not isinstance(item, dict):
            raise InputError(
                file, record=record, field=where, reason=f"expected an object, got {kind(item)}"
            )
        yield where, item


def _otlp(doc: dict[str, Any], key: str, file: str, label: str, spans: list[Span]) -> None:
    for rpath, rs in _objects(doc.get(key), file, label, key):
        res = _object(rs.get("resource"), file, label, f"{rpath}.resource")
        resource = attributes(res.get("attributes"), file, label, f"{rpath}.resource.attributes")
        scope_key = next(
            (
                k
                for k in (
                    "scopeSpans",
                    "scope_spans",
                    "instrumentationLibrarySpans",
                    "instrumentation_library_spans",
                )
                if k in rs
            ),
            "scopeSpans",
        )
        for spath, ss in _objects(rs.get(scope_key), file, label, f"{rpath}.{scope_key}"):
            scope = _get(ss, "scope", "instrumentationLibrary", "instrumentation_library") or {}
            for path, raw in _objects(ss.get("spans"), file, label, f"{spath}.spans"):
                trace_id = _hex_id(_get(raw, "traceId", "trace_id"), 16)
                span_id = _hex_id(_get(raw, "spanId", "span_id"), 8)
                if not trace_id or not span_id:
                    raise InputError(
                        file,
                        record=label,
                        field=f"{path}.traceId/spanId",
                        reason="missing or empty",
                    )
                start = _nanos(
                    raw, ("startTimeUnixNano", "start_time_unix_nano"), file, label, path
                )
                end = _nanos(raw, ("endTimeUnixNano", "end_time_unix_nano"), file, label, path)
                if end < start:
                    raise InputError(
                        file,
                        record=label,
                        field=f"{path}.endTimeUnixNano",
                        reason="is before startTimeUnixNano",
                    )
                status = _object(raw.get("status"), file, label, f"{path}.status")
                code = status.get("code")
                failed = code in (STATUS_ERROR, "STATUS_CODE_ERROR", "ERROR")
                message = status.get("message")
                events = [
                    (str(e.get("name") or ""), attributes(e.get("attributes"), file, label, at))
                    for at, e in (
                        (f"{path}.events[{i}].attributes", e)
                        for i, e in enumerate(
                            _list(raw.get("events"), file, label, f"{path}.events")
                        )
                    )
                    if isinstance(e, dict)
                ]
                spans.append(
                    Span(
                        trace_id=trace_id,
                        span_id=span_id,
                        parent_id=_hex_id(_get(raw, "parentSpanId", "parent_span_id"), 8),
                        name=str(raw.get("name") or ""),
                        start=start,
                        end=end,
                        attrs=attributes(raw.get("attributes"), file, label, f"{path}.attributes"),
                        events=events,
                        error=(str(message) if message else "status ERROR") if failed else None,
                        resource=resource,
                        scope=str(scope.get("name") or "") if isinstance(scope, dict) else "",
                        record=label,
                        path=path,
                        order=len(spans),
                    )
                )


def _jaeger_tags(tags: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for tag in tags or []:
        if isinstance(tag, dict) and isinstance(tag.get("key"), str):
            value = tag.get("value")
            if (
                tag.get("type") == "int64"
                and isinstance(value, str)
                and value.lstrip("-").isdigit()
            ):
                value = int(value)
            out[tag["key"]] = value
    return out


def _jaeger(doc: dict[str, Any], file: str, label: str, spans: list[Span]) -> None:
    for ti, trace in enumerate(_list(doc.get("data"), file, label, "data")):
        tpath = f"data[{ti}]"
        if not isinstance(trace, dict):
            raise InputError(
                file, record=label, field=tpath, reason=f"expected an object, got {kind(trace)}"
            )
        processes = trace.get("processes") or {}
        for pi, raw in enumerate(_list(trace.get("spans"), file, label, f"{tpath}.spans")):
            path = f"{tpath}.spans[{pi}]"
            if not isinstance(raw, dict):
                raise InputError(
                    file, record=label, field=path, reason=f"expected an object, got {kind(raw)}"
                )
            trace_id = _hex_id(str(raw.get("traceID") or trace.get("traceID") or "").zfill(32), 16)
            span_id = _hex_id(str(raw.get("spanID") or "").zfill(16), 8)
            if not trace_id.strip("0") or not span_id.strip("0"):
                raise InputError(
                    file, record=label, field=f"{path}.traceID/spanID", reason="missing or empty"
                )
            start_us, duration_us = raw.get("startTime"), raw.get("duration", 0)
            if not isinstance(start_us, int) or not isinstance(duration_us, int):
                raise InputError(
                    file, record=label, field=f"{path}.startTime", reason="expected microseconds"
                )
            parent = next(
                (
                    r.get("spanID")
                    for r in raw.get("references") or []
                    if isinstance(r, dict) and r.get("refType") in ("CHILD_OF", "FOLLOWS_FROM")
                ),
                None,
            )
            tags = _jaeger_tags(raw.get("tags"))
            process = processes.get(raw.get("processID")) if isinstance(processes, dict) else None
            resource = _jaeger_tags((process or {}).get("tags"))
            if isinstance(process, dict) and process.get("serviceName"):
                resource["service.name"] = process["serviceName"]
            failed = tags.get("otel.status_code") == "ERROR" or tags.get("error") is True
            events = []
            for log in raw.get("logs") or []:
                fields = _jaeger_tags(log.get("fields") if isinstance(log, dict) else None)
                events.append((str(fields.pop("event", "") or ""), fields))
            spans.append(
                Span(
                    trace_id=trace_id,
                    span_id=span_id,
                    parent_id=_hex_id(str(parent).zfill(16), 8) if parent else "",
                    name=str(raw.get("operationName") or ""),
                    start=start_us * 1000,
                    end=(start_us + duration_us) * 1000,
                    attrs=tags,
                    events=events,
                    error=(str(tags.get("otel.status_description") or "status ERROR"))
                    if failed
                    else None,
                    resource=resource,
                    scope=str(tags.get("otel.scope.name") or tags.get("otel.library.name") or ""),
                    record=label,
                    path=path,
                    order=len(spans),
                )
            )


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _iso_nanos(value: Any, file: str, record: str, field: str) -> int:
    from datetime import datetime

    if isinstance(value, str):
        try:
            stamp = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            pass
        else:
            whole = int(stamp.timestamp())
            return whole * 1_000_000_000 + stamp.microsecond * 1000
    raise InputError(
        file, record=record, field=field, reason=f"expected an ISO-8601 time, got {kind(value)}"
    )


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Nested attribute objects (Phoenix, to_json of kvlists) as dotted keys."""
    out: dict[str, Any] = {}
    if isinstance(value, dict):
        for k, v in value.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
    elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        for i, v in enumerate(value):
            out.update(_flatten(v, f"{prefix}.{i}"))
    else:
        out[prefix] = value
    return out


def _sdk_span(doc: dict[str, Any], file: str, label: str, spans: list[Span]) -> None:
    context = _obj(doc.get("context"))
    trace_id = _hex_id(str(context.get("trace_id") or "").removeprefix("0x"), 16)
    span_id = _hex_id(str(context.get("span_id") or "").removeprefix("0x"), 8)
    if not trace_id or not span_id:
        raise InputError(
            file, record=label, field="context.trace_id/span_id", reason="missing or empty"
        )
    start = _iso_nanos(doc.get("start_time"), file, label, "start_time")
    end = _iso_nanos(doc.get("end_time"), file, label, "end_time")
    status = _obj(doc.get("status"))
    failed = status.get("status_code") in ("ERROR", "StatusCode.ERROR")
    events = [
        (str(e.get("name") or ""), _flatten(e.get("attributes") or {}))
        for e in doc.get("events") or []
        if isinstance(e, dict)
    ]
    resource = _obj(doc.get("resource"))
    parent = doc.get("parent_id")
    spans.append(
        Span(
            trace_id=trace_id,
            span_id=span_id,
            parent_id=_hex_id(str(parent).removeprefix("0x"), 8) if parent else "",
            name=str(doc.get("name") or ""),
            start=start,
            end=end,
            attrs=_flatten(doc.get("attributes") or {}),
            events=events,
            error=(str(status.get("description") or "status ERROR")) if failed else None,
            resource=_flatten(resource.get("attributes") or {}),
            scope=str(_obj(doc.get("instrumentation_scope")).get("name") or ""),
            record=label,
            path="span",
            order=len(spans),
        )
    )


def container_of(doc: Any) -> str | None:
    """Which trace container a parsed JSON value is (None: not one)."""
    if not isinstance(doc, dict):
        return None
    context = doc.get("context")
    if isinstance(context, dict) and "trace_id" in context and "span_id" in context:
        return "sdk-span"
    if any(k in doc for k in ("resourceSpans", "resource_spans")):
        return "otlp"
    if any(k in doc for k in ("resourceLogs", "resource_logs")):
        return "otlp-logs"
    if "batches" in doc:
        return "tempo"
    inner = doc.get("trace")
    if isinstance(inner, dict) and any(k in inner for k in ("resourceSpans", "batches")):
        return "tempo"
    data = doc.get("data")
    if isinstance(data, list) and data and isinstance(data[0], dict) and "spans" in data[0]:
        return "jaeger"
    return None


@dataclass
class LogRecord:
    """An OTLP log record (an event of the GenAI conventions' event form), for its span."""

    trace_id: str
    span_id: str
    name: str
    body: dict[str, Any]
    where: str  # record and path, for the ignored count


def _otlp_logs(doc: dict[str, Any], file: str, label: str, logs: list[LogRecord]) -> None:
    key = "resourceLogs" if "resourceLogs" in doc else "resource_logs"
    for rpath, rl in _objects(doc.get(key), file, label, key):
        scope_key = "scopeLogs" if "scopeLogs" in rl else "scope_logs"
        for spath, sl in _objects(rl.get(scope_key), file, label, f"{rpath}.{scope_key}"):
            records = _get(sl, "logRecords", "log_records")
            for path, raw in _objects(records, file, label, f"{spath}.logRecords"):
                attrs = attributes(raw.get("attributes"))
                name = _get(raw, "eventName", "event_name") or attrs.get("event.name") or ""
                body = any_value(raw.get("body"))
                logs.append(
                    LogRecord(
                        trace_id=_hex_id(_get(raw, "traceId", "trace_id"), 16),
                        span_id=_hex_id(_get(raw, "spanId", "span_id"), 8),
                        name=str(name),
                        # the GenAI event's fields: in the body (older form) or in the
                        # attributes (the latest form: ADK, operation details)
                        body={**attrs, **body}
                        if isinstance(body, dict)
                        else {**attrs, **({} if body is None else {"content": body})},
                        where=f"{label}: {path}",
                    )
                )


def read_spans(file: str, records: Iterable[Record], ignored: Ignored) -> list[Span]:
    """Every span of every record, in file order (records are read one at a time).

    Log records (``resourceLogs``, as the OTLP file exporters and the Collector write beside
    the spans) join the span they name by trace and span id as its events, in file order;
    one that names no span of the file is counted in ``ignored``.
    """
    spans: list[Span] = []
    logs: list[LogRecord] = []
    for label, doc in records:
        which = container_of(doc)
        if which is None:
            raise InputError(
                file,
                record=label,
                reason="not a trace export "
                "(expected OTLP JSON, a Tempo or Jaeger export, or span JSON)",
            )
        if which == "jaeger":
            _jaeger(doc, file, label, spans)
            continue
        if which == "sdk-span":
            _sdk_span(doc, file, label, spans)
            continue
        if which == "otlp-logs":
            _otlp_logs(doc, file, label, logs)
            continue
        if "trace" in doc and isinstance(doc["trace"], dict):
            doc = doc["trace"]
        key = next(k for k in ("resourceSpans", "resource_spans", "batches") if k in doc)
        _otlp(doc, key, file, label, spans)
        if any(k in doc for k in ("resourceLogs", "resource_logs")):
            _otlp_logs(doc, file, label, logs)
    by_id = {(s.trace_id, s.span_id): s for s in spans}
    for log in logs:
        span = by_id.get((log.trace_id, log.span_id))
        if span is not None:
            span.events.append((log.name, log.body))
        else:
            ignored.add(
                "log record of no span in the file",
                "log records of no span in the file",
                f"{log.where} ({log.name or 'no event name'})",
            )
    return spans
