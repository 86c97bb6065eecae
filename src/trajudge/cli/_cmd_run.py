"""`trajudge run CONFIG`: import, rules, judges, labels, report and the CI exit code."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table
from rich.text import Text

from trajudge.cli._app import (
    DEFAULT_DB,
    DbOption,
    app,
    console,
    err_console,
    handle_user_errors,
    store_url,
)

if TYPE_CHECKING:
    from trajudge.pipeline import RunSummary


def print_run_summary(s: RunSummary) -> None:
    table = Table(title=f"trajudge run: {s.dataset}", show_header=False)
    table.add_column("what")
    table.add_column("count", justify="right")
    table.add_row("trajectories", str(s.trajectories))
    if s.pulled is not None:
        table.add_row("traces pulled from the source", str(s.pulled.traces))
    table.add_row("failed a rule gate (no judge call)", str(s.gate_failures))
    table.add_row("judge calls made this run", str(s.judge_calls))
    table.add_row("served from the cache", str(s.cache_hits))
    table.add_row("already stored (resumed)", str(s.resumed))
    table.add_row("judge errors (not scored)", str(s.errors))
    if s.no_reference:
        table.add_row("no reference to compare with (not judged)", str(s.no_reference))
    if s.dev_items:
        table.add_row("dev trajectories (threshold tuning only)", str(s.dev_items))
    table.add_row("cost (USD)", f"{s.cost_usd:.4f}")
    if s.labels is not None:
        table.add_row("labels imported", str(s.labels.total))
    if s.aligned is not None:
        table.add_row("aligned judge saved", s.aligned)
    if s.align_refused is not None:
        table.add_row("aligned judge not saved", s.align_refused.removeprefix("not saved: "))
    for e in s.exported:
        table.add_row(f"written to {e.target}", f"{e.written} ({e.unchanged} already there)")
    table.add_row("time (s)", ", ".join(f"{k} {v:.1f}" for k, v in s.phase_s.items()))
    console.print(table)


@app.command("run")
@handle_user_errors
def run_cmd(
    ctx: typer.Context,
    config: Annotated[Path, typer.Argument(help="trajudge.yaml")],
    n_boot: Annotated[
        int | None, typer.Option("--n-boot", min=1, help="Bootstrap resamples (config default).")
    ] = None,
    db: DbOption = DEFAULT_DB,
) -> None:
    """The whole job: import, rule checks, judges (gates first, cache, resume), labels,
    calibration and reliability report; exits 1 when a CI gate fails. The store is --db,
    else TRAJUDGE_DB, else the config's db:."""
    # imported on use: `trajudge --help` and the other commands do not load this room
    from trajudge.config import load_config
    from trajudge.pipeline import run_pipeline
    from trajudge.report import print_report

    url = store_url(ctx, db, load_config(config).db)
    summary = run_pipeline(config, db=url, console=console, n_boot=n_boot)
    if summary.report is not None:
        print_report(summary.report, console)
    print_run_summary(summary)
    for path in summary.paths:
        console.print(Text(f"wrote {path}"), soft_wrap=True)
    if not summary.core_passed:
        err_console.print(Text(f"stopped after the core layer: {summary.core}", style="bold red"))
    elif summary.report is not None:
        for reason in summary.report.gate_failures:
            err_console.print(Text(f"gate failed: {reason}", style="bold red"), soft_wrap=True)
    raise typer.Exit(summary.exit_code)
