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

MLflow's spans (its JSON-text attributes, ``mlflow.spanInputs`` ...) are translated to the GenAI
conventions here (:mod:`trajudge.trajectories.readers.otel._otel_mlflow`), for the reader and
the census alike.

OTLP log records (``resourceLogs[].scopeLogs[].logRecords[]``, in the same file, as the OTLP
file exporters write them when an instrumentation emits its messages as events) become events of
the span they name (:func:`read_spans`).

Attribute values (OTLP ``AnyValue`` or Jaeger typed tags) are decoded to plain Python values.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from trajudge.core import InputError
from trajudge.trajectories._io import Record
from trajudge.trajectories._options import Ignored
from trajudge.trajectories.readers.otel._otel_jaeger import read_other
from trajudge.trajectories.readers.otel._otel_mlflow import translate as translate_mlflow
from trajudge.trajectories.readers.otel._otel_values import (
    STATUS_ERROR,
    Span,
    any_value,
    attributes,
    first_key,
    hex_id,
    list_at,
    nanos_at,
    object_at,
    objects_at,
)

__all__ = ["STATUS_ERROR", "LogRecord", "Span", "any_value", "attributes", "read_spans"]


def _otlp(doc: dict[str, Any], key: str, file: str, label: str, spans: list[Span]) -> None:
    for rpath, rs in objects_at(doc.get(key), file, label, key):
        res = object_at(rs.get("resource"), file, label, f"{rpath}.resource")
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
        for spath, ss in objects_at(rs.get(scope_key), file, label, f"{rpath}.{scope_key}"):
            scope = (
                first_key(ss, "scope", "instrumentationLibrary", "instrumentation_library") or {}
            )
            for path, raw in objects_at(ss.get("spans"), file, label, f"{spath}.spans"):
                trace_id = hex_id(first_key(raw, "traceId", "trace_id"), 16)
                span_id = hex_id(first_key(raw, "spanId", "span_id"), 8)
                if not trace_id or not span_id:
                    raise InputError(
                        file,
                        record=label,
                        field=f"{path}.traceId/spanId",
                        reason="missing or empty",
                    )
                start = nanos_at(
                    raw, ("startTimeUnixNano", "start_time_unix_nano"), file, label, path
                )
                end = nanos_at(raw, ("endTimeUnixNano", "end_time_unix_nano"), file, label, path)
                if end < start:
                    raise InputError(
                        file,
                        record=label,
                        field=f"{path}.endTimeUnixNano",
                        reason="is before startTimeUnixNano",
                    )
                status = object_at(raw.get("status"), file, label, f"{path}.status")
                code = status.get("code")
                failed = code in (STATUS_ERROR, "STATUS_CODE_ERROR", "ERROR")
                message = status.get("message")
                events = [
                    (str(e.get("name") or ""), attributes(e.get("attributes"), file, label, at))
                    for at, e in (
                        (f"{path}.events[{i}].attributes", e)
                        for i, e in enumerate(
                            list_at(raw.get("events"), file, label, f"{path}.events")
                        )
                    )
                    if isinstance(e, dict)
                ]
                spans.append(
                    Span(
                        trace_id=trace_id,
                        span_id=span_id,
                        parent_id=hex_id(first_key(raw, "parentSpanId", "parent_span_id"), 8),
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
    for rpath, rl in objects_at(doc.get(key), file, label, key):
        scope_key = "scopeLogs" if "scopeLogs" in rl else "scope_logs"
        for spath, sl in objects_at(rl.get(scope_key), file, label, f"{rpath}.{scope_key}"):
            records = first_key(sl, "logRecords", "log_records")
            for path, raw in objects_at(records, file, label, f"{spath}.logRecords"):
                attrs = attributes(raw.get("attributes"))
                name = first_key(raw, "eventName", "event_name") or attrs.get("event.name") or ""
                body = any_value(raw.get("body"))
                logs.append(
                    LogRecord(
                        trace_id=hex_id(first_key(raw, "traceId", "trace_id"), 16),
                        span_id=hex_id(first_key(raw, "spanId", "span_id"), 8),
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
        if which in ("jaeger", "sdk-span"):
            read_other(which, doc, file, label, spans)
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
    for each in spans:
        translate_mlflow(each)  # MLflow's JSON-text attributes, as the GenAI conventions
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
