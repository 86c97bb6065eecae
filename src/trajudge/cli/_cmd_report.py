"""`trajudge report` and `trajudge calibrate`: the report, its files and the CI exit code.

Exit codes: 0 when every gate passes, 1 when a ``--fail-under`` gate or a baseline check
fails (every reason printed), 2 for bad input (one red line).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from trajudge.cli._app import (
    DEFAULT_DB,
    DbOption,
    app,
    console,
    err_console,
    handle_user_errors,
)
from trajudge.cli._cmd_reliability import parse_ks
from trajudge.core import InputError

if TYPE_CHECKING:
    from trajudge.report import Report

OutOption = Annotated[
    Path, typer.Option("--out", help="Folder for report.md, report.html, report.json.")
]
FormatOption = Annotated[str, typer.Option("--format", help="Files to write: any of md,html,json.")]
KOption = Annotated[str, typer.Option("--k", help="Values of k, e.g. 1,2,3,4 or 1-8.")]
FailOption = Annotated[
    list[str] | None,
    typer.Option(
        "--fail-under",
        help="CI gate, repeatable: kappa>=0.6, kappa[JUDGE]>=0.6, flip_rate<=0.1, "
        "pass^4>=0.5 (primary source: the first judge, else outcome), pass^4[outcome]>=0.5, "
        "ac1, agreement, tpr, tnr, pass@K, cost_per_1k. Add .lo / .hi to gate on an end of "
        "the 95% interval: kappa.lo>=0.4, flip_rate.hi<=0.1.",
    ),
]


def _positive(option: str, value: float) -> float:
    if not value > 0:
        raise typer.BadParameter(f"{value:g} is not above 0", param_hint=option)
    return value


BaselineOption = Annotated[
    Path | None,
    typer.Option(
        "--baseline",
        help="A previous report.json: fail on cost, tokens, turns or latency per trajectory "
        "above --baseline-tolerance x its own, or a pass^k whose upper bound falls below the "
        "baseline's estimate.",
    ),
]
ToleranceOption = Annotated[
    float,
    typer.Option(
        "--baseline-tolerance",
        callback=lambda v: _positive("--baseline-tolerance", v),
        help="The usage ratio to --baseline that fails the report (> 0).",
    ),
]
ThresholdOption = Annotated[
    float | None,
    typer.Option("--threshold", help="label/score >= X is a pass on ordinal scales."),
]
NBootOption = Annotated[int, typer.Option("--n-boot", min=1, help="Bootstrap resamples.")]
SeedOption = Annotated[int, typer.Option("--seed", help="Seed of every bootstrap.")]
RubricOption = Annotated[
    str | None,
    typer.Option(
        "--rubric",
        help="Only judges and labels of this rubric; its pass threshold cuts ordinal scales.",
    ),
]
RubricDirOption = Annotated[
    list[Path] | None,
    typer.Option("--rubric-dir", help="Folder of your own rubrics (repeatable)."),
]
PrimaryOption = Annotated[
    str | None,
    typer.Option("--primary", help="Source of unqualified pass^k gates (judge name, outcome...)."),
]
JuryOption = Annotated[
    bool, typer.Option("--jury", help="Add the jury of each rubric's judges as a judge.")
]
StopWhenOption = Annotated[
    str | None,
    typer.Option(
        "--stop-when",
        help="--strategy active: when labelling may stop, STATISTIC>=NUMBER[@LEVEL] with "
        "kappa, tpr, tnr or pass_rate (default kappa>=0.6@95%; the config's report.stop_when).",
    ),
]
InconsistentOption = Annotated[
    str | None,
    typer.Option(
        "--inconsistent-as",
        help="What a pairwise/nominal item whose orders disagree becomes: tie or inconsistent.",
    ),
]


def _inconsistent(value: str | None) -> str | None:
    if value not in (None, "tie", "inconsistent"):
        raise InputError("--inconsistent-as", reason=f"{value!r} is not tie or inconsistent")
    return value


def _finish(report: Report, out: Path, fmt: list[str]) -> None:
    # imported on use: `trajudge --help` and the other commands do not load this room
    from trajudge.report import print_report, write_report

    print_report(report, console)
    paths = write_report(report, out, fmt)
    console.print()
    for path in paths:
        if path.parent == out:
            console.print(Text(f"wrote {path}"), soft_wrap=True)
    if report.gate_failures:
        for reason in report.gate_failures:
            err_console.print(Text(f"gate failed: {reason}", style="bold red"), soft_wrap=True)
        raise typer.Exit(1)


@app.command("report")
@handle_user_errors
def report_cmd(
    ctx: typer.Context,
    dataset: Annotated[
        str | None,
        typer.Argument(help="Dataset name in the store (default: the --config's dataset)."),
    ] = None,
    out: OutOption = Path("trajudge-report"),
    fmt: FormatOption = "md,html,json",
    k: KOption = "1,2,3,4",
    labels: Annotated[
        str,
        typer.Option(
            "--labels", help="Label source: human, or a reference source such as env_reward."
        ),
    ] = "human",
    fail_under: FailOption = None,
    baseline: BaselineOption = None,
    baseline_tolerance: ToleranceOption = 1.5,
    threshold: ThresholdOption = None,
    n_boot: NBootOption = 2000,
    seed: SeedOption = 0,
    primary: PrimaryOption = None,
    fingerprint: Annotated[
        Path | None,
        typer.Option("--fingerprint", help="A saved agent fingerprint to compare with."),
    ] = None,
    rubric: RubricOption = None,
    rubric_dir: RubricDirOption = None,
    jury: JuryOption = False,
    inconsistent_as: InconsistentOption = None,
    stop_when: StopWhenOption = None,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            "-c",
            help="trajudge.yaml: the report `trajudge run` writes (its report:, gates, labels "
            "source, rubric_dirs, dev_share, db); options given here override it.",
        ),
    ] = None,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Judges against labels (kappa with CIs) beside pass^k per source; files and CI gates.

    Without --config the rule severity that gates is `gate` (what `trajudge judge` skips by
    default); with it, the config's `gates`, as in `trajudge run`.
    """
    # imported on use: `trajudge --help` and the other commands do not load this room
    from trajudge.cli._app import existing_store_url, given_on_command_line
    from trajudge.config import dataset_name, load_config
    from trajudge.pipeline import config_report
    from trajudge.report import build_report, parse_formats, parse_gate, parse_stop_rule
    from trajudge.store import Store

    cfg = load_config(config) if config is not None else None
    name = dataset or (dataset_name(cfg) if cfg is not None else None)
    if not name:
        raise InputError(
            "trajudge report", field="DATASET", reason="give a dataset name or --config"
        )
    for expr in fail_under or []:
        parse_gate(expr)
    if stop_when is not None:
        parse_stop_rule(stop_when)
    args = {
        "label_source": labels,
        "ks": parse_ks(k),
        "n_boot": n_boot,
        "seed": seed,
        "fail_under": fail_under or [],
        "baseline": baseline,
        "baseline_tolerance": baseline_tolerance,
        "primary_source": primary,
        "rubric_dirs": rubric_dir or [],
        "stop_when": stop_when or "kappa>=0.6",
    }
    fixed = {
        "threshold": threshold,
        "fingerprint_file": fingerprint,
        "rubric": rubric,
        "jury": jury,
        "inconsistent_as": _inconsistent(inconsistent_as),
    }
    formats = parse_formats(fmt)
    url = existing_store_url(ctx, db, cfg.db if cfg is not None else None)
    store = Store(url)
    try:
        if cfg is None:
            report = build_report(store, name, **args, **fixed)  # type: ignore[arg-type]
        else:
            option = {
                "label_source": "labels", "ks": "k", "n_boot": "n_boot", "seed": "seed",
                "fail_under": "fail_under", "baseline": "baseline", "primary_source": "primary",
                "rubric_dirs": "rubric_dir", "baseline_tolerance": "baseline_tolerance",
                "stop_when": "stop_when",
            }  # fmt: skip
            mine = {
                arg: value for arg, value in args.items() if given_on_command_line(ctx, option[arg])
            }
            report, _ = config_report(store, name, cfg, **mine, **fixed)
            out = out if given_on_command_line(ctx, "out") else cfg.report.out
            formats = formats if given_on_command_line(ctx, "fmt") else list(cfg.report.formats)
        _finish(report, out, formats)
    finally:
        store.close()


