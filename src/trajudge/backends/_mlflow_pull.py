"""An incremental pull from an MLflow experiment into a dataset (``trajudge import
mlflow+http://HOST:5000/EXPERIMENT``).

The experiment's traces are searched oldest first (by start time, ``timestamp_ms``), a page at a
time, from where the last pull of the same source into the same dataset stopped. The cursor is
the start time of the newest stored trace and the ids of the traces stored at that millisecond
(``{"ms": ..., "ids": [...]}``): the next pull asks for ``timestamp_ms >= ms`` and skips those
ids, so traces sharing a millisecond are neither lost nor read twice.

After each page its traces' spans are read by the OTel reader, census and all, exactly as the
same run's OTLP file would be (MLflow's span JSON is turned into OTLP JSON in a temporary file),
and stored with the cursor in one transaction: a page that fails leaves the store at the last
complete page, and the next pull resumes there.

* A trace still in progress (``state`` ``IN_PROGRESS``) ends the pull before it: the cursor
  stays there, and the next pull takes it when it is done;
* a conversation continued in a later page or pull (the reader joins traces that share a
  conversation id into one trajectory) is read again whole: the stored trajectory's other traces
  are fetched by id, so a trajectory is never rebuilt from part of its traces.

MLflow keeps the OTel resource's attributes as trace tags: ``service.name`` is put back. It
keeps a session (``mlflow.update_current_trace(session_id=...)``, ``mlflow.tracing.context``)
in the trace's metadata (``mlflow.trace.session``), not on a span: it is put on the root span as
``session.id``, as MLflow itself writes it for an OTLP export, so the traces of one session are
one conversation, joined by the reader as those of an OTLP file are (one trajectory whose id is
the session id, turns in time order).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from trajudge.backends._mlflow import PAGE, MlflowClient
from trajudge.backends._phoenix_otlp import key_values
from trajudge.backends._pull import PullSummary, _renamed, source_key
from trajudge.backends._urls import BackendURL
from trajudge.core import InputError
from trajudge.store import Store
from trajudge.trajectories import Trajectory, stream_trajectories
from trajudge.trajectories.readers.otel._otel_values import hex_id

_RESOURCE_TAGS = ("service.name", "service.version", "service.instance.id")
_SESSION = "mlflow.trace.session"  # the trace metadata key of MLflow's session id


def mlflow_trace_id(hex_trace_id: str) -> str:
    """MLflow's id of the trace whose OpenTelemetry id is ``hex_trace_id``."""
    return f"tr-{hex_trace_id}"


def _ms(iso: str) -> int:
    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


def otlp_document(info: dict[str, Any], spans: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """One trace's MLflow span JSON as an OTLP JSON export: the attributes stay the JSON text
    MLflow stored (as the tracer wrote them to an OTLP file), the events' typed values stay."""
    tags = info.get("tags") or {}
    resource = {k: tags[k] for k in _RESOURCE_TAGS if isinstance(tags.get(k), str)}
    session = (info.get("trace_metadata") or {}).get(_SESSION)
    out = []
    for s in spans:
        status = s.get("status") or {}
        attrs = dict(s.get("attributes") or {})
        if isinstance(session, str) and session and not s.get("parent_span_id"):
            # an MLflow span's attributes are JSON text (the reader decodes them); a span that
            # came in over OTLP keeps its own conversation id if it has one
            text = json.dumps(session) if "mlflow.spanType" in attrs else session
            attrs.setdefault("session.id", text)
        span: dict[str, Any] = {
            "traceId": hex_id(s.get("trace_id"), 16),
            "spanId": hex_id(s.get("span_id"), 8),
            "name": s.get("name", ""),
            "startTimeUnixNano": str(s.get("start_time_unix_nano")),
            "endTimeUnixNano": str(s.get("end_time_unix_nano")),
            "attributes": key_values(attrs),
            "events": [
                {
                    "name": e.get("name", ""),
                    "timeUnixNano": str(e.get("time_unix_nano")),
                    "attributes": key_values(e.get("attributes") or {}),
                }
                for e in s.get("events") or []
            ],
            "status": {"code": status.get("code", 0), "message": status.get("message", "")},
        }
        if s.get("parent_span_id"):
            span["parentSpanId"] = hex_id(s["parent_span_id"], 8)
        out.append(span)
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": key_values(resource)},
                "scopeSpans": [{"scope": {"name": "mlflow"}, "spans": out}],
            }
        ]
    }


