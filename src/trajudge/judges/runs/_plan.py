"""Planning a batch: every judge call a dataset needs, decided once before any call.

:func:`plan_batch` reads what it needs in bulk (the trajectories, the task specs, and the keys
of judgments already stored, one query per judge name), evaluates the gates, and lists the
calls (judge x item x order x sample) that are not stored yet; it makes no call and writes
nothing (gate results to cache are returned, see ``BatchPlan.gate_memo``). The calls are
grouped so that those sharing a prompt (the samples of one judge, and every judge with the
same rubric) are next to each other: the runner renders each prompt once.

A trajectory that fails a gate never reaches a prompt: not as a candidate, not as the other
trajectory of a pair, not as a reference. Gates are evaluated over every trajectory a prompt
could show (the chosen ones and the other trials of their tasks), not only the chosen ones.

The items of each mode, the references and the gates' effect are in
:mod:`trajudge.judges.runs._items`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from trajudge.judges.calls._cache import CachedResponse, ResponseCache
from trajudge.judges.calls._judge import Judge
from trajudge.judges.prompts._inputs import gate_keys
from trajudge.judges.runs._items import (
    PlanItem,
    failed_checks,
    gated_by,
    plan_items,
    select_trajectories,
    stub,
)
from trajudge.rules import merge_specs
from trajudge.store import Store
from trajudge.trajectories import TaskSpec, Trajectory


@dataclass
class BatchPlan:
    """What a batch will do: ``todo`` are the planned calls not stored yet, grouped by prompt;
    ``planned`` counts every planned call (``planned - len(todo)`` are resumed)."""

    dataset: str
    judges: list[Judge]
    todo: list[PlanItem]
    planned: int = 0
    #: planned calls answered by the cache, found by input key before any trajectory was
    #: read: (item, request key, response)
    hits: list[tuple[PlanItem, str, CachedResponse]] = field(default_factory=list)
    #: gate results computed while planning, for the cache: (cache, [(gate key, failed)])
    gate_memo: list[tuple[ResponseCache, list[tuple[str, list[tuple[str, str]]]]]] = field(
        default_factory=list
    )
    trajectories: int = 0
    no_reference: int = 0
    gate_failures: dict[str, list[str]] = field(default_factory=dict)

    @property
    def resumed(self) -> int:
        return self.planned - len(self.todo) - len(self.hits)


def _load(
    store: Store, dataset: str, ids: Collection[str], total: int
) -> tuple[list[Trajectory], dict[str, str]]:
    """The trajectories ``ids`` of ``dataset`` (of ``total``), in import order, and their
    content hashes (read from the same rows)."""
    hashes: dict[str, str] = {}
    if 2 * len(ids) >= total:
        out = []
        for t, sha in store.iter_hashed_trajectories(dataset):
            if t.id in ids:
                out.append(t)
                hashes[t.id] = sha
        return out, hashes
    wanted = list(ids)
    found: dict[str, Trajectory] = {}
    for start in range(0, len(wanted), _LOAD_CHUNK):
        for t, sha in store.iter_hashed_trajectories(
            dataset, ids=wanted[start : start + _LOAD_CHUNK]
        ):
            found[t.id] = t
            hashes[t.id] = sha
    return [found[i] for i in wanted if i in found], hashes


#: Trajectory ids read per query when only some are needed.
_LOAD_CHUNK = 500


def _cache_of(judges: Sequence[Judge]) -> ResponseCache | None:
    """The cache gate results are kept in: the first judge's that has one."""
    return next((j.cache for j in judges if j.cache is not None), None)


def _input_hits(items: Sequence[PlanItem]) -> dict[int, tuple[str, CachedResponse]]:
    """id(item) -> (request key, response) for the ``items`` whose input key is cached (one
    bulk lookup per cache)."""
    wanted: dict[int, tuple[ResponseCache, list[PlanItem]]] = {}
    for it in items:
        cache = it.judge.cache
        if cache is not None and it.input_key is not None:
            wanted.setdefault(id(cache), (cache, []))[1].append(it)
    out: dict[int, tuple[str, CachedResponse]] = {}
    for cache, group in wanted.values():
        found = cache.get_inputs(it.input_key for it in group if it.input_key is not None)
        out.update((id(it), found[it.input_key]) for it in group if it.input_key in found)
    return out


