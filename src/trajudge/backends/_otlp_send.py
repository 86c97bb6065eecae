"""Evaluations sent to a collector's OTLP/HTTP endpoint (``POST /v1/logs``), as the OTLP
specification asks of an exporter:

* a request answered 429, 502, 503 or 504, or lost on the way (the connection refused or
  dropped), is tried again (``_retry``: the server's ``Retry-After``, else a growing wait),
  5 attempts in all; then the export stops with one line;
* a request answered 2xx whose ``ExportLogsServiceResponse`` says ``partial_success`` with
  rejected records was not wholly accepted: the collector names how many, not which, and
  such data must not be sent again unchanged. The export stops there with one line giving the
  count and the collector's message, and that request's evaluations are not marked accepted;
* any other answer stops the export with one line.

What the collector accepted is marked in the store batch by batch (see ``_otlp_out``), so the
next export resumes after the last accepted batch.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from trajudge.backends._evaluations import Evaluation
from trajudge.backends._otlp_out import BATCH, log_record, logs_request, otlp_headers
from trajudge.backends._retry import ATTEMPTS, send
from trajudge.core import InputError
from trajudge.store import Store

if TYPE_CHECKING:
    import httpx


def send_http(
    store: Store,
    endpoint: str,
    shown: str,
    dataset: str,
    evaluations: Sequence[Evaluation],
    *,
    batch: int = BATCH,
) -> tuple[int, int]:
    """Send ``evaluations`` not yet accepted by the collector at ``endpoint`` (its base URL;
    ``/v1/logs`` is added), ``batch`` records a request: (sent, unchanged)."""
    # imported on use: only the backend commands need an HTTP client
    import httpx

    headers = {**otlp_headers(), "Content-Type": "application/x-protobuf"}
    marks = store.export_marks(shown, dataset)
    todo = [e for e in evaluations if marks.get(e.item) != e.sha256()]
    sent = 0
    url = f"{endpoint.rstrip('/')}/v1/logs"
    with httpx.Client(timeout=60, headers=headers) as http:
        for start in range(0, len(todo), batch):
            part = todo[start : start + batch]
            r = _post(http, url, logs_request([log_record(e) for e in part]), shown, sent)
            if not 200 <= r.status_code < 300:
                raise InputError(
                    shown, reason=f"the collector answered HTTP {r.status_code}{_done(sent)}"
                )
            rejected, message = partial_success(r)
            if rejected:
                said = f": {' '.join(message.split())[:300]}" if message.strip() else ""
                raise InputError(
                    shown,
                    reason=f"the collector rejected {rejected} of the {len(part)} evaluations "
                    f"of one request{said}; none of that request is marked sent{_done(sent)}",
                )
            store.mark_exported(shown, dataset, {e.item: e.sha256() for e in part})
            sent += len(part)
    return sent, len(evaluations) - len(todo)


def _post(http: httpx.Client, url: str, body: bytes, shown: str, sent: int) -> httpx.Response:
    """The collector's answer to ``body``, tried again while it is a transient failure (an
    export may be sent twice: OTLP receivers take records at least once)."""
    import httpx

    try:
        return send(lambda: http.post(url, content=body), idempotent=True)
    except httpx.TransportError as exc:
        raise InputError(
            shown, reason=f"cannot reach the collector ({ATTEMPTS} attempts): {exc}{_done(sent)}"
        ) from None


def partial_success(r: httpx.Response) -> tuple[int, str]:
    """(rejected records, the collector's message) from a 2xx answer's
    ``ExportLogsServiceResponse``, binary or JSON by its content type; (0, "") for an empty or
    other body (receivers that answer plain text accepted everything they kept)."""
    kind = r.headers.get("Content-Type", "").split(";")[0].strip().lower()
    if not r.content:
        return 0, ""
    if kind == "application/x-protobuf":
        from google.protobuf.message import DecodeError
        from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
            ExportLogsServiceResponse,
        )

        answer = ExportLogsServiceResponse()
        try:
            answer.ParseFromString(r.content)
        except DecodeError:
            return 0, ""
        part = answer.partial_success
        return int(part.rejected_log_records), str(part.error_message)
    if kind == "application/json":
        try:
            doc: Any = json.loads(r.content)
            said = doc.get("partialSuccess") or doc.get("partial_success") or {}
            count = said.get("rejectedLogRecords", said.get("rejected_log_records", 0))
            return int(count or 0), str(said.get("errorMessage", said.get("error_message", "")))
        except (ValueError, AttributeError, TypeError):
            return 0, ""
    return 0, ""


def _done(sent: int) -> str:
    return f" ({sent} evaluations sent before; the next export resumes after them)" if sent else ""
