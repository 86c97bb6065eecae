"""An incremental pull from Phoenix into a dataset (``trajudge import phoenix+http://...``).

The project's spans are read in insertion order, a page at a time, from where the last pull of
the same source into the same dataset stopped (the store's pull cursor). After each page the
traces it completed are read by the OTel reader, census and all, exactly as an OTLP file of
the same spans would be (Phoenix's span JSON is turned into OTLP JSON in a temporary file), and
stored with the cursor in one transaction: a page that fails leaves the store at the last
complete page, and the next pull resumes there.

* A trace is complete once its root span (no parent) is in: spans end, and are sent, before
  their parents. A trace without a root is held back (the cursor stays at its first span) until
  its root arrives, or until it has had no new span for :data:`SETTLE_S` (a trace whose root
  lives in another service never gets one);
* a conversation continued in a later pull (a trace sharing the conversation id of a stored
  trajectory), and a trace that gained spans after it was stored, is read again whole: the
  stored trajectory's traces are fetched by id, so a trajectory is never rebuilt from part of
  its spans.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trajudge.backends._phoenix import PhoenixClient, span_cursor, span_rowid
from trajudge.backends._phoenix_otlp import nanos, otlp_document
from trajudge.backends._urls import BackendURL
from trajudge.core import InputError
from trajudge.store import Store
from trajudge.trajectories import Trajectory, stream_trajectories
from trajudge.trajectories._census import Loss
from trajudge.trajectories._options import Ignored
from trajudge.trajectories.readers.otel._otel_conventions import CONVERSATION_KEYS

SETTLE_S = 600.0
"""Seconds without a new span after which a trace without a root span is taken as it is."""

Span = dict[str, Any]


@dataclass
class PullSummary:
    """What one pull did: pages read, traces and trajectories stored, traces left open."""

    dataset: str
    pages: int = 0
    traces: int = 0
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    open_traces: int = 0
    ignored: Ignored = field(default_factory=Ignored)
    losses: list[Loss] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.added + self.updated + self.unchanged


def source_key(url: BackendURL, until: str | None) -> str:
    """The cursor's source: the URL as shown, with the window's end when there is one (a pull
    up to a time must not move the cursor of a pull without one past spans it skipped)."""
    return url.shown if until is None else f"{url.shown}?until={until}"


def pull_phoenix(
    store: Store,
    url: BackendURL,
    dataset: str,
    *,
    since: str | None = None,
    until: str | None = None,
    accept_loss: Iterable[str] = (),
    strict: bool = False,
    page: int = 1000,
    progress: Callable[[PullSummary], None] | None = None,
) -> PullSummary:
    """Pull what is new in the project of ``url`` into ``dataset`` (see the module docstring).

    ``since`` / ``until``: ISO-8601 times bounding the spans' start (Phoenix's ``start_time``
    filter, inclusive / exclusive). ``accept_loss`` and ``strict`` as for a file, page by
    page: a page refused stores nothing, and the next pull starts at it again."""
    summary = PullSummary(dataset)
    key = source_key(url, until)
    accept = tuple(accept_loss)
    with PhoenixClient(url) as client:
        client.check_project()
        cursor = store.pull_cursor(dataset, key)
        pending: dict[str, list[Span]] = {}  # trace id -> its spans not yet stored
        while True:
            try:
                spans, next_cursor = client.span_page(
                    cursor, limit=page, start_time=since, end_time=until
                )
            except InputError as exc:
                if summary.pages:
                    raise InputError(
                        exc.file,
                        reason=f"{exc.reason} (after {summary.pages} complete pages, stored; "
                        "the next pull resumes there)",
                    ) from None
                raise
            for s in spans:
                pending.setdefault(_trace_id(s, url), []).append(s)
            done, open_first = _complete(pending)
            end: str | None
            if next_cursor is not None:
                end = next_cursor
            elif spans:
                end = span_cursor(span_rowid(spans[-1]["id"]) + 1)
            else:
                end = cursor
            new_cursor = span_cursor(open_first) if open_first is not None else end
            traces = {t: pending.pop(t) for t in done}
            if traces or (new_cursor is not None and new_cursor != cursor):
                _store(
                    store,
                    client,
                    url,
                    dataset,
                    traces,
                    (key, new_cursor),
                    (accept, strict),
                    summary,
                )
            summary.pages += 1
            summary.open_traces = len(pending)
            if progress is not None:
                progress(summary)
            if next_cursor is None:
                return summary
            cursor = next_cursor


def _trace_id(span: Span, url: BackendURL) -> str:
    tid = (span.get("context") or {}).get("trace_id")
    if not isinstance(tid, str) or not tid:
        raise InputError(url.shown, record=f"span {span.get('id')}", reason="no trace id")
    return tid


def _complete(pending: dict[str, list[Span]]) -> tuple[list[str], int | None]:
    """The traces of ``pending`` that are complete, and the first row id of the others."""
    latest = max((nanos(s["end_time"]) for spans in pending.values() for s in spans), default=0)
    done: list[str] = []
    first: int | None = None
    for tid, spans in pending.items():
        has_root = any(not s.get("parent_id") for s in spans)
        quiet = latest - max(nanos(s["end_time"]) for s in spans) >= SETTLE_S * 1e9
        if has_root or quiet:
            done.append(tid)
            continue
        low = min(span_rowid(s["id"]) for s in spans)
        first = low if first is None else min(first, low)
    return done, first


def _conversation(spans: list[Span]) -> str | None:
    for k in CONVERSATION_KEYS:
        for s in spans:
            v = (s.get("attributes") or {}).get(k)
            if v not in (None, ""):
                return str(v)
    return None


def _whole(
    store: Store, client: PhoenixClient, dataset: str, traces: dict[str, list[Span]]
) -> dict[str, list[Span]]:
    """``traces`` with every trace of a stored trajectory they continue fetched whole."""
    ids = {_conversation(spans) or tid for tid, spans in traces.items()}
    refetch: set[str] = set()
    for t in store.trajectories(dataset, ids=sorted(ids)):
        refetch.update(str(x) for x in t.metadata.get("trace_ids", []))
    if not refetch:
        return traces
    out = {t: s for t, s in traces.items() if t not in refetch}
    for s in client.trace_spans(sorted(refetch)):
        out.setdefault(s["context"]["trace_id"], []).append(s)
    return out


def _store(
    store: Store,
    client: PhoenixClient,
    url: BackendURL,
    dataset: str,
    traces: dict[str, list[Span]],
    cursor: tuple[str, str | None],
    rules: tuple[tuple[str, ...], bool],
    summary: PullSummary,
) -> None:
    source, position = cursor
    if not traces:
        if position is not None:
            store.import_dataset(
                dataset, [], source=url.shown, fmt="otel", cursor=(source, position)
            )
        return
    traces = _whole(store, client, dataset, traces)
    order = list(traces)
    with tempfile.TemporaryDirectory(prefix="trajudge-phoenix-") as tmp:
        spool = Path(tmp) / "spans.jsonl"
        with open(spool, "w", encoding="utf-8") as fh:
            for tid in order:
                fh.write(json.dumps(otlp_document(traces[tid]), ensure_ascii=False) + "\n")
        accept, strict = rules
        stream = stream_trajectories(spool, fmt="otel", accept_loss=accept, strict=strict)
        try:
            result = store.import_dataset(
                dataset,
                _named(stream, url, order),
                stream.specs,
                source=url.shown,
                fmt="otel",
                cursor=None if position is None else (source, position),
            )
        except InputError as exc:
            raise _renamed(exc, url, order) from None
    summary.traces += len(order)
    summary.added += result.added
    summary.updated += result.updated
    summary.unchanged += result.unchanged
    for k, places in stream.ignored.found.items():
        summary.ignored.found.setdefault(k, []).extend(places)
    summary.losses += stream.losses


def _named(stream: Iterable[Trajectory], url: BackendURL, order: list[str]) -> Iterator[Trajectory]:
    try:
        yield from stream
    except InputError as exc:
        raise _renamed(exc, url, order) from None


def _renamed(exc: InputError, url: BackendURL, order: list[str]) -> InputError:
    """An error of the temporary file as an error of the server: its line is a trace."""
    if exc.file == url.shown:
        return exc
    record = exc.record
    if record and record.startswith("line "):
        with contextlib.suppress(ValueError, IndexError):
            record = f"trace {order[int(record.split()[1]) - 1]}"
    return InputError(url.shown, record=record, field=exc.field, reason=exc.reason)
