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
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Protocol

from trajudge.judges.calls._call import PreparedCall
from trajudge.judges.calls._result import CallResult

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
        await drain(calls, self.concurrency, lambda call: call.judge.call(call), emit)


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


async def drain(
    calls: AsyncIterator[PreparedCall],
    width: int,
    send: Callable[[PreparedCall], Awaitable[CallResult]],
    emit: Emit,
) -> None:
    """``width`` workers that take calls from a bounded queue, ``send`` each and emit its
    result: at most ``2 * width`` calls are held, so a plan of any size streams through."""
    queue: asyncio.Queue[PreparedCall | None] = asyncio.Queue(maxsize=2 * width)

    async def feed() -> None:
        async for call in calls:
            await queue.put(call)
        for _ in range(width):
            await queue.put(None)

    async def work() -> None:
        while (call := await queue.get()) is not None:
            emit(call, await send(call))

    await run_all([feed(), *(work() for _ in range(width))])
