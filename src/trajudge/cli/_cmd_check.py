"""``trajudge check``: run the deterministic rule checks over a stored dataset."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from trajudge.cli._app import DEFAULT_DB, DbOption, app, console, handle_user_errors, require_store
from trajudge.core import InputError, counted

if TYPE_CHECKING:
    from trajudge.rules import CheckSummary, DatasetCheck


def _fmt(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.3f}"


def print_summary(run: DatasetCheck) -> None:
    """The per-check table and the overall line."""
    print_check_summary(f"{run.dataset} ({run.spec_source})", run.summary)


def print_check_summary(title: str, s: CheckSummary) -> None:
    """The per-check table and the overall line of ``s``."""
    table = Table(title=f"rule checks: {title}")
    table.add_column("check")
    table.add_column("severity")
    for name in ("runs", "passed", "failed", "mean score"):
        table.add_column(name, justify="right")
    for name, row in s.checks.items():
        failed: str | Text = str(row["failed"])
        if row["failed"] and "gate" in row["severity"]:
            failed = Text(str(row["failed"]), style="bold red")
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
        f"{counted(s.trajectories, 'trajectory')}: {s.passed} passed, "
        f"{s.gate_failures} with a failed gate, {s.regressions} with a regression; "
        f"mean score {_fmt(s.mean_score)}",
        highlight=False,
        markup=False,
    )


@app.command("check")
@handle_user_errors
def check_command(
    dataset: Annotated[
        str | None, typer.Argument(help="The stored dataset to check (or --parquet).")
    ] = None,
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
    parquet: Annotated[
        Path | None,
        typer.Option(
            "--parquet",
            help="Check a trajectory Parquet file block by block instead of a stored dataset "
            "(any size; specs from --spec only).",
        ),
    ] = None,
    engine: Annotated[
        str,
        typer.Option("--engine", help="With --parquet: local, or ray (one task per block)."),
    ] = "local",
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers",
            help="With --parquet --engine local: processes checking blocks side by side "
            "(default: one per CPU from 50,000 trajectories on; 1: this process only).",
        ),
    ] = None,
    address: Annotated[
        str | None,
        typer.Option("--address", help="Ray cluster of --engine ray: auto, ray://host:10001."),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="With --parquet: write the reports to this Parquet file."),
    ] = None,
) -> None:
    """Run the rule checks on every trajectory of DATASET and store the reports.

    Specs come from the dataset (e.g. τ-bench's expected actions); --spec adds to them or
    overrides them: the file's defaults sit below the stored spec of a task, the file's entry
    for a task on top of it.
    """
    # imported on use: `trajudge --help` and the other commands do not load this room
    from trajudge.rules import check_stored_dataset
    from trajudge.store import Store

    if parquet is not None:
        if dataset is not None:
            raise InputError(
                "trajudge check", field="DATASET", reason="give a dataset or --parquet"
            )
        _check_file(parquet, spec, engine, workers, address, out, as_json, fail_on_gate)
        return
    if dataset is None:
        raise InputError(
            "trajudge check", field="DATASET", reason="give a dataset name (or --parquet)"
        )
    for name, value in (("--out", out), ("--address", address), ("--workers", workers)):
        if value is not None:
            raise InputError(name, reason="applies to --parquet only")
    if engine != "local":
        raise InputError(
            "--engine", reason="a stored dataset is checked locally; --engine is for --parquet"
        )
    store = Store(require_store(db))
    progress = _progress(as_json)
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
        doc = {
            "dataset": run.dataset,
            "spec_source": run.spec_source,
            "summary": run.summary.to_dict(),
            "reports": [r.to_dict() for r in run.reports],
        }
        typer.echo(json.dumps(doc, ensure_ascii=False))
    else:
        print_summary(run)
    if fail_on_gate and run.summary.gate_failures:
        raise typer.Exit(1)


def _progress(as_json: bool) -> Progress:
    return Progress(
        TextColumn("checking"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        disable=as_json,
        transient=True,
    )


def _check_file(
    parquet: Path,
    spec: Path | None,
    engine: str,
    workers: int | None,
    address: str | None,
    out: Path | None,
    as_json: bool,
    fail_on_gate: bool,
) -> None:
    """``trajudge check --parquet``: the summary of a file checked block by block."""
    # imported on use: `trajudge --help` and the other commands do not load this room
    from trajudge.rules import RULE_ENGINES, check_parquet, load_specs, resolve_specs

    if engine not in RULE_ENGINES:
        raise InputError("--engine", reason=f"{engine!r} is not one of local, ray")
    if address is not None and engine != "ray":
        raise InputError("--address", reason="a cluster address applies to --engine ray")
    if workers is not None and engine != "local":
        raise InputError("--workers", reason="applies to --engine local (Ray has its CPUs)")
    spec_set = load_specs(spec) if spec is not None else None
    tasks, defaults = resolve_specs({}, spec_set)
    progress = _progress(as_json)
    task = progress.add_task("check", total=None)
    with progress:
        summary = check_parquet(
            parquet,
            tasks,
            defaults,
            engine="ray" if engine == "ray" else "local",
            workers=workers,  # spawned workers import the entry script: it has the guard
            address=address,
            out=out,
            on_start=lambda total: progress.update(task, total=total),
            on_progress=lambda k: progress.advance(task, k),
        )
    if as_json:
        doc = {"file": str(parquet), "summary": summary.to_dict()}
        typer.echo(json.dumps(doc, ensure_ascii=False))
    else:
        print_check_summary(str(parquet), summary)
    if fail_on_gate and summary.gate_failures:
        raise typer.Exit(1)
