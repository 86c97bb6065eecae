"""``trajudge judge``: score a stored dataset with LLM judges (default: the embedded one)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from trajudge.cli._app import (
    DEFAULT_DB,
    DbOption,
    app,
    console,
    existing_store_url,
    handle_user_errors,
)
from trajudge.core import InputError
from trajudge.judges import DEFAULT_CACHE_PATH, ENGINES

if TYPE_CHECKING:
    from trajudge.config import TrajudgeConfig
    from trajudge.judges import BatchSummary, Judge, JudgeSpec, ResponseCache

DEFAULT_JUDGE = "local=local/gemma-3-270m:trajectory_reasonableness"


def _specs(
    judge_args: list[str], cfg: TrajudgeConfig | None, overrides: dict[str, object]
) -> list[JudgeSpec]:
    """Specs of NAME=MODEL:RUBRIC arguments and of bare names of the config's judges; without
    any argument, the config's judges (else the default judge)."""
    from pydantic import ValidationError

    # imported on use: `trajudge --help` and the other commands do not load this room
    from trajudge.core import pydantic_field
    from trajudge.judges import JudgeSpec, parse_judge_arg

    mine = {s.name: s for s in (cfg.judges if cfg is not None else [])}
    specs = [
        parse_judge_arg(a) if "=" in a else mine[a] for a in judge_args if "=" in a or a in mine
    ]
    if not judge_args and cfg is not None:
        specs = list(cfg.judges)
    if not specs:
        specs = [parse_judge_arg(DEFAULT_JUDGE).model_copy(update={"concurrency": 2})]
    changes = {k: v for k, v in overrides.items() if v is not None}
    out = []
    for s in specs:
        try:
            # fields the user set, plus the overrides: a local model's own defaults still apply
            out.append(JudgeSpec.model_validate({**s.model_dump(exclude_unset=True), **changes}))
        except ValidationError as exc:
            err = exc.errors()[0]
            msg = str(err["msg"]).removeprefix("Value error, ")
            raise InputError(
                f"judge {s.name}", field=pydantic_field(tuple(err["loc"])), reason=msg
            ) from None
    return out


def _aligned(
    url: str, names: list[str], overrides: dict[str, object], cache: ResponseCache | None
) -> list[Judge]:
    """Aligned judges by name (their latest version), with the command line's overrides."""
    # imported on use: `trajudge --help` and the other commands do not load this room
    from trajudge.alignment import aligned_judge
    from trajudge.store import Store

    store = Store(url)
    try:
        found = {n: store.aligned_judge(n) for n in names}
        saved = ", ".join(r["name"] for r in store.aligned_judges()) or "none"
    finally:
        store.close()
    for n, rec in found.items():
        if rec is None:
            raise InputError(
                "--judge",
                reason=f"{n}: expected NAME=MODEL:RUBRIC, a judge of --config, or the name of an "
                f"aligned judge (saved: {saved}; trajudge align saves them)",
            )
    records = [r for r in found.values() if r is not None]
    changes = {k: v for k, v in overrides.items() if v is not None}
    for r in records:
        if r.get("spec") is not None and changes:
            r["spec"] = {**r["spec"], **changes}
    return [aligned_judge(r, cache=cache) for r in records]


def anchor_tasks(evalset: Path, dataset: str) -> list[str]:
    """The tasks of an eval set's core cases of ``dataset`` (of every case when none is
    core): the anchor set a scheduled re-judge scores."""
    # imported on use: `trajudge --help` and the other commands do not load this room
    from trajudge.evalset import read_evalset

    cases = [c for c in read_evalset(evalset) if c.source.dataset == dataset]
    if not cases:
        raise InputError(str(evalset), reason=f"no case of dataset {dataset!r}")
    chosen = [c for c in cases if c.core] or cases
    return list(dict.fromkeys(c.task_id for c in chosen))


def _refuse_unused(judges: list[Judge], swap: bool | None) -> None:
    """An option that would change nothing is refused, with the reason."""
    if swap is not None and all(j.rubric.mode == "pointwise" for j in judges):
        raise InputError(
            "--swap/--no-swap",
            reason="every judge here is pointwise (one trajectory, one order): swapping applies to "
            "pairwise and reference rubrics only",
        )