@app.command("calibrate")
@handle_user_errors
def calibrate_cmd(
    judgments: Annotated[
        Path,
        typer.Option(
            "--judgments", help="item, judge, order, sample, verdict|score (CSV/JSONL/Parquet)."
        ),
    ],
    labels: Annotated[
        Path, typer.Option("--labels", help="item, annotator, label (CSV/JSONL/Parquet).")
    ],
    outcomes: Annotated[
        Path | None, typer.Option("--outcomes", help="item, outcome[, task_id].")
    ] = None,
    out: OutOption = Path("trajudge-report"),
    fmt: FormatOption = "md,html,json",
    k: KOption = "1,2,3,4",
    fail_under: FailOption = None,
    baseline: BaselineOption = None,
    baseline_tolerance: ToleranceOption = 1.5,
    threshold: ThresholdOption = None,
    n_boot: NBootOption = 2000,
    seed: SeedOption = 0,
    primary: PrimaryOption = None,
    rubric: RubricOption = None,
    rubric_dir: RubricDirOption = None,
    scale: Annotated[
        str | None,
        typer.Option(
            "--scale",
            help="Verdict kind: binary, ordinal, pairwise or nominal (default: the rubric's, "
            "else inferred from the values and noted).",
        ),
    ] = None,
    ba_mapped: Annotated[
        bool | None,
        typer.Option(
            "--ba-mapped/--ba-as-shown",
            help="Pairwise verdicts of order ba are already in the original numbering, or "
            "name the side as shown (then mapped back here).",
        ),
    ] = None,
    jury: JuryOption = False,
    inconsistent_as: InconsistentOption = None,
) -> None:
    """The report's analysis on plain tables of judgments, labels and outcomes."""
    # imported on use: `trajudge --help` and the other commands do not load this room
    from trajudge.report import calibrate_report, parse_formats, parse_gate

    ks = parse_ks(k)
    formats = parse_formats(fmt)
    gates = fail_under or []
    for expr in gates:
        parse_gate(expr)
    report = calibrate_report(
        judgments,
        labels,
        outcomes=outcomes,
        ks=ks,
        n_boot=n_boot,
        seed=seed,
        threshold=threshold,
        baseline=baseline,
        baseline_tolerance=baseline_tolerance,
        fail_under=gates,
        primary_source=primary,
        rubric=rubric,
        rubric_dirs=rubric_dir or [],
        scale=scale,
        ba_mapped=ba_mapped,
        jury=jury,
        inconsistent_as=_inconsistent(inconsistent_as),
    )
    _finish(report, out, formats)
