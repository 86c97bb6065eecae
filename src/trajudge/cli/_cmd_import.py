"""``trajudge import``: read a file of trajectories and store it as a dataset."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from trajudge.cli._app import DEFAULT_DB, DbOption, app, console, handle_user_errors
from trajudge.store import Store
from trajudge.trajectories import FORMATS, read_trajectories


@app.command("import")
@handle_user_errors
def import_command(
    file: Annotated[Path, typer.Argument(help="The file to import.")],
    fmt: Annotated[
        str,
        typer.Option("--format", help=f"Input format: {' | '.join(FORMATS)}."),
    ] = "auto",
    dataset: Annotated[
        str | None,
        typer.Option("--dataset", help="Dataset name (default: the file name without suffix)."),
    ] = None,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Import trajectories (JSONL, Parquet, OpenAI messages, OTel GenAI traces, τ-bench).

    The whole file is read and validated first and then stored in one transaction; importing
    the same file again changes nothing.
    """
    with console.status(f"reading {file} ..."):
        result = read_trajectories(file, fmt=fmt)
    name = dataset or file.stem
    store = Store(db)
    try:
        with console.status(f"storing {len(result.trajectories)} trajectories ..."):
            summary = store.import_dataset(
                name,
                result.trajectories,
                result.specs,
                source=result.source,
                source_sha256=result.sha256,
                fmt=result.fmt,
            )
    finally:
        store.close()
    console.print(
        f"imported {summary.total} trajectories ({summary.added} added, {summary.updated} "
        f"updated, {summary.unchanged} unchanged), {summary.specs} task specs into dataset "
        f"{summary.dataset}",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )
