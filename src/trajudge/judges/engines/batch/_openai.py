"""OpenAI-format batches (``openai``, ``azure``, ``litellm_proxy``, any OpenAI-compatible
``api_base``) for :class:`~trajudge.judges.ProviderBatchEngine`: the input file is the
chunk's JSONL as it is, uploaded and run through litellm's files and batches API with the
judge's endpoint and credentials; the output and error files are read back by
``custom_id``."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from trajudge.judges.calls._call import PreparedCall
from trajudge.judges.calls._client import LLMClient
from trajudge.judges.engines._base import Emit
from trajudge.judges.engines.batch._jobs import Chunk, Job, Target, endpoint_of
from trajudge.judges.engines.batch._lines import ResultLines
from trajudge.judges.engines.batch._results import batch_errors, line_result
from trajudge.judges.engines.batch._steps import poll, retrying, submit_file

if TYPE_CHECKING:
    from trajudge.judges.engines.batch._engine import ProviderBatchEngine


def _credentials(client: LLMClient) -> dict[str, Any]:
    """api_base, api_key and extra headers, as the client sends them (never stored), and the
    judge's timeout."""
    kwargs = client._request_kwargs({})
    creds = {k: v for k, v in kwargs.items() if k in ("api_base", "api_key", "extra_headers")}
    return {**creds, "timeout": client.timeout}  # per file or batch call


def check(where: str, call: PreparedCall) -> tuple[str | None, ...]:
    """Every judge in ``json_schema_mode`` can be batched here: no place beyond the endpoint."""
    return ()


def chunk(engine: ProviderBatchEngine, target: Target, call: PreparedCall) -> Chunk:
    """An input file of OpenAI batch lines for the target's endpoint."""
    return Chunk(endpoint_of(target.provider), beta=engine.request(call)[1])


def body(engine: ProviderBatchEngine, call: PreparedCall) -> dict[str, Any]:
    """What the local engine would send, as litellm builds it."""
    return engine.body(call)


def resume(engine: ProviderBatchEngine, job: Job, call: PreparedCall) -> None:
    """Nothing beyond the recorded batch: its files are read with the judge's credentials."""


async def submit(
    engine: ProviderBatchEngine, litellm: Any, target: Target, chunk: Chunk, emit: Emit
) -> Job | None:
    """Upload ``chunk`` and create its batch, and record it (None: it was refused)."""
    where = {
        "custom_llm_provider": target.provider,
        **_credentials(chunk.calls[0][1].judge.client()),
    }
    create = {
        "endpoint": chunk.url,
        "metadata": {"trajudge_dataset": engine.dataset[:500]},
        **where,
    }
    data = b"\n".join(chunk.lines) + b"\n"
    return await submit_file(engine, litellm, target, chunk, emit, data, where, create)


async def collect(engine: ProviderBatchEngine, litellm: Any, job: Job, emit: Emit) -> None:
    """Poll the batch until it has ended, then read its output and error files and emit each
    request's result."""
    where = {"custom_llm_provider": job.provider, **_credentials(job.client)}
    batch, status = await poll(
        engine,
        job,
        lambda: litellm.aretrieve_batch(batch_id=job.batch_id, **where),
        lambda b: (
            b.status,
            {
                "output_file_id": b.output_file_id,
                "error_file_id": b.error_file_id,
                "detail": batch_errors(b),
            },
        ),
    )
    lines = ResultLines(job.batch_id, "custom_id", lambda record: record.get("custom_id"))
    for name, fid in (("output file", batch.output_file_id), ("error file", batch.error_file_id)):
        if not fid:
            continue
        content = await retrying(job.client, functools.partial(_content, litellm, fid, where))
        lines.read(f"{name} {fid}", bytes(content.content))
    results = lines.results(
        job.calls,
        lambda call, line: line_result(
            litellm,
            job.client,
            job.provider,
            call.key or "",
            call.judge.verdict_model,
            line,
            batch=batch,
        ),
    )
    engine.finish(job, status, results, emit)


async def _content(litellm: Any, file_id: str, where: dict[str, Any]) -> Any:
    return await litellm.afile_content(file_id=file_id, **where)
