"""The process engine: a batch's judge calls run in worker processes on this machine, so
that one run uses every core (litellm costs milliseconds of CPU per call: one process is
CPU-bound long before a fast server is).

The driver (the process that runs :func:`trajudge.judges.score_dataset`) plans, prepares the
calls (prompts and cache keys), looks the cache up, validates every answer and writes every
judgment, exactly as with the local engine; only the calls to the models run in the workers:

- ``workers`` processes (default: one per CPU this process may use, at most
  ``concurrency``), started with the ``spawn`` method, each an asyncio loop holding one
  :class:`~trajudge.judges.LLMClient` per judge, built from the driver's client by the code
  the Ray engine uses (:mod:`trajudge.judges.engines._wire`: same model, endpoint, timeout,
  retries and backoff; the API key is read from the worker's environment, never sent);
- a call is sent to the worker with the fewest calls in flight as (judge, cache key,
  messages, parameters) over a socket (frames: :mod:`trajudge.judges.engines._procs_worker`),
  and its :class:`~trajudge.judges.CallResult` comes back to the driver, which emits it;
- ``concurrency`` calls are in flight at most over all workers, and at most each judge's
  ``concurrency`` for that judge (counted by the driver); a judge's ``rpm`` is kept by the
  driver, which hands out attempt permits: before each attempt a worker asks it for the
  judge's next start and waits until then (one :class:`~trajudge.judges.engines._wire.RateActor`
  per judge, as the Ray engine's rate actor);
- a worker that dies (its socket closes) is replaced, and the calls it had in flight are
  sent again, to another worker: none is lost or written twice (the driver writes each
  once, when its answer comes). A call whose worker dies ``max_worker_failures + 1`` times
  is recorded as an error (a later run retries it, like any error);
- what a worker answers is checked by the driver: a call result for this very request,
  whose verdict :func:`~trajudge.judges.calls._call.finish` then validates against the
  rubric's schema; a worker that raises, or answers anything else, gives an error for that
  call naming what happened, never a verdict, and the run goes on;
- the workers stop when the run ends, fails or is cancelled (Ctrl-C: the workers ignore
  SIGINT and the driver stops them), and exit by themselves when the driver is gone (their
  socket closes), so a killed driver leaves no process behind; a resumed run plans only
  what was not stored, as with the local engine.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import pickle
import socket
import struct
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import TYPE_CHECKING

from trajudge.core import SPAWN
from trajudge.judges.calls._call import PreparedCall
from trajudge.judges.calls._result import CallResult
from trajudge.judges.engines._base import Emit, drain
from trajudge.judges.engines._procs_worker import (
    ADD,
    CALL,
    CANCEL,
    DELAY,
    INDEX,
    PERMIT,
    RAISED,
    RATE,
    RESULT,
    ProcessWorker,
    open_streams,
    read_frame,
    worker_main,
    write_frame,
)
from trajudge.judges.engines._wire import RateActor, _Wire, _wire

if TYPE_CHECKING:
    from trajudge.judges.calls._judge import Judge

#: Seconds a stopped worker has to exit before it is killed.
STOP_WAIT_S = 10.0


class _Died(Exception):
    """The worker process of a call died (or its stream broke) before answering."""


def cpu_count() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


@dataclass
class _Slot:
    """One worker process and, during a run, its streams and the calls it has in flight."""

    process: BaseProcess
    conn: Connection
    pid: int
    generation: int = 0
    in_flight: int = 0
    alive: bool = False
    writer: asyncio.StreamWriter | None = None
    reader: asyncio.Task[None] | None = None
    pending: dict[int, asyncio.Future[tuple[int, bytes]]] = field(default_factory=dict)

    def fail(self, why: str) -> None:
        """The worker is gone: every call waiting on it learns so."""
        self.alive = False
        for done in self.pending.values():
            if not done.done():
                done.set_exception(_Died(why))
        self.pending.clear()


@dataclass
class _Pool:
    """The workers and the judges they know. Indices of judges only grow (kept workers
    serve later runs with other judges); ``ids``, ``limits`` and ``lock`` are per run."""

    worker_class: type[ProcessWorker]
    size: int
    slots: list[_Slot] = field(default_factory=list)
    wires: dict[int, _Wire] = field(default_factory=dict)
    rates: dict[int, RateActor] = field(default_factory=dict)
    ids: dict[int, int] = field(default_factory=dict)  # id(judge) -> index, this run
    limits: dict[int, asyncio.Semaphore] = field(default_factory=dict)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    calls: itertools.count[int] = field(default_factory=itertools.count)
    replaced: int = 0

    def _spawn(self) -> _Slot:
        ctx = SPAWN  # its children do not re-run this process's __main__ (a script, a page)
        mine, theirs = ctx.Pipe(duplex=True)  # a socket pair on POSIX
        process = ctx.Process(
            target=worker_main,
            args=(self.worker_class, theirs, dict(self.wires)),
            daemon=True,  # ended by multiprocessing at exit if still running
            name="trajudge-judge-worker",
        )
        process.start()
        theirs.close()  # else the driver's copy would keep the worker's end open
        assert process.pid is not None
        return _Slot(process, mine, process.pid)

    async def begin(self) -> None:
        """Start a run: the processes once, their streams and the per-run state anew."""
        if not self.slots:
            self.slots = [self._spawn() for _ in range(self.size)]
        self.ids, self.limits, self.lock = {}, {}, asyncio.Lock()
        for slot in self.slots:
            await self._connect(slot)

    async def _connect(self, slot: _Slot) -> None:
        reader, slot.writer = await open_streams(slot.conn.fileno())
        slot.in_flight, slot.alive = 0, True
        slot.reader = asyncio.ensure_future(self._read(slot, reader))

    async def _read(self, slot: _Slot, reader: asyncio.StreamReader) -> None:
        """Hand each answer of ``slot``'s worker to its caller, until its stream ends."""
        why, pid = "its socket closed", slot.pid
        try:
            while True:
                kind, ident, payload = await read_frame(reader)
                if kind in (RESULT, RAISED):
                    done = slot.pending.pop(ident, None)
                    if done is not None and not done.done():
                        done.set_result((kind, payload))
                elif kind == RATE and slot.writer is not None:
                    (idx,) = INDEX.unpack(payload)
                    delay = self.rates[idx].reserve() if idx in self.rates else 0.0
                    write_frame(slot.writer, PERMIT, ident, DELAY.pack(delay))
                else:
                    why = f"it sent a frame of unknown kind {kind}"
                    break
        except (asyncio.IncompleteReadError, ConnectionError, struct.error) as exc:
            why = f"its socket closed ({type(exc).__name__})"
        finally:
            slot.fail(f"the worker process {pid} died: {why}")

    async def judge_index(self, judge: Judge) -> int:
        """The judge's index on the workers (sent to every worker on first use)."""
        idx = self.ids.get(id(judge))
        if idx is not None:
            return idx
        async with self.lock:
            idx = self.ids.get(id(judge))
            if idx is None:
                idx = len(self.wires)
                rpm = judge.client().rpm
                if rpm:
                    self.rates[idx] = RateActor(rpm)
                # the rate field says only "ask the driver": the permits are handed out here
                wire = self.wires[idx] = _wire(judge, True if rpm else None)
                payload = pickle.dumps(wire, protocol=5)
                for slot in self.slots:
                    if slot.alive and slot.writer is not None:
                        write_frame(slot.writer, ADD, idx, payload)
                self.limits[idx] = asyncio.Semaphore(max(1, judge.spec.concurrency))
                self.ids[id(judge)] = idx
        return idx

    async def ask(self, slot: _Slot, idx: int, call: PreparedCall) -> tuple[int, bytes]:
        """Send ``call`` to ``slot``'s worker and wait for its answer (raise :class:`_Died`)."""
        if not slot.alive or slot.writer is None:
            raise _Died(f"the worker process {slot.pid} is gone")
        cid = next(self.calls)
        done: asyncio.Future[tuple[int, bytes]] = asyncio.get_running_loop().create_future()
        slot.pending[cid] = done
        payload = pickle.dumps((idx, call.key, call.messages, call.params), protocol=5)
        write_frame(slot.writer, CALL, cid, payload)
        slot.in_flight += 1
        try:
            return await done
        except asyncio.CancelledError:
            if slot.pending.pop(cid, None) is not None and slot.alive:
                write_frame(slot.writer, CANCEL, cid)
            raise
        finally:
            slot.in_flight -= 1

    async def replace(self, slot: _Slot, generation: int) -> None:
        """Replace the worker of ``slot`` if it is still the one that failed."""
        async with self.lock:
            if slot.generation != generation:
                return
            if slot.writer is not None:
                slot.writer.close()
            await asyncio.to_thread(_end, slot)
            fresh = self._spawn()
            slot.process, slot.conn, slot.pid = fresh.process, fresh.conn, fresh.pid
            slot.generation += 1
            self.replaced += 1
            await self._connect(slot)

    def pick(self) -> _Slot:
        return min(self.slots, key=lambda s: (not s.alive, s.in_flight))

    def detach(self) -> None:
        """End the run's streams (the processes stay, for the next run)."""
        for slot in self.slots:
            if slot.reader is not None:
                slot.reader.cancel()
            if slot.writer is not None:
                slot.writer.close()
            slot.writer = slot.reader = None

    def stop(self) -> None:
        """Stop every worker and return once each has exited (killed if it lingers)."""
        self.detach()
        for slot in self.slots:
            _hang_up(slot.conn)  # the worker reads the end of its socket and exits
        for slot in self.slots:
            _end(slot, wait=STOP_WAIT_S)
        self.slots = []


