"""Trace exports that are not OTLP: a Jaeger UI / query API download (``data[].spans``, tags
typed by name) and the OpenTelemetry SDK's span JSON (``ConsoleSpanExporter``, ``span.to_json()``:
ISO times, flat attribute objects). Each span becomes a :class:`Span` as an OTLP one does."""

from __future__ import annotations

from typing import Any

from trajudge.core import InputError
from trajudge.trajectories._io import kind
from trajudge.trajectories.readers.otel._otel_values import (
    Span,
    hex_id,
    list_at,
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
    for ti, trace in enumerate(list_at(doc.get("data"), file, label, "data")):
        tpath = f"data[{ti}]"
        if not isinstance(trace, dict):
            raise InputError(
                file, record=label, field=tpath, reason=f"expected an object, got {kind(trace)}"
            )
        processes = trace.get("processes") or {}
        for pi, raw in enumerate(list_at(trace.get("spans"), file, label, f"{tpath}.spans")):
            path = f"{tpath}.spans[{pi}]"
            if not isinstance(raw, dict):
                raise InputError(
                    file, record=label, field=path, reason=f"expected an object, got {kind(raw)}"
                )
            trace_id = hex_id(str(raw.get("traceID") or trace.get("traceID") or "").zfill(32), 16)
            span_id = hex_id(str(raw.get("spanID") or "").zfill(16), 8)
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
                    parent_id=hex_id(str(parent).zfill(16), 8) if parent else "",
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
    trace_id = hex_id(str(context.get("trace_id") or "").removeprefix("0x"), 16)
    span_id = hex_id(str(context.get("span_id") or "").removeprefix("0x"), 8)
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
            parent_id=hex_id(str(parent).removeprefix("0x"), 8) if parent else "",
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


def read_other(which: str, doc: dict[str, Any], file: str, label: str, spans: list[Span]) -> None:
    """Add the spans of a Jaeger download (``which`` = ``jaeger``) or of SDK span JSON."""
    if which == "jaeger":
        _jaeger(doc, file, label, spans)
    else:
        _sdk_span(doc, file, label, spans)
