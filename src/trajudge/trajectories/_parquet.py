"""The native Parquet format: one row per trajectory.

Scalar fields are columns of their own (``id``, ``task_id``, ``trial``, ``input``,
``final_answer``, ``outcome``, ``intent``); the nested ones (``messages``, ``steps``, ``usage``,
``metadata``, ``files_before``, ``files_after``) are JSON text columns, so the round trip is exact
whatever the arguments and metadata hold. The schema version is kept in the file's key-value
metadata.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trajudge.trajectories._errors import InputError
from trajudge.trajectories._io import atomic_write, check_file, check_unique, validate
from trajudge.trajectories._models import Trajectory

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.parquet as pq

FORMAT_KEY = b"trajudge.format"
FORMAT_VALUE = b"trajectories-v1"
JSON_COLUMNS = ("messages", "steps", "usage", "files_before", "files_after", "metadata")
BATCH_ROWS = 256  # rows decoded at a time when reading


@functools.cache
def schema() -> pa.Schema:
    """The file's Arrow schema (pyarrow is imported on first use, not with trajudge)."""
    import pyarrow as pa

    return pa.schema(
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
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pylist([_row(t) for t in trajectories], schema=schema())
    return atomic_write(path, lambda tmp: pq.write_table(table, tmp))


def read_parquet(path: str | os.PathLike[str]) -> list[Trajectory]:
    """Read and validate every trajectory of a Parquet file written by :func:`write_parquet`.

    Raises :class:`InputError` (file, ``row N``, field) on a missing or unknown column, bad JSON
    in a nested column, a value of the wrong type or a repeated id / (task_id, trial).
    """
    p = check_file(path)
    items = list(iter_parquet(p))
    check_unique(str(p), items)
    return [t for _, t in items]


def iter_parquet(p: Path) -> Iterator[tuple[str, Trajectory]]:
    """Validate the rows of a Parquet file one at a time, decoding :data:`BATCH_ROWS` rows at
    a time (ids are not checked for repeats here)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(p)
        names = set(parquet.schema_arrow.names)
    except (pa.ArrowException, OSError) as exc:
        raise InputError(str(p), None, None, f"not a readable Parquet file: {exc}") from None
    with parquet:
        for col in ("id", "task_id"):
            if col not in names:
                raise InputError(str(p), None, col, "missing column")
        unknown = sorted(names - set(schema().names))
        if unknown:
            raise InputError(str(p), None, unknown[0], "unknown column")
        if parquet.metadata.num_rows == 0:
            raise InputError(str(p), None, None, "no trajectories found")
        i = 0
        for rows in _batches(p, parquet):
            for row in rows:
                label = f"row {i}"
                i += 1
                yield label, _trajectory(p, label, row)


def _batches(p: Path, parquet: pq.ParquetFile) -> Iterator[list[dict[str, Any]]]:
    import pyarrow as pa

    batches = parquet.iter_batches(batch_size=BATCH_ROWS)
    while True:
        try:
            batch = next(batches, None)
        except (pa.ArrowException, OSError) as exc:
            raise InputError(str(p), None, None, f"not a readable Parquet file: {exc}") from None
        if batch is None:
            return
        yield batch.to_pylist()


def _trajectory(p: Path, label: str, row: dict[str, Any]) -> Trajectory:
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
    return validate(Trajectory, row, str(p), label)
