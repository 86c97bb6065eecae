"""Vertex AI's REST calls and output rows, for :mod:`trajudge.judges.engines.batch._vertex`.

:class:`VertexREST` gets a batch prediction job and reads a job's output from Cloud Storage
(why trajudge makes these calls itself: see that module's docstring), with the token of
litellm's Vertex credentials; :func:`vertex_result` turns one output row into the call result
the local engine would have made of the same answer.
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from pydantic import BaseModel

from trajudge.judges.calls._client import LLMClient
from trajudge.judges.calls._result import CallResult, one_line
from trajudge.judges.engines.batch._lines import ResultLines
from trajudge.judges.engines.batch._results import completion_result, litellm_error
from trajudge.store import redact

STORAGE = "https://storage.googleapis.com"
DEFAULT_LOCATION = "us-central1"


@dataclass(frozen=True)
class Place:
    """Where a Vertex judge's batches run."""

    project: str | None
    location: str
    bucket: str


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
        return await self._send(url, params, stream=False)

    async def _send(self, url: str, params: dict[str, str], *, stream: bool) -> Any:
        """The ``200`` response to ``GET url`` (streamed: its body left to read); any other
        status raises what litellm raises for it, a lost connection its connection error."""
        import httpx
        import litellm
        from litellm.llms.vertex_ai.common_utils import VertexAIError

        try:
            request = self.http.build_request(
                "GET", url, params=params, headers=await self._headers()
            )
            response = await self.http.send(request, stream=stream)
            if response.status_code != 200:
                await response.aread()
                await response.aclose()
                raise VertexAIError(status_code=response.status_code, message=response.text)
        except httpx.TransportError as exc:
            raise litellm.exceptions.APIConnectionError(
                message=f"{type(exc).__name__}: {exc}", llm_provider="vertex_ai", model=""
            ) from exc
        return response

    async def job(self, batch_id: str, project: str) -> dict[str, Any]:
        where = f"projects/{project}/locations/{self.place.location}"
        response = await self._get(f"{self.base}/v1/{where}/batchPredictionJobs/{batch_id}")
        return dict(response.json())

    async def outputs(self, directory: str) -> list[str]:
        """The ``predictions*.jsonl`` objects under the ``gs://`` folder ``directory``."""
        bucket, _, prefix = directory.removeprefix("gs://").partition("/")
        prefix = prefix.rstrip("/") + "/"
        names: list[str] = []
        page: dict[str, str] = {}
        while True:
            found = (await self._get(_objects(bucket), prefix=prefix, **page)).json()
            names += [item["name"] for item in found.get("items") or []]
            if not found.get("nextPageToken"):
                break
            page = {"pageToken": found["nextPageToken"]}
        base = f"gs://{bucket}/"
        return sorted(
            base + n
            for n in names
            if n.rsplit("/", 1)[-1].startswith("predictions") and n.endswith(".jsonl")
        )

    async def rows(self, uri: str, label: str, batch_id: str) -> ResultLines:
        """The rows of the output object ``uri`` by the value of their request's ``label``,
        each without its request (Vertex echoes the whole prompt): the object is read as a
        stream, line by line, so memory holds the answers, not the file."""
        bucket, _, name = uri.removeprefix("gs://").partition("/")
        url = f"{_objects(bucket)}/{quote(name, safe='')}"
        lines = ResultLines(
            batch_id,
            label,
            lambda row: ((row.get("request") or {}).get("labels") or {}).get(label),
            lambda row: {k: v for k, v in row.items() if k != "request"},
        )
        response = await self._send(url, {"alt": "media"}, stream=True)
        try:
            await lines.aread(uri, response.aiter_bytes())
        finally:
            await response.aclose()
        return lines

    async def close(self) -> None:
        await self.http.aclose()


def _objects(bucket: str) -> str:
    """The JSON API URL of ``bucket``'s objects."""
    return f"{storage_base()}/storage/v1/b/{quote(bucket, safe='')}/o"


async def project_of(place: Place) -> str:
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
    *,
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
        result.error = one_line(_row_error(litellm, client.model, row.get("status")), 1)
        return result
    response = row["response"]
    return completion_result(
        result, litellm, client, verdict_model, lambda: _completion(litellm, client.model, response)
    )


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
    return litellm_error(model, "vertex_ai", original)
