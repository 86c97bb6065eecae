"""Planning a batch: every judge call a dataset needs, decided once before any call.

:func:`plan_batch` reads what it needs in bulk (the trajectories, the task specs, and the keys
of judgments already stored, one query per judge name), evaluates the gates, and lists the
calls (judge x item x order x sample) that are not stored yet; it makes no call and writes
nothing. The calls are grouped so that those sharing a prompt (the samples of one judge,
and every judge with the same rubric) are next to each other: the runner renders each prompt
once.

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

from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from trajudge.judges._judge import Judge
from trajudge.judges._judgment import Order
from trajudge.judges._render import spec_reference
from trajudge.store import Store
from trajudge.trajectories import TaskSpec, Trajectory


@dataclass(frozen=True)
class PlanItem:
    """One planned judgment: a judge, the trajectory (and the other one shown), order, sample."""

    judge: Judge
    trajectory: Trajectory
    other: Trajectory | None
    other_expected: bool
    order: Order
    sample: int

    @property
    def key(self) -> tuple[Any, ...]:
        """The store's judgment key (see ``Store.judgment_keys``)."""
        other_id = None if self.other is None else self.other.id
        j = self.judge
        return (
            self.trajectory.id,
            other_id,
            j.name,
            j.config_sha256,
            j.rubric_version,
            self.order,
            self.sample,
        )


@dataclass
class BatchPlan:
    """What a batch will do: ``todo`` are the planned calls not stored yet, grouped by prompt;
    ``planned`` counts every planned call (``planned - len(todo)`` are resumed)."""

    dataset: str
    judges: list[Judge]
    todo: list[PlanItem]
    planned: int = 0
    trajectories: int = 0
    no_reference: int = 0
    gate_failures: dict[str, list[str]] = field(default_factory=dict)

    @property
    def resumed(self) -> int:
        return self.planned - len(self.todo)


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


def gate_failures(
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
) -> tuple[list[PlanItem], int]:
    """Every call the judges need; returns the items and the no-reference count.

    ``pool`` is where references are looked for (default: ``trajectories``). No trajectory
    whose id is in ``gated`` is planned, as a candidate or as the other one shown.
    """
    by_task: dict[str, list[Trajectory]] = defaultdict(list)
    for t in pool if pool is not None else trajectories:
        if t.id not in gated:
            by_task[t.task_id].append(t)
    eligible = [t for t in trajectories if t.id not in gated]
    items: list[PlanItem] = []
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
            items += [PlanItem(judge, traj, other, expected, o, s) for o, s in plan]
    return items, no_reference


def select_trajectories(
    trajectories: list[Trajectory],
    tasks: Collection[str] | None,
    max_tasks: int | None,
    max_trials: int | None,
) -> list[Trajectory]:
    """The subset a run is limited to (``tasks``, the first ``max_tasks``, trials below
    ``max_trials``), in import order."""
    wanted = None if tasks is None else set(tasks)
    out = [t for t in trajectories if wanted is None or t.task_id in wanted]
    if max_tasks is not None:
        keep: dict[str, None] = {}
        for t in out:
            if len(keep) >= max_tasks:
                break
            keep.setdefault(t.task_id, None)
        out = [t for t in out if t.task_id in keep]
    if max_trials is not None:
        out = [t for t in out if t.trial < max_trials]
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
    """
    store.require_dataset(dataset)
    every = store.trajectories(dataset)
    chosen = select_trajectories(every, tasks, max_tasks, max_trials)
    specs = dict(store.task_specs(dataset) if specs is None else specs)
    # references are drawn from the other trials of the chosen tasks: gate them all
    tasks_shown = {t.task_id for t in chosen}
    pool = [t for t in every if t.task_id in tasks_shown]
    failures = gate_failures(pool, specs, set(gates), spec_defaults) if gates else {}
    chosen_ids = {t.id for t in chosen}
    items, no_reference = plan_items(judges, chosen, specs, gated=failures, pool=pool)
    stored: set[tuple[Any, ...]] = set()
    for name in sorted({j.name for j in judges}):
        stored |= store.judgment_keys(dataset, name)
    todo = [it for it in items if it.key not in stored]
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
    return BatchPlan(
        dataset=dataset,
        judges=list(judges),
        todo=todo,
        planned=len(items),
        trajectories=len(chosen),
        no_reference=no_reference,
        gate_failures={k: v for k, v in failures.items() if k in chosen_ids},
    )
