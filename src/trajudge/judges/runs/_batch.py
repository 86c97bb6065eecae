"""Batch scoring: rule gates first, then every judge call, stored as it completes.

:func:`score_dataset` runs a batch in three steps with clean seams:

1. **plan** (:func:`trajudge.judges.plan_batch`): every call (judge x item x order x sample),
   less the calls already stored without error (``Store.judgment_keys``: a killed run resumes
   without repeating finished judgments and without duplicates), from a few bulk reads;
2. **execute**: the planned calls are prepared in chunks (each prompt rendered once per
   trajectory, other trajectory, rubric and order, for every sample and every judge that
   shares it), their cache keys looked up in bulk (hits are finished at once, with no call),
   and the misses run by an engine (:class:`trajudge.judges.LocalEngine` by default: bounded
   concurrency in this process);
3. **write** (:class:`trajudge.judges.JudgmentWriter`): judgments and cache entries go to the
   store in small batched transactions, at least every half second, so a kill loses at most
   the calls in flight and the last half second of answers, and a cancel only the calls in
   flight.

See :mod:`trajudge.judges.runs._items` for the items of each mode and the gates, and
:mod:`trajudge.judges.engines._base` for what an engine must do.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import time
from collections.abc import AsyncIterator, Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from trajudge.judges.calls._cache import CachedResponse, ResponseCache
from trajudge.judges.calls._call import PreparedCall, finish
from trajudge.judges.calls._judge import Judge, run_sync
from trajudge.judges.calls._judgment import Judgment
from trajudge.judges.calls._result import CallResult
from trajudge.judges.engines._base import Engine, LocalEngine, run_all
from trajudge.judges.prompts._prompt import Prompt
from trajudge.judges.runs._items import PlanItem
from trajudge.judges.runs._plan import BatchPlan, plan_batch
from trajudge.judges.runs._writer import FLUSH_INTERVAL_S, JudgmentWriter
from trajudge.store import Store
from trajudge.trajectories import TaskSpec

#: Planned calls prepared (rendered, hashed, looked up in the cache) at a time.
PREPARE_CHUNK = 64


@dataclass(frozen=True)
class BatchProgress:
    """A snapshot for progress displays, sent after every write of judgments to the store
    (``done`` counts the judgments stored; ``last`` is the last of them)."""

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


def _prompt_groups(todo: Sequence[PlanItem]) -> Iterator[list[PlanItem]]:
    """Runs of planned calls that show the same trajectories in the same order."""
    group: list[PlanItem] = []
    for it in todo:
        if group and not _same_prompt_input(group[0], it):
            yield group
            group = []
        group.append(it)
    if group:
        yield group


def _same_prompt_input(a: PlanItem, b: PlanItem) -> bool:
    return (
        a.trajectory.id == b.trajectory.id
        and (None if a.other is None else a.other.id) == (None if b.other is None else b.other.id)
        and a.order == b.order
    )


def prepare_items(items: Sequence[PlanItem]) -> list[PreparedCall]:
    """The prepared calls of ``items``, each prompt rendered once: for the samples of a judge,
    and for every judge whose rubric, template and budget give the same prompt."""
    out: list[PreparedCall] = []
    for group in _prompt_groups(items):
        head = group[0]
        by_judge: dict[int, list[PlanItem]] = {}
        for it in group:
            by_judge.setdefault(id(it.judge), []).append(it)
        rendered: dict[tuple[str, int], Prompt] = {}
        for judge_items in by_judge.values():
            calls = judge_items[0].judge.prepare(
                head.trajectory,
                other=head.other,
                other_expected=head.other_expected,
                order=head.order,
                samples=[it.sample for it in judge_items],
                rendered=rendered,
            )
            for call, it in zip(calls, judge_items, strict=True):
                if it.input_key is not None:
                    call = dataclasses.replace(call, input_key=it.input_key)
                out.append(call)
    return out


def _hit_call(it: PlanItem, key: str) -> PreparedCall:
    """The prepared call of a planned call answered by input key (never rendered: no
    messages or parameters, only what its judgment records)."""
    other_id = None if it.other is None else it.other.id
    shown = (it.trajectory.id,) if other_id is None else (it.trajectory.id, other_id)
    return PreparedCall(
        it.judge,
        it.trajectory.id,
        other_id,
        it.order,
        it.sample,
        shown if it.order == "ab" else shown[::-1],
        [],
        {},
        key,
        input_key=it.input_key,
    )


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
    engine: Engine | None = None,
    flush_interval_s: float = FLUSH_INTERVAL_S,
) -> BatchSummary:
    """Async core of :func:`score_dataset`; it takes no lease (the caller holds them)."""
    with _old_objects_frozen():
        return await _score(
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
            engine=engine,
            flush_interval_s=flush_interval_s,
        )


@contextlib.contextmanager
def _old_objects_frozen() -> Iterator[None]:
    """Leave the objects that exist before the batch out of the garbage collector's scans
    until it ends (``gc.freeze``).

    With litellm loaded a process holds about 600,000 objects, and each full collection
    traverses them all (about 0.4 s on a loaded 2-core machine): as much as a whole re-run of
    400 stored judgments. Objects the batch makes are collected as usual; the frozen ones
    are handed back to the collector at the end (``gc.unfreeze``).
    """
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


async def _score(
    store: Store,
    dataset: str,
    judges: Sequence[Judge],
    *,
    specs: Mapping[str, TaskSpec] | None,
    spec_defaults: TaskSpec | None,
    concurrency: int | None,
    progress: Callable[[BatchProgress], None] | None,
    gates: Collection[str],
    tasks: Collection[str] | None,
    max_tasks: int | None,
    max_trials: int | None,
    engine: Engine | None,
    flush_interval_s: float,
) -> BatchSummary:
    t0 = time.perf_counter()
    plan = plan_batch(
        store,
        dataset,
        judges,
        specs=specs,
        spec_defaults=spec_defaults,
        gates=gates,
        tasks=tasks,
        max_tasks=max_tasks,
        max_trials=max_trials,
    )
    summary = BatchSummary(
        dataset,
        [j.name for j in judges],
        trajectories=plan.trajectories,
        gate_skipped=len(plan.gate_failures),
        no_reference=plan.no_reference,
        planned=plan.planned,
        resumed=plan.resumed,
        gate_failures=plan.gate_failures,
    )
    for cache, entries in plan.gate_memo:
        cache.put_gates(entries)
    total = len(plan.todo) + len(plan.hits)

    def report(stored: Sequence[Judgment]) -> None:
        for j in stored:
            if j.error is not None:
                summary.errors += 1
            else:
                summary.judged += 1
            summary.cache_hits += int(j.cache_hit)
            if not j.cache_hit:
                summary.cost_usd += j.cost_usd or 0.0
                summary.prompt_tokens += j.prompt_tokens or 0
                summary.completion_tokens += j.completion_tokens or 0
        if progress is not None:
            done = summary.judged + summary.errors
            last = stored[-1] if stored else None
            progress(
                BatchProgress(
                    total, done, summary.errors, summary.cache_hits, summary.cost_usd, last
                )
            )

    report([])
    if total:
        writer = JudgmentWriter(store, dataset, interval_s=flush_interval_s, on_flush=report)
        width = concurrency or max((j.spec.concurrency for j in judges), default=1)
        await _execute(plan, engine or LocalEngine(min(width, total)), writer)
    summary.elapsed_s = time.perf_counter() - t0
    return summary


async def _execute(plan: BatchPlan, engine: Engine, writer: JudgmentWriter) -> None:
    """Prepare the plan's calls, finish the cache hits, run the misses on ``engine``, and
    write every judgment through ``writer`` (flushed on the way out, whatever happened)."""
    for judge in {id(it.judge): it.judge for it in plan.todo}.values():
        if judge._client is None:  # may start the embedded server: not on the event loop
            await asyncio.to_thread(judge.client)

    def emit(call: PreparedCall, result: CallResult) -> None:
        entry = result.cache_entry()
        cache = call.judge.cache
        if entry is None or cache is None or call.key is None:
            writer.add(finish(call, result), stored=result.stored)
        else:
            writer.add(
                finish(call, result),
                cache,
                (call.key, call.judge.client().model, entry),
                None if call.input_key is None else (call.input_key, call.key),
                stored=result.stored,
            )

    async def misses() -> AsyncIterator[PreparedCall]:
        for item, key, response in plan.hits:  # answered by input key: nothing to prepare
            writer.add(finish(_hit_call(item, key), CallResult.from_cache(key, response)))
        for start in range(0, len(plan.todo), PREPARE_CHUNK):
            calls = prepare_items(plan.todo[start : start + PREPARE_CHUNK])
            hits = _lookup(calls)
            for call in calls:
                if call.key is None:
                    writer.add(finish(call, None))
                elif call.key in hits.get(id(call.judge.cache), {}):
                    hit = hits[id(call.judge.cache)][call.key]
                    link = None if call.input_key is None else (call.input_key, call.key)
                    writer.add(
                        finish(call, CallResult.from_cache(call.key, hit)),
                        call.judge.cache,
                        None,
                        link,
                    )
                else:
                    yield call
            await asyncio.sleep(0)  # let answers in between chunks

    try:
        await run_all([engine.run(misses(), emit), writer.run_timer()], until_first=True)
    finally:
        writer.flush()


def _lookup(calls: Sequence[PreparedCall]) -> dict[int, dict[str, CachedResponse]]:
    """Cache hits of ``calls``, per cache (one bulk lookup each)."""
    wanted: dict[int, tuple[ResponseCache, list[str]]] = {}
    for call in calls:
        cache = call.judge.cache
        if cache is not None and call.key is not None:
            wanted.setdefault(id(cache), (cache, []))[1].append(call.key)
    return {k: cache.get_many(keys) for k, (cache, keys) in wanted.items()}


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
    engine: Engine | None = None,
    wait: bool = False,
    notify: Callable[[str], None] | None = None,
) -> BatchSummary:
    """Score a stored dataset with ``judges``; see the module docstring.

    ``specs`` default to the dataset's stored task specs (``spec_defaults`` is merged under
    each, as in :func:`trajudge.rules.check_dataset`); ``gates`` are the rule severities
    whose failure skips the judges for a trajectory (counted in ``gate_skipped``);
    ``concurrency`` bounds the calls in flight over all judges (each judge's own
    ``concurrency`` and ``rpm`` still apply); ``tasks`` / ``max_tasks`` / ``max_trials``
    limit the run to a subset (a demo); ``engine`` runs the calls (default: a
    :class:`~trajudge.judges.LocalEngine` of ``concurrency`` workers). Cost and tokens count
    real calls, not cache hits.

    The run holds the store's lease of each judge's configuration on ``dataset``
    (:meth:`trajudge.store.Store.holding_leases`) from before it plans to after its last
    write, so a second run of the same judges never makes the same calls at once: it raises
    :class:`trajudge.store.LeaseHeldError` naming the holder, or with ``wait`` waits for the
    lease (``notify`` hears whom for) and then plans only what the first left undone.
    """
    configs = [(j.name, j.config_sha256) for j in judges]
    with store.holding_leases(dataset, configs, wait=wait, notify=notify):
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
                engine=engine,
            )
        )
