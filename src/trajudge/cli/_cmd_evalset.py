"""`trajudge add-case` and `trajudge evalset split|rotate|show|fingerprint`: eval-set hygiene."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from trajudge.cli._app import (
    DEFAULT_DB,
    DbOption,
    app,
    console,
    err_console,
    fail,
    handle_user_errors,
    require_store,
)
from trajudge.cli._cmd_reliability import parse_ks
from trajudge.evalset import DEV_SHARE

if TYPE_CHECKING:
    from trajudge.evalset import EvalSetSummary

evalset_app = typer.Typer(
    name="evalset",
    help="Keep an eval set honest: split, rotate, show coverage, fingerprint the agent.",
    no_args_is_help=True,
)
app.add_typer(evalset_app, name="evalset")

EvalsetArg = Annotated[Path, typer.Argument(help="The eval set (JSON Lines, one case a line).")]
DevShareOption = Annotated[
    float, typer.Option("--dev-share", min=0.0, max=1.0, help="Share of tasks in dev.")
]


@app.command("add-case")
@handle_user_errors
def add_case_cmd(
    dataset: Annotated[str, typer.Argument(help="Dataset name in the store.")],
    trajectory_id: Annotated[str, typer.Argument(help="The trajectory to turn into a case.")],
    to: Annotated[Path, typer.Option("--to", help="The eval set to append to (created if new).")],
    label: Annotated[
        str | None,
        typer.Option(
            "--label",
            help="Expected verdict, pass or fail (default: from the outcome "
            "or the stored rule gates).",
        ),
    ] = None,
    reason: Annotated[str | None, typer.Option("--reason", help="Why this verdict.")] = None,
    stratum: Annotated[
        str | None,
        typer.Option("--stratum", help="common, long_tail or known_hard (default: computed)."),
    ] = None,
    tag: Annotated[
        list[str] | None,
        typer.Option("--tag", help="Boundary kind to add (repeatable), e.g. ambiguous_request."),
    ] = None,
    core: Annotated[
        bool,
        typer.Option(
            "--core",
            help="Put the case in the core set: `trajudge run` checks and judges its task "
            "first when layers.evalset names this eval set.",
        ),
    ] = False,
    infer_tools: Annotated[
        bool,
        typer.Option("--infer-tools", help="Infer required / forbidden tools from passing trials."),
    ] = False,
    dev_share: DevShareOption = DEV_SHARE,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Turn a (failed) run into an eval case: input, trajectory, expectations, label, tags."""
    # imported on use: `trajudge --help` and the other commands do not load this room
    from trajudge.evalset import add_case
    from trajudge.store import Store

    case = add_case(
        Store(require_store(db)),
        dataset,
        trajectory_id,
        to,
        label=label,
        reason=reason,
        stratum=stratum,
        tags=tag or [],
        core=core,
        infer_tools=infer_tools,
        dev_share=dev_share,
    )
    tags = ", ".join(case.tags) or "none"
    _say(
        f"added {case.id} to {to}: label {case.label.verdict} ({case.label.reason}), "
        f"stratum {case.stratum}, split {case.split}, tags {tags}" + (", core" if case.core else "")
    )
    exp = case.expectations
    if infer_tools:
        _say(
            f"inferred: required {', '.join(exp.required_tools) or 'none'}; "
            f"forbidden {', '.join(exp.forbidden_tools) or 'none'}"
        )


@evalset_app.command("split")
@handle_user_errors
def split_cmd(evalset: EvalsetArg, dev_share: DevShareOption = DEV_SHARE) -> None:
    """Write each case's dev / holdout split (by a hash of its task id) into the set."""
    # imported on use: `trajudge --help` and the other commands do not load this room
    from trajudge.evalset import split_evalset

    cases = split_evalset(evalset, dev_share=dev_share)
    dev = [c for c in cases if c.split == "dev"]
    tasks = {c.task_id for c in dev}
    _say(
        f"{evalset}: {len(dev)} dev cases ({len(tasks)} tasks), "
        f"{len(cases) - len(dev)} holdout cases ({len({c.task_id for c in cases} - tasks)} tasks)"
    )


