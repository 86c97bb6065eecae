"""Vertex AI batch prediction for ``--engine batch`` (``vertex_ai/`` Gemini judges).

A batch is a Vertex ``batchPredictionJob`` over a JSONL file in Cloud Storage:

- each row is ``{"request": <GenerateContentRequest>}``: the very ``generateContent`` body
  the local engine sends for the call (litellm's own request transformation, through
  :meth:`~trajudge.judges._provider_batch.ProviderBatchEngine.body`), with the row's
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
  parsing; a row whose ``status`` carries an error becomes the error litellm raises for it.

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
(:class:`~trajudge.judges._spec.VertexSpec`), else litellm's ``VERTEXAI_PROJECT``,
``VERTEXAI_LOCATION`` (default ``us-central1``) and ``GCS_BUCKET_NAME``. No credential or
token is ever stored: the store keeps the job id and the ``gs://`` input file.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import uuid
import weakref
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from pydantic import BaseModel

from trajudge.judges._batch_results import batch_cost
from trajudge.judges._call import PreparedCall
from trajudge.judges._client import (
    CallResult,
    LLMClient,
    _is_truncated,
    _one_line,
    parse_json_schema,
)
from trajudge.judges._engine import Emit
from trajudge.judges._provider_batch import (
    TERMINAL,
    ProviderBatchEngine,
    _Chunk,
    _Job,
    _retrying,
    _Target,
)
from trajudge.store import redact
from trajudge.trajectories import InputError, canonical_json

STORAGE = "https://storage.googleapis.com"
#: The request label that carries a row's ``custom_id`` (a GCP label: lowercase, digits).
LABEL = "trajudge_custom_id"
DEFAULT_LOCATION = "us-central1"


@dataclass(frozen=True)
class Place:
    """Where a Vertex judge's batches run."""

    project: str | None
    location: str
    bucket: str


@dataclass(frozen=True)
class _Template:
    """A request body as JSON text cut at each message's content: ``pieces[0]``, the content
    of message ``slots[0]``, ``pieces[1]``, ... (cut once, so no content is searched)."""

    pieces: tuple[str, ...]
    slots: tuple[int, ...]

    def fill(self, call: PreparedCall) -> dict[str, Any]:
        parts = [self.pieces[0]]
        for slot, piece in zip(self.slots, self.pieces[1:], strict=True):
            parts += [json.dumps(call.messages[slot]["content"], ensure_ascii=False), piece]
        return dict(json.loads("".join(parts)))


#: Per engine: the template of each judge, parameters and message roles (None: litellm does
#: not pass every content through whole, so each body is built by litellm).
_TEMPLATES: weakref.WeakKeyDictionary[ProviderBatchEngine, dict[Any, _Template | None]] = (
    weakref.WeakKeyDictionary()
)


def vertex_body(engine: ProviderBatchEngine, call: PreparedCall) -> dict[str, Any]:
    """The ``generateContent`` body of ``call``, as :meth:`ProviderBatchEngine.body` builds it
    (litellm's ``return_raw_request``, ~50 ms a call) but from a template per judge, parameters
    and message roles: the body built once with a placeholder for each message's content, each
    call's contents put in their place. A template is used only where litellm passed every
    content through whole, and only once the body it gives for the first call is the very
    body litellm builds for it."""
    templates = _TEMPLATES.setdefault(engine, {})
    roles = tuple(m.get("role") for m in call.messages)
    sig = (id(call.judge), canonical_json(call.params), roles)
    if sig not in templates:
        templates[sig] = None
        template = _template(engine, call)
        real = engine._request(call)[0]
        if template is not None and template.fill(call) == real:
            templates[sig] = template
        return real
    template = templates[sig]
    return engine._request(call)[0] if template is None else template.fill(call)


