"""The steps every provider module of :class:`~trajudge.judges.ProviderBatchEngine` shares:
calls retried on transient failures, a refused submission turned into error results, a
batch input file uploaded and run through litellm's files and batches API, and a batch
polled until it has ended (each new status stored as it is seen)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Container
from typing import TYPE_CHECKING, Any, TypeVar

from trajudge.judges.calls._client import LLMClient
from trajudge.judges.calls._result import CallResult, one_line, retryable
from trajudge.judges.engines._base import Emit

if TYPE_CHECKING:
    from trajudge.judges.engines.batch._engine import ProviderBatchEngine
    from trajudge.judges.engines.batch._jobs import Chunk, Job, Target

#: Where an OpenAI-format batch (as litellm reports any provider's) has ended.
TERMINAL = ("completed", "expired", "failed", "cancelled")
T = TypeVar("T")


async def retrying(client: LLMClient, make: Callable[[], Any]) -> Any:
    """``await make()``, retried on transient failures (429, 5xx, connection) with the
    client's ``max_retries`` and backoff."""
    attempt = 0
    while True:
        try:
            return await make()
        except Exception as exc:
            attempt += 1
            if attempt > client.max_retries or not retryable(exc):
                raise
            await asyncio.sleep(min(client.backoff_max_s, client.backoff_s * 2 ** (attempt - 1)))


def refuse(chunk: Chunk, exc: BaseException, emit: Emit) -> None:
    """The provider accepted nothing of ``chunk``: every request is an error this run (the
    next run plans them again)."""
    error = "could not submit the batch: " + one_line(exc, 1)
    for _, call in chunk.calls:
        emit(call, CallResult(None, None, call.key or "", error=error, attempts=1))


async def submit_file(
    engine: ProviderBatchEngine,
    litellm: Any,
    target: Target,
    chunk: Chunk,
    emit: Emit,
    data: bytes,
    upload: dict[str, Any],
    create: dict[str, Any],
) -> Job | None:
    """Upload ``data`` as the batch input file (``litellm.acreate_file`` with ``upload``),
    create the batch over it (``litellm.acreate_batch`` with ``create``) and record it;
    None when the provider refused (:func:`refuse`)."""
    client = chunk.calls[0][1].judge.client()
    try:
        uploaded = await retrying(
            client,
            lambda: litellm.acreate_file(
                file=("trajudge-batch.jsonl", data, "application/jsonl"), purpose="batch", **upload
            ),
        )
        batch = await retrying(
            client,
            lambda: litellm.acreate_batch(
                completion_window=engine.completion_window, input_file_id=uploaded.id, **create
            ),
        )
    except Exception as exc:
        refuse(chunk, exc, emit)
        return None
    return engine.record(target, chunk, batch.id, uploaded.id, batch.status)


async def poll(
    engine: ProviderBatchEngine,
    job: Job,
    retrieve: Callable[[], Awaitable[T]],
    state: Callable[[T], tuple[str, dict[str, Any]]],
    ended: Container[str] = TERMINAL,
) -> tuple[T, str]:
    """Retrieve ``job``'s batch every ``poll_interval_s`` until its status is in ``ended``;
    each new status is stored with the fields ``state`` gives beside it. Returns the last
    answer and its status."""
    status = None
    while True:
        batch = await retrying(job.client, retrieve)
        now, fields = state(batch)
        if now != status:
            status = now
            engine.store.update_provider_batch(job.pk, status=status, **fields)
        if status in ended:
            return batch, status
        await asyncio.sleep(engine.poll_interval_s)