def pull_mlflow(
    store: Store,
    url: BackendURL,
    dataset: str | None,
    *,
    since: str | None = None,
    until: str | None = None,
    accept_loss: Iterable[str] = (),
    strict: bool = False,
    page: int = PAGE,
    progress: Callable[[PullSummary], None] | None = None,
    note: Callable[[str], None] | None = None,
) -> PullSummary:
    """Pull what is new in the experiment of ``url`` into ``dataset`` (default: the experiment's
    name); see the module docstring. ``since`` / ``until``: ISO-8601 times bounding the traces'
    start (inclusive / exclusive). ``accept_loss`` and ``strict`` as for a file, page by page
    (a page refused stores nothing). ``note`` hears which experiment a digits-only name took."""
    rules = (tuple(accept_loss), strict)
    with MlflowClient(url) as client:
        exp_id, exp_name, said = client.experiment()
        if said is not None and note is not None:
            note(said)
        name = dataset or exp_name
        summary = PullSummary(name)
        key = source_key(url, until)
        saved = store.pull_cursor(name, key)
        cursor: dict[str, Any] = json.loads(saved) if saved else {"ms": 0, "ids": []}
        lower = max(cursor["ms"], _ms(since) if since else 0)
        where = f"trace.timestamp_ms >= {lower}"
        if until:
            where += f" AND trace.timestamp_ms < {_ms(until)}"
        seen = set(cursor["ids"]) if lower == cursor["ms"] else set()
        token: str | None = None
        while True:
            try:
                infos, token = client.search(exp_id, where, token, page)
                taken: list[dict[str, Any]] = []
                for info in infos:
                    if info.get("state") == "IN_PROGRESS":
                        summary.open_traces += 1
                        token = None  # the cursor must not pass a trace not yet done
                        break
                    if info["trace_id"] not in seen:
                        taken.append(info)
                traces = {i["trace_id"]: (i, client.spans(i["trace_id"])) for i in taken}
                cursor = _advance(cursor, taken)
                _store(store, client, url, name, traces, (key, json.dumps(cursor)), rules, summary)
            except InputError as exc:
                if summary.pages:
                    raise InputError(
                        exc.file,
                        record=exc.record,
                        reason=f"{exc.reason} (after {summary.pages} complete pages, stored; "
                        "the next pull resumes there)",
                    ) from None
                raise
            summary.pages += 1
            if progress is not None:
                progress(summary)
            if token is None:
                return summary


def _advance(cursor: dict[str, Any], taken: list[dict[str, Any]]) -> dict[str, Any]:
    """The cursor after the traces ``taken`` (oldest first)."""
    ms, ids = cursor["ms"], set(cursor["ids"])
    for info in taken:
        t = _ms(info["request_time"])
        if t > ms:
            ms, ids = t, set()
        if t == ms:
            ids.add(info["trace_id"])
    return {"ms": ms, "ids": sorted(ids)}


def _read(
    url: BackendURL,
    traces: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]],
    rules: tuple[tuple[str, ...], bool],
    tmp: Path,
) -> tuple[list[Trajectory], Any]:
    order = list(traces)
    spool = tmp / "spans.jsonl"
    with open(spool, "w", encoding="utf-8") as fh:
        for tid in order:
            info, spans = traces[tid]
            fh.write(json.dumps(otlp_document(info, spans), ensure_ascii=False) + "\n")
    stream = stream_trajectories(spool, fmt="otel", accept_loss=rules[0], strict=rules[1])
    try:
        return list(stream), stream
    except InputError as exc:
        raise _renamed(exc, url, order) from None


def _store(
    store: Store,
    client: MlflowClient,
    url: BackendURL,
    dataset: str,
    traces: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]],
    cursor: tuple[str, str],
    rules: tuple[tuple[str, ...], bool],
    summary: PullSummary,
) -> None:
    if not traces:
        store.import_dataset(dataset, [], source=url.shown, fmt="otel", cursor=cursor)
        return
    with tempfile.TemporaryDirectory(prefix="trajudge-mlflow-") as tmp:
        items, stream = _read(url, traces, rules, Path(tmp))
        # a conversation some of whose traces are stored already: read again with all of them
        known = {
            mlflow_trace_id(str(x))
            for t in store.trajectories(dataset, ids=[t.id for t in items])
            for x in t.metadata.get("trace_ids", [])
        } - set(traces)
        if known:
            for tid in sorted(known):
                traces[tid] = (client.trace_info(tid), client.spans(tid))
            items, stream = _read(url, traces, rules, Path(tmp))
        try:
            result = store.import_dataset(
                dataset, items, stream.specs, source=url.shown, fmt="otel", cursor=cursor
            )
        except InputError as exc:
            raise _renamed(exc, url, list(traces)) from None
    summary.traces += len(traces) - len(known)
    summary.added += result.added
    summary.updated += result.updated
    summary.unchanged += result.unchanged
    for k, places in stream.ignored.found.items():
        summary.ignored.found.setdefault(k, []).extend(places)
    summary.losses += stream.losses
