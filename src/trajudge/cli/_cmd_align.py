"""``trajudge align``: fit a judge to the labels on dev, measure it on holdout, save it."""

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
    existing_store_url,
    handle_user_errors,
)
from trajudge.judges import DEFAULT_CACHE_PATH

if TYPE_CHECKING:
    from trajudge.config import TrajudgeConfig
    from trajudge.judges import BatchProgress, JudgeSpec
from trajudge.core import InputError, pydantic_field


def _spec(judge: str, cfg: TrajudgeConfig | None) -> tuple[str, JudgeSpec | None]:
    """The judge's name and spec: ``NAME=MODEL:RUBRIC``, or a name looked up in the config."""
    # imported on use: `trajudge --help` and the other commands do not load this room
    from trajudge.judges import parse_judge_arg

    if "=" in judge:
        spec = parse_judge_arg(judge)
        return spec.name, spec
    found = [s for s in (cfg.judges if cfg is not None else []) if s.name == judge]
    return judge, (found[0] if found else None)


def _methods(text: str) -> list[str]:
    # imported on use: `trajudge --help` and the other commands do not load this room
    from trajudge.alignment import METHODS

    out = [m.strip() for m in text.split(",") if m.strip()]
    bad = [m for m in out if m not in METHODS]
    if bad or not out:
        raise InputError(
            "--method",
            reason=f"unknown method {', '.join(bad) or repr(text)} ({', '.join(METHODS)})",
        )
    return out


