"""``trajudge export``: write a dataset's judgments, human labels and calibration back to where
its traces live (OTel evaluation events, Phoenix span annotations)."""

from __future__ import annotations

from typing import Annotated

import typer

from trajudge.cli._app import DEFAULT_DB, DbOption, app, console, handle_user_errors
from trajudge.core import counted


@app.command("export")
@handle_user_errors
def export_command(
    dataset: Annotated[str, typer.Argument(help="The dataset whose results are written.")],
    to: Annotated[
        list[str],
        typer.Option(
            "--to",
            help="Target: otlp-file:PATH | otlp+http://HOST:PORT | phoenix+http://HOST:PORT "
            "| mlflow+http://HOST:PORT (repeat for several).",
        ),
    ],
    n_boot: Annotated[
        int, typer.Option("--n-boot", min=100, help="Bootstrap resamples for κ's interval.")
    ] = 2000,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Write judgments, human labels and each judge's calibration (κ with its interval, TPR,
    TNR, labels count, configuration hash, rubric id and version) as OTel
    gen_ai.evaluation.result events on the judged spans, as Phoenix span annotations, or as
    MLflow assessments (the calibration as an MLflow run).

    Exporting again adds nothing twice; an interrupted export completes on the next one. No
    trajectory text is written, and explanations are redacted of secrets.
    """
    # imported on use: `trajudge --help` does not load these rooms
    from trajudge.backends._export import export
    from trajudge.store import Store

    store = Store(db)
    try:
        with console.status(f"exporting {dataset} ..."):
            summaries = export(store, dataset, to, n_boot=n_boot)
    finally:
        store.close()
    for s in summaries:
        _say(
            f"exported {counted(s.judgments, 'judgment')} and {counted(s.labels, 'label')} "
            f"to {s.target}: {s.written} written, {s.unchanged} already there"
        )
    shown: set[str] = set()
    for s in summaries:
        for note in s.notes:
            if note not in shown:
                shown.add(note)
                _say(note, "yellow")


def _say(text: str, style: str | None = None) -> None:
    console.print(text, style=style, highlight=False, markup=False, soft_wrap=True)
