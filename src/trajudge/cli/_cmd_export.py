"""``trajudge export DATASET --to URL``: write judgments, human labels and calibration back to
where the traces live."""

from __future__ import annotations

from typing import Annotated

import typer

from trajudge.cli._app import DEFAULT_DB, DbOption, app, console, handle_user_errors
from trajudge.core import counted


@app.command("export")
@handle_user_errors
def export_command(
    dataset: Annotated[str, typer.Argument(help="The stored dataset to export.")],
    to: Annotated[
        str,
        typer.Option("--to", help="Where: mlflow+http://HOST:5000 (assessments and runs)."),
    ],
    calibration: Annotated[
        bool,
        typer.Option("--calibration/--no-calibration", help="Also each judge's calibration."),
    ] = True,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Export a dataset's judgments and human labels (and each judge's calibration: κ, TPR and
    TNR with their intervals) to the tracing backend its traces came from.

    Idempotent: what the target already holds is read first and only what is missing or
    changed is written, so a re-export adds nothing twice and an interrupted one completes.
    No trajectory text and no secret is exported.
    """
    # imported on use: `trajudge --help` does not load these rooms
    from trajudge.backends import parse_backend_url
    from trajudge.backends._mlflow_export import export_mlflow
    from trajudge.store import Store

    url = parse_backend_url(to, kinds=("mlflow",), need_name=False)
    store = Store(db)
    try:
        with console.status(f"exporting {dataset} to {url.shown} ...") as status:
            summary = export_mlflow(
                store,
                url,
                dataset,
                calibration=calibration,
                progress=lambda s: status.update(
                    f"exporting {dataset} to {url.shown} ... {sum(s.written.values())} written"
                ),
            )
    finally:
        store.close()

    def kinds(what: dict[str, int]) -> str:
        parts = [counted(n, k) for k, n in sorted(what.items())]
        return ", ".join(parts) if parts else "nothing"

    _say(
        f"exported dataset {dataset} to {url.shown}: written {kinds(summary.written)}; "
        f"replaced {kinds(summary.replaced)}; already there {kinds(summary.kept)}"
    )
    for reason, n in sorted(summary.left_out.items()):
        _say(f"not exported: {n} {reason}", "yellow")
    for note in summary.notes:
        _say(note, "yellow")


def _say(text: str, style: str | None = None) -> None:
    console.print(text, style=style, highlight=False, markup=False, soft_wrap=True)