def _template(engine: ProviderBatchEngine, call: PreparedCall) -> _Template | None:
    """The body litellm builds for ``call`` with placeholders for the contents, cut at each
    (None: a placeholder is not there exactly once as a whole JSON string)."""
    marks = [json.dumps(f"trajudge-content-{uuid.uuid4().hex}") for _ in call.messages]
    shaped = dataclasses.replace(
        call,
        messages=[
            {**m, "content": json.loads(k)} for m, k in zip(call.messages, marks, strict=True)
        ],
    )
    text = json.dumps(engine._request(shaped)[0], ensure_ascii=False)
    if any(text.count(k) != 1 for k in marks):
        return None
    at = sorted((text.index(k), i) for i, k in enumerate(marks))
    pieces, last = [], 0
    for pos, i in at:
        pieces.append(text[last:pos])
        last = pos + len(marks[i])
    pieces.append(text[last:])
    return _Template(tuple(pieces), tuple(i for _, i in at))


def place_of(call: PreparedCall) -> Place:
    """The project, location and bucket of ``call``'s judge (module docstring); a judge with no
    bucket is refused before anything is sent."""
    spec = call.judge.spec
    where = spec.vertex
    bucket = (where.bucket if where else None) or os.environ.get("GCS_BUCKET_NAME")
    if not bucket:
        raise InputError(
            f"judge {spec.name}",
            None,
            "vertex.bucket",
            "Vertex AI batches stage their files in Cloud Storage: set `vertex: {bucket: ...}` "
            "on the judge (or GCS_BUCKET_NAME)",
        )
    project = (where.project if where else None) or os.environ.get("VERTEXAI_PROJECT")
    location = (
        (where.location if where else None)
        or os.environ.get("VERTEXAI_LOCATION")
        or DEFAULT_LOCATION
    )
    return Place(project, location, bucket)


def storage_base() -> str:
    """The Cloud Storage endpoint: ``STORAGE_EMULATOR_HOST`` (as Google's client libraries read
    it: a URL, or a host and port over http), else Google's."""
    host = os.environ.get("STORAGE_EMULATOR_HOST", "").strip().rstrip("/")
    if not host:
        return STORAGE
    return host if "://" in host else f"http://{host}"


def vertex_base(api_base: str | None, location: str) -> str:
    """The Vertex API root that ``/v1/projects/...`` paths go under: the judge's ``api_base``
    (a trailing ``/v1`` or ``/v1beta1`` dropped, as litellm grafts Vertex's path onto it),
    else Vertex's endpoint for ``location``."""
    if not api_base:
        from litellm.llms.vertex_ai.common_utils import get_vertex_base_url

        return str(get_vertex_base_url(location)).rstrip("/")
    base = api_base.rstrip("/")
    for version in ("/v1", "/v1beta1"):
        base = base.removesuffix(version)
    return base


class VertexREST:
    """The job ``GET`` and Cloud Storage reads, with litellm's Vertex credentials (one try
    each: the engine retries transient failures with the judge's settings)."""

    _auth: Any = None  # litellm's VertexBase: its credentials and token cache, shared

    def __init__(self, client: LLMClient, place: Place) -> None:
        import httpx

        self.place = place
        self.base = vertex_base(client.api_base, place.location)
        self.http = httpx.AsyncClient(timeout=client.timeout)

    async def _headers(self) -> dict[str, str]:
        if VertexREST._auth is None:
            from litellm.llms.vertex_ai.vertex_llm_base import VertexBase

            VertexREST._auth = VertexBase()
        token, _ = await asyncio.to_thread(
            VertexREST._auth.get_access_token,
            credentials=os.environ.get("VERTEXAI_CREDENTIALS"),
            project_id=self.place.project,
        )
        return {"Authorization": f"Bearer {token}"}

    async def _get(self, url: str, **params: str) -> Any:
        import httpx
        import litellm
        from litellm.llms.vertex_ai.common_utils import VertexAIError

        try:
            response = await self.http.get(url, params=params, headers=await self._headers())
        except httpx.TransportError as exc:
            raise litellm.exceptions.APIConnectionError(
                message=f"{type(exc).__name__}: {exc}", llm_provider="vertex_ai", model=""
            ) from exc
        if response.status_code != 200:
            raise VertexAIError(status_code=response.status_code, message=response.text)
        return response

    async def job(self, batch_id: str, project: str) -> dict[str, Any]:
        where = f"projects/{project}/locations/{self.place.location}"
        response = await self._get(f"{self.base}/v1/{where}/batchPredictionJobs/{batch_id}")
        return dict(response.json())

    async def output(self, directory: str) -> list[bytes]:
        """Every ``predictions*.jsonl`` object under the ``gs://`` folder ``directory``."""
        bucket, _, prefix = directory.removeprefix("gs://").partition("/")
        prefix = prefix.rstrip("/") + "/"
        listing = f"{storage_base()}/storage/v1/b/{quote(bucket, safe='')}/o"
        names: list[str] = []
        page: dict[str, str] = {}
        while True:
            found = (await self._get(listing, prefix=prefix, **page)).json()
            names += [item["name"] for item in found.get("items") or []]
            if not found.get("nextPageToken"):
                break
            page = {"pageToken": found["nextPageToken"]}
        wanted = sorted(
            n
            for n in names
            if n.rsplit("/", 1)[-1].startswith("predictions") and n.endswith(".jsonl")
        )
        return [
            (await self._get(f"{listing}/{quote(name, safe='')}", alt="media")).content
            for name in wanted
        ]

    async def close(self) -> None:
        await self.http.aclose()