def print_summary(s: BatchSummary) -> None:
    calls = s.judged + s.errors
    lines = [
        f"dataset {s.dataset}: {s.trajectories} trajectories, judges {', '.join(s.judges)}",
        f"judged {s.judged} of {calls} calls this run; {s.resumed} already stored "
        f"(of {s.planned} planned)",
        f"gate-skipped {s.gate_skipped} trajectories; no reference for {s.no_reference}",
        f"cache hits {s.cache_hits}; errors {s.errors}; cost ${s.cost_usd:.4f}; tokens "
        # milliseconds: a re-run served from the store or the cache takes tens of them, which
        # tenths of a second would print as 0.0 s
        f"{s.prompt_tokens} prompt + {s.completion_tokens} completion; "
        f"{round(s.elapsed_s * 1000):,} ms",
    ]
    for line in lines:
        console.print(line, highlight=False, markup=False, soft_wrap=True)
    if s.errors:
        console.print(
            f"[yellow]{s.errors} calls failed after retries: stored as errors (never a pass or "
            "a fail); run the command again to retry them[/]",
            markup=True,
            highlight=False,
            soft_wrap=True,
        )


@app.command("judge")
@handle_user_errors
def judge_command(
    ctx: typer.Context,
    dataset: Annotated[
        str | None,
        typer.Argument(
            help="A stored dataset (default: dataset.name, else the stem of dataset.path, "
            "from --config)."
        ),
    ] = None,
    judge: Annotated[
        list[str] | None,
        typer.Option(
            "--judge",
            "-j",
            help="NAME=MODEL:RUBRIC, repeatable; MODEL may hold ':' or '/' "
            "(ollama/llama3:8b); a bare NAME is an aligned judge (trajudge align). Replaces "
            "the judges of --config. Default (no --judge, no config judges): the embedded "
            "CPU model local/gemma-3-270m with the rubric trajectory_reasonableness, named "
            "local.",
        ),
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config", "-c", help="trajudge.yaml: judges, db, cache, rubric_dirs, gates, limits."
        ),
    ] = None,
    samples: Annotated[
        int | None, typer.Option("--samples", min=1, help="Samples per order, all judges.")
    ] = None,
    concurrency: Annotated[
        int | None,
        typer.Option("--concurrency", min=1, help="Calls in flight in all (and for each judge)."),
    ] = None,
    max_tokens: Annotated[
        int | None, typer.Option("--max-tokens", min=16, help="Verdict tokens, all judges.")
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option("--timeout", min=1, help="Seconds per call attempt, all judges."),
    ] = None,
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
    max_tasks: Annotated[
        int | None,
        typer.Option("--max-tasks", min=1, help="Judge only the first N tasks, in import order."),
    ] = None,
    max_trials: Annotated[
        int | None,
        typer.Option("--max-trials", min=1, help="Judge only trials 0 to N-1 of each task."),
    ] = None,
    evalset: Annotated[
        Path | None,
        typer.Option(
            "--evalset",
            help="Judge only the tasks of this eval set's core layer (else of every case): "
            "the pinned anchor set that trajudge drift compares judges on.",
        ),
    ] = None,
    engine: Annotated[
        str | None,
        typer.Option(
            "--engine",
            help=f"What runs the calls: {', '.join(ENGINES)} (default: the config's engine:, "
            "else local). processes: worker processes on this machine (every core); ray: a "
            "Ray cluster; batch: the provider's batch API, resumable.",
        ),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers", min=1, help="Processes of --engine processes (default: one per CPU)."
        ),
    ] = None,
    address: Annotated[
        str | None,
        typer.Option("--address", help="Ray cluster of --engine ray: auto, ray://host:10001."),
    ] = None,
    wait: Annotated[
        bool,
        typer.Option(
            "--wait",
            help="When another run is judging this dataset with the same judge, wait for it "
            "to end (then judge what it left), instead of exiting with code 2.",
        ),
    ] = False,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Score trajectories with LLM judges; rule gates run first and skip failing ones.

    Each judgment is stored as soon as it completes, and a re-run skips stored judgments made
    with the same judge configuration, so an interrupted run resumes where it stopped. The
    store is --db, else TRAJUDGE_DB, else the config's db:; command-line options override the
    config's values for every judge.
    """
    # imported on use: `trajudge --help` and the other commands do not load this room
    from trajudge._terminal import judge_progress
    from trajudge.config import dataset_name, load_config
    from trajudge.judges import (
        ResponseCache,
        build_judges,
        check_engine,
        make_engine,
        score_dataset,
    )
    from trajudge.rules import load_specs, resolve_specs
    from trajudge.store import Store

    cfg = load_config(config) if config is not None else None
    name = dataset or (dataset_name(cfg) if cfg is not None else None)
    if not name:
        raise InputError("trajudge judge", field="DATASET", reason="give a dataset name")
    # the anchor set is read before any cache or store is opened: a bad file leaves nothing
    anchor = anchor_tasks(evalset, name) if evalset is not None else None
    if cache is not None and no_cache:
        raise InputError("--cache", reason="--cache and --no-cache contradict each other")
    engine_name = check_engine(engine) if engine is not None else (cfg.engine if cfg else None)
    if engine_name == "batch" and concurrency is not None:
        raise InputError(
            "--concurrency",
            reason="the batch engine submits every call at once in provider batches: it has no "
            "calls in flight to limit",
        )
    url = existing_store_url(ctx, db, cfg.db if cfg is not None else None)
    overrides: dict[str, object] = {
        "samples": samples,
        "max_tokens": max_tokens,
        "timeout": timeout,
        "swap": swap,
        "api_base": api_base,
        "max_retries": max_retries,
        "concurrency": concurrency,
    }
    args = judge or []
    known = {s.name for s in (cfg.judges if cfg is not None else [])}
    bare = [a for a in args if "=" not in a and a not in known]  # aligned judges, by name
    specs = _specs(args, cfg, overrides) if not args or len(bare) < len(args) else []
    rubric_dirs = [str(p) for p in cfg.rubric_dirs] if cfg is not None else []
    cache_path = cache or (cfg.cache if cfg is not None else None) or DEFAULT_CACHE_PATH
    response_cache = None if no_cache else ResponseCache(cache_path)
    try:
        judges = build_judges(specs, rubric_dirs=rubric_dirs, cache=response_cache)
        if bare:
            judges += _aligned(url, bare, overrides, response_cache)
        _refuse_unused(judges, swap)
        if address is None and cfg is not None and engine_name == "ray":
            address = cfg.address
        if address is not None and engine_name != "ray":
            raise InputError("--address", reason="a cluster address applies to --engine ray")
        if workers is not None and engine_name != "processes":
            raise InputError("--workers", reason="worker processes apply to --engine processes")
    except InputError:
        if response_cache is not None:
            response_cache.close()
        raise
    if not args and (cfg is None or not cfg.judges):
        console.print(
            f"no --judge given: judging with the embedded CPU model ({DEFAULT_JUDGE}), a 270M "
            "base model kept as an offline stand-in, a weak judge; give --judge "
            "NAME=MODEL:RUBRIC for a real one (README: Using a real provider)",
            highlight=False,
            markup=False,
        )
    limits = cfg.limits if cfg is not None else None
    only = limits.tasks if limits is not None else None
    if anchor is not None:
        only = anchor if only is None else [t for t in only if t in set(anchor)]
    spec_path = specs_file or (cfg.specs.path if cfg is not None and cfg.specs else None)
    store = Store(url)
    try:
        store.require_dataset(name)
        spec_set = load_specs(spec_path) if spec_path is not None else None
        task_specs, spec_defaults = resolve_specs(store.task_specs(name), spec_set)
    except InputError:
        store.close()
        if response_cache is not None:
            response_cache.close()
        raise
    progress, on_progress = judge_progress(console)
    assert progress is not None
    runner = make_engine(
        engine_name,
        store=store,
        dataset=name,
        judges=judges,
        concurrency=concurrency,
        address=address,
        workers=workers,
        notify=lambda line: progress.console.print(line, highlight=False, markup=False),
    )
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
                tasks=only,
                max_tasks=max_tasks or (limits.max_tasks if limits is not None else None),
                max_trials=max_trials or (limits.max_trials if limits is not None else None),
                engine=runner,
                wait=wait,
                notify=lambda line: progress.console.print(line, highlight=False, markup=False),
            )
    finally:
        store.close()
        if response_cache is not None:
            response_cache.close()
    print_summary(summary)
