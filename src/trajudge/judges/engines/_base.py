"""Engines: what sends a batch's prepared calls to the models.

A batch is three steps with clean seams (:func:`trajudge.judges.ascore_dataset`):

1. **plan** (:func:`trajudge.judges.plan_batch`): every call the judges need, less those
   already stored, decided once from a few bulk reads; pure otherwise;
2. **execute**: the runner prepares the planned calls in chunks (each prompt rendered once,
   see :meth:`trajudge.judges.Judge.prepare`), looks their cache keys up in bulk, finishes the
   hits at once, and hands the misses to an :class:`Engine`;
3. **write** (:class:`trajudge.judges.JudgmentWriter`): every outcome is written in small
   batched transactions.

An engine only executes: for each :class:`~trajudge.judges.PreparedCall` it gets a
:class:`~trajudge.judges.CallResult` from ``call.judge.call(call)`` (the judge's client: its
retries, concurrency and rate limit) and hands the pair to ``emit``, which finishes and
writes the judgment. So every engine runs the same judge code with the same prompt and cache
key, and gives the same judgments on the same plan. :class:`LocalEngine` runs the calls as
asyncio tasks in this process; an engine for a cluster or a provider's batch API implements
the same :meth:`Engine.run`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from trajudge.core import InputError
from trajudge.judges._call import PreparedCall
from trajudge.judges._client import CallResult
from trajudge.judges._engines import check_engine

if TYPE_CHECKING:
    from trajudge.judges._judge import Judge
    from trajudge.store import Store

Emit = Callable[[PreparedCall, CallResult], None]


class Engine(Protocol):
    """Executes prepared calls (see the module docstring)."""

    async def run(self, calls: AsyncIterator[PreparedCall], emit: Emit) -> None:
        """Execute every call of ``calls`` and ``emit(call, result)`` each as it completes.

        Must not raise for an LLM failure (the result carries the error), must stop (and
        cancel the calls in flight) when cancelled, and must not emit after returning.
        """
        ...


class LocalEngine:
    """``concurrency`` asyncio workers in this process (each judge's own ``concurrency`` and
    ``rpm`` still apply inside its client)."""

    def __init__(self, concurrency: int) -> None:
        self.concurrency = max(1, concurrency)

    async def run(self, calls: AsyncIterator[PreparedCall], emit: Emit) -> None:
        queue: asyncio.Queue[PreparedCall | None] = asyncio.Queue(maxsize=2 * self.concurrency)

        async def feed() -> None:
            async for call in calls:
                await queue.put(call)
            for _ in range(self.concurrency):
                await queue.put(None)

        async def work() -> None:
            while (call := await queue.get()) is not None:
                emit(call, await call.judge.call(call))

        await run_all([feed(), *(work() for _ in range(self.concurrency))])


def make_engine(
    name: str | None,
    *,
    store: Store | None = None,
    dataset: str | None = None,
    judges: Sequence[Judge] = (),
    concurrency: int | None = None,
    address: str | None = None,
    notify: Callable[[str], None] | None = None,
) -> Engine | None:
    """The engine called ``name`` (one of :data:`trajudge.judges.ENGINES`; None is ``local``).
    The one place that turns an engine name into an engine.

    ``local`` gives None: the runner's default, a :class:`LocalEngine` of the batch's
    concurrency. ``ray`` runs the calls on the Ray cluster at ``address`` (``auto``,
    ``ray://host:10001``; default: start or join a local one) with ``concurrency`` calls in
    flight (default: the largest judge ``concurrency``; on a PostgreSQL ``store`` its workers
    write the judgments of ``dataset`` themselves). ``batch`` submits them through the
    provider's batch API, recording its batches in ``store`` under ``dataset`` and telling
    ``notify`` what it waits for.
    """
    name = "local" if name is None else check_engine(name)
    if address is not None and name != "ray":
        raise InputError("--address", reason="a cluster address applies to --engine ray")
    if name == "ray":
        from trajudge.judges._ray import RayEngine

        width = concurrency or max((j.spec.concurrency for j in judges), default=1)
        return RayEngine(width, address=address, store=store, dataset=dataset)
    if name == "batch":
        if store is None or dataset is None:
            raise ValueError("the batch engine needs the store and the dataset")
        from trajudge.judges._provider_batch import ProviderBatchEngine

        return ProviderBatchEngine(store, dataset, notify=notify)
    return None


async def run_all(coros: list[Awaitable[None]], *, until_first: bool = False) -> None:
    """Run ``coros`` as tasks until all are done (``until_first``: until the first one is,
    the others being helpers that run forever). The first failure, or a cancellation of the
    caller, cancels the others and is raised as it is (not in an ExceptionGroup)."""
    tasks = [asyncio.ensure_future(c) for c in coros]
    try:
        pending = set(tasks)
        while pending:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                if not task.cancelled() and task.exception() is not None:
                    raise task.exception()  # type: ignore[misc]
            if until_first and tasks[0] in done:
                return
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
