"""Rule checks over a trajectory Parquet file too big for memory, locally or on Ray.

The file is read one block (row group) at a time; each block's trajectories are checked
(:func:`iter_check_dataset`), summed into :class:`SummaryParts` and, with ``out``, turned into
report rows that are appended to a Parquet file of reports. Memory holds a few blocks, never
the dataset. The two engines run the same code per block and merge the blocks in file order,
so their summaries and report files are identical:

- ``local``: block after block in this process;
- ``ray``: one Ray task per block on the cluster, at most ``2 x CPUs`` blocks in flight; the
  workers read the file themselves (it must be at the same path on every node: a local path
  of a one-machine cluster, or a shared file system).

Report rows hold what :func:`trajudge.rules.check_stored_dataset` stores: ``trajectory_id``,
``spec_sha256``, ``gates_passed``, ``score`` and ``data`` (the report as JSON).
"""

from __future__ import annotations

import json
import os
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa
import pyarrow.parquet as pq

from trajudge._cluster import connect
from trajudge.core import InputError, atomic_write
from trajudge.rules._engine import iter_check_dataset
from trajudge.rules._summary import CheckSummary, SummaryParts
from trajudge.trajectories import TaskSpec, parquet_blocks, read_parquet_block

RuleEngine = Literal["local", "ray"]
RULE_ENGINES: tuple[RuleEngine, ...] = ("local", "ray")

REPORT_SCHEMA = pa.schema(
    [
        pa.field("trajectory_id", pa.large_string(), nullable=False),
        pa.field("spec_sha256", pa.string(), nullable=False),
        pa.field("gates_passed", pa.bool_(), nullable=False),
        pa.field("score", pa.float64()),
        pa.field("data", pa.large_string(), nullable=False),
    ]
)

Block = tuple[int, int, int]  # (row group, first row, rows)


def check_block(
    path: str,
    block: Block,
    specs: Mapping[str, TaskSpec],
    defaults: TaskSpec | None,
    with_rows: bool,
) -> tuple[SummaryParts, pa.Table | None]:
    """The summary parts of one block and (``with_rows``) its report rows."""
    parts = SummaryParts()
    cols: dict[str, list[Any]] = {name: [] for name in REPORT_SCHEMA.names}
    trajectories = read_parquet_block(path, block[0], block[1])
    for rep in iter_check_dataset(trajectories, specs, defaults):
        parts.add(rep)
        if with_rows:
            cols["trajectory_id"].append(rep.trajectory_id)
            cols["spec_sha256"].append(rep.spec_sha256)
            cols["gates_passed"].append(rep.gates_passed)
            cols["score"].append(rep.score)
            cols["data"].append(json.dumps(rep.to_dict(), ensure_ascii=False))
    table = pa.Table.from_pydict(cols, schema=REPORT_SCHEMA) if with_rows else None
    return parts, table


def _check_block_task(
    path: str,
    block: Block,
    specs: Mapping[str, TaskSpec],
    defaults: TaskSpec | None,
    with_rows: bool,
) -> tuple[SummaryParts, pa.Table | None] | tuple[str, str | None, str | None, str]:
    """:func:`check_block` as a Ray task: a bad row comes back as the fields of its
    :class:`InputError` (Ray cannot rebuild the exception itself on the driver)."""
    try:
        return check_block(path, block, specs, defaults, with_rows)
    except InputError as exc:
        return (exc.file, exc.record, exc.field, exc.reason)


def _local_blocks(
    path: str,
    blocks: list[Block],
    specs: Mapping[str, TaskSpec],
    defaults: TaskSpec | None,
    with_rows: bool,
) -> Iterator[tuple[SummaryParts, pa.Table | None]]:
    for block in blocks:
        yield check_block(path, block, specs, defaults, with_rows)


def _ray_blocks(
    path: str,
    blocks: list[Block],
    specs: Mapping[str, TaskSpec],
    defaults: TaskSpec | None,
    with_rows: bool,
    address: str | None,
) -> Iterator[tuple[SummaryParts, pa.Table | None]]:
    ray = connect(address)
    task = ray.remote(_check_block_task)
    specs_ref = ray.put(dict(specs))
    window = max(2, 2 * int(ray.cluster_resources().get("CPU", 1)))
    pending: deque[Any] = deque()
    todo = iter(blocks)
    try:
        while True:
            while len(pending) < window and (block := next(todo, None)) is not None:
                pending.append(task.remote(path, block, specs_ref, defaults, with_rows))
            if not pending:
                return
            result = ray.get(pending.popleft())
            if len(result) == 4:  # a bad row: the same one line as locally
                raise InputError(*result)
            yield result
    finally:
        for ref in pending:
            ray.cancel(ref)


def check_parquet(
    path: str | os.PathLike[str],
    specs: Mapping[str, TaskSpec],
    defaults: TaskSpec | None = None,
    *,
    engine: RuleEngine = "local",
    address: str | None = None,
    out: str | os.PathLike[str] | None = None,
    on_start: Callable[[int], None] | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> CheckSummary:
    """Check every trajectory of a Parquet file (see the module docstring) and return the
    summary; ``out`` receives the reports (written atomically: nothing on an error).

    ``specs`` / ``defaults`` as :func:`trajudge.rules.check_dataset`; ``address`` is the Ray
    cluster's (``auto``, ``ray://host:10001``; None: RAY_ADDRESS, else a new local cluster).
    ``on_start`` hears the number of trajectories, ``on_progress`` each block's.
    """
    if engine not in RULE_ENGINES:
        raise InputError("--engine", reason=f"{engine!r} is not one of local, ray")
    src = str(Path(path).resolve())
    blocks = parquet_blocks(src)
    if on_start is not None:
        on_start(sum(b[2] for b in blocks))
    with_rows = out is not None
    if engine == "ray":
        results = _ray_blocks(src, blocks, specs, defaults, with_rows, address)
    else:
        results = _local_blocks(src, blocks, specs, defaults, with_rows)
    total = SummaryParts()

    def consume(writer: pq.ParquetWriter | None) -> None:
        for parts, table in results:
            total.merge(parts)
            if writer is not None and table is not None:
                writer.write_table(table)
            if on_progress is not None:
                on_progress(parts.trajectories)

    if out is None:
        consume(None)
    else:

        def write(tmp: Path) -> None:
            with pq.ParquetWriter(tmp, REPORT_SCHEMA) as writer:
                consume(writer)

        atomic_write(out, write)
    return total.summary()
