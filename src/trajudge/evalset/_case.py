"""The eval-case model and the eval-set file: JSON Lines, one :class:`EvalCase` per line.

An eval set lives under version control (``evalsets/airline.jsonl``). Reading validates every
line strictly and names the file, the line and the field of the first problem; writing goes
through a temporary file renamed into place, so a reader never sees half a file.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal, get_args

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from trajudge.core import InputError, atomic_write
from trajudge.trajectories import TaskSpec, Trajectory
from trajudge.trajectories._io import (
    check_file,
    validate,
    write_text_lines,
)
from trajudge.trajectories._stream import iter_json_records

Verdict = Literal["pass", "fail"]
Stratum = Literal["common", "long_tail", "known_hard"]
Split = Literal["dev", "holdout"]
BoundaryKind = Literal[
    "empty_result",
    "oversized_output",
    "ambiguous_request",
    "long_input",
    "permission_denied",
    "tool_failure",
    "timeout",
]

VERDICTS: tuple[str, ...] = get_args(Verdict)
STRATA: tuple[str, ...] = get_args(Stratum)
SPLITS: tuple[str, ...] = get_args(Split)
BOUNDARY_KINDS: tuple[str, ...] = get_args(BoundaryKind)


class CaseLabel(BaseModel):
    """The verdict a case expects, and why."""

    model_config = ConfigDict(extra="forbid")

    verdict: Verdict
    reason: str = ""


class CaseSource(BaseModel):
    """Where a case came from: a dataset in the store and one of its trajectories."""

    model_config = ConfigDict(extra="forbid")

    dataset: str = Field(min_length=1)
    trajectory_id: str = Field(min_length=1)


class EvalCase(BaseModel):
    """One case of an eval set.

    Attributes
    ----------
    id:
        The case id, ``"<dataset>/<trajectory id>"`` for cases made by :func:`make_case`.
    task_id, input, intent:
        Copied from the trajectory that motivated the case.
    trajectory:
        That trajectory, in full, so the case stays meaningful if the store is gone.
    expectations:
        The task's stored :class:`TaskSpec` (empty when the dataset has none), plus required
        and forbidden tools only when inference was asked for.
    label:
        The expected verdict (``pass`` or ``fail``) and its reason.
    stratum:
        ``common``, ``long_tail`` or ``known_hard`` (see :func:`assign_strata`).
    tags:
        Boundary kinds the case covers (see :func:`detect_boundary_tags`).
    split:
        ``dev`` or ``holdout``, from :func:`split_of` on the task id.
    core:
        Part of the small core set that runs first (see :func:`layers`); ``trajudge run``
        reads it through ``layers.evalset`` and judges this case's task first.
    source:
        The dataset and trajectory id it was made from.
    added_at:
        ISO-8601 UTC time the case was added.
    """

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    task_id: str = Field(min_length=1)
    input: str = ""
    trajectory: Trajectory
    expectations: TaskSpec = Field(default_factory=TaskSpec)
    label: CaseLabel
    intent: str | None = None
    stratum: Stratum = "common"
    tags: list[BoundaryKind] = Field(default_factory=list)
    split: Split = "holdout"
    core: bool = False
    source: CaseSource
    added_at: str = Field(min_length=1)


def read_evalset(path: str | os.PathLike[str]) -> list[EvalCase]:
    """Read and validate an eval set.

    Raises
    ------
    InputError
        On a missing or empty file, invalid JSON, a field of the wrong type (named as
        ``file: line N: field: reason``), or a repeated case id or source trajectory.
    """
    p = check_file(path)
    records = iter_json_records(p)
    cases: list[EvalCase] = []
    ids: dict[str, str] = {}
    sources: dict[tuple[str, str], str] = {}
    for label, obj in records:
        case = validate(EvalCase, obj, str(p), label)
        if case.id in ids:
            raise InputError(
                str(p),
                record=label,
                field="id",
                reason=f"duplicate case id {case.id!r} (first at {ids[case.id]})",
            )
        key = (case.source.dataset, case.source.trajectory_id)
        if key in sources:
            raise InputError(
                str(p),
                record=label,
                field="source",
                reason=f"trajectory {key[1]!r} of dataset {key[0]!r} is already a case "
                f"(first at {sources[key]})",
            )
        ids[case.id] = label
        sources[key] = label
        cases.append(case)
    return cases


def write_evalset(path: str | os.PathLike[str], cases: Iterable[EvalCase]) -> Path:
    """Write an eval set atomically (a temp file in the same folder, then ``os.replace``).

    Fields left at None are omitted, so the file diffs cleanly under version control;
    :func:`read_evalset` gives back equal cases.
    """
    items = list(cases)
    seen: set[str] = set()
    for c in items:
        if c.id in seen:
            raise ValueError(f"duplicate case id {c.id!r}")
        seen.add(c.id)
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    return atomic_write(target, lambda tmp: write_text_lines(tmp, (_dump(c) for c in items)))


def _dump(case: EvalCase) -> str:
    return case.model_dump_json(exclude_none=True)


def case_frame(cases: Sequence[EvalCase]) -> pd.DataFrame:
    """One row per case: the columns the sampling, coverage and report functions read.

    Columns: ``id``, ``task_id``, ``trajectory_id``, ``dataset``, ``intent``, ``stratum``,
    ``split``, ``core``, ``label``, ``tags`` (a list), ``outcome`` (the trajectory's
    environment outcome, None when unknown).
    """
    rows = [
        {
            "id": c.id,
            "task_id": c.task_id,
            "trajectory_id": c.source.trajectory_id,
            "dataset": c.source.dataset,
            "intent": c.intent,
            "stratum": c.stratum,
            "split": c.split,
            "core": c.core,
            "label": c.label.verdict,
            "tags": list(c.tags),
            "outcome": c.trajectory.outcome,
        }
        for c in cases
    ]
    cols = [
        "id",
        "task_id",
        "trajectory_id",
        "dataset",
        "intent",
        "stratum",
        "split",
        "core",
        "label",
        "tags",
        "outcome",
    ]
    return pd.DataFrame(rows, columns=cols)