@evalset_app.command("rotate")
@handle_user_errors
def rotate_cmd(
    evalset: EvalsetArg,
    from_: Annotated[str, typer.Option("--from", help="Dataset to draw new cases from.")],
    share: Annotated[
        float, typer.Option("--share", min=0.0, max=1.0, help="Share of non-core cases to replace.")
    ] = 0.2,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the draws.")] = 0,
    dev_share: DevShareOption = DEV_SHARE,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Replace a share of the non-core cases with new runs, keeping the strata counts."""
    # imported on use: `trajudge --help` and the other commands do not load this room
    from trajudge.evalset import rotate_evalset
    from trajudge.store import Store

    result = rotate_evalset(
        Store(require_store(db)), from_, evalset, share=share, seed=seed, dev_share=dev_share
    )
    for c in result.removed:
        _say(f"- out {c.id} ({c.stratum})")
    for c in result.added:
        _say(f"+ in  {c.id} ({c.stratum}, {c.label.verdict})")
    for w in result.warnings:
        _say(f"warning: {w}", style="yellow", err=True)
    _say(f"{evalset}: {len(result.removed)} out, {len(result.added)} in, {len(result.cases)} cases")


@evalset_app.command("sample")
@handle_user_errors
def sample_cmd(
    dataset: Annotated[str, typer.Argument(help="Dataset to draw cases from.")],
    to: Annotated[Path, typer.Option("--to", help="Eval set (JSONL), created if new.")],
    n: Annotated[int, typer.Option("--n", min=1, help="How many cases to add.")] = 40,
    by: Annotated[str, typer.Option("--by", help="stratum (60/30/10) or intent.")] = "stratum",
    share: Annotated[
        list[str] | None,
        typer.Option("--share", help="GROUP=WEIGHT, repeatable (default: 60/30/10 by stratum)."),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the draw.")] = 0,
    dev_share: DevShareOption = DEV_SHARE,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Add a stratified sample of a dataset's runs to an eval set."""
    # imported on use: `trajudge --help` and the other commands do not load this room
    from trajudge.evalset import sample_evalset
    from trajudge.store import Store

    shares: dict[str, float] | None = None
    if share:
        shares = {}
        for item in share:
            group, _, weight = item.partition("=")
            try:
                shares[group.strip()] = float(weight)
            except ValueError:
                raise fail(f"--share: expected GROUP=WEIGHT, got {item!r}") from None
    sample = sample_evalset(
        Store(require_store(db)),
        dataset,
        to,
        n,
        by=by,
        shares=shares,
        seed=seed,
        dev_share=dev_share,
    )
    for group, count in sample.counts.items():
        _say(f"{group}: {count} of {sample.targets.get(group, 0)} wanted")
    for w in sample.warnings:
        _say(f"warning: {w}", style="yellow", err=True)
    _say(f"{to}: {len(sample.cases)} cases added")


def _say(text: str, *, style: str | None = None, err: bool = False) -> None:
    """Print plain text: no markup (ids and reasons come from user data), no wrapping."""
    (err_console if err else console).print(
        text, style=style, highlight=False, markup=False, soft_wrap=True
    )


def _fmt(v: float) -> str:
    return "n/a" if math.isnan(v) else f"{v:.3f}"


def print_summary(summary: EvalSetSummary, title: str) -> None:
    """Print the counts and the boundary coverage table."""
    counts = Table(title=escape(title))
    counts.add_column("by")
    counts.add_column("counts")
    for name, values in (
        ("stratum", summary.by_stratum),
        ("split", summary.by_split),
        ("label", summary.by_label),
    ):
        counts.add_row(name, ", ".join(f"{k} {v}" for k, v in values.items()))
    console.print(counts)
    _say(f"{summary.n_cases} cases, {summary.n_tasks} tasks, {summary.n_core} in the core set")
    cov = summary.coverage
    table = Table(title="boundary coverage")
    for col in cov.table.columns:
        table.add_column(str(col), justify="left" if col == "kind" else "right")
    for row in cov.table.itertuples(index=False):
        cells = []
        for col, v in zip(cov.table.columns, row, strict=True):
            if col == "share":
                cells.append("n/a" if math.isnan(v) else f"{v:.0%}")
            elif isinstance(v, float):
                cells.append(_fmt(v))
            else:
                cells.append(str(v))
        table.add_row(*cells)
    console.print(table)
    share = "n/a" if math.isnan(cov.boundary_share) else f"{cov.boundary_share:.0%}"
    _say(f"boundary cases: {cov.n_boundary} of {cov.n_cases} ({share})")
    if cov.missing:
        _say("no cases of: " + ", ".join(cov.missing))
    for w in cov.warnings:
        _say(f"warning: {w}", style="yellow")


@evalset_app.command("show")
@handle_user_errors
def show_cmd(
    evalset: EvalsetArg,
    k: Annotated[str, typer.Option("--k", help="Values of k for pass^k, e.g. 1,2.")] = "1,2",
    success: Annotated[
        str,
        typer.Option("--success", help="Verdict for pass^k: outcome (environment) or label."),
    ] = "outcome",
) -> None:
    """Counts by stratum, split and label, and boundary coverage with pass^k per kind."""
    # imported on use: `trajudge --help` and the other commands do not load this room
    from trajudge.evalset import read_evalset, summarize

    if success not in ("outcome", "label"):
        raise fail(f"--success: expected outcome or label, got {success!r}")
    summary = summarize(read_evalset(evalset), success=success, ks=parse_ks(k))
    print_summary(summary, str(evalset))


@evalset_app.command("fingerprint")
@handle_user_errors
def fingerprint_cmd(
    dataset: Annotated[str, typer.Argument(help="Dataset name in the store.")],
    baseline: Annotated[
        Path | None, typer.Option("--baseline", help="Compare with a saved fingerprint (JSON).")
    ] = None,
    save: Annotated[Path | None, typer.Option("--save", help="Save the fingerprint here.")] = None,
    db: DbOption = DEFAULT_DB,
) -> None:
    """The agent's fingerprint (prompt, tools, model); exit 1 if it moved from --baseline.

    A moved fingerprint means a full re-run of the eval set is due, not just the core set.
    """
    # imported on use: `trajudge --help` and the other commands do not load this room
    from trajudge.evalset import (
        diff_fingerprints,
        fingerprint_dataset,
        read_fingerprint,
        write_fingerprint,
    )

    # imported on use: `trajudge --help` and the other commands do not load this room
    from trajudge.store import Store

    fp = fingerprint_dataset(Store(require_store(db)), dataset)
    for key, value in fp.to_dict().items():
        _say(f"{key}: {value if value is not None else 'unknown'}")
    if save is not None:
        write_fingerprint(save, fp)
        _say(f"saved to {save}")
    if baseline is not None:
        changes = diff_fingerprints(read_fingerprint(baseline), fp)
        for line in changes:
            _say(line, style="yellow")
        if changes:
            raise typer.Exit(1)
        _say("no change from the baseline")
