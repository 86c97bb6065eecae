"""``trajudge import KIND+http://...``: pull a tracing backend's new traces into a dataset."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from trajudge.cli._app import console
from trajudge.core import InputError, counted

if TYPE_CHECKING:
    from trajudge.backends import PullSummary


def pull_command(
    source: str,
    *,
    dataset: str | None,
    since: str | None,
    until: str | None,
    strict: bool,
    accept_loss: Iterable[str],
    verbose: bool,
    db: str,
    unsupported: Mapping[str, bool],
) -> None:
    # imported on use: `trajudge --help` does not load these rooms
    from trajudge.backends import parse_backend_url, pull_mlflow, pull_phoenix
    from trajudge.backends._window import parse_when
    from trajudge.store import Store

    url = parse_backend_url(source, kinds=("phoenix", "mlflow"), need_name=True)
    for option, given in unsupported.items():
        if given:
            raise InputError(option, reason=f"not for a backend URL ({url.shown})")
    start = None if since is None else parse_when(since, "--since")
    end = None if until is None else parse_when(until, "--until")
    store = Store(db)
    try:
        with console.status(f"pulling {url.shown} ...") as status:

            def progress(s: PullSummary) -> None:
                status.update(
                    f"pulling {url.shown} ... {s.pages} pages, {counted(s.traces, 'trace')}"
                )

            if url.kind == "mlflow":
                summary = pull_mlflow(
                    store,
                    url,
                    dataset,
                    since=start,
                    until=end,
                    accept_loss=accept_loss,
                    strict=strict,
                    progress=progress,
                    note=lambda text: _say(text, "yellow"),
                )
            else:
                summary = pull_phoenix(
                    store,
                    url,
                    dataset or url.name,
                    since=start,
                    until=end,
                    accept_loss=accept_loss,
                    strict=strict,
                    progress=progress,
                )
    finally:
        store.close()
    opened = (
        f"; {counted(summary.open_traces, 'trace')} still open, left for the next pull"
        if summary.open_traces
        else ""
    )
    _say(
        f"pulled {counted(summary.traces, 'trace')} from {url.shown}: "
        f"{counted(summary.total, 'trajectory')} ({summary.added} added, {summary.updated} "
        f"updated, {summary.unchanged} unchanged) into dataset {summary.dataset}{opened}"
    )
    for loss in summary.losses:
        _say(f"accepted loss: {loss.line()}", "yellow")
    for line in summary.ignored.lines():
        _say(f"{line}{'' if verbose else ' (see --verbose)'}", "yellow")
    if verbose:
        for line in summary.ignored.details():
            _say(f"  {line}")


def _say(text: str, style: str | None = None) -> None:
    console.print(text, style=style, highlight=False, markup=False, soft_wrap=True)
