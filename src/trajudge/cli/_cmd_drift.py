"""`trajudge drift`: an old and a new judge on a pinned anchor set, with CI gates.

Exit codes: 0 when every gate passes, 1 when a ``--fail-under`` gate fails (every reason
printed), 2 for bad input (one red line).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from trajudge.cli._app import (
    DEFAULT_DB,
    DbOption,
    app,
    console,
    err_console,
    existing_store_url,
    handle_user_errors,
)
from trajudge.cli._cmd_reliability import parse_ks
from trajudge.core import InputError


@app.command("drift")
@handle_user_errors
def drift_cmd(
    ctx: typer.Context,
    dataset: Annotated[str, typer.Argument(help="Dataset holding the anchor items.")],
    judge: Annotated[
        list[str],
        typer.Option("--judge", help="Give it twice: the old judge, then the new one."),
    ],
    evalset: Annotated[
        Path | None,
        typer.Option(
            "--evalset",
            help="The pinned anchor set: its core layer (else every case) with the cases' "
            "labels. Default: every item both judges judged, against the store's labels.",
        ),
    ] = None,
    labels: Annotated[
        str, typer.Option("--labels", help="Label source without --evalset (default human).")
    ] = "human",
    k: Annotated[str, typer.Option("--k", help="Values of k for pass^k, e.g. 1,2.")] = "1",
    fail_under: Annotated[
        list[str] | None,
        typer.Option(
            "--fail-under",
            help="CI gate, repeatable: drift.kappa.lo>=-0.05 (kappa new - old), "
            "drift.pass_rate, drift.changed.hi<=0.1, drift.pass^K; .lo / .hi gate on an end "
            "of the paired 95% interval.",
        ),
    ] = None,
    threshold: Annotated[
        float | None, typer.Option("--threshold", help="label/score >= X is a pass.")
    ] = None,
    rubric_dir: Annotated[
        list[Path] | None, typer.Option("--rubric-dir", help="Folder of your own rubrics.")
    ] = None,
    out: Annotated[Path, typer.Option("--out", help="Folder for drift.md and drift.json.")] = Path(
        "trajudge-drift"
    ),
    n_boot: Annotated[int, typer.Option("--n-boot", min=1, help="Bootstrap resamples.")] = 2000,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the bootstrap.")] = 0,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Has the judge drifted? Paired kappa, pass rate and pass^k of an old and a new judge."""
    # imported on use: `trajudge --help` and the other commands do not load these rooms
    from trajudge.report.panel._drift import (
        drift_report,
        drift_sections,
        parse_drift_gate,
        write_drift,
    )
    from trajudge.report.render._text import print_sections
    from trajudge.store import Store

    if len(judge) != 2:
        raise InputError("--judge", reason=f"give it twice (old, then new), got {len(judge)}")
    gates = fail_under or []
    for expr in gates:
        parse_drift_gate(expr)
    ks = parse_ks(k)
    store = Store(existing_store_url(ctx, db, None))
    try:
        report = drift_report(
            store,
            dataset,
            old=judge[0],
            new=judge[1],
            evalset=evalset,
            label_source=labels,
            threshold=threshold,
            rubric_dirs=rubric_dir or [],
            ks=ks,
            n_boot=n_boot,
            seed=seed,
            fail_under=gates,
        )
    finally:
        store.close()
    print_sections(drift_sections(report), console)
    console.print()
    for path in write_drift(report, out):
        console.print(Text(f"wrote {path}"), soft_wrap=True)
    if report.gate_failures:
        for reason in report.gate_failures:
            err_console.print(Text(f"gate failed: {reason}", style="bold red"), soft_wrap=True)
        raise typer.Exit(1)
