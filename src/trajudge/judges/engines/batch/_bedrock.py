"""Amazon Bedrock batch inference (model invocation jobs) for ``--engine batch``, through
litellm's files and batches API.

A chunk of requests becomes one job, the way litellm makes Bedrock batches:

- its lines are OpenAI batch JSONL whose ``body`` is the chat request the local engine sends
  (the judge's messages, parameters and ``response_format``, the bare Bedrock model id as
  ``model``); ``litellm.acreate_file(custom_llm_provider="bedrock")`` turns each line into
  Bedrock's ``{"recordId", "modelInput"}`` with litellm's own InvokeModel transformation for
  the model (for Claude: the Messages body, ``anthropic_version`` ``bedrock-2023-05-31``, the
  rubric's schema as the forced ``json_tool_call`` tool or as ``output_format``) and puts the
  file in the S3 bucket ``AWS_S3_BUCKET_NAME``;
- ``litellm.acreate_batch`` creates the model invocation job (CreateModelInvocationJob, with
  the service role ``AWS_BATCH_ROLE_ARN``; its output goes under
  ``litellm-batch-outputs/<job name>/`` in the same bucket, or ``AWS_S3_OUTPUT_BUCKET_NAME``);
  the job's ARN is the batch id recorded in the store;
- ``litellm.aretrieve_batch`` polls it (GetModelInvocationJob) until it is ``Completed``,
  ``PartiallyCompleted``, ``Failed``, ``Stopped`` or ``Expired``;
- ``litellm.afile_content`` reads ``<output prefix><job id>/<input file>.out``: one line per
  record, ``modelOutput`` (Claude's InvokeModel answer, parsed by litellm's Anthropic response
  transformation and the rubric's verdict model, as the local engine parses a direct answer)
  or ``error`` (``{"errorCode", "errorMessage"}``: stored as the error litellm raises for that
  status on a direct call); a record without a line is an error naming the job's status.

AWS credentials and region come from the usual AWS configuration (``AWS_ACCESS_KEY_ID`` /
``AWS_SECRET_ACCESS_KEY`` / ``AWS_SESSION_TOKEN`` or a profile or role, ``AWS_REGION_NAME`` or
``AWS_REGION``) as litellm resolves them on a direct call; nothing of them is stored. Endpoint
overrides are the AWS SDKs' own: ``AWS_ENDPOINT_URL_S3``, ``AWS_ENDPOINT_URL_BEDROCK`` (or
``AWS_ENDPOINT_URL`` for both) reach the calls boto3 makes by itself and are passed to the
ones litellm makes over HTTP (``s3_endpoint_url``, ``aws_bedrock_control_plane_endpoint``),
so a VPC endpoint, or the loopback fakes of the tests, serve every call.

Models: Claude on Bedrock (``bedrock/anthropic.*``, ``bedrock/invoke/anthropic.*``,
cross-region ``bedrock/us.anthropic.*``); the InvokeModel answers of other families are not
read (:data:`FAMILIES`).
"""

from __future__ import annotations

import importlib.util
import json
import os
from typing import TYPE_CHECKING, Any

from trajudge.core import InputError
from trajudge.judges.calls._call import PreparedCall
from trajudge.judges.calls._client import LLMClient
from trajudge.judges.calls._result import CallResult, one_line
from trajudge.judges.engines._base import Emit
from trajudge.judges.engines.batch._jobs import Chunk, Job, Target, endpoint_of
from trajudge.judges.engines.batch._lines import ResultLines
from trajudge.judges.engines.batch._results import anthropic_result, litellm_error
from trajudge.judges.engines.batch._steps import poll, retrying, submit_file
from trajudge.store import redact

if TYPE_CHECKING:
    from pydantic import BaseModel

    from trajudge.judges.engines.batch._engine import ProviderBatchEngine

