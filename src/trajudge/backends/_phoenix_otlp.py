"""Phoenix's span JSON (its REST API) as OTLP JSON, the form trajudge's OTel reader takes.

Phoenix keeps a span's attributes (flattened to dotted keys, as OpenInference writes them),
events, status, parent and times (to the microsecond), and takes ``openinference.span.kind``
out of the attributes into ``span_kind`` (``UNKNOWN`` when the span had none): it is put back.
It keeps neither the resource (``service.name``) nor the instrumentation scope, so a
trajectory pulled from Phoenix has no ``service_name`` in its metadata where the same run's
OTLP file has one; nothing else the reader uses is lost.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_STATUS = {"UNSET": 0, "OK": 1, "ERROR": 2}


def nanos(iso: str) -> int:
    """An ISO-8601 time (Phoenix's, timezone-aware) in nanoseconds since the epoch."""
    t = datetime.fromisoformat(iso)
    if t.tzinfo is None:
        t = t.replace(tzinfo=UTC)
    return (t - _EPOCH) // timedelta(microseconds=1) * 1000


def any_value(value: Any) -> dict[str, Any]:
    """A Python value as an OTLP JSON ``AnyValue``."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, dict):
        return {"kvlistValue": {"values": key_values(value)}}
    if isinstance(value, list | tuple):
        return {"arrayValue": {"values": [any_value(v) for v in value]}}
    return {"stringValue": str(value)}


def key_values(attrs: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": any_value(v)} for k, v in attrs.items() if v is not None]


def otlp_span(span: dict[str, Any]) -> dict[str, Any]:
    """One Phoenix span as an OTLP JSON span."""
    attrs = dict(span.get("attributes") or {})
    kind = span.get("span_kind")
    if kind and kind != "UNKNOWN":
        attrs["openinference.span.kind"] = kind
    context = span.get("context") or {}
    out: dict[str, Any] = {
        "traceId": context.get("trace_id"),
        "spanId": context.get("span_id"),
        "name": span.get("name", ""),
        "kind": 1,
        "startTimeUnixNano": str(nanos(span["start_time"])),
        "endTimeUnixNano": str(nanos(span["end_time"])),
        "attributes": key_values(attrs),
        "events": [
            {
                "name": e.get("name", ""),
                "timeUnixNano": str(nanos(e["timestamp"])),
                "attributes": key_values(e.get("attributes") or {}),
            }
            for e in span.get("events") or []
        ],
        "status": {"code": _STATUS.get(str(span.get("status_code")), 0)},
    }
    if span.get("parent_id"):
        out["parentSpanId"] = span["parent_id"]
    if span.get("status_message"):
        out["status"]["message"] = span["status_message"]
    return out


def otlp_document(spans: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Phoenix spans as one OTLP JSON export (one resource, one scope)."""
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": []},
                "scopeSpans": [
                    {"scope": {"name": "phoenix"}, "spans": [otlp_span(s) for s in spans]}
                ],
            }
        ]
    }
