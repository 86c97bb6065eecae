"""Import τ-bench result files (a JSON list of ``EnvRunResult`` records).

Each record ``{task_id, trial, reward, info, traj}`` becomes one trajectory through
:func:`from_openai_messages` on ``traj``:

* ``id`` = ``f"{task_id}-{trial}"``, ``task_id`` as text, ``trial`` as given;
* ``outcome`` = ``abs(reward - 1) <= 1e-6``, the success test of τ-bench's ``display_metrics``;
* ``intent`` = the task's expected action names, sorted, unique, joined with ``+``
  (``"no_write"`` when the task expects no state-changing call);
* ``metadata``: ``instruction`` and ``user_id`` (from ``info.task``), ``reward``,
  ``user_cost`` (``info.user_cost`` is the cost of the USER SIMULATOR, not of the agent, so it
  is kept here and never counted as the agent's ``usage.cost_usd``), ``terminated_by``
  (``info.source``), ``system_prompt_sha256`` and ``source_file``.

Each task's ``info.task.actions`` (the expected state-changing calls) becomes a
:class:`TaskSpec` whose ``reference`` lists them with ``match_mode="in_order"``: the agent makes
many reads in between, so the reference must appear as a subsequence of its calls. Records of
the same task that disagree on the actions are an error.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from trajudge.core import InputError, canonical_json
from trajudge.trajectories._io import Record, check_file, check_unique, validate
from trajudge.trajectories._models import Trajectory
from trajudge.trajectories._spec import ExpectedCall, TaskSpec
from trajudge.trajectories._stream import iter_json_records
from trajudge.trajectories.readers.chat._openai import content_text, from_openai_messages

SUCCESS_TOLERANCE = 1e-6
NO_WRITE = "no_write"


class _Action(BaseModel):
    name: str = Field(min_length=1)
    # read from "kwargs"; AliasChoices keeps the pydantic mypy plugin from naming an __init__
    # parameter "kwargs", which would clash with its **kwargs
    arguments: dict[str, Any] = Field(default_factory=dict, validation_alias=AliasChoices("kwargs"))


class _Task(BaseModel):
    model_config = ConfigDict(extra="allow")

    user_id: str | None = None
    actions: list[_Action]
    instruction: str | None = None


class _Info(BaseModel):
    model_config = ConfigDict(extra="allow")

    task: _Task
    source: str | None = None
    user_cost: float | None = None


class TauBenchRecord(BaseModel):
    """One ``EnvRunResult`` of a τ-bench result file (only the fields trajudge reads)."""

    model_config = ConfigDict(extra="allow")

    task_id: int | str
    trial: int = Field(ge=0)
    reward: float
    info: _Info
    traj: list[Any]


def intent_of(actions: list[_Action]) -> str:
    """The intent label of a task: its sorted unique action names joined with ``+``."""
    names = sorted({a.name for a in actions})
    return "+".join(names) if names else NO_WRITE


def _system_sha(traj: list[Any]) -> str | None:
    for m in traj:
        if isinstance(m, dict) and m.get("role") == "system":
            text = content_text(m.get("content")) or ""
            return hashlib.sha256(text.encode()).hexdigest()
    return None


def from_tau_bench(path: str | os.PathLike[str]) -> tuple[list[Trajectory], dict[str, TaskSpec]]:
    """Read a τ-bench result file: the trajectories and one :class:`TaskSpec` per task."""
    p = check_file(path)
    items, specs = tau_bench_from_records(p, iter_json_records(p))
    return [t for _, t in items], specs


def tau_bench_from_records(
    path: Path, records: Iterable[Record]
) -> tuple[list[tuple[str, Trajectory]], dict[str, TaskSpec]]:
    specs: dict[str, TaskSpec] = {}
    items = list(iter_tau_bench(path, records, specs))
    check_unique(str(path), items)
    return items, specs


def iter_tau_bench(
    path: Path, records: Iterable[Record], specs: dict[str, TaskSpec]
) -> Iterator[tuple[str, Trajectory]]:
    """Yield the trajectories of τ-bench records one at a time, adding each task's spec to
    ``specs`` when its first record is read (so ``specs`` is whole once the records are).

    Ids are not checked for repeats here (see ``unique_items``)."""
    file = str(path)
    spec_source: dict[str, tuple[str, str]] = {}  # task_id -> (record label, canonical actions)
    n = 0
    for label, obj in records:
        rec = validate(TauBenchRecord, obj, file, label)
        task_id = str(rec.task_id)
        actions = rec.info.task.actions
        canon = canonical_json([a.model_dump(include={"name", "arguments"}) for a in actions])
        if task_id in spec_source:
            first_label, first_canon = spec_source[task_id]
            if canon != first_canon:
                raise InputError(
                    file,
                    record=label,
                    field="info.task.actions",
                    reason=f"task {task_id} expects different actions than at {first_label}",
                )
        else:
            spec_source[task_id] = (label, canon)
            specs[task_id] = TaskSpec(
                task_id=task_id,
                reference=[ExpectedCall(tool=a.name, args=a.arguments) for a in actions],
                match_mode="in_order",
            )
        metadata: dict[str, Any] = {
            "instruction": rec.info.task.instruction,
            "user_id": rec.info.task.user_id,
            "reward": rec.reward,
            "user_cost": rec.info.user_cost,
            "terminated_by": rec.info.source,
            "system_prompt_sha256": _system_sha(rec.traj),
            "source_file": path.name,
        }
        t = from_openai_messages(
            rec.traj,
            id=f"{task_id}-{rec.trial}",
            task_id=task_id,
            trial=rec.trial,
            outcome=abs(rec.reward - 1.0) <= SUCCESS_TOLERANCE,
            intent=intent_of(actions),
            metadata=metadata,
            file=file,
            record=label,
            field="traj",
        )
        n += 1
        yield label, t
    if not n:
        raise InputError(file, reason="no trajectories found")
