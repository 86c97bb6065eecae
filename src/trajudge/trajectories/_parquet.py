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


#: Rows per row group: the block that :func:`parquet_blocks` readers take at a time.
ROW_GROUP_ROWS = 10_000


def write_parquet(
    path: str | os.PathLike[str],
    trajectories: Iterable[Trajectory],
    *,
    row_group_rows: int = ROW_GROUP_ROWS,
) -> Path:
    """Write trajectories to a Parquet file, atomically (a temp file renamed into place).

    Written ``row_group_rows`` at a time (one row group each), so an iterator of any length
    is written in bounded memory and read back block by block.
    """

    def write(tmp: Path) -> None:
        with pq.ParquetWriter(tmp, SCHEMA) as writer:
            chunk: list[dict[str, Any]] = []
            for t in trajectories:
                chunk.append(_row(t))
                if len(chunk) >= row_group_rows:
                    writer.write_table(pa.Table.from_pylist(chunk, schema=SCHEMA))
                    chunk = []
            if chunk:
                writer.write_table(pa.Table.from_pylist(chunk, schema=SCHEMA))

    return atomic_write(path, write)


def read_parquet(path: str | os.PathLike[str]) -> list[Trajectory]:
    """Read and validate every trajectory of a Parquet file written by :func:`write_parquet`.

    Raises :class:`InputError` (file, ``row N``, field) on a missing or unknown column, bad JSON
    in a nested column, a value of the wrong type or a repeated id / (task_id, trial).
    """
    p = check_file(path)
    return [t for _, t in read_parquet_items(p)]


def _check_columns(p: Path, names: set[str]) -> None:
    for col in ("id", "task_id"):
        if col not in names:
            raise InputError(str(p), None, col, "missing column")
    unknown = sorted(names - set(SCHEMA.names))
    if unknown:
        raise InputError(str(p), None, unknown[0], "unknown column")


def _items(p: Path, rows: list[dict[str, Any]], first: int) -> list[tuple[str, Trajectory]]:
    """Validated trajectories of ``rows`` (row ``first`` of the file is ``rows[0]``)."""
    items: list[tuple[str, Trajectory]] = []
    for i, row in enumerate(rows, start=first):
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
    return items


def read_parquet_items(p: Path) -> list[tuple[str, Trajectory]]:
    try:
        table = pq.read_table(p)
    except (pa.ArrowException, OSError) as exc:
        raise InputError(str(p), None, None, f"not a readable Parquet file: {exc}") from None
    _check_columns(p, set(table.column_names))
    if table.num_rows == 0:
        raise InputError(str(p), None, None, "no trajectories found")
    items = _items(p, table.to_pylist(), 0)
    check_unique(str(p), items)
    return items


def parquet_blocks(path: str | os.PathLike[str]) -> list[tuple[int, int, int]]:
    """The blocks of a trajectory Parquet file, read from its footer only: one
    ``(row_group, first_row, rows)`` per row group. Checks the columns as
    :func:`read_parquet` does (a file without rows is an error)."""
    p = check_file(path)
    try:
        meta = pq.ParquetFile(p).metadata
    except (pa.ArrowException, OSError) as exc:
        raise InputError(str(p), None, None, f"not a readable Parquet file: {exc}") from None
    _check_columns(p, set(meta.schema.to_arrow_schema().names))
    blocks, first = [], 0
    for rg in range(meta.num_row_groups):
        rows = meta.row_group(rg).num_rows
        if rows:
            blocks.append((rg, first, rows))
        first += rows
    if not blocks:
        raise InputError(str(p), None, None, "no trajectories found")
    return blocks


def read_parquet_block(
    path: str | os.PathLike[str], row_group: int, first_row: int
) -> list[Trajectory]:
    """The validated trajectories of one block of :func:`parquet_blocks` (errors name the row
    of the file). Ids are not checked for repeats across blocks: that needs every id at once."""
    p = Path(path)
    try:
        table = pq.ParquetFile(p).read_row_group(row_group)
    except (pa.ArrowException, OSError) as exc:
        raise InputError(str(p), None, None, f"not a readable Parquet file: {exc}") from None
    rows = table.to_pylist()
    del table
    return [t for _, t in _items(p, rows, first_row)]
