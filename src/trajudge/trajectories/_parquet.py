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

from trajudge.core import InputError, atomic_write
from trajudge.trajectories._io import check_file, check_unique, kind, validate
from trajudge.trajectories._json import load_json
from trajudge.trajectories._lean import LeanTrajectory, lean_trajectory
from trajudge.trajectories._limits import NESTING
from trajudge.trajectories._models import Trajectory

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.parquet as pq

FORMAT_KEY = b"trajudge.format"
FORMAT_VALUE = b"trajectories-v1"
JSON_COLUMNS = ("messages", "steps", "usage", "files_before", "files_after", "metadata")
BATCH_ROWS = 256  # rows decoded at a time when reading
BLOCK_BATCH_ROWS = 1024  # rows decoded at a time within a block (a row group) of rule checks


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

    import pyarrow as pa
    import pyarrow.parquet as pq

    def write(tmp: Path) -> None:
        with pq.ParquetWriter(tmp, schema()) as writer:
            chunk: list[dict[str, Any]] = []
            for t in trajectories:
                chunk.append(_row(t))
                if len(chunk) >= row_group_rows:
                    writer.write_table(pa.Table.from_pylist(chunk, schema=schema()))
                    chunk = []
            if chunk:
                writer.write_table(pa.Table.from_pylist(chunk, schema=schema()))

    return atomic_write(path, write)


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
        raise InputError(str(p), reason=f"not a readable Parquet file: {exc}") from None
    with parquet:
        _check_columns(p, names)
        if parquet.metadata.num_rows == 0:
            raise InputError(str(p), reason="no trajectories found")
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
            raise InputError(str(p), reason=f"not a readable Parquet file: {exc}") from None
        if batch is None:
            return
        yield batch.to_pylist()


def _trajectory(p: Path, label: str, row: dict[str, Any], limit: int | None = None) -> Trajectory:
    for col in JSON_COLUMNS:
        text = row.get(col)
        if text is None:
            row.pop(col, None)  # absent means the model's default
            continue
        if not isinstance(text, str):  # a column of another type: a traceback further on
            raise InputError(
                str(p), record=label, field=col, reason=f"expected JSON text, got {kind(text)}"
            )
        try:
            row[col] = load_json(text, str(p), label, col, limit=limit)
        except json.JSONDecodeError as exc:
            raise InputError(
                str(p),
                record=label,
                field=col,
                reason=f"invalid JSON: {exc.msg} (column {exc.colno})",
            ) from None
    return validate(Trajectory, row, str(p), label)


def _check_columns(p: Path, names: set[str]) -> None:
    for col in ("id", "task_id"):
        if col not in names:
            raise InputError(str(p), field=col, reason="missing column")
    unknown = sorted(names - set(schema().names))
    if unknown:
        raise InputError(str(p), field=unknown[0], reason="unknown column")


def parquet_blocks(path: str | os.PathLike[str]) -> list[tuple[int, int, int]]:
    """The blocks of a trajectory Parquet file, read from its footer only: one
    ``(row_group, first_row, rows)`` per row group. Checks the columns as
    :func:`read_parquet` does (a file without rows is an error)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    p = check_file(path)
    try:
        meta = pq.ParquetFile(p).metadata
    except (pa.ArrowException, OSError) as exc:
        raise InputError(str(p), reason=f"not a readable Parquet file: {exc}") from None
    _check_columns(p, set(meta.schema.to_arrow_schema().names))
    blocks, first = [], 0
    for rg in range(meta.num_row_groups):
        rows = meta.row_group(rg).num_rows
        if rows:
            blocks.append((rg, first, rows))
        first += rows
    if not blocks:
        raise InputError(str(p), reason="no trajectories found")
    return blocks


def read_parquet_block(
    path: str | os.PathLike[str], row_group: int, first_row: int
) -> list[Trajectory]:
    """The validated trajectories of one block of :func:`parquet_blocks` (errors name the row
    of the file). Ids are not checked for repeats across blocks: that needs every id at once."""
    return list(iter_parquet_block(path, row_group, first_row))


def iter_parquet_block(
    path: str | os.PathLike[str], row_group: int, first_row: int
) -> Iterator[Trajectory]:
    """:func:`read_parquet_block` one trajectory at a time, decoding
    :data:`BLOCK_BATCH_ROWS` rows at a time (memory holds one batch whatever the group's size)."""
    p = Path(path)
    for label, row in _block_rows(p, row_group, first_row):
        yield _trajectory(p, label, row)


def iter_lean_block(
    path: str | os.PathLike[str], row_group: int, first_row: int
) -> Iterator[Trajectory | LeanTrajectory]:
    """:func:`iter_parquet_block` for the built-in rule checks: each row as a
    :class:`LeanTrajectory` (no pydantic models), or as a :class:`Trajectory` validated by
    the model when the lean reader leaves it to the model (see :mod:`._lean`): the same
    errors, the same values."""
    p = Path(path)
    limit = NESTING.value  # read once: the environment lookup cost more than a small value
    for label, row in _block_rows(p, row_group, first_row):
        yield lean_trajectory(row, limit) or _trajectory(p, label, row, limit)


def _block_rows(p: Path, row_group: int, first_row: int) -> Iterator[tuple[str, dict[str, Any]]]:
    """The rows of a row group as ``(label, row)``, :data:`BLOCK_BATCH_ROWS` at a time."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(p)
        batches = parquet.iter_batches(batch_size=BLOCK_BATCH_ROWS, row_groups=[row_group])
    except (pa.ArrowException, OSError) as exc:
        raise InputError(str(p), reason=f"not a readable Parquet file: {exc}") from None
    with parquet:
        i = first_row
        while True:
            try:
                batch = next(batches, None)
            except (pa.ArrowException, OSError) as exc:
                raise InputError(str(p), reason=f"not a readable Parquet file: {exc}") from None
            if batch is None:
                return
            # column by column: Arrow builds the row dicts of to_pylist() four times slower
            names = batch.schema.names
            columns = [
                _values(p, name, col, i) for name, col in zip(names, batch.columns, strict=True)
            ]
            for values in zip(*columns, strict=True):
                yield f"row {i}", dict(zip(names, values, strict=True))
                i += 1


def _values(p: Path, name: str, column: pa.Array, first_row: int) -> list[Any]:
    try:
        return column.to_pylist()  # type: ignore[no-any-return]
    except UnicodeDecodeError as exc:  # a text column of a file not written by trajudge
        k = 0
        while k < len(column) - 1:
            try:
                column[k].as_py()
            except UnicodeDecodeError:
                break
            k += 1
        reason = f"not UTF-8 text: {exc.reason} at byte {exc.start}"
        raise InputError(str(p), record=f"row {first_row + k}", field=name, reason=reason) from None