def plan_batch(
    store: Store,
    dataset: str,
    judges: Sequence[Judge],
    *,
    specs: Mapping[str, TaskSpec] | None = None,
    spec_defaults: TaskSpec | None = None,
    gates: Collection[str] = ("gate",),
    tasks: Collection[str] | None = None,
    max_tasks: int | None = None,
    max_trials: int | None = None,
) -> BatchPlan:
    """Plan a batch of ``judges`` over a stored dataset (see the module docstring).

    Arguments as :func:`trajudge.judges.score_dataset`.

    The calls are first planned from the trajectories' ids, tasks, trials and outcomes alone
    (no trajectory parsed, no gate evaluated) and compared with the stored judgment keys. A
    task whose calls are all stored is done: it is counted as resumed without reading its
    trajectories or evaluating its gates again (its judgments exist; a gate could only skip
    calls that will not be made). Only the tasks with a call to make are read in full, gated
    and planned again, as described above. So a re-run whose judgments are all stored costs a
    read of the ids and of the stored keys.

    With a response cache, the open tasks are first looked up by content: their
    trajectories' content hashes (a column of the store) give each trajectory's gate key and
    each call's input key (:mod:`trajudge.judges.prompts._inputs`), looked up in bulk. A task whose
    trajectories all have a cached gate result and whose calls are all cached is planned
    from the hashes alone (``hits``: no trajectory parsed, gated or rendered), so a re-run of
    cached judgments into a new dataset costs about a read of ids, hashes and answers. The
    other open tasks are read; only their trajectories without a cached gate result are
    gated (``gate_memo`` carries the new results, for the cache), and their cached calls are
    hits too. A trajectory that fails a gate is planned in no call, as above, whether its
    gate result was cached or computed.
    """
    store.require_dataset(dataset)
    heads = [stub(row) for row in store.trajectory_heads(dataset)]
    chosen_heads = select_trajectories(heads, tasks, max_tasks, max_trials)
    specs = dict(store.task_specs(dataset) if specs is None else specs)
    # references are drawn from the other trials of the chosen tasks
    tasks_shown = {t.task_id for t in chosen_heads}
    if spec_defaults is not None and spec_defaults.reference:
        # A reference under the spec file's defaults is every task's expected calls, for a
        # ``reference: spec`` judge as for the rules (which merge the defaults the same way).

        specs = {
            **specs,
            **{
                task: merge_specs(spec_defaults, specs[task]) if task in specs else spec_defaults
                for task in tasks_shown
            },
        }
    pool_heads = [t for t in heads if t.task_id in tasks_shown]
    stored: set[tuple[Any, ...]] = set()
    for name in sorted({j.name for j in judges}):
        stored |= store.judgment_keys(dataset, name)
    ungated, _ = plan_items(judges, chosen_heads, specs, pool=pool_heads)
    open_tasks = {it.trajectory.task_id for it in ungated if it.key not in stored}
    done_heads = [t for t in chosen_heads if t.task_id not in open_tasks]
    done_items, done_no_ref = plan_items(
        judges, done_heads, specs, pool=[t for t in pool_heads if t.task_id not in open_tasks]
    )
    gates = set(gates)
    cache = _cache_of(judges)
    cached = _CachedTasks()
    if cache is not None and open_tasks:
        cached = _cached_tasks(
            store, dataset, judges, cache, specs, spec_defaults, gates, stored, open_tasks,
            chosen_heads, pool_heads,
        )  # fmt: skip
        open_tasks -= cached.tasks
    # the tasks with a call to make: read in full, gate every trajectory a prompt could show
    pool_ids = {t.id for t in pool_heads if t.task_id in open_tasks}
    pool, hashes = _load(store, dataset, pool_ids, len(heads)) if pool_ids else ([], {})
    chosen_ids = {t.id for t in chosen_heads if t.task_id in open_tasks}
    chosen = [t for t in pool if t.id in chosen_ids]
    failures: dict[str, list[str]] = {}
    memo_out: list[tuple[str, list[tuple[str, str]]]] = []
    if gates and pool:
        known: dict[str, list[tuple[str, str]]] = {}
        keys: dict[str, str] = {}
        if cache is not None:
            keys = gate_keys({t.id: t.task_id for t in pool}, hashes, specs, spec_defaults)
            memo = cache.get_gates(keys.values())
            known = {tid: memo[k] for tid, k in keys.items() if k in memo}
        fresh = failed_checks([t for t in pool if t.id not in known], specs, spec_defaults)
        memo_out = [(keys[tid], checks) for tid, checks in fresh.items() if tid in keys]
        failures = gated_by({**known, **fresh}, gates)
    items, no_reference = plan_items(
        judges,
        chosen,
        specs,
        gated=failures,
        pool=pool,
        hashes=hashes if cache is not None else None,
    )
    todo = [it for it in items if it.key not in stored]
    found = _input_hits(todo) if cache is not None else {}
    hits = [(it, *found[id(it)]) for it in todo if id(it) in found]
    todo = [it for it in todo if id(it) not in found]
    # calls that share a prompt next to each other (a stable sort keeps judges and samples
    # in plan order within a group)
    position = {t.id: i for i, t in enumerate(chosen)}
    todo.sort(
        key=lambda it: (
            position[it.trajectory.id],
            "" if it.other is None else it.other.id,
            it.order,
        )
    )
    shown_failures = {k: v for k, v in failures.items() if k in chosen_ids}
    return BatchPlan(
        dataset=dataset,
        judges=list(judges),
        todo=todo,
        planned=len(items) + len(done_items) + cached.planned,
        trajectories=len(chosen_heads),
        no_reference=no_reference + done_no_ref + cached.no_reference,
        gate_failures={**cached.gate_failures, **shown_failures},
        hits=cached.hit_list + hits,
        gate_memo=[(cache, memo_out)] if cache is not None and memo_out else [],
    )


