"""`trajudge reliability`: pass@k, pass^k and unstable tasks for one verdict source."""

from __future__ import annotations

import json
import math
import re
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from trajudge.cli._app import (
    DEFAULT_DB,
    DbOption,
    app,
    console,
    fail,
    handle_user_errors,
    require_store,
)
from trajudge.core import counted

if TYPE_CHECKING:
    from trajudge.calibration import ReliabilityResult


def parse_ks(text: str) -> list[int]:
    """Parse ``"1,2,3,4"`` (or ``"1-4"``) into sorted positive ints."""
    ks: set[int] = set()
    try:
        for part in text.split(","):
            part = part.strip()
            if "-" in part:
                lo, hi = (int(x) for x in part.split("-", 1))
                ks.update(range(lo, hi + 1))
            elif part:
                ks.add(int(part))
    except ValueError:
        raise fail(f"--k: expected integers like 1,2,3,4 or 1-4, got {text!r}") from None
    if not ks or min(ks) < 1:
        raise fail(f"--k: values must be positive integers, got {text!r}")
    return sorted(ks)


def natural_sorted(ids: list[str]) -> list[str]:
    """Sort ids so that "2" comes before "10"."""
    return sorted(ids, key=lambda s: [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", s)])


def _fmt(v: float) -> str:
    return "n/a" if math.isnan(v) else f"{v:.3f}"


def print_reliability(result: ReliabilityResult, title: str) -> None:
    table = Table(title=title)
    table.add_column("k", justify="right")
    table.add_column("pass^k", justify="right")
    table.add_column("pass@k", justify="right")
    table.add_column("tasks", justify="right")
    table.add_column("tasks with < k trials", justify="right")
    for k in result.ks:
        short = result.short_tasks[k]
        table.add_row(
            str(k),
            _fmt(result.pass_hat[k]),
            _fmt(result.pass_at[k]),
            str(result.n_tasks[k]),
            (", ".join(short[:8]) + (" ..." if len(short) > 8 else "")) if short else "0",
        )
    console.print(table)
    n_tasks = len(result.per_task)
    console.print(
        f"{counted(result.n_trajectories, 'trajectory')}, {counted(n_tasks, 'task')}; "
        f"{len(result.unstable_tasks)} unstable (some trials pass, some fail)"
        + (f"; {result.n_unknown} without a verdict" if result.n_unknown else "")
    )
    if result.unstable_tasks:
        console.print(
            "unstable tasks: " + ", ".join(natural_sorted(result.unstable_tasks)), highlight=False
        )
    # imported on use: `trajudge --help` and the other commands do not load this room
    from trajudge.report.inputs._sources import USAGE_COLUMNS

    means = [c for c in (f"mean_{u}" for u in USAGE_COLUMNS) if c in result.per_task]
    if means:
        parts = []
        for c in means:
            v = result.per_task[c].mean()
            if not math.isnan(v):
                parts.append(f"{c.removeprefix('mean_')} {v:.4g}")
        if parts:
            console.print("mean per task: " + ", ".join(parts))
    if not result.by_intent.empty:
        t = Table(title="pass^k by intent")
        t.add_column("intent", overflow="fold")
        t.add_column("tasks", justify="right")
        t.add_column("runs", justify="right")
        for k in result.ks:
            t.add_column(f"pass^{k}", justify="right")
        for row in result.by_intent.to_dict(orient="records"):
            t.add_row(
                str(row["intent"]),
                str(row["tasks"]),
                str(row["trajectories"]),
                *(_fmt(float(row[f"pass^{k}"])) for k in result.ks),
            )
        console.print(t)


@app.command("reliability")
@handle_user_errors
def reliability_cmd(
    dataset: Annotated[str, typer.Argument(help="Dataset name in the store.")],
    k: Annotated[str, typer.Option("--k", help="Values of k, e.g. 1,2,3,4 or 1-8.")] = "1,2,3,4",
    source: Annotated[
        str, typer.Option("--source", help="Verdict source: outcome (environment) or rules.")
    ] = "outcome",
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON for machines.")] = False,
    db: DbOption = DEFAULT_DB,
) -> None:
    """pass@k and pass^k per task (unbiased estimators), averaged over tasks."""
    # imported on use: `trajudge --help` and the other commands do not load this room
    from trajudge.calibration import reliability
    from trajudge.report.inputs._sources import verdict_frame
    from trajudge.store import Store

    ks = parse_ks(k)
    frame = verdict_frame(Store(require_store(db)), dataset, source)
    result = reliability(frame, ks=ks)
    if as_json:
        typer.echo(json.dumps({"dataset": dataset, "source": source, **result.to_dict()}))
        return
    print_reliability(result, f"{dataset}: reliability ({source})")