def _hang_up(conn: Connection) -> None:
    """End the driver's side of a worker's socket now: the worker reads its end at once
    (closing a descriptor would not do while the event loop, not running here, holds a copy)."""
    with contextlib.suppress(OSError):
        sock = socket.socket(fileno=os.dup(conn.fileno()))
        sock.shutdown(socket.SHUT_RDWR)
        sock.close()


def _end(slot: _Slot, wait: float = 0.0) -> None:
    """Make sure ``slot``'s process is gone (killed unless it exits within ``wait`` s), and
    reaped, and its socket closed."""
    with contextlib.suppress(OSError):
        slot.conn.close()
    process = slot.process
    process.join(wait)
    if process.exitcode is None:
        process.kill()
        process.join()
    process.close()


class ProcessEngine:
    """Runs a batch's calls in worker processes on this machine (see the module docstring).

    ``workers``: processes (default: one per CPU, at most ``concurrency``).
    ``keep_workers``: keep the processes (their imports and HTTP clients) for the next
    :meth:`run` until :meth:`close`, instead of stopping them after each run; a run that
    fails or is cancelled stops them anyway.
    """

    def __init__(
        self,
        concurrency: int,
        *,
        workers: int | None = None,
        max_worker_failures: int = 3,
        keep_workers: bool = False,
    ) -> None:
        self.concurrency = max(1, concurrency)
        self.workers = workers
        self.max_worker_failures = max_worker_failures
        self.keep_workers = keep_workers
        #: the workers (during a run, and between runs with ``keep_workers``)
        self.pool: _Pool | None = None
        #: the workers' class (a test gives one that misbehaves); must be importable by name
        self.worker_class: type[ProcessWorker] = ProcessWorker

    def close(self) -> None:
        """Stop the workers (those kept by ``keep_workers``)."""
        if self.pool is not None:
            self.pool.stop()
            self.pool = None

    def pids(self) -> list[int]:
        """The worker processes' ids (empty when none runs)."""
        if self.pool is None:
            return []
        return [s.pid for s in self.pool.slots]

    async def run(self, calls: AsyncIterator[PreparedCall], emit: Emit) -> None:
        pool = self.pool
        if pool is None:
            size = max(1, min(self.workers or cpu_count(), self.concurrency))
            pool = self.pool = _Pool(self.worker_class, size)
        clean = False
        try:
            await pool.begin()
            await drain(calls, self.concurrency, lambda call: self._call(pool, call), emit)
            clean = True
        finally:
            if clean and self.keep_workers:
                pool.detach()
            else:
                self.close()

    async def _call(self, pool: _Pool, call: PreparedCall) -> CallResult:
        if call.key is None:
            raise ValueError(f"no request can be made: {call.error}")
        idx = await pool.judge_index(call.judge)
        error: BaseException | None = None
        async with pool.limits[idx]:
            for _ in range(self.max_worker_failures + 1):
                slot = pool.pick()
                generation = slot.generation
                try:
                    kind, payload = await pool.ask(slot, idx, call)
                except _Died as exc:
                    error = exc
                    await pool.replace(slot, generation)
                    continue
                return _answer(call.key, kind, payload)
        return CallResult(
            None,
            None,
            call.key,
            error=f"WorkerDied: the worker process died {self.max_worker_failures + 1} times "
            f"during this call: {str(error)[:300]}",
        )


def _answer(key: str, kind: int, payload: bytes) -> CallResult:
    """The call result a worker answered for the request ``key``, or an error naming what
    it answered instead (never a verdict the worker did not get from the model)."""
    if kind == RAISED:
        text = payload.decode("utf-8", "replace")
        return CallResult(None, None, key, error=f"the worker process raised {text}")
    try:
        result = pickle.loads(payload)
    except Exception as exc:
        what = " ".join(f"{type(exc).__name__}: {exc}".split())[:200]
        return CallResult(None, None, key, error=f"the worker process answered garbage ({what})")
    if not isinstance(result, CallResult):
        what = "nothing" if result is None else type(result).__name__
        return CallResult(
            None, None, key, error=f"the worker process answered {what} instead of a call result"
        )
    if result.request_sha256 != key:
        return CallResult(None, None, key, error="the worker process answered for another request")
    return result
