"""``dataset.source:`` of ``trajudge run``: the same incremental pull as ``trajudge import
KIND+http://...``, for either backend."""

from __future__ import annotations

from collections.abc import Iterable

from trajudge.backends._export import ExportSummary
from trajudge.backends._mlflow_pull import pull_mlflow
from trajudge.backends._pull import PullSummary, pull_phoenix
from trajudge.backends._urls import parse_backend_url
from trajudge.core import counted
from trajudge.store import Store


def pull_source(
    store: Store, source: str, dataset: str, *, accept_loss: Iterable[str] = ()
) -> tuple[PullSummary, str]:
    """Pull what is new at ``source`` into ``dataset``: (the summary, the URL as shown)."""
    url = parse_backend_url(source, kinds=("phoenix", "mlflow"), need_name=True)
    if url.kind == "mlflow":
        return pull_mlflow(store, url, dataset, accept_loss=accept_loss), url.shown
    return pull_phoenix(store, url, dataset, accept_loss=accept_loss), url.shown


def pull_lines(pulled: PullSummary, shown: str) -> list[str]:
    """What ``trajudge run`` prints after a pull: the counts, then each accepted loss."""
    head = (
        f"pulled {counted(pulled.traces, 'trace')} from {shown}: "
        f"{counted(pulled.total, 'trajectory')} ({pulled.added} added, "
        f"{pulled.updated} updated, {pulled.unchanged} unchanged)"
    )
    return [head, *(f"accepted loss: {loss.line()}" for loss in pulled.losses)]


def export_lines(summaries: list[ExportSummary]) -> tuple[list[str], list[str]]:
    """What an export prints: one line per target, then each note once."""
    lines = [
        f"exported {counted(s.judgments, 'judgment')} and {counted(s.labels, 'label')} "
        f"to {s.target}: {s.written} written, {s.unchanged} already there"
        for s in summaries
    ]
    notes = list(dict.fromkeys(note for s in summaries for note in s.notes))
    return lines, notes
