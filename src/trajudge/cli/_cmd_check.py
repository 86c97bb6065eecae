"""``trajudge check``: run the deterministic rule checks over a stored dataset."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from trajudge.cli._app import DEFAULT_DB, DbOption, app, console, handle_user_errors

if TYPE_CHECKING:
    from trajudge.rules import CheckSummary, DatasetCheck


def _fmt(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.3f}"


def print_summary(run: DatasetCheck) -> None:
    """The per-check table and the overall line."""
    s: CheckSummary = run.summary
    table = Table(title=f"rule checks: {run.dataset} ({run.spec_source})")
    table.add_column("check")
    table.add_column("severity")
    for name in ("runs", "passed", "failed", "mean score"):
        table.add_column(name, justify="right")
    for name, row in s.checks.items():
        failed = str(row["failed"])
        if row["failed"] and "gate" in row["severity"]:
            failed = f"[bold red]{failed}[/]"
        table.add_row(
            name,
            row["severity"],
            str(row["runs"]),
            str(row["passed"]),
            failed,
            _fmt(row["mean_score"]),
        )
    console.print(table)
    console.print(
        f"{s.trajectories} trajectories: {s.passed} passed, "
        f"{s.gate_failures} with a failed gate, {s.regressions} with a regression; "
        f"mean score {_fmt(s.mean_score)}",
        highlight=False,
        markup=False,
    )


@app.command("check")
@handle_user_errors
def check_command(
    dataset: Annotated[str, typer.Argument(help="The stored dataset to check.")],
    spec: Annotated[
        Path | None,
        typer.Option(
            "--spec",
            help="Spec YAML (defaults + tasks); merged over the specs stored with the dataset.",
        ),
    ] = None,
    db: DbOption = DEFAULT_DB,
    as_json: Annotated[bool, typer.Option("--json", help="Print machine JSON instead.")] = False,
    fail_on_gate: Annotated[
        bool, typer.Option("--fail-on-gate", help="Exit with code 1 when any gate fails.")
    ] = False,
) -> None:
    """Run the rule checks on every trajectory of DATASET and store the reports.

    Specs come from the dataset (e.g. τ-bench's expected actions); --spec adds to them or
    overrides them: the file's defaults sit below the stored spec of a task, the file's entry
    for a task on top of it.
    """
    from trajudge.rules import check_stored_dataset
    from trajudge.store import Store

    store = Store(db)
    progress = Progress(
        TextColumn("checking"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        disable=as_json,
        transient=True,
    )
    task = progress.add_task("check", total=None)
    started: list[bool] = []

    def start(total: int) -> None:  # the bar appears once the spec file has loaded
        progress.update(task, total=total)
        progress.start()
        started.append(True)

    try:
        run = check_stored_dataset(
            store,
            dataset,
            spec,
            on_start=start,
            on_progress=lambda k: progress.advance(task, k),
            keep_reports=as_json,  # only --json prints every report
        )
    finally:
        if started:
            progress.stop()
    if as_json:
        out = {
            "dataset": run.dataset,
            "spec_source": run.spec_source,
            "summary": run.summary.to_dict(),
            "reports": [r.to_dict() for r in run.reports],
        }
        typer.echo(json.dumps(out, ensure_ascii=False))
    else:
        print_summary(run)
    if fail_on_gate and run.summary.gate_failures:
        raise typer.Exit(1)