async def submit(
    engine: ProviderBatchEngine, litellm: Any, target: _Target, chunk: _Chunk, emit: Emit
) -> _Job | None:
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
    try:
        uploaded = await _retrying(
            client,
            lambda: litellm.acreate_file(
                file=("trajudge-batch.jsonl", bytes(rows), "application/jsonl"),
                purpose="batch",
                custom_llm_provider="vertex_ai",
                passthrough=True,  # the rows are Vertex's own format already
                model=target.model,
                api_base=storage_base(),
                gcs_bucket_name=place.bucket,
                **where,
            ),
        )
        batch = await _retrying(
            client,
            lambda: litellm.acreate_batch(
                completion_window=engine.completion_window,
                endpoint="/v1/chat/completions",
                input_file_id=uploaded.id,
                custom_llm_provider="vertex_ai",
                api_base=client.api_base,
                **where,
            ),
        )
    except Exception as exc:  # nothing was accepted
        error = "could not submit the batch: " + _one_line(exc, 1)
        for _, call in chunk.calls:
            emit(call, CallResult(None, None, call.key or "", error=error, attempts=1))
        return None
    return engine._record(target, chunk, batch.id, uploaded.id, batch.status)


async def collect(engine: ProviderBatchEngine, litellm: Any, job: _Job, emit: Emit) -> None:
    """Poll the job of ``job`` until it has ended, then emit each request's result."""
    from litellm.llms.vertex_ai.batches.transformation import VertexAIBatchTransformation

    first = next(iter(job.calls.values()))
    place = place_of(first)
    api = VertexREST(job.client, place)
    convert = (
        VertexAIBatchTransformation.transform_vertex_ai_batch_response_to_openai_batch_response
    )
    try:
        project = place.project or await _project(place)
        status = None
        while True:
            raw = await _retrying(job.client, lambda: api.job(job.batch_id, project))
            batch = convert(raw)  # type: ignore[arg-type,unused-ignore]  # Vertex's job
            if batch.status != status:
                status = batch.status
                engine.store.update_provider_batch(
                    job.pk, status=status, output_file_id=batch.output_file_id,
                    detail=job_error(raw),
                )  # fmt: skip
            if status in TERMINAL:
                break
            await asyncio.sleep(engine.poll_interval_s)
        rows: dict[str, dict[str, Any]] = {}
        directory = (raw.get("outputInfo") or {}).get("gcsOutputDirectory")
        if directory:
            for data in await _retrying(job.client, lambda: api.output(directory)):
                for text in data.decode().splitlines():
                    if text.strip():
                        row = json.loads(text)
                        cid = ((row.get("request") or {}).get("labels") or {}).get(LABEL)
                        if cid is not None:
                            rows[str(cid)] = row
    finally:
        await api.close()
    failure = job_error(raw)
    results = {
        cid: vertex_result(
            litellm,
            job.client,
            call.key or "",
            call.judge.verdict_model,
            rows.get(cid),
            job.batch_id,
            status,
            failure,
        )
        for cid, call in job.calls.items()
    }
    engine._finish(job, status, results, emit)


