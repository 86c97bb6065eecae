"""The native JSON Lines format: one :class:`Trajectory` as a JSON object per line.

The fields are exactly those of the model (``id``, ``task_id``, ``trial``, ``input``, ``steps``,
``final_answer``, ``outcome``, ``usage``, ``intent``, ``files_before``, ``files_after``,
``metadata``); unknown keys and wrong types are errors (validation is strict: ``"false"`` is
not a boolean, ``"3"`` is not an integer). A JSON list of such objects is read as well.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from trajudge.core import InputError, atomic_write
from trajudge.trajectories._io import Record, check_file, check_unique, validate, write_text_lines
from trajudge.trajectories._models import Trajectory
from trajudge.trajectories._stream import iter_json_records


def read_jsonl(path: str | os.PathLike[str]) -> list[Trajectory]:
    """Read and validate every trajectory of a JSON Lines file.

    Raises :class:`InputError` (file, ``line N``, field) on the first bad record, on a repeated
    id or (task_id, trial), and on an empty file; nothing is returned half-read.
    """
    p = check_file(path)
    return [t for _, t in trajectories_from_records(p, iter_json_records(p))]


def trajectories_from_records(
    path: Path, records: Iterable[Record]
) -> list[tuple[str, Trajectory]]:
    """Validate parsed native records (label, object) as trajectories."""
    items = list(iter_native(path, records))
    check_unique(str(path), items)
    return items


def iter_native(path: Path, records: Iterable[Record]) -> Iterator[tuple[str, Trajectory]]:
    """Validate native records one at a time (ids are not checked for repeats here)."""
    n = 0
    for label, obj in records:
        n += 1
        yield label, validate(Trajectory, obj, str(path), label)
    if not n:
        raise InputError(str(path), reason="no trajectories found")


def write_jsonl(path: str | os.PathLike[str], trajectories: Iterable[Trajectory]) -> Path:
    """Write trajectories as JSON Lines, atomically (a temp file renamed into place).

    Fields left at None are omitted; :func:`read_jsonl` gives back equal models.
    """
    items = list(trajectories)
    return atomic_write(
        path,
        lambda tmp: write_text_lines(tmp, (t.model_dump_json(exclude_none=True) for t in items)),
    )
