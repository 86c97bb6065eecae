"""Batch scoring: rule gates first, then every judge call, each stored as it completes.

:func:`score_dataset` plans every call (judge x item x order x sample), leaves out the calls
already stored without error (``Store.judgment_keys``: a killed run resumes without repeating
finished judgments and without duplicates), and runs the rest with bounded concurrency. Each
judgment is written in its own transaction the moment it completes, so a kill loses at most
the calls in flight.

A trajectory that fails a gate never reaches a prompt: not as a candidate, not as the other
trajectory of a pair, not as a reference. Gates are evaluated over every trajectory a prompt
could show (the chosen ones and the other trials of their tasks), not only the chosen ones.

Items per mode:

- pointwise: each trajectory that passes its gates;
- pairwise: every pair of trials of the same task (lower trial first as ``trajectory_id``)
  where both pass their gates;
- reference: each trajectory with a reference. The default reference is a passing trajectory
  of the same task (``outcome`` True, the lowest trial, never the candidate itself); when the
  task has none, the task spec's expected calls (``TaskSpec.reference``) are rendered as a
  reference trajectory (``other_id`` = ``spec:<task_id>``); a task with neither is counted in
  ``no_reference`` and not judged.
"""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from trajudge.judges._judge import Judge, run_sync
from trajudge.judges._judgment import Judgment, Order
from trajudge.judges._render import spec_reference
from trajudge.store import Store
from trajudge.trajectories import TaskSpec, Trajectory


@dataclass(frozen=True)
class BatchProgress:
    """A snapshot for progress displays, sent after every completed call."""

    total: int
    done: int
    errors: int
    cache_hits: int
    cost_usd: float
    last: Judgment | None = None