@app.command("align")
@handle_user_errors
def align_cmd(
    ctx: typer.Context,
    dataset: Annotated[str, typer.Argument(help="A stored dataset with judgments and labels.")],
    judge: Annotated[
        str,
        typer.Option(
            "--judge",
            "-j",
            help="The judge to align: a NAME (its spec from --config) or NAME=MODEL:RUBRIC.",
        ),
    ],
    method: Annotated[
        str | None,
        typer.Option(
            "--method",
            "-m",
            help="Comma-separated: threshold, calibrate, fewshot, stack (optional). "
            "Default: the config's align.methods, else threshold,calibrate.",
        ),
    ] = None,
    labels: Annotated[
        str | None,
        typer.Option(
            "--labels", help="Label source: human or a reference source (e.g. env_reward)."
        ),
    ] = None,
    name: Annotated[
        str | None, typer.Option("--name", help="Aligned judge name (default NAME-aligned).")
    ] = None,
    use: Annotated[
        str | None,
        typer.Option(
            "--use",
            help="Method the aligned judge's verdicts come from (default: the best of "
            "calibrate and threshold by cross-validation on dev).",
        ),
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option("--config", "-c", help="trajudge.yaml: judges, db, cache, specs, labels."),
    ] = None,
    dev_share: Annotated[
        float | None, typer.Option("--dev-share", help="Share of tasks on dev (default 0.3).")
    ] = None,
    salt: Annotated[str | None, typer.Option("--salt", help="Salt of the task split.")] = None,
    calibration: Annotated[
        str | None, typer.Option("--calibration", help="isotonic (default) or platt.")
    ] = None,
    feature: Annotated[
        str | None,
        typer.Option(
            "--feature",
            help="auto (default: expected_score when every call has one, else score), score "
            "or expected_score (from token probabilities: the judge's `logprobs: true`); "
            "read by threshold, calibrate and stack.",
        ),
    ] = None,
    target: Annotated[
        float | None, typer.Option("--target", help="Agreement to keep (trust or escalate).")
    ] = None,
    alpha: Annotated[float | None, typer.Option("--alpha", help="Its risk (default 0.05).")] = None,
    max_examples: Annotated[
        int | None, typer.Option("--max-examples", help="fewshot: examples (default 4).")
    ] = None,
    max_holdout_tasks: Annotated[
        int | None,
        typer.Option("--max-holdout-tasks", help="fewshot: holdout tasks re-scored (cost cap)."),
    ] = None,
    rubric_out: Annotated[
        Path | None,
        typer.Option("--rubric-out", help="fewshot: folder of the new rubric file."),
    ] = None,
    n_boot: Annotated[int, typer.Option("--n-boot", min=1, help="Bootstrap resamples.")] = 2000,
    seed: Annotated[int, typer.Option("--seed", help="Bootstrap seed.")] = 0,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="fewshot: no cache.")] = False,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Align a judge with the labels: fit on the dev tasks, report on the holdout tasks only,
    and save the aligned judge (a new version) for trajudge judge / run / report by name.

    The method saved is the best by cross-validation on dev (or --use); when dev says it is
    worse than the judge as it stands, or its threshold is degenerate, nothing is saved (exit 1)."""
    from pydantic import ValidationError

    # imported on use: `trajudge --help` and the other commands do not load this room
    from trajudge._terminal import judge_progress
    from trajudge.alignment import AlignOptions, align_judge
    from trajudge.config import load_config
    from trajudge.judges import ResponseCache
    from trajudge.report import alignment_sections, print_sections
    from trajudge.rules import load_specs, resolve_specs
    from trajudge.store import Store

    cfg = load_config(config) if config is not None else None
    judge_name, spec = _spec(judge, cfg)
    given = {
        "methods": None if method is None else _methods(method),
        "name": name,
        "use": use,
        "dev_share": dev_share,
        "salt": salt,
        "calibration": calibration,
        "feature": feature,
        "target": target,
        "alpha": alpha,
        "max_examples": max_examples,
        "max_holdout_tasks": max_holdout_tasks,
        "rubric_out": rubric_out,
    }
    base = cfg.align.model_dump(exclude_unset=True) if cfg and cfg.align else {}
    try:
        opts = AlignOptions.model_validate(
            {**base, "judge": judge_name, **{k: v for k, v in given.items() if v is not None}}
        )
    except ValidationError as exc:
        err = exc.errors()[0]
        msg = str(err["msg"]).removeprefix("Value error, ")
        raise InputError(
            "trajudge align", field=pydantic_field(tuple(err["loc"])), reason=msg
        ) from None
    url = existing_store_url(ctx, db, cfg.db if cfg is not None else None)
    source = labels or (cfg.labels.source if cfg and cfg.labels else "human")
    cache = None
    if "fewshot" in opts.methods and not no_cache:
        cache = ResponseCache((cfg.cache if cfg else None) or DEFAULT_CACHE_PATH)
    store = Store(url)
    try:
        spec_path = cfg.specs.path if cfg is not None and cfg.specs else None
        task_specs, defaults = resolve_specs(
            store.task_specs(dataset) if store.has_dataset(dataset) else {},
            load_specs(spec_path) if spec_path is not None else None,
        )
        bar, on_progress = judge_progress(console)
        assert bar is not None
        shown = False

        def update(p: BatchProgress) -> None:  # the bar appears with the first few-shot call
            nonlocal shown
            if not shown:
                bar.start()
                shown = True
            on_progress(p)

        try:
            run = align_judge(
                store,
                dataset,
                opts,
                spec=spec,
                label_source=source,
                rubric_dirs=[str(p) for p in cfg.rubric_dirs] if cfg else [],
                specs=task_specs,
                spec_defaults=defaults,
                gates=cfg.gates if cfg is not None else ("gate",),
                cache=cache,
                progress=update,
                ks=cfg.report.ks if cfg else [1, 2, 3, 4],
                n_boot=n_boot,
                seed=seed,
            )
        finally:
            if shown:
                bar.stop()
    finally:
        store.close()
        if cache is not None:
            cache.close()
    ks = cfg.report.ks if cfg is not None else [1, 2, 3, 4]
    print_sections(alignment_sections([run.record], ks), console)
    if run.refusal is not None:  # refused by the data (exit 1, like a failed gate)
        err_console.print(Text(run.refusal, style="bold red"), soft_wrap=True)
        raise typer.Exit(1)
    console.print(
        f"saved aligned judge {run.name} version {run.version} ({run.record['rule']['method']}): "
        f"`trajudge judge {dataset} --judge {run.name}` scores with it, and `trajudge report "
        f"{dataset}` shows it",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )
