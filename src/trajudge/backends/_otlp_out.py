"""Evaluations as OTel ``gen_ai.evaluation.result`` events: OTLP JSON log records parented to
the judged span (``traceId`` / ``spanId``), written to an OTLP JSON file or sent to a
collector's OTLP/HTTP endpoint (``POST /v1/logs`` by ``_otlp_send``; binary protobuf: OTLP/HTTP's
default encoding, which every receiver takes; the official ``opentelemetry-proto`` messages build it
from the same records, so an unknown field is an error here, not at the receiver).

The collector's headers (an API key, a tenant) come from the OpenTelemetry exporter's own
variables, ``OTEL_EXPORTER_OTLP_LOGS_HEADERS`` else ``OTEL_EXPORTER_OTLP_HEADERS``
(``key=value`` pairs, comma-separated, values percent-encoded); they are sent, never shown.

Idempotent both ways. A file is read back first: its records are keyed by
``trajudge.export.item``, a new or changed evaluation replaces its record, and the file is
rewritten whole and atomically (an interrupted export leaves the previous file); records that
trajudge did not write are kept. A collector cannot be read back: what it accepted is marked in
the store (``export_marks``) batch by batch, so a re-export sends only new or changed
evaluations and an interrupted one resumes after the last accepted batch.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from trajudge.backends._evaluations import EVENT_NAME, Evaluation
from trajudge.backends._phoenix_otlp import any_value
from trajudge.core import INPUT_JSON, InputError, atomic_write

BATCH = 500
_ITEM = "trajudge.export.item"
_SHA = "trajudge.export.sha256"


def log_record(e: Evaluation) -> dict[str, Any]:
    """One evaluation as an OTLP JSON log record (an event of the judged span)."""
    attrs = {**e.attributes(), _SHA: e.sha256()}
    return {
        "timeUnixNano": str(e.time_ns),
        "observedTimeUnixNano": str(e.time_ns),
        "eventName": EVENT_NAME,
        "severityNumber": 9,
        "severityText": "INFO",
        "traceId": e.trace_id,
        "spanId": e.span_id,
        "attributes": [{"key": k, "value": any_value(v)} for k, v in attrs.items()],
        "body": {"stringValue": EVENT_NAME},
    }


def logs_document(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Log records as one OTLP JSON logs export from trajudge."""
    return {
        "resourceLogs": [
            {
                "resource": {
                    "attributes": [{"key": "service.name", "value": {"stringValue": "trajudge"}}]
                },
                "scopeLogs": [{"scope": {"name": "trajudge"}, "logRecords": list(records)}],
            }
        ]
    }


def require_proto(shown: str) -> None:
    """:class:`InputError` naming the extra to install when the OTLP messages are missing."""
    try:
        import opentelemetry.proto  # noqa: F401
    except ImportError:
        raise InputError(
            shown,
            reason="an OTLP/HTTP export needs opentelemetry-proto: pip install 'trajudge[otlp]'",
        ) from None


HEADER_VARS = ("OTEL_EXPORTER_OTLP_LOGS_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS")


def otlp_headers() -> dict[str, str]:
    """The headers the OpenTelemetry variables ask for (the logs' own first); a malformed
    entry is an :class:`InputError` naming the variable and the entry's place, not its text."""
    for var in HEADER_VARS:
        raw = os.environ.get(var)
        if raw is None or not raw.strip():
            continue
        out: dict[str, str] = {}
        for n, pair in enumerate(raw.split(","), 1):
            if not pair.strip():
                continue
            key, sep, value = pair.partition("=")
            if not sep or not key.strip():
                raise InputError(var, reason=f"entry {n} is not key=value (its text not shown)")
            out[unquote(key.strip())] = unquote(value.strip())
        return out
    return {}


def logs_request(records: Sequence[dict[str, Any]]) -> bytes:
    """Log records as an OTLP ``ExportLogsServiceRequest`` in binary protobuf.

    Not JSON: OTLP JSON writes trace and span ids in hex, where protobuf's own JSON mapping
    (which many receivers parse OTLP JSON with) reads bytes as base64, turning a 16-byte trace
    id into a 24-byte one. The records are parsed by the official message with their ids as
    bytes."""
    # imported on use: only an export to a collector needs the protobuf messages
    from google.protobuf.json_format import ParseDict
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

    def b64(hex_id: str) -> str:
        return base64.b64encode(bytes.fromhex(hex_id)).decode()

    binary = [{**r, "traceId": b64(r["traceId"]), "spanId": b64(r["spanId"])} for r in records]
    message = ParseDict(logs_document(binary), ExportLogsServiceRequest())
    return bytes(message.SerializeToString())


def _attr(record: dict[str, Any], key: str) -> str | None:
    for a in record.get("attributes") or []:
        if isinstance(a, dict) and a.get("key") == key:
            v = a.get("value") or {}
            return v.get("stringValue") if isinstance(v, dict) else None
    return None


def read_records(path: Path) -> list[dict[str, Any]]:
    """The log records of an OTLP JSON file (one export per line), in file order."""
    out: list[dict[str, Any]] = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            doc = INPUT_JSON.decode(line)
            for rl in doc.get("resourceLogs") or []:
                for sl in rl.get("scopeLogs") or []:
                    out += list(sl.get("logRecords") or [])
        except (ValueError, AttributeError, TypeError):
            raise InputError(
                str(path), record=f"line {n}", reason="not an OTLP JSON logs export"
            ) from None
    return out


def write_file(path: Path, evaluations: Sequence[Evaluation]) -> tuple[int, int]:
    """Write ``evaluations`` into the OTLP JSON file ``path``: (written, unchanged)."""
    existing = read_records(path) if path.exists() else []
    index = {_attr(r, _ITEM): i for i, r in enumerate(existing) if _attr(r, _ITEM)}
    records = list(existing)
    written = unchanged = 0
    for e in evaluations:
        i = index.get(e.item)
        if i is not None and _attr(records[i], _SHA) == e.sha256():
            unchanged += 1
            continue
        if i is None:
            index[e.item] = len(records)
            records.append(log_record(e))
        else:
            records[i] = log_record(e)
        written += 1
    if written:

        def write(tmp: Path) -> None:
            with open(tmp, "w", encoding="utf-8") as fh:
                for start in range(0, len(records), BATCH):
                    doc = logs_document(records[start : start + BATCH])
                    fh.write(json.dumps(doc, ensure_ascii=False) + "\n")

        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, write)
    return written, unchanged
