"""What runs on the Ray cluster for :mod:`trajudge.judges.engines._ray`: the worker actors that call
the judges' models (and, on a PostgreSQL store, write the judgments), and the per-judge rate
actors. See that module's docstring."""

from __future__ import annotations

import asyncio
import dataclasses
import os
from typing import TYPE_CHECKING, Any

from trajudge.judges.calls._call import PreparedCall, finish
from trajudge.judges.calls._client import LLMClient
from trajudge.judges.calls._provider import import_litellm, use_bundled_litellm_tables
from trajudge.judges.calls._result import CallResult
from trajudge.judges.engines._wire import RateActor, _Facts, _Where, _Wire, open_wire

__all__ = ["RateActor", "WorkerActor"]

if TYPE_CHECKING:
    from trajudge.store import Store


class _Sink:
    """A worker's writes to the store: judgments queued while a write is in flight go in
    the next one (group commit); the store is opened on first use, in a thread."""

    def __init__(self, url: str, dataset: str) -> None:
        self.url = url
        self.dataset = dataset
        self._store: Store | None = None
        self._pending: list[tuple[dict[str, Any], asyncio.Future[None]]] = []
        self._task: asyncio.Future[None] | None = None
        self.writes = 0

    def _write(self, rows: list[dict[str, Any]]) -> None:
        if self._store is None:
            # imported on use: a worker opens the store only when it writes judgments itself
            from trajudge.store import Store

            self._store = Store(self.url)
        self._store.add_judgments(self.dataset, rows)
        self.writes += 1

    async def write(self, row: dict[str, Any]) -> None:
        """Return once ``row`` is committed (raise if its transaction failed)."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending.append((row, done))
        if self._task is None or self._task.done():
            self._task = asyncio.ensure_future(self._drain())
        await done

    async def _drain(self) -> None:
        while self._pending:
            batch, self._pending = self._pending, []
            try:
                await asyncio.to_thread(self._write, [row for row, _ in batch])
            except Exception as exc:
                for _, done in batch:
                    if not done.done():
                        done.set_exception(exc)
            else:
                for _, done in batch:
                    if not done.done():
                        done.set_result(None)


class _SharedRate:
    """A :class:`~trajudge.judges.calls._limits.Limiter` backed by a rate actor."""

    def __init__(self, handle: Any) -> None:
        self.handle = handle

    async def wait(self) -> None:
        delay = await self.handle.reserve.remote()
        if delay > 0:
            await asyncio.sleep(delay)


class WorkerActor:
    """Calls judges' models (an async actor: many calls in flight at once)."""

    def __init__(self, wires: dict[int, _Wire]) -> None:
        use_bundled_litellm_tables()
        import_litellm()  # seconds: now, not during the first call (and its rate slot)
        self._judges: dict[int, tuple[LLMClient, Any, _Facts]] = {}
        self._sinks: dict[tuple[str, str], _Sink] = {}  # (store URL, dataset) -> its writes
        for idx, wire in wires.items():
            self._add(idx, wire)

    def _add(self, idx: int, wire: _Wire) -> None:
        self._judges[idx] = open_wire(wire, None if wire.rate is None else _SharedRate(wire.rate))

    async def add(self, idx: int, wire: _Wire) -> None:
        self._add(idx, wire)

    async def call(
        self, idx: int, key: str, messages: list[dict[str, str]], params: dict[str, Any]
    ) -> CallResult:
        client, model, _ = self._judges[idx]
        return await client.call(key, messages, model, params)

    async def call_and_store(
        self,
        idx: int,
        key: str,
        messages: list[dict[str, str]],
        params: dict[str, Any],
        where: _Where,
        sink: tuple[str, str],
    ) -> CallResult:
        """:meth:`call`, then its judgment written to the store at ``sink`` = (URL, dataset)
        (``result.stored``); a failed write returns the result unstored, for the driver."""
        client, model, facts = self._judges[idx]
        result = await client.call(key, messages, model, params)
        writer = self._sinks.get(sink)
        if writer is None:
            writer = self._sinks[sink] = _Sink(*sink)
        call = PreparedCall(
            facts,  # type: ignore[arg-type]  # what finish() reads of a Judge
            where.trajectory_id,
            where.other_id,
            where.order,
            where.sample,
            where.shown,
            [],
            params,
            key,
        )
        try:
            await writer.write(finish(call, result).to_row())
        except Exception:  # the driver writes it: nothing is lost
            return result
        return dataclasses.replace(result, stored=True)

    async def writes(self) -> int:
        """Transactions this worker committed to the store."""
        return sum(s.writes for s in self._sinks.values())

    async def pid(self) -> int:
        return os.getpid()
