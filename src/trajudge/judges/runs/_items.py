"""The calls of a batch, item by item: which trajectories each judge is shown, and the gates.

Items per mode:

- pointwise: each trajectory that passes its gates;
- pairwise: every pair of trials of the same task (lower trial first as ``trajectory_id``)
  where both pass their gates; with the judge's ``max_pairs``, a seeded sample of at most
  that many pairs per task (:func:`task_pairs`);
- reference: each trajectory with a reference. The default reference is a passing trajectory
  of the same task (``outcome`` True, the lowest trial, never the candidate itself); when the
  task has none, the task spec's expected calls (``TaskSpec.reference``) are rendered as a
  reference trajectory (``other_id`` = ``spec:<task_id>``); a task with neither is counted in
  ``no_reference`` and not judged.

A trajectory that fails a gate never reaches a prompt: not as a candidate, not as the other
trajectory of a pair, not as a reference (:func:`plan_items` leaves out the ``gated`` ids).
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from trajudge.judges.calls._judge import Judge
from trajudge.judges.calls._judgment import Order
from trajudge.judges.prompts._inputs import input_key, spec_reference_sha256
from trajudge.judges.prompts._render import spec_reference
from trajudge.rules import iter_check_dataset
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
    #: the call's input key (:func:`trajudge.judges.prompts._inputs.input_key`), None when a content
    #: hash or the judge's final configuration is not known at planning time
    input_key: str | None = None

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
    return gated_by(failed_checks(trajectories, specs, defaults), gates)


def failed_checks(
    trajectories: Sequence[Trajectory],
    specs: Mapping[str, TaskSpec],
    defaults: TaskSpec | None = None,
) -> dict[str, list[tuple[str, str]]]:
    """Trajectory id -> (check, severity) of every failed check, in report order (every id)."""

    return {
        report.trajectory_id: [(r.check, r.severity) for r in report.results if not r.passed]
        for report in iter_check_dataset(trajectories, specs, defaults)
    }


def gated_by(
    failed: Mapping[str, Sequence[tuple[str, str]]], gates: Collection[str]
) -> dict[str, list[str]]:
    """The ids of ``failed`` with a failed check whose severity is in ``gates``, and those
    checks' names."""
    out: dict[str, list[str]] = {}
    for tid, checks in failed.items():
        names = [c for c, severity in checks if severity in gates]
        if names:
            out[tid] = names
    return out


def plan_items(
    judges: Sequence[Judge],
    trajectories: Sequence[Trajectory],
    specs: Mapping[str, TaskSpec],
    *,
    gated: Collection[str] = (),
    pool: Sequence[Trajectory] | None = None,
    hashes: Mapping[str, str] | None = None,
) -> tuple[list[PlanItem], int]:
    """Every call the judges need; returns the items and the no-reference count.

    ``pool`` is where references are looked for (default: ``trajectories``). No trajectory
    whose id is in ``gated`` is planned, as a candidate or as the other one shown.
    ``hashes`` (trajectory id -> content hash) gives each item its input key.
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
            for task_id, group in tasks.items():
                chosen = task_pairs(group, task_id, cap=judge.spec.max_pairs, seed=judge.spec.seed)
                pairs += [(a, b, False) for a, b in chosen]
        else:
            for t in eligible:
                ref = choose_reference(
                    t, by_task[t.task_id], specs.get(t.task_id), prefer=judge.spec.reference
                )
                if ref is None:
                    no_reference += 1
                else:
                    pairs.append((t, ref[0], ref[1]))
        settled = not (judge.is_local and judge.spec.prompt_budget is None)
        settled = settled or judge._client is not None  # a local budget: once it started
        for traj, other, expected in pairs:
            mine = None if hashes is None or not settled else hashes.get(traj.id)
            theirs: str | None = None
            if other is not None and mine is not None:
                theirs = (
                    spec_reference_sha256(specs[traj.task_id]) if expected else hashes.get(other.id)  # type: ignore[union-attr]
                )
                mine = None if theirs is None else mine
            for o, s in plan:
                key = None
                if mine is not None:
                    key = input_key(
                        mine,
                        theirs,
                        config_sha256=judge.config_sha256,
                        order=o,
                        sample=s,
                        other_expected=expected,
                    )
                items.append(PlanItem(judge, traj, other, expected, o, s, key))
    return items, no_reference


def task_pairs(
    trials: Sequence[Trajectory], task_id: str, *, cap: int | None = None, seed: int | None = None
) -> list[tuple[Trajectory, Trajectory]]:
    """The pairs of ``trials`` (one task) a pairwise judge compares: every pair, lower trial
    first, or with ``cap`` a sample of at most ``cap`` of them drawn with a generator seeded
    by ``seed`` and ``task_id`` (not by the process: the same pairs on every run), kept in
    the order of the full list."""
    group = sorted(trials, key=lambda t: (t.trial, t.id))
    every = [(a, b) for i, a in enumerate(group) for b in group[i + 1 :]]
    if cap is None or len(every) <= cap:
        return every
    keep = set(random.Random(f"{seed or 0}:{task_id}").sample(range(len(every)), cap))
    return [p for i, p in enumerate(every) if i in keep]


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


def stub(row: tuple[str, str, int, bool | None]) -> Trajectory:
    """A trajectory that only names itself (id, task, trial, outcome): enough to plan the
    calls it is part of and their keys, never shown to a judge."""
    tid, task_id, trial, outcome = row
    # a shallow copy of one blank trajectory: ``model_construct`` inspects every default
    # factory on every call (about 3 ms a trajectory)
    update = {"id": tid, "task_id": task_id, "trial": trial, "outcome": outcome}
    return _BLANK.model_copy(update=update)


_BLANK = Trajectory(id="-", task_id="-")