#: The settings a Bedrock batch needs, read by litellm from the environment.
REQUIRED = {
    "AWS_S3_BUCKET_NAME": "the S3 bucket the job's input and output files go to",
    "AWS_BATCH_ROLE_ARN": "the IAM service role Bedrock runs the job as",
}
#: Model families whose batch answers trajudge reads (litellm's Bedrock invoke provider).
FAMILIES = ("anthropic",)
#: Bedrock statuses after which a job's output may hold answers (litellm's OpenAI names):
#: ``Completed`` and ``PartiallyCompleted`` (completed), ``Stopped`` (cancelled).
WITH_OUTPUT = ("completed", "cancelled")
ROUTES = ("invoke/", "converse/")


def model_id(model: str) -> str:
    """The Bedrock model id of litellm's ``model`` (``bedrock/invoke/anthropic.x`` ->
    ``anthropic.x``): what CreateModelInvocationJob's ``modelId`` takes."""
    bare = model.removeprefix("bedrock/")
    for route in ROUTES:
        bare = bare.removeprefix(route)
    return bare


def check_model(where: str, model: str) -> None:
    """Refuse, before anything is sent, a judge whose Bedrock batch cannot be made or read."""
    if importlib.util.find_spec("boto3") is None:  # litellm polls jobs and signs with it
        raise InputError(
            where,
            field="model",
            reason="Bedrock batches need boto3: pip install 'trajudge[bedrock]'",
        )
    from litellm.llms.bedrock.base_aws_llm import BaseAWSLLM

    family = BaseAWSLLM.get_bedrock_invoke_provider(model_id(model))
    if family not in FAMILIES:
        raise InputError(
            where,
            field="model",
            reason=f"Bedrock batches are read for Claude models (bedrock/anthropic.*); this is a "
            f"{family or 'model of an unknown family'}: use the local engine",
        )
    missing = [f"{name} ({why})" for name, why in REQUIRED.items() if not os.environ.get(name)]
    if missing:
        raise InputError(
            where, field="model", reason="Bedrock batches need " + " and ".join(missing) + " set"
        )


def settings(client: LLMClient) -> dict[str, Any]:
    """The endpoint overrides (module docstring) and the judge's timeout, for litellm's
    Bedrock files and batches calls; no credential is read here (litellm resolves them)."""
    shared = os.environ.get("AWS_ENDPOINT_URL")
    out: dict[str, Any] = {"timeout": client.timeout}
    s3 = os.environ.get("AWS_ENDPOINT_URL_S3") or shared
    control = os.environ.get("AWS_ENDPOINT_URL_BEDROCK") or shared
    if s3:
        out["s3_endpoint_url"] = s3
    if control:
        out["aws_bedrock_control_plane_endpoint"] = control
    return out


def request_body(call: PreparedCall) -> dict[str, Any]:
    """The OpenAI chat body of ``call`` for litellm's Bedrock batch transformation: the
    arguments the local engine gives ``litellm.acompletion``, the model as its Bedrock id."""
    client = call.judge.client()
    kwargs = client.json_schema_request(
        call.messages, call.judge.verdict_model, client._request_kwargs(call.params)
    )
    for name in ("api_key", "api_base", "extra_headers", "timeout", "num_retries"):
        kwargs.pop(name, None)
    return {**kwargs, "model": model_id(client.model)}


def check(where: str, call: PreparedCall) -> tuple[str | None, ...]:
    """Refuse a model or a setup Bedrock's batch jobs cannot take (:func:`check_model`)."""
    check_model(where, call.judge.client().model)
    return ()


def chunk(engine: ProviderBatchEngine, target: Target, call: PreparedCall) -> Chunk:
    """An input file of InvokeModel records (``{"recordId", "modelInput"}``, no beta header)."""
    return Chunk(endpoint_of(target.provider))


def body(engine: ProviderBatchEngine, call: PreparedCall) -> dict[str, Any]:
    """The InvokeModel body of ``call`` (:func:`request_body`)."""
    return request_body(call)


def resume(engine: ProviderBatchEngine, job: Job, call: PreparedCall) -> None:
    """Nothing beyond the recorded batch: its answers are read with the judge's client."""


