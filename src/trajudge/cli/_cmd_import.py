"""``trajudge import``: read a file of trajectories (or pull a tracing backend's new traces)
and store it as a dataset."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from trajudge.cli._app import DEFAULT_DB, DbOption, app, console, handle_user_errors
from trajudge.core import InputError, counted
from trajudge.trajectories import FORMATS

if TYPE_CHECKING:
    from trajudge.trajectories import Trajectory


@app.command("import")
@handle_user_errors
def import_command(
    source: Annotated[
        str,
        typer.Argument(
            help="The file to import, or a tracing backend: phoenix+http://HOST:6006/PROJECT, "
            "mlflow+http://HOST:5000/EXPERIMENT.",
            metavar="FILE|URL",
        ),
    ],
    fmt: Annotated[
        str,
        typer.Option("--format", help=f"Input format: {' | '.join(FORMATS)}."),
    ] = "auto",
    dataset: Annotated[
        str | None,
        typer.Option("--dataset", help="Dataset name (default: the file name without suffix)."),
    ] = None,
    task_id: Annotated[
        str | None, typer.Option("--task-id", help="Task id for a file that has none.")
    ] = None,
    trial: Annotated[
        int | None,
        typer.Option(
            "--trial", min=0, help="Trial (the first one when the file has several runs)."
        ),
    ] = None,
    outcome: Annotated[
        bool | None,
        typer.Option("--outcome/--failed", help="Ground truth for runs that have none."),
    ] = None,
    mapping: Annotated[
        Path | None,
        typer.Option("--map", help="CSV/YAML/JSON: trajectory id -> task_id, trial, outcome."),
    ] = None,
    per_turn: Annotated[
        bool, typer.Option("--per-turn", help="OTel: one trajectory per turn of a conversation.")
    ] = False,
    strict: Annotated[
        bool, typer.Option("--strict", help="Fail (exit 2) when anything in the file was not used.")
    ] = False,
    accept_loss: Annotated[
        list[str] | None,
        typer.Option(
            "--accept-loss",
            help="Import although the file holds more than was read of this count "
            "(tool_calls, failed_calls, user_messages, prompt_tokens, completion_tokens); "
            "repeat for several. The loss is printed.",
        ),
    ] = None,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="List every ignored span, message or item.")
    ] = False,
    since: Annotated[
        str | None,
        typer.Option("--since", help="Backend: spans started at or after (2026-01-31, 12h, 7d)."),
    ] = None,
    until: Annotated[
        str | None, typer.Option("--until", help="Backend: spans started before this time.")
    ] = None,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Import trajectories: native JSONL/Parquet, chat logs, OTel traces, τ-bench, τ²-bench,
    Inspect, SWE-agent, OpenHands.

    The whole file is read and validated first (one trajectory at a time, so a big file fits
    in memory) and then stored in one transaction; importing the same file again changes
    nothing. What a reader did not use is counted and printed.

    A file holding more tool calls, failed calls, user messages or tokens than was read is
    refused (exit 2) unless --accept-loss names that count.

    A backend URL pulls only what is new since the last pull of the same URL into the same
    dataset (default: the project's name), within --since/--until.
    """
    # imported on use: `trajudge --help` does not load this room
    from trajudge.backends import is_backend_url

    if is_backend_url(source):
        # imported on use: a file's import does not load the backends' command
        from trajudge.cli._import_backend import pull_command

        pull_command(
            source,
            dataset=dataset,
            since=since,
            until=until,
            strict=strict,
            accept_loss=accept_loss or (),
            verbose=verbose,
            db=db,
            unsupported={
                "--format": fmt != "auto",
                "--task-id": task_id is not None,
                "--trial": trial is not None,
                "--outcome/--failed": outcome is not None,
                "--map": mapping is not None,
                "--per-turn": per_turn,
            },
        )
        return
    for name, value in (("--since", since), ("--until", until)):
        if value is not None:
            raise InputError(name, reason="only for a tracing backend URL, not a file")
    file = Path(source)
    # imported on use: `trajudge --help` and the other commands do not load this room
    from trajudge.store import Store
    from trajudge.trajectories import ReadOptions, load_mapping, stream_trajectories

    options = ReadOptions(
        task_id=task_id,
        trial=trial,
        outcome=outcome,
        mapping=None if mapping is None else load_mapping(mapping),
        per_turn=per_turn,
    )
    stream = stream_trajectories(
        file, fmt=fmt, options=options, strict=strict, accept_loss=accept_loss or ()
    )
    name = dataset or file.stem
    store = Store(db)
    try:
        with console.status(f"reading {file} ...") as status:

            def streamed() -> Iterator[Trajectory]:
                for t in stream:
                    if stream.count % 1000 == 0:
                        status.update(f"reading {file} ... {stream.count} trajectories")
                    yield t

            summary = store.import_dataset(
                name,
                streamed(),
                stream.specs,
                source=stream.source,
                source_sha256=stream.sha256,
                fmt=stream.fmt,
            )
    finally:
        store.close()
    console.print(
        f"imported {counted(summary.total, 'trajectory')} ({summary.added} added, "
        f"{summary.updated} updated, {summary.unchanged} unchanged), "
        f"{counted(summary.specs, 'task spec')} into dataset {summary.dataset}",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )
    for loss in stream.losses:
        console.print(
            f"accepted loss: {loss.line()}",
            style="yellow",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
    for line in stream.ignored.lines():
        hint = "" if verbose else " (see --verbose)"
        console.print(
            f"{line}{hint}", style="yellow", highlight=False, markup=False, soft_wrap=True
        )
    if verbose:
        for line in stream.ignored.details():
            console.print(f"  {line}", highlight=False, markup=False, soft_wrap=True)
