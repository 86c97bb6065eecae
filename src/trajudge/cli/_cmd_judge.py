"""``trajudge judge``: score a stored dataset with LLM judges (default: the embedded one)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from trajudge.cli._app import DEFAULT_DB, DbOption, app, console, handle_user_errors
from trajudge.config import TrajudgeConfig, load_config
from trajudge.judges import (
    DEFAULT_CACHE_PATH,
    BatchSummary,
    JudgeSpec,
    ResponseCache,
    build_judges,
    parse_judge_arg,
    score_dataset,
)
from trajudge.pipeline import judge_progress
from trajudge.rules import load_specs, resolve_specs
from trajudge.store import Store
from trajudge.trajectories import InputError

DEFAULT_JUDGE = "local=local/gemma-3-270m:trajectory_reasonableness"


def _specs(
    judge_args: list[str], cfg: TrajudgeConfig | None, overrides: dict[str, object]
) -> list[JudgeSpec]:
    specs = [parse_judge_arg(a) for a in judge_args]
    if not specs and cfg is not None:
        specs = list(cfg.judges)
    if not specs:
        specs = [parse_judge_arg(DEFAULT_JUDGE).model_copy(update={"concurrency": 2})]
    changes = {k: v for k, v in overrides.items() if v is not None}
    try:
        return [JudgeSpec.model_validate({**s.model_dump(), **changes}) for s in specs]
    except ValueError as exc:
        raise InputError("options", None, None, str(exc).splitlines()[-1]) from None


def print_summary(s: BatchSummary) -> None:
    calls = s.judged + s.errors
    lines = [
        f"dataset {s.dataset}: {s.trajectories} trajectories, judges {', '.join(s.judges)}",
        f"judged {s.judged} of {calls} calls this run; {s.resumed} already stored "
        f"(of {s.planned} planned)",
        f"gate-skipped {s.gate_skipped} trajectories; no reference for {s.no_reference}",
        f"cache hits {s.cache_hits}; errors {s.errors}; cost ${s.cost_usd:.4f}; tokens "
        f"{s.prompt_tokens} prompt + {s.completion_tokens} completion; {s.elapsed_s:.1f} s",
    ]
    for line in lines:
        console.print(line, highlight=False, markup=False, soft_wrap=True)
    if s.errors:
        console.print(
            f"[yellow]{s.errors} calls failed after retries: stored as errors (never a pass or "
            "a fail); run the command again to retry them[/]",
            highlight=False,
            soft_wrap=True,
        )


@app.command("judge")
@handle_user_errors
def judge_command(
    dataset: Annotated[
        str | None,
        typer.Argument(help="A stored dataset (default: dataset.name from --config)."),
    ] = None,
    judge: Annotated[
        list[str] | None,
        typer.Option(
            "--judge",
            "-j",
            help="NAME=MODEL:RUBRIC, repeatable; MODEL may hold ':' or '/' "
            f"(ollama/llama3:8b). Default: {DEFAULT_JUDGE}.",
        ),
    ] = None,
    config: Annotated[
        Path | None, typer.Option("--config", "-c", help="trajudge.yaml (judges, limits).")
    ] = None,
    samples: Annotated[
        int | None, typer.Option("--samples", min=1, help="Samples per order, all judges.")
    ] = None,
    concurrency: Annotated[
        int | None, typer.Option("--concurrency", min=1, help="Calls in flight in all.")
    ] = None,
    max_tokens: Annotated[int | None, typer.Option("--max-tokens", min=16)] = None,
    max_retries: Annotated[
        int | None, typer.Option("--max-retries", min=0, help="Retries per call (default 4).")
    ] = None,
    api_base: Annotated[
        str | None,
        typer.Option("--api-base", help="OpenAI-compatible server URL, for all judges."),
    ] = None,
    swap: Annotated[
        bool | None,
        typer.Option("--swap/--no-swap", help="Run pairwise/reference in both orders."),
    ] = None,
    cache: Annotated[
        Path | None, typer.Option("--cache", help=f"Response cache (default {DEFAULT_CACHE_PATH}).")
    ] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Do not use the cache.")] = False,
    specs_file: Annotated[
        Path | None,
        typer.Option("--specs", help="Task spec YAML layered over the stored specs (gates)."),
    ] = None,
    max_tasks: Annotated[int | None, typer.Option("--max-tasks", min=1)] = None,
    max_trials: Annotated[int | None, typer.Option("--max-trials", min=1)] = None,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Score trajectories with LLM judges; rule gates run first and skip failing ones.

    Each judgment is stored as soon as it completes, and a re-run skips stored judgments, so an
    interrupted run resumes where it stopped.
    """
    cfg = load_config(config) if config is not None else None
    name = dataset or (cfg.dataset.name if cfg is not None else None)
    if not name:
        raise InputError("trajudge judge", None, "DATASET", "give a dataset name")
    overrides: dict[str, object] = {
        "samples": samples,
        "max_tokens": max_tokens,
        "swap": swap,
        "api_base": api_base,
        "max_retries": max_retries,
    }
    specs = _specs(judge or [], cfg, overrides)
    cache_path = cache or (cfg.cache if cfg is not None else None) or DEFAULT_CACHE_PATH
    response_cache = None if no_cache else ResponseCache(cache_path)
    rubric_dirs = [str(p) for p in cfg.rubric_dirs] if cfg is not None else []
    judges = build_judges(specs, rubric_dirs=rubric_dirs, cache=response_cache)
    limits = cfg.limits if cfg is not None else None
    spec_path = specs_file or (cfg.specs.path if cfg is not None and cfg.specs else None)
    store = Store(db)
    try:
        store.require_dataset(name)
        spec_set = load_specs(spec_path) if spec_path is not None else None
        task_specs, spec_defaults = resolve_specs(store.task_specs(name), spec_set)
    except InputError:
        store.close()
        raise
    progress, on_progress = judge_progress(console)
    assert progress is not None
    try:
        with progress:
            summary = score_dataset(
                store,
                name,
                judges,
                specs=task_specs,
                spec_defaults=spec_defaults,
                concurrency=concurrency,
                progress=on_progress,
                gates=cfg.gates if cfg is not None else ("gate",),
                tasks=limits.tasks if limits is not None else None,
                max_tasks=max_tasks or (limits.max_tasks if limits is not None else None),
                max_trials=max_trials or (limits.max_trials if limits is not None else None),
            )
    finally:
        store.close()
        if response_cache is not None:
            response_cache.close()
    print_summary(summary)