@dataclass
class BatchSummary:
    """What a batch did. ``planned`` = ``resumed`` (already stored) + calls made this run."""

    dataset: str
    judges: list[str]
    trajectories: int = 0
    gate_skipped: int = 0
    no_reference: int = 0
    planned: int = 0
    resumed: int = 0
    judged: int = 0
    errors: int = 0
    cache_hits: int = 0
    cost_usd: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    elapsed_s: float = 0.0
    gate_failures: dict[str, list[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class _Item:
    judge: Judge
    trajectory: Trajectory
    other: Trajectory | None
    other_expected: bool
    order: Order
    sample: int

    @property
    def key(self) -> tuple[Any, ...]:
        other_id = None if self.other is None else self.other.id
        j = self.judge
        return (
            self.trajectory.id,
            other_id,
            j.name,
            j.config_sha256,
            j.rubric.version,
            self.order,
            self.sample,
        )


def choose_reference(
    candidate: Trajectory,
    same_task: Sequence[Trajectory],
    spec: TaskSpec | None,
    *,
    prefer: str = "passing",
) -> tuple[Trajectory, bool] | None:
    """The reference for ``candidate`` and whether it was built from the task spec.

    ``same_task`` are the trajectories a reference may be taken from: leave out those that
    failed a gate (:func:`plan_items` does), since the reference is shown to the judge.

    ``prefer="passing"``: a passing trajectory of the same task (lowest trial, not the
    candidate itself), else the spec's expected calls, else None. ``prefer="spec"``: the
    spec's expected calls only (the outcome never picks the reference), else None.
    """
    passing = sorted(
        (
            t
            for t in same_task
            if prefer == "passing" and t.outcome is True and t.id != candidate.id
        ),
        key=lambda t: (t.trial, t.id),
    )
    if passing:
        return passing[0], False
    if spec is not None and spec.reference:
        return spec_reference(candidate.task_id, list(spec.reference), candidate.input), True
    return None


def _gate_failures(
    trajectories: Sequence[Trajectory],
    specs: Mapping[str, TaskSpec],
    gates: Collection[str],
    defaults: TaskSpec | None = None,
) -> dict[str, list[str]]:
    """Trajectory id -> names of failed checks whose severity gates (absent ids pass)."""
    from trajudge.rules import check_dataset

    failed: dict[str, list[str]] = {}
    for report in check_dataset(trajectories, specs, defaults):
        names = [r.check for r in report.results if r.severity in gates and not r.passed]
        if names:
            failed[report.trajectory_id] = names
    return failed


def plan_items(
    judges: Sequence[Judge],
    trajectories: Sequence[Trajectory],
    specs: Mapping[str, TaskSpec],
    *,
    gated: Collection[str] = (),
    pool: Sequence[Trajectory] | None = None,
) -> tuple[list[_Item], int]:
    """Every call the judges need; returns the items and the no-reference count.

    ``pool`` is where references are looked for (default: ``trajectories``). No trajectory
    whose id is in ``gated`` is planned, as a candidate or as the other one shown.
    """
    by_task: dict[str, list[Trajectory]] = defaultdict(list)
    for t in pool if pool is not None else trajectories:
        if t.id not in gated:
            by_task[t.task_id].append(t)
    eligible = [t for t in trajectories if t.id not in gated]
    items: list[_Item] = []
    no_reference = 0
    for judge in judges:
        plan = judge.plan()
        mode = judge.rubric.mode
        pairs: list[tuple[Trajectory, Trajectory | None, bool]] = []
        if mode == "pointwise":
            pairs = [(t, None, False) for t in eligible]
        elif mode == "pairwise":
            tasks: dict[str, list[Trajectory]] = defaultdict(list)
            for t in eligible:
                tasks[t.task_id].append(t)
            for group in tasks.values():
                group.sort(key=lambda t: (t.trial, t.id))
                pairs += [(a, b, False) for i, a in enumerate(group) for b in group[i + 1 :]]
        else:
            for t in eligible:
                ref = choose_reference(
                    t, by_task[t.task_id], specs.get(t.task_id), prefer=judge.spec.reference
                )
                if ref is None:
                    no_reference += 1
                else:
                    pairs.append((t, ref[0], ref[1]))
        for traj, other, expected in pairs:
            items += [_Item(judge, traj, other, expected, o, s) for o, s in plan]
    return items, no_reference


def _select(
    trajectories: list[Trajectory],
    tasks: Collection[str] | None,
    max_tasks: int | None,
    max_trials: int | None,
) -> list[Trajectory]:
    out = [t for t in trajectories if tasks is None or t.task_id in set(tasks)]
    if max_tasks is not None:
        keep: list[str] = []
        for t in out:
            if t.task_id not in keep:
                keep.append(t.task_id)
        allowed = set(keep[:max_tasks])
        out = [t for t in out if t.task_id in allowed]
    if max_trials is not None:
        out = [t for t in out if t.trial < max_trials]
    return out


async def ascore_dataset(
    store: Store,
    dataset: str,
    judges: Sequence[Judge],
    *,
    specs: Mapping[str, TaskSpec] | None = None,
    spec_defaults: TaskSpec | None = None,
    concurrency: int | None = None,
    progress: Callable[[BatchProgress], None] | None = None,
    gates: Collection[str] = ("gate",),
    tasks: Collection[str] | None = None,
    max_tasks: int | None = None,
    max_trials: int | None = None,
) -> BatchSummary:
    """Async core of :func:`score_dataset`."""
    t0 = time.perf_counter()
    store.require_dataset(dataset)
    every = store.trajectories(dataset)
    chosen = _select(every, tasks, max_tasks, max_trials)
    specs = dict(store.task_specs(dataset) if specs is None else specs)
    summary = BatchSummary(dataset, [j.name for j in judges], trajectories=len(chosen))
    # references are drawn from the other trials of the chosen tasks: gate them all
    tasks_shown = {t.task_id for t in chosen}
    pool = [t for t in every if t.task_id in tasks_shown]
    failures = _gate_failures(pool, specs, set(gates), spec_defaults) if gates else {}
    chosen_ids = {t.id for t in chosen}
    summary.gate_failures = {k: v for k, v in failures.items() if k in chosen_ids}
    summary.gate_skipped = len(summary.gate_failures)
    items, summary.no_reference = plan_items(judges, chosen, specs, gated=failures, pool=pool)
    summary.planned = len(items)
    stored: set[tuple[Any, ...]] = set()
    for name in {j.name for j in judges}:
        stored |= store.judgment_keys(dataset, name)
    todo = [it for it in items if it.key not in stored]
    summary.resumed = len(items) - len(todo)
    total = len(todo)
    state = {"done": 0}

    def report(last: Judgment | None) -> None:
        if progress is not None:
            progress(
                BatchProgress(
                    total,
                    state["done"],
                    summary.errors,
                    summary.cache_hits,
                    summary.cost_usd,
                    last,
                )
            )

    report(None)
    queue: asyncio.Queue[_Item] = asyncio.Queue()
    for it in todo:
        queue.put_nowait(it)
    width = concurrency or max((j.spec.concurrency for j in judges), default=1)

    async def worker() -> None:
        while True:
            try:
                it = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            j = await it.judge.ajudge_one(
                it.trajectory,
                other=it.other,
                other_expected=it.other_expected,
                order=it.order,
                sample=it.sample,
            )
            store.add_judgment(dataset, j.to_row())
            state["done"] += 1
            if j.error is not None:
                summary.errors += 1
            else:
                summary.judged += 1
            summary.cache_hits += int(j.cache_hit)
            if not j.cache_hit:
                summary.cost_usd += j.cost_usd or 0.0
                summary.prompt_tokens += j.prompt_tokens or 0
                summary.completion_tokens += j.completion_tokens or 0
            report(j)

    workers = [asyncio.ensure_future(worker()) for _ in range(max(1, min(width, total or 1)))]
    try:
        await asyncio.gather(*workers)
    finally:
        for w in workers:
            w.cancel()
    summary.elapsed_s = time.perf_counter() - t0
    return summary


def score_dataset(
    store: Store,
    dataset: str,
    judges: Sequence[Judge],
    *,
    specs: Mapping[str, TaskSpec] | None = None,
    spec_defaults: TaskSpec | None = None,
    concurrency: int | None = None,
    progress: Callable[[BatchProgress], None] | None = None,
    gates: Collection[str] = ("gate",),
    tasks: Collection[str] | None = None,
    max_tasks: int | None = None,
    max_trials: int | None = None,
) -> BatchSummary:
    """Score a stored dataset with ``judges``; see the module docstring.

    ``specs`` default to the dataset's stored task specs (``spec_defaults`` is merged under
    each, as in :func:`trajudge.rules.check_dataset`); ``gates`` are the rule severities
    whose failure skips the judges for a trajectory (counted in ``gate_skipped``);
    ``concurrency`` bounds the calls in flight over all judges (each judge's own
    ``concurrency`` and ``rpm`` still apply); ``tasks`` / ``max_tasks`` / ``max_trials``
    limit the run to a subset (a demo). Cost and tokens count real calls, not cache hits.
    """
    return run_sync(
        ascore_dataset(
            store,
            dataset,
            judges,
            specs=specs,
            spec_defaults=spec_defaults,
            concurrency=concurrency,
            progress=progress,
            gates=gates,
            tasks=tasks,
            max_tasks=max_tasks,
            max_trials=max_trials,
        )
    )
