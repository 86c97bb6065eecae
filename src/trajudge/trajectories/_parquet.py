"""The native Parquet format: one row per trajectory.

Scalar fields are columns of their own (``id``, ``task_id``, ``trial``, ``input``,
``final_answer``, ``outcome``, ``intent``); the nested ones (``messages``, ``steps``, ``usage``,
``metadata``, ``files_before``, ``files_after``) are JSON text columns, so the round trip is exact
whatever the arguments and metadata hold. The schema version is kept in the file's key-value
metadata.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from trajudge.trajectories._errors import InputError
from trajudge.trajectories._io import atomic_write, check_file, check_unique, validate
from trajudge.trajectories._models import Trajectory

FORMAT_KEY = b"trajudge.format"
FORMAT_VALUE = b"trajectories-v1"
JSON_COLUMNS = ("messages", "steps", "usage", "files_before", "files_after", "metadata")
SCHEMA = pa.schema(
    [
        pa.field("id", pa.large_string(), nullable=False),
        pa.field("task_id", pa.large_string(), nullable=False),
        pa.field("trial", pa.int64(), nullable=False),
        pa.field("input", pa.large_string()),
        pa.field("messages", pa.large_string()),
        pa.field("steps", pa.large_string()),
        pa.field("final_answer", pa.large_string()),
        pa.field("outcome", pa.bool_()),
        pa.field("usage", pa.large_string()),
        pa.field("intent", pa.large_string()),
        pa.field("files_before", pa.large_string()),
        pa.field("files_after", pa.large_string()),
        pa.field("metadata", pa.large_string()),
    ],
    metadata={FORMAT_KEY: FORMAT_VALUE},
)


def _row(t: Trajectory) -> dict[str, Any]:
    data = t.model_dump(mode="json")
    for col in JSON_COLUMNS:
        value = data.get(col)  # "messages" is left out when there is no conversation
        data[col] = None if value is None else json.dumps(value, ensure_ascii=False)
    return data


def write_parquet(path: str | os.PathLike[str], trajectories: Iterable[Trajectory]) -> Path:
    """Write trajectories to a Parquet file, atomically (a temp file renamed into place)."""
    table = pa.Table.from_pylist([_row(t) for t in trajectories], schema=SCHEMA)
    return atomic_write(path, lambda tmp: pq.write_table(table, tmp))


def read_parquet(path: str | os.PathLike[str]) -> list[Trajectory]:
    """Read and validate every trajectory of a Parquet file written by :func:`write_parquet`.

    Raises :class:`InputError` (file, ``row N``, field) on a missing or unknown column, bad JSON
    in a nested column, a value of the wrong type or a repeated id / (task_id, trial).
    """
    p = check_file(path)
    return [t for _, t in read_parquet_items(p)]


def read_parquet_items(p: Path) -> list[tuple[str, Trajectory]]:
    try:
        table = pq.read_table(p)
    except (pa.ArrowException, OSError) as exc:
        raise InputError(str(p), None, None, f"not a readable Parquet file: {exc}") from None
    names = set(table.column_names)
    for col in ("id", "task_id"):
        if col not in names:
            raise InputError(str(p), None, col, "missing column")
    unknown = sorted(names - set(SCHEMA.names))
    if unknown:
        raise InputError(str(p), None, unknown[0], "unknown column")
    if table.num_rows == 0:
        raise InputError(str(p), None, None, "no trajectories found")
    items: list[tuple[str, Trajectory]] = []
    for i, row in enumerate(table.to_pylist()):
        label = f"row {i}"
        for col in JSON_COLUMNS:
            text = row.get(col)
            if text is None:
                row.pop(col, None)  # absent means the model's default
                continue
            try:
                row[col] = json.loads(text)
            except json.JSONDecodeError as exc:
                raise InputError(
                    str(p), label, col, f"invalid JSON: {exc.msg} (column {exc.colno})"
                ) from None
        items.append((label, validate(Trajectory, row, str(p), label)))
    check_unique(str(p), items)
    return items