async def submit(
    engine: ProviderBatchEngine, litellm: Any, target: Target, chunk: Chunk, emit: Emit
) -> Job | None:
    """Upload the chunk and create its model invocation job, and record it (None: it was
    refused, and its requests are errors this run)."""
    where = {
        "custom_llm_provider": "bedrock",
        "model": "bedrock/" + model_id(target.model),
        **settings(chunk.calls[0][1].judge.client()),
    }
    data = b"\n".join(chunk.lines) + b"\n"
    return await submit_file(
        engine, litellm, target, chunk, emit, data, where, {"endpoint": chunk.url, **where}
    )


async def collect(engine: ProviderBatchEngine, litellm: Any, job: Job, emit: Emit) -> None:
    """Poll the job until it has ended, then emit each request's result."""
    extra = settings(job.client)

    def state(batch: Any) -> tuple[str, dict[str, Any]]:
        meta = batch.metadata or {}
        return batch.status, {
            "output_file_id": meta.get("output_file_uri") or None,
            "detail": redact(meta.get("failure_message") or "")[:2000] or None,
        }

    batch, status = await poll(
        engine,
        job,
        lambda: litellm.aretrieve_batch(
            batch_id=job.batch_id, custom_llm_provider="bedrock", **extra
        ),
        state,
    )
    meta = batch.metadata or {}
    records = ResultLines(job.batch_id, "recordId", lambda record: record.get("recordId"))
    uri = meta.get("output_file_uri")
    if status in WITH_OUTPUT and uri:
        content = await retrying(job.client, _download(litellm, uri, extra, status))
        if content:
            records.read(f"output file {uri}", content)
    why = meta.get("failure_message") or None
    missing = (
        f"the job failed: {why or 'no reason given'}"
        if status == "failed"
        else f"no result for this request (job {status})"
    )
    results = records.results(
        job.calls,
        lambda call, record: record_result(
            litellm,
            job.client,
            call.key or "",
            call.judge.verdict_model,
            record,
            batch_id=job.batch_id,
            missing=missing,
        ),
    )
    engine.finish(job, status, results, emit)


def _download(litellm: Any, uri: str, extra: dict[str, Any], status: str | None) -> Any:
    async def get() -> bytes | None:
        try:
            content = await litellm.afile_content(
                file_id=uri, custom_llm_provider="bedrock", **extra
            )
        except Exception as exc:
            # a stopped job may have been stopped before it wrote its output file
            if status == "cancelled" and getattr(exc, "status_code", None) == 404:
                return None
            raise
        return bytes(content.content)

    return get


def record_result(
    litellm: Any,
    client: LLMClient,
    key: str,
    verdict_model: type[BaseModel],
    record: dict[str, Any] | None,
    *,
    batch_id: str,
    missing: str,
) -> CallResult:
    """The result of the request with cache key ``key`` from its ``record`` of the job's
    output (None: the job has none for it; ``missing`` says why), as one attempt."""
    if record is None:
        result = CallResult(None, None, key, attempts=1)
        result.error = redact(f"batch {batch_id}: {missing}")[:600]
        return result
    error = record.get("error")
    if error is not None or record.get("modelOutput") is None:
        result = CallResult(None, None, key, attempts=1)
        result.error = one_line(_bedrock_error(client.model, error or {}), 1)
        return result
    entry = {"type": "succeeded", "message": record["modelOutput"]}
    params = record.get("modelInput") or {}
    return anthropic_result(litellm, client, key, verdict_model, params, entry, batch_id)


def _bedrock_error(model: str, error: dict[str, Any]) -> BaseException:
    """What litellm raises on a direct InvokeModel call answered with this error (Bedrock's
    error responses carry ``{"message"}`` with the status)."""
    from litellm.llms.bedrock.common_utils import BedrockError

    try:
        status = int(error.get("errorCode") or 500)
    except (TypeError, ValueError):
        status = 500
    message = json.dumps({"message": str(error.get("errorMessage") or "no message")})
    original = BedrockError(status_code=status, message=message)
    return litellm_error(model, "bedrock", original)
