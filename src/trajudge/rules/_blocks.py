"""Rule checks over a trajectory Parquet file too big for memory: local processes or Ray.

The file is read one block (row group) at a time; each block's trajectories are checked
(:func:`iter_check_dataset`), summed into :class:`SummaryParts` and, with ``out``, turned into
report rows that are appended to a Parquet file of reports. Memory holds a few blocks, never
the dataset. Every engine runs the same code per block and merges the blocks in file order,
so their summaries (floats included) and report files are identical:

- ``local``: block after block in this process, or (``workers``) in spawned processes of
  this machine, each checking one block at a time;
- ``ray``: one Ray task per block on the cluster, at most ``2 x CPUs`` blocks in flight; the
  workers read the file themselves (it must be at the same path on every node: a local path
  of a one-machine cluster, or a shared file system).

Report rows hold what :func:`trajudge.rules.check_stored_dataset` stores: ``trajectory_id``,
``spec_sha256``, ``gates_passed``, ``score`` and ``data`` (the report as JSON).
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import signal
from collections import deque
from collections.abc import Callable, Generator, Mapping
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa
import pyarrow.parquet as pq

from trajudge._cluster import connect
from trajudge.core import SPAWN, InputError, atomic_write
from trajudge.rules._engine import iter_check_dataset
from trajudge.rules._registry import get_check, register_check
from trajudge.rules._summary import CheckSummary, SummaryParts
from trajudge.trajectories import TaskSpec, iter_lean_block, iter_parquet_block, parquet_blocks

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
# workers=None spawns processes from this many rows on: starting one (a fresh interpreter
# importing trajudge) costs about a second, what one core checks of some 20,000 rows
PARALLEL_MIN_ROWS = 50_000
BlockResult = tuple[SummaryParts, pa.Table | None]


def check_block(
    path: str,
    block: Block,
    specs: Mapping[str, TaskSpec],
    defaults: TaskSpec | None,
    with_rows: bool,
) -> BlockResult:
    """The summary parts of one block and (``with_rows``) its report rows.

    The rows are read as :class:`~trajudge.trajectories.LeanTrajectory` (the models' values
    and errors, without building them) unless a spec has a custom check, which gets models.
    """
    parts = SummaryParts()
    cols: dict[str, list[Any]] = {name: [] for name in REPORT_SCHEMA.names}
    ids, shas, gates = cols["trajectory_id"], cols["spec_sha256"], cols["gates_passed"]
    scores, data = cols["score"], cols["data"]
    encode = json.JSONEncoder(ensure_ascii=False).encode  # json.dumps's own, built once
    every = [*specs.values(), *([defaults] if defaults is not None else [])]
    read = iter_parquet_block if any(s.checks for s in every) else iter_lean_block
    for rep in iter_check_dataset(read(path, block[0], block[1]), specs, defaults):
        parts.add(rep)
        if with_rows:
            ids.append(rep.trajectory_id)
            shas.append(rep.spec_sha256)
            gates.append(rep.gates_passed)
            scores.append(rep.score)
            data.append(encode(rep.to_dict()))
    table = pa.Table.from_pydict(cols, schema=REPORT_SCHEMA) if with_rows else None
    return parts, table


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity mask where the system has one)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _check_block_task(
    path: str,
    block: Block,
    specs: Mapping[str, TaskSpec],
    defaults: TaskSpec | None,
    with_rows: bool,
) -> BlockResult | tuple[str, str | None, str | None, str]:
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
) -> Generator[BlockResult, None, None]:
    for block in blocks:
        yield check_block(path, block, specs, defaults, with_rows)


# -- worker processes -------------------------------------------------------------------------
# The specs each worker checks with, set once by _start_worker (a spawned process starts empty).
_WORKER_SPECS: tuple[Mapping[str, TaskSpec], TaskSpec | None] = ({}, None)


def _start_worker(
    specs: Mapping[str, TaskSpec],
    defaults: TaskSpec | None,
    custom: dict[str, Callable[..., Any]],
) -> None:
    global _WORKER_SPECS
    # Ctrl-C is the parent's to handle: it stops handing out blocks and waits for these
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for name, func in custom.items():  # checks registered in the parent, not on import
        register_check(name)(func)
    _WORKER_SPECS = (specs, defaults)


def _worker_block(path: str, block: Block, with_rows: bool) -> BlockResult:
    return check_block(path, block, *_WORKER_SPECS, with_rows)


def _custom_checks(
    specs: Mapping[str, TaskSpec], defaults: TaskSpec | None
) -> dict[str, Callable[..., Any]] | None:
    """The custom checks the specs use, by name, if they can be sent to another process
    (functions of an importable module); None when one cannot (a lambda, a local function)."""
    every = [*specs.values(), *([defaults] if defaults is not None else [])]
    used = {ref.name: get_check(ref.name) for spec in every for ref in spec.checks}
    try:
        pickle.dumps(used)
    except (pickle.PicklingError, AttributeError, TypeError):
        return None
    return used


def _process_blocks(
    path: str,
    blocks: list[Block],
    specs: Mapping[str, TaskSpec],
    defaults: TaskSpec | None,
    with_rows: bool,
    workers: int,
) -> Generator[BlockResult, None, None]:
    """The blocks checked by ``workers`` spawned processes, yielded in file order, with at
    most two blocks per worker in flight (results wait here in order, so memory stays
    bounded whatever the order they finish in)."""
    custom = _custom_checks(specs, defaults)
    if custom is None:  # a check that only lives in this process: check here
        yield from _local_blocks(path, blocks, specs, defaults, with_rows)
        return
    # spawn, not fork: a forked child inherits the parent's threads' locks in any state; and
    # SPAWN's children do not re-run this process's __main__ (a script, a Streamlit page)
    ctx = SPAWN
    pending: deque[Future[BlockResult]] = deque()
    todo = iter(blocks)
    with ProcessPoolExecutor(
        workers, mp_context=ctx, initializer=_start_worker, initargs=(specs, defaults, custom)
    ) as pool:
        try:
            while True:
                while len(pending) < 2 * workers and (block := next(todo, None)) is not None:
                    pending.append(pool.submit(_worker_block, path, block, with_rows))
                if not pending:
                    return
                try:
                    result = pending.popleft().result()
                except InputError as exc:  # a bad row: one line, without the worker's trace
                    raise InputError(exc.file, exc.record, exc.field, exc.reason) from None
                yield result
        finally:
            for future in pending:  # those not started; running ones finish (one block each)
                future.cancel()


def _ray_blocks(
    path: str,
    blocks: list[Block],
    specs: Mapping[str, TaskSpec],
    defaults: TaskSpec | None,
    with_rows: bool,
    address: str | None,
) -> Generator[BlockResult, None, None]:
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
    workers: int | None = 1,
    address: str | None = None,
    out: str | os.PathLike[str] | None = None,
    on_start: Callable[[int], None] | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> CheckSummary:
    """Check every trajectory of a Parquet file (see the module docstring) and return the
    summary; ``out`` receives the reports (written atomically: nothing on an error).

    ``specs`` / ``defaults`` as :func:`trajudge.rules.check_dataset`. ``workers`` is the
    number of processes of the local engine: 1 (the default) checks in this process; more
    spawns them (at most one per block), and None spawns one per CPU this process may use
    when the file has :data:`PARALLEL_MIN_ROWS` rows or more. The processes do not run the
    calling script again (see :mod:`trajudge.core._spawn`), so a script or a Streamlit page
    needs no ``if __name__ == "__main__":`` guard, unless a custom check it uses is defined in
    the script itself. Every choice gives the same summary and report file.

    ``address`` is the Ray cluster's (``auto``, ``ray://host:10001``; None: RAY_ADDRESS, else a
    new local cluster). ``on_start`` hears the number of trajectories, ``on_progress`` each
    block's.
    """
    if engine not in RULE_ENGINES:
        raise InputError("--engine", reason=f"{engine!r} is not one of local, ray")
    if workers is not None and workers < 1:
        raise InputError("--workers", reason=f"must be at least 1, got {workers}")
    src = str(Path(path).resolve())
    blocks = parquet_blocks(src)
    rows = sum(b[2] for b in blocks)
    if on_start is not None:
        on_start(rows)
    with_rows = out is not None
    results: Generator[BlockResult, None, None]
    if engine == "ray":
        results = _ray_blocks(src, blocks, specs, defaults, with_rows, address)
    else:
        auto = available_cpus() if rows >= PARALLEL_MIN_ROWS else 1
        n = min(len(blocks), workers if workers is not None else auto)
        if n > 1:
            results = _process_blocks(src, blocks, specs, defaults, with_rows, n)
        else:
            results = _local_blocks(src, blocks, specs, defaults, with_rows)
    total = SummaryParts()

    def consume(writer: pq.ParquetWriter | None) -> None:
        # closed on any error, so worker processes and Ray tasks stop before this returns
        with contextlib.closing(results):
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