@dataclass
class _CachedTasks:
    """Open tasks whose every call the cache answers, planned without reading them."""

    tasks: set[str] = field(default_factory=set)
    hit_list: list[tuple[PlanItem, str, CachedResponse]] = field(default_factory=list)
    planned: int = 0
    no_reference: int = 0
    gate_failures: dict[str, list[str]] = field(default_factory=dict)


def _cached_tasks(
    store: Store,
    dataset: str,
    judges: Sequence[Judge],
    cache: ResponseCache,
    specs: Mapping[str, TaskSpec],
    spec_defaults: TaskSpec | None,
    gates: Collection[str],
    stored: Collection[tuple[Any, ...]],
    open_tasks: Collection[str],
    chosen_heads: Sequence[Trajectory],
    pool_heads: Sequence[Trajectory],
) -> _CachedTasks:
    """The open tasks the cache answers whole, from content hashes alone: every trajectory a
    prompt of the task could show has a known gate result (or no gate applies), and every
    call not stored has its input key in the cache. Planned exactly as a read task would be
    (same gates, references and pairs), from the trajectories' ids, trials and outcomes."""
    hashes = store.trajectory_sha256s(dataset)
    open_pool = [t for t in pool_heads if t.task_id in open_tasks]
    known: dict[str, list[tuple[str, str]]] = {}
    settled = set(open_tasks)
    if gates:
        keys = gate_keys({t.id: t.task_id for t in open_pool}, hashes, specs, spec_defaults)
        memo = cache.get_gates(keys.values())
        known = {tid: memo[k] for tid, k in keys.items() if k in memo}
        settled -= {t.task_id for t in open_pool if t.id not in known}
    failures = gated_by(known, gates)

    def plan(tasks: Collection[str]) -> tuple[list[PlanItem], int]:
        return plan_items(
            judges,
            [t for t in chosen_heads if t.task_id in tasks],
            specs,
            gated=failures,
            pool=[t for t in open_pool if t.task_id in tasks],
            hashes=hashes,
        )

    items, no_reference = plan(settled)
    todo = [it for it in items if it.key not in stored]
    found = _input_hits(todo)
    whole = settled - {it.trajectory.task_id for it in todo if id(it) not in found}
    if not whole:
        return _CachedTasks()
    if whole != settled:
        _, no_reference = plan(whole)  # the count of these tasks alone
    items = [it for it in items if it.trajectory.task_id in whole]
    hit_list = [(it, *found[id(it)]) for it in items if it.key not in stored]
    chosen_ids = {t.id for t in chosen_heads if t.task_id in whole}
    return _CachedTasks(
        tasks=whole,
        hit_list=hit_list,
        planned=len(items),
        no_reference=no_reference,
        gate_failures={k: v for k, v in failures.items() if k in chosen_ids},
    )
