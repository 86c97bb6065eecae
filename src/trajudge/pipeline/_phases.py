"""The phases of a run that call out: scoring, aligning, pulling from a backend, exporting."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

from rich.console import Console
from rich.text import Text

from trajudge._terminal import judge_progress
from trajudge.alignment import align_judge
from trajudge.config import TrajudgeConfig
from trajudge.judges import (
    BatchSummary,
    Judge,
    ResponseCache,
    make_engine,
    score_dataset,
)
from trajudge.pipeline._summary import RunSummary
from trajudge.store import Store
from trajudge.trajectories import TaskSpec


@contextlib.contextmanager
def _phase(summary: RunSummary, name: str, console: Console | None) -> Iterator[None]:
    if console is not None:
        console.rule(Text(name, style="bold"))
    t0 = time.perf_counter()
    try:
        yield
    finally:
        summary.phase_s[name] = round(time.perf_counter() - t0, 3)


def _score(
    store: Store,
    dataset: str,
    judges: list[Judge],
    cfg: TrajudgeConfig,
    specs: dict[str, TaskSpec],
    defaults: TaskSpec | None,
    summary: RunSummary,
    console: Console | None,
    tasks: list[str] | None = None,
) -> BatchSummary:
    progress, update = judge_progress(console)
    with progress if progress is not None else contextlib.nullcontext():
        batch = score_dataset(
            store,
            dataset,
            judges,
            specs=specs,
            spec_defaults=defaults,
            progress=update,
            gates=cfg.gates,
            tasks=tasks,
            engine=make_engine(
                cfg.engine, store=store, dataset=dataset, judges=judges, address=cfg.address
            ),
        )
    summary.judge_calls += batch.judged + batch.errors - batch.cache_hits
    summary.cache_hits += batch.cache_hits
    summary.resumed += batch.resumed
    summary.errors += batch.errors
    summary.cost_usd += batch.cost_usd
    summary.gate_failures = max(summary.gate_failures, batch.gate_skipped)
    summary.no_reference = max(summary.no_reference, batch.no_reference)
    return batch


def _align(
    store: Store,
    dataset: str,
    cfg: TrajudgeConfig,
    specs: dict[str, TaskSpec],
    defaults: TaskSpec | None,
    cache: ResponseCache | None,
    summary: RunSummary,
    console: Console | None,
    n_boot: int | None,
) -> None:
    """The align phase: :func:`align_judge` with the config's ``align:`` block."""
    assert cfg.align is not None
    spec = next((s for s in cfg.judges if s.name == cfg.align.judge), None)
    progress, update = judge_progress(console)
    with progress if progress is not None else contextlib.nullcontext():
        run = align_judge(
            store,
            dataset,
            cfg.align,
            spec=spec,
            label_source=cfg.labels.source if cfg.labels is not None else "human",
            rubric_dirs=[str(p) for p in cfg.rubric_dirs],
            specs=specs,
            spec_defaults=defaults,
            gates=cfg.gates,
            cache=cache,
            progress=update,
            ks=cfg.report.ks,
            n_boot=n_boot or cfg.report.n_boot,
            seed=cfg.report.seed,
        )
    if run.fewshot is not None:
        b = run.fewshot.batch
        summary.judge_calls += b.judged + b.errors - b.cache_hits
        summary.cache_hits += b.cache_hits
        summary.resumed += b.resumed
        summary.errors += b.errors
        summary.cost_usd += b.cost_usd
    if run.refusal is not None:  # the run goes on to the report: the judges are still judged
        summary.align_refused = run.refusal
        if console is not None:
            console.print(Text(f"align: {run.refusal}", style="bold red"), soft_wrap=True)
        return
    summary.aligned = f"{run.name} v{run.version}"
    if console is not None:
        console.print(
            f"aligned judge {run.name} version {run.version} ({run.record['rule']['method']}): "
            f"fitted on {run.result.n_dev_items} dev items, measured on "
            f"{run.result.n_holdout_items} holdout items",
            highlight=False,
            markup=False,
        )


def _pull(
    store: Store, name: str, cfg: TrajudgeConfig, summary: RunSummary, console: Console | None
) -> None:
    """The import phase of a ``dataset.source``: what is new at the backend since the last
    pull (the cursor is the store's, shared with ``trajudge import``)."""
    # imported on use: a run from a file loads no backend (HTTP client) code
    from trajudge.backends._source import pull_lines, pull_source

    assert cfg.dataset.source is not None
    summary.pulled, shown = pull_source(
        store, cfg.dataset.source, name, accept_loss=cfg.dataset.accept_loss
    )
    if console is not None:
        for line in pull_lines(summary.pulled, shown):
            console.print(line, markup=False, highlight=False, soft_wrap=True)


def _export(
    store: Store,
    name: str,
    cfg: TrajudgeConfig,
    summary: RunSummary,
    console: Console | None,
    n_boot: int | None,
) -> None:
    """The export phase: ``trajudge export`` to every ``export:`` target, after the report."""
    # imported on use: a run without export targets loads no backend code
    from trajudge.backends._export import export
    from trajudge.backends._source import export_lines

    summary.exported = export(store, name, cfg.export, n_boot=n_boot or cfg.report.n_boot)
    if console is not None:
        lines, notes = export_lines(summary.exported)
        for line in lines:
            console.print(line, markup=False, highlight=False, soft_wrap=True)
        for note in notes:
            console.print(note, style="yellow", markup=False, highlight=False, soft_wrap=True)