async def _project(place: Place) -> str:
    """The project of the credentials (a judge that names none)."""
    from litellm.llms.vertex_ai.vertex_llm_base import VertexBase

    if VertexREST._auth is None:
        VertexREST._auth = VertexBase()
    _, project = await asyncio.to_thread(
        VertexREST._auth.get_access_token,
        credentials=os.environ.get("VERTEXAI_CREDENTIALS"),
        project_id=None,
    )
    return str(project)


def job_error(raw: dict[str, Any]) -> str | None:
    """The reason Vertex gives for a failed job (its ``error``: a google.rpc.Status)."""
    error = raw.get("error")
    if not isinstance(error, dict) or not error:
        return None
    return redact(f"{error.get('code')}: {error.get('message')}")[:2000]


def vertex_result(
    litellm: Any,
    client: LLMClient,
    key: str,
    verdict_model: type[BaseModel],
    row: dict[str, Any] | None,
    batch_id: str,
    status: str | None,
    failure: str | None,
) -> CallResult:
    """The result of the request with cache key ``key`` from its Vertex output ``row`` (None:
    the job wrote none for it), as one attempt (module docstring)."""
    result = CallResult(None, None, key, attempts=1)
    if row is None:
        if status == "failed":
            reason = f"the batch failed: {failure or 'no reason given'}"
        else:
            reason = f"no result for this request (batch {status})"
        result.error = redact(f"batch {batch_id}: {reason}")[:600]
        return result
    if row.get("status") or not row.get("response"):
        result.error = _one_line(_row_error(litellm, client.model, row.get("status")), 1)
        return result
    response = row["response"]
    try:
        completion = _completion(litellm, client.model, response)
        verdict = parse_json_schema(completion, verdict_model)
    except Exception as exc:  # unparseable or cut: the local engine's error, one attempt
        result.error = _one_line(exc, 1)
        result.truncated = _is_truncated(exc)
        return result
    client.fill(result, verdict, completion, batch_cost(litellm, client, completion))
    return result


def _completion(litellm: Any, model: str, response: dict[str, Any]) -> Any:
    """A Gemini ``GenerateContentResponse`` as litellm's chat completion, by the same
    transformation litellm applies to a direct call's answer."""
    from datetime import datetime

    import httpx
    from litellm.litellm_core_utils.litellm_logging import Logging
    from litellm.llms.vertex_ai.gemini.vertex_and_google_ai_studio_gemini import (
        VertexGeminiConfig,
    )

    logging = Logging(
        model=model, messages=[], stream=False, call_type="batch_transform",
        start_time=datetime.now(), litellm_call_id="", function_id="",
    )  # fmt: skip
    logging.optional_params = {}
    return VertexGeminiConfig().transform_google_generate_content_to_openai_model_response(
        completion_response=response,
        model_response=litellm.ModelResponse(),
        model=model.split("/", 1)[-1],
        logging_obj=logging,
        raw_response=httpx.Response(200, json=response),
    )


def _row_error(litellm: Any, model: str, status: Any) -> BaseException:
    """What litellm raises on a direct call that Vertex answered with the error in a row's
    ``status`` (Google's ``{"error": {"code", "message", "status"}}``, or its text)."""
    from litellm.litellm_core_utils.exception_mapping_utils import exception_type
    from litellm.llms.vertex_ai.common_utils import VertexAIError

    text = str(status or "no response")
    code = 500
    try:
        error = json.loads(text[text.index("{") :]).get("error") or {}
        if isinstance(error.get("code"), int) and 400 <= error["code"] < 600:
            code = error["code"]
    except (ValueError, AttributeError):
        pass
    original = VertexAIError(status_code=code, message=text)
    try:
        exception_type(  # type: ignore[no-untyped-call]
            model=model, original_exception=original, custom_llm_provider="vertex_ai"
        )
    except Exception as mapped:
        return mapped
    return original  # pragma: no cover - exception_type always raises
