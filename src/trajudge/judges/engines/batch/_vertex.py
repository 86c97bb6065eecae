"""Vertex AI batch prediction for ``--engine batch`` (``vertex_ai/`` Gemini judges).

A batch is a Vertex ``batchPredictionJob`` over a JSONL file in Cloud Storage:

- each row is ``{"request": <GenerateContentRequest>}``: the very ``generateContent`` body
  the local engine sends for the call (litellm's own request transformation, through
  :meth:`~trajudge.judges.engines.batch._engine.ProviderBatchEngine.body` and its templates,
  :mod:`trajudge.judges.engines.batch._template`), with the row's
  ``custom_id`` as the label :data:`LABEL` (Vertex echoes each request in its output row);
- the file is uploaded with ``litellm.acreate_file(purpose="batch", passthrough=True)``
  (litellm's upload of a native Vertex batch file, named by the model, into the judge's
  bucket; its ``api_base`` is the Cloud Storage endpoint, see below) and the job created with
  ``litellm.acreate_batch`` (``POST .../batchPredictionJobs`` at the judge's ``api_base``, or
  Vertex's regional endpoint), which writes the output next to the input;
- the job is polled (``GET .../batchPredictionJobs/{id}``) until its state maps (litellm's own
  mapping) to ``completed``, ``failed``, ``expired`` or ``cancelled``; its output folder
  (``outputInfo.gcsOutputDirectory``) is listed and each ``predictions*.jsonl`` read; each
  row (``{"request", "status", "response", "processed_time"}``) is turned into a call result
  by :func:`vertex_result`: a response goes through litellm's own Gemini response
  transformation (the one a direct call's answer goes through), then the local engine's
  parsing; a row whose ``status`` carries an error becomes the error litellm raises for it
  (:mod:`trajudge.judges.engines.batch._vertex_api`).

Why trajudge reads the job and the output itself: litellm's ``afile_content`` for Vertex
downloads from a hard-coded ``https://storage.googleapis.com`` (no endpoint override: tests
could only reach a fake through an HTTPS proxy and a forged CA, which is not the path a
user runs), and its ``aretrieve_batch`` drops the job's ``error`` (a failed job would be
stored without its reason). So the job ``GET`` and the Cloud Storage reads are plain calls of
Google's REST APIs here, with the token litellm's Vertex credentials give (Application Default
Credentials, or ``VERTEXAI_CREDENTIALS``, as litellm reads them); the Cloud Storage endpoint
is ``https://storage.googleapis.com``, or ``STORAGE_EMULATOR_HOST`` (the variable Google's
client libraries honour, e.g. for fake-gcs-server), for the upload as for the reads. The
tests run this very code against a fake on loopback through ``api_base`` and
``STORAGE_EMULATOR_HOST``, with a service-account key whose ``token_uri`` is the fake's.

Where a judge runs: its ``vertex:`` ``project``, ``location`` and ``bucket``
(:class:`~trajudge.judges.calls._spec.VertexSpec`), else litellm's ``VERTEXAI_PROJECT``,
``VERTEXAI_LOCATION`` (default ``us-central1``) and ``GCS_BUCKET_NAME``. No credential or
token is ever stored: the store keeps the job id and the ``gs://`` input file.
"""

from __future__ import annotations

import functools
import json
import os
from typing import TYPE_CHECKING, Any

from trajudge.core import InputError
from trajudge.judges.calls._call import PreparedCall
from trajudge.judges.engines._base import Emit
from trajudge.judges.engines.batch._jobs import Chunk, Job, Target
from trajudge.judges.engines.batch._lines import ResultLines

# Vertex takes OpenAI-format request lines (rewritten to its own format on submit)
from trajudge.judges.engines.batch._openai import body as body
from trajudge.judges.engines.batch._openai import chunk as chunk
from trajudge.judges.engines.batch._openai import resume as resume
from trajudge.judges.engines.batch._steps import poll, retrying, submit_file
from trajudge.judges.engines.batch._vertex_api import (
    DEFAULT_LOCATION,
    Place,
    VertexREST,
    job_error,
    project_of,
    storage_base,
    vertex_result,
)

if TYPE_CHECKING:
    from trajudge.judges.engines.batch._engine import ProviderBatchEngine

#: The request label that carries a row's ``custom_id`` (a GCP label: lowercase, digits).
LABEL = "trajudge_custom_id"


