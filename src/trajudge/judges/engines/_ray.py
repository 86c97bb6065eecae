"""The Ray engine: a batch's judge calls run on the worker actors of a Ray cluster.

The driver (the process that runs :func:`trajudge.judges.score_dataset`) plans, prepares
the calls (prompts and cache keys), looks the cache up and writes every judgment, exactly
as with the local engine; only the calls to the models run on the cluster, and, on a
PostgreSQL store, the writing of their judgments:

- ``workers`` actors (default: one per CPU of the cluster, at most ``concurrency``), each
  holding one :class:`~trajudge.judges.LLMClient` per judge, built from the driver's client
  (same model, endpoint, timeout, retries and backoff: the same request and the same
  retries; the API key is read from the worker's environment, never sent);
- a call is sent as (judge, cache key, messages, parameters) and its
  :class:`~trajudge.judges.CallResult` comes back to the driver, which emits it;
- **direct writes** (a PostgreSQL store, given as ``store``): each worker opens the store
  itself (its own connections, through the same :class:`~trajudge.store.Store` API) at the
  store URL without its password (libpq reads it from ``PGPASSWORD`` or ``~/.pgpass`` on
  the worker's node), makes
  the judgment of each of its calls with the same :func:`~trajudge.judges.calls._call.finish` the
  driver uses, and writes it before answering (the calls that finish while a write is in
  flight go in the next transaction: one commit for many judgments); the driver then only
  counts it and fills the response cache. A write that fails leaves the judgment to the
  driver, which writes it as with SQLite (a SQLite file is the driver's, and the workers
  always return their results to it). Resume is unchanged: a judgment is either stored
  (whoever wrote it) or planned again; a call sent again after its worker died finds its
  judgment stored and is not written twice (the store keeps one judgment per key);
- ``concurrency`` calls are in flight at most over the cluster, and at most each judge's
  ``concurrency`` for that judge (counted by the driver, for all workers together); a
  judge's ``rpm`` is kept by one small actor that every worker asks before each attempt;
- a worker that dies (its process killed, its node lost) is replaced, and the calls it had
  in flight are sent again, to another worker: no judgment is lost or written twice. A call
  whose worker dies ``max_worker_failures + 1`` times is recorded as an error (a later run
  retries it, like any error);
- what a worker answers is checked by the driver as any engine's answer is
  (:func:`~trajudge.judges.calls._call.finish` validates the verdict against the rubric's schema): a
  worker whose task raises, or that answers anything but a call result, gives an error for
  that call naming what happened, never a verdict, and the run goes on.

The workers (:mod:`trajudge.judges.engines._ray_worker`) import trajudge: on a cluster of other
machines, install the same trajudge version (with the ``judges`` extra) in the cluster's
environment.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from trajudge._cluster import connect
from trajudge.judges.calls._call import PreparedCall
from trajudge.judges.calls._result import CallResult, one_line
from trajudge.judges.engines._base import Emit, drain
from trajudge.judges.engines._ray_worker import RateActor, WorkerActor
from trajudge.judges.engines._wire import _Where, _Wire, _wire

if TYPE_CHECKING:
    from trajudge.judges.calls._judge import Judge
    from trajudge.store import Store

#: Seconds :meth:`RayEngine.close` waits at most for its killed workers to be gone.
STOP_WAIT_S = 120.0


@dataclass
class _Slot:
    handle: Any
    generation: int = 0
    in_flight: int = 0


@dataclass
class _Pool:
    """The workers and the judges they know. Indices of judges only grow (a kept pool is
    reused by later runs with other judges); ``ids``, ``limits`` and ``lock`` belong to one
    run (one event loop) and are reset by :meth:`begin`."""

    ray: Any
    worker_cls: Any
    rate_cls: Any
    size: int
    slots: list[_Slot] = field(default_factory=list)
    wires: dict[int, _Wire] = field(default_factory=dict)
    ids: dict[int, int] = field(default_factory=dict)  # id(judge) -> index, this run
    limits: dict[int, asyncio.Semaphore] = field(default_factory=dict)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    replaced: int = 0

    def _new_worker(self) -> Any:
        return self.worker_cls.options(max_concurrency=10_000, scheduling_strategy="SPREAD").remote(
            dict(self.wires)
        )

    def begin(self) -> None:
        """Start a run: the workers are started once, the per-run state anew."""
        if not self.slots:
            self.slots = [_Slot(self._new_worker()) for _ in range(self.size)]
        self.ids, self.limits, self.lock = {}, {}, asyncio.Lock()
        for slot in self.slots:
            slot.in_flight = 0

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
                rate = None if not rpm else self.rate_cls.options(num_cpus=0).remote(rpm)
                wire = self.wires[idx] = _wire(judge, rate)
                self.limits[idx] = asyncio.Semaphore(max(1, judge.spec.concurrency))
                await asyncio.gather(*(self._add(slot, idx, wire) for slot in self.slots))
                self.ids[id(judge)] = idx
        return idx

    async def _add(self, slot: _Slot, idx: int, wire: _Wire) -> None:
        generation = slot.generation
        try:
            await slot.handle.add.remote(idx, wire)
        except self.ray.exceptions.RayActorError:
            await self._replace(slot, generation)  # the new worker is built with every judge

    async def replace(self, slot: _Slot, generation: int) -> None:
        """Replace the worker of ``slot`` if it is still the one that failed."""
        async with self.lock:
            await self._replace(slot, generation)

    async def _replace(self, slot: _Slot, generation: int) -> None:
        if slot.generation != generation:
            return
        self.ray.kill(slot.handle, no_restart=True)
        slot.handle = self._new_worker()
        slot.generation += 1
        self.replaced += 1

    def pick(self) -> _Slot:
        return min(self.slots, key=lambda s: s.in_flight)

    def stop(self) -> None:
        """Kill the workers and rate actors, and return once they are gone."""
        actors = [slot.handle for slot in self.slots]
        actors += [wire.rate for wire in self.wires.values() if wire.rate is not None]
        for actor in actors:
            self.ray.kill(actor, no_restart=True)
        self.slots, self.wires = [], {}
        _wait_gone(self.ray, actors)


def _wait_gone(ray: Any, actors: list[Any], limit_s: float = STOP_WAIT_S) -> None:
    """Return once a call to each of ``actors`` fails (they are dead), or after ``limit_s``.

    ``ray.kill`` only sends the request: a call made right after it may still reach the
    actor, and its CPU is not free yet. Waiting here means that the engine's workers are
    gone when :meth:`RayEngine.close` returns (their CPUs free for the next pool)."""
    deadline = time.monotonic() + limit_s
    pending = list(actors)
    while pending:
        left = deadline - time.monotonic()
        if left <= 0:
            return
        alive = []
        for actor in pending:
            try:
                ray.get(actor.__ray_ready__.remote(), timeout=max(1.0, left))
            except ray.exceptions.RayActorError:
                continue  # dead
            except ray.exceptions.GetTimeoutError:
                pass
            alive.append(actor)
        pending = alive
        if pending:
            time.sleep(0.05)


class RayEngine:
    """Runs a batch's calls on a Ray cluster (see the module docstring).

    ``address``: the cluster (``auto``, ``ray://host:10001``; None: RAY_ADDRESS, else a new
    local cluster); used only when this process is not connected to Ray yet. ``workers``:
    worker actors (default: one per CPU of the cluster, at most ``concurrency``; each
    reserves one CPU). ``keep_workers``: keep the workers (their imports and connections)
    for the next :meth:`run` until :meth:`close`, instead of stopping them after each run.
    ``store`` and ``dataset``: where the batch writes; on a PostgreSQL store the workers
    write the judgments themselves (module docstring), elsewhere the driver does.
    """

    def __init__(
        self,
        concurrency: int,
        *,
        address: str | None = None,
        workers: int | None = None,
        max_worker_failures: int = 3,
        keep_workers: bool = False,
        store: Store | None = None,
        dataset: str | None = None,
    ) -> None:
        self.concurrency = max(1, concurrency)
        #: (store URL, dataset) the workers write to; None: they return their results
        self.sink: tuple[str, str] | None = None
        if store is not None and dataset is not None and store.sql_engine.dialect.name != "sqlite":
            # never the password: it would travel with every call (and sit in the
            # cluster's task records); workers read it from PGPASSWORD or ~/.pgpass, and a
            # worker that cannot connect leaves its judgments to the driver
            url = store.sql_engine.url._replace(password=None).render_as_string(hide_password=False)
            self.sink = (url, dataset)
        #: judgments the workers stored themselves (this engine, all runs)
        self.direct_writes = 0
        self.address = address
        self.workers = workers
        self.max_worker_failures = max_worker_failures
        self.keep_workers = keep_workers
        #: the workers (during a run, and between runs with ``keep_workers``)
        self.pool: _Pool | None = None
        #: the workers' actor class (a test gives one that misbehaves)
        self.worker_class: type = WorkerActor

    def close(self) -> None:
        """Stop the workers kept by ``keep_workers``."""
        if self.pool is not None:
            self.pool.stop()
            self.pool = None

    async def run(self, calls: AsyncIterator[PreparedCall], emit: Emit) -> None:
        ray = await asyncio.to_thread(connect, self.address)
        pool = self.pool
        if pool is None:
            size = self.workers or int(ray.cluster_resources().get("CPU", 1))
            pool = self.pool = _Pool(
                ray,
                ray.remote(self.worker_class),
                ray.remote(RateActor),
                max(1, min(size, self.concurrency)),
            )
        pool.begin()
        try:
            await drain(calls, self.concurrency, lambda call: self._call(pool, call), emit)
        finally:
            if not self.keep_workers:
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
                slot.in_flight += 1
                if self.sink is None:
                    ref = slot.handle.call.remote(idx, call.key, call.messages, call.params)
                else:
                    where = _Where(
                        call.trajectory_id, call.other_id, call.order, call.sample, call.shown
                    )
                    ref = slot.handle.call_and_store.remote(
                        idx, call.key, call.messages, call.params, where, self.sink
                    )
                try:
                    result = await ref
                except pool.ray.exceptions.RayActorError as exc:
                    error = exc
                    await pool.replace(slot, generation)
                    continue
                except pool.ray.exceptions.RayError as exc:
                    # the worker lives but its task raised: the call failed, as a call
                    # that raises on the local engine (not retried: the same call, same code)
                    cause = getattr(exc, "cause", None) or exc
                    return CallResult(
                        None, None, call.key, error="the Ray worker raised " + one_line(cause, 1)
                    )
                except asyncio.CancelledError:
                    with contextlib.suppress(Exception):  # best effort: the worker may be gone
                        pool.ray.cancel(ref)
                    raise
                finally:
                    slot.in_flight -= 1
                if not isinstance(result, CallResult):
                    what = "nothing" if result is None else type(result).__name__
                    return CallResult(
                        None,
                        None,
                        call.key,
                        error=f"the Ray worker answered {what} instead of a call result",
                    )
                self.direct_writes += result.stored
                return result
        reason = " ".join(str(error).split())[:300]
        return CallResult(
            None,
            None,
            call.key,
            error=f"RayActorError: the worker died {self.max_worker_failures + 1} times "
            f"during this call: {reason}",
        )
