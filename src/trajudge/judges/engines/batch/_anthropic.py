"""Anthropic's Message Batches for ``--engine batch``, through the anthropic SDK.

litellm's batches API creates no Anthropic batch, so the engine sends these with the
anthropic SDK (its ``base_url`` is the judge's ``api_base``, as litellm's is):

- a batch is ``POST /v1/messages/batches`` with ``{"requests": [{"custom_id", "params"}]}``,
  ``params`` being the very Messages API body litellm sends on a direct call (built by
  ``return_raw_request``: the rubric's schema as the forced ``json_tool_call`` tool, or as
  ``output_format`` with its ``anthropic-beta`` header for models that take it); the
  requests travel inline, so no file is uploaded;
- it is polled with ``GET /v1/messages/batches/{id}`` until its ``processing_status`` is
  ``ended``, then its results (JSONL at ``results_url``: one ``{"custom_id", "result"}``
  per request, ``result.type`` ``succeeded`` with the ``message``, ``errored`` with the
  API's error object, ``canceled`` or ``expired``) are read line by line
  (:class:`~trajudge.judges.engines.batch._lines.ResultLines`) and turned into call results by
  :func:`~trajudge.judges.engines.batch._results.anthropic_result`.
"""

from __future__ import annotations

import importlib.util
import json
from typing import TYPE_CHECKING, Any

from trajudge.core import InputError
from trajudge.judges.calls._call import PreparedCall
from trajudge.judges.calls._client import LLMClient
from trajudge.judges.engines._base import Emit
from trajudge.judges.engines.batch._jobs import ENDPOINT, Chunk, Job, Target
from trajudge.judges.engines.batch._lines import ResultLines
from trajudge.judges.engines.batch._results import anthropic_result
from trajudge.judges.engines.batch._steps import poll, refuse, retrying

if TYPE_CHECKING:
    from trajudge.judges.engines.batch._engine import ProviderBatchEngine

ENDED = "ended"
#: Stored as the batch's input file: the requests travel inline, no file is uploaded.
INLINE = "inline"


class AnthropicBatches:
    """Message Batches calls with ``client``'s endpoint, key, headers and timeout (one try
    each: the engine retries transient failures with the judge's own settings)."""

    def __init__(self, client: LLMClient) -> None:
        from anthropic import AsyncAnthropic

        kwargs = client._request_kwargs({})
        self.sdk = AsyncAnthropic(
            api_key=kwargs.get("api_key"),  # None: ANTHROPIC_API_KEY, as litellm reads it
            base_url=client.api_base,
            default_headers=kwargs.get("extra_headers"),
            timeout=client.timeout,
            max_retries=0,
        )

    async def create(self, requests: list[dict[str, Any]], beta: str | None) -> Any:
        headers = {"anthropic-beta": beta} if beta else None
        return await self.sdk.messages.batches.create(
            requests=requests,  # type: ignore[arg-type]  # the bodies litellm built
            extra_headers=headers,
        )

    async def retrieve(self, batch_id: str) -> Any:
        return await self.sdk.messages.batches.retrieve(batch_id)

    async def results(self, batch_id: str) -> ResultLines:
        """Each request's ``{"custom_id", "result"}`` line, as the API sent it: the SDK's
        request (endpoint, headers, retries of none), its body read line by line by trajudge,
        not by the SDK's decoder, which stops the whole file at the first bad line."""
        lines = ResultLines(batch_id, "custom_id", lambda record: record.get("custom_id"))
        decoder = await self.sdk.messages.batches.results(batch_id)
        try:
            await lines.aread(f"results of {batch_id}", decoder.http_response.aiter_bytes())
        finally:
            await decoder.close()
        return lines

    async def close(self) -> None:
        await self.sdk.close()


def check(where: str, call: PreparedCall) -> tuple[str | None, ...]:
    """Refuse a judge when the anthropic SDK, which sends the batches, is not installed."""
    if importlib.util.find_spec("anthropic") is None:
        raise InputError(
            where,
            field="model",
            reason="Anthropic batches need the anthropic SDK: pip install 'trajudge[anthropic]'",
        )
    return ()


def chunk(engine: ProviderBatchEngine, target: Target, call: PreparedCall) -> Chunk:
    """An input file of Message Batches requests (``{"custom_id", "params"}``) with the
    ``anthropic-beta`` header litellm sends for the model."""
    return Chunk(ENDPOINT, anthropic=True, beta=engine.request(call)[1])


def body(engine: ProviderBatchEngine, call: PreparedCall) -> dict[str, Any]:
    """What the local engine would send, as litellm builds it for Anthropic."""
    return engine.body(call)


def resume(engine: ProviderBatchEngine, job: Job, call: PreparedCall) -> None:
    """The request's ``tools`` (the rubric's schema as a tool): reading an answer needs them."""
    job.tools = engine.body(call).get("tools")


async def submit(
    engine: ProviderBatchEngine, litellm: Any, target: Target, chunk: Chunk, emit: Emit
) -> Job | None:
    """Create the Message Batch of ``chunk`` and record it (None: it was refused, and its
    requests are errors this run)."""
    client = chunk.calls[0][1].judge.client()
    api = AnthropicBatches(client)
    requests = [json.loads(line) for line in chunk.lines]
    try:
        batch = await retrying(client, lambda: api.create(requests, chunk.beta))
    except Exception as exc:  # nothing was accepted
        refuse(chunk, exc, emit)
        return None
    finally:
        await api.close()
    job = engine.record(target, chunk, batch.id, INLINE, batch.processing_status)
    job.tools = requests[0]["params"].get("tools")
    return job


async def collect(engine: ProviderBatchEngine, litellm: Any, job: Job, emit: Emit) -> None:
    """Poll the batch of ``job`` until it has ended, then emit each request's result."""
    api = AnthropicBatches(job.client)
    try:
        _, status = await poll(
            engine,
            job,
            lambda: api.retrieve(job.batch_id),
            lambda b: (b.processing_status, {}),
            (ENDED,),
        )
        entries = await retrying(job.client, lambda: api.results(job.batch_id))
    finally:
        await api.close()
    params = {"tools": job.tools}
    results = entries.results(
        job.calls,
        lambda call, line: anthropic_result(
            litellm,
            job.client,
            call.key or "",
            call.judge.verdict_model,
            params,
            None if line is None else line["result"],
            job.batch_id,
        ),
    )
    engine.finish(job, status, results, emit)