def place_of(call: PreparedCall) -> Place:
    """The project, location and bucket of ``call``'s judge (module docstring); a judge with no
    bucket, or without google-auth installed, is refused before anything is sent."""
    spec = call.judge.spec
    try:
        import google.auth  # noqa: F401  # litellm's Vertex credentials need it
    except ImportError:
        raise InputError(
            f"judge {spec.name}",
            field="model",
            reason="Vertex AI batches need google-auth: pip install 'trajudge[vertex]'",
        ) from None
    where = spec.vertex
    bucket = (where.bucket if where else None) or os.environ.get("GCS_BUCKET_NAME")
    if not bucket:
        raise InputError(
            f"judge {spec.name}",
            field="vertex.bucket",
            reason="Vertex AI batches stage their files in Cloud Storage: "
            "set `vertex: {bucket: ...}` "
            "on the judge (or GCS_BUCKET_NAME)",
        )
    project = (where.project if where else None) or os.environ.get("VERTEXAI_PROJECT")
    location = (
        (where.location if where else None)
        or os.environ.get("VERTEXAI_LOCATION")
        or DEFAULT_LOCATION
    )
    return Place(project, location, bucket)


def check(where: str, call: PreparedCall) -> tuple[str | None, ...]:
    """The project, location and bucket of the judge's batches (:func:`place_of`)."""
    at = place_of(call)  # refused here when the judge names no bucket
    return (at.project, at.location, at.bucket)


async def submit(
    engine: ProviderBatchEngine, litellm: Any, target: Target, chunk: Chunk, emit: Emit
) -> Job | None:
    """Upload ``chunk`` as a Vertex batch file, create its job and record it (None: it was
    refused, and its requests are errors this run)."""
    first = chunk.calls[0][1]
    client, place = first.judge.client(), place_of(first)
    rows = bytearray()
    for (cid, _), line in zip(chunk.calls, chunk.lines, strict=True):
        body = json.loads(line)["body"]
        request = {**body, "labels": {**(body.get("labels") or {}), LABEL: cid}}
        rows += json.dumps({"request": request}, ensure_ascii=False).encode() + b"\n"
    where = {"vertex_location": place.location, "timeout": client.timeout}
    if place.project:
        where["vertex_project"] = place.project
    credentials = os.environ.get("VERTEXAI_CREDENTIALS")
    if credentials:  # a path or the JSON itself: passed through, never stored
        where["vertex_credentials"] = credentials
    upload = {
        "custom_llm_provider": "vertex_ai",
        "passthrough": True,  # the rows are Vertex's own format already
        "model": target.model,
        "api_base": storage_base(),
        "gcs_bucket_name": place.bucket,
        **where,
    }
    create = {
        "endpoint": "/v1/chat/completions",
        "custom_llm_provider": "vertex_ai",
        "api_base": client.api_base,
        **where,
    }
    return await submit_file(engine, litellm, target, chunk, emit, bytes(rows), upload, create)


async def collect(engine: ProviderBatchEngine, litellm: Any, job: Job, emit: Emit) -> None:
    """Poll the job of ``job`` until it has ended, then emit each request's result."""
    from litellm.llms.vertex_ai.batches.transformation import VertexAIBatchTransformation

    first = next(iter(job.calls.values()))
    place = place_of(first)
    api = VertexREST(job.client, place)
    convert = (
        VertexAIBatchTransformation.transform_vertex_ai_batch_response_to_openai_batch_response
    )
    try:
        project = place.project or await project_of(place)

        def state(raw: dict[str, Any]) -> tuple[str, dict[str, Any]]:
            batch = convert(raw)  # type: ignore[arg-type,unused-ignore]  # Vertex's job
            return batch.status, {
                "output_file_id": batch.output_file_id,
                "detail": job_error(raw),
            }

        raw, status = await poll(engine, job, lambda: api.job(job.batch_id, project), state)
        rows = ResultLines(job.batch_id, LABEL, lambda row: None)
        directory = (raw.get("outputInfo") or {}).get("gcsOutputDirectory")
        if directory:
            for uri in await retrying(job.client, lambda: api.outputs(directory)):
                read = functools.partial(api.rows, uri, LABEL, job.batch_id)
                rows.merge(await retrying(job.client, read))
    finally:
        await api.close()
    failure = job_error(raw)
    results = rows.results(
        job.calls,
        lambda call, row: vertex_result(
            litellm,
            job.client,
            call.key or "",
            call.judge.verdict_model,
            row,
            batch_id=job.batch_id,
            status=status,
            failure=failure,
        ),
    )
    engine.finish(job, status, results, emit)
