"""Vertex AI on the fake server (:mod:`fake_llm`): OAuth, Cloud Storage, Gemini and batch jobs.

Routes, in Google's formats, every one but the token endpoint requiring an
``Authorization: Bearer`` token this fake issued:

- ``POST /token``: Google's OAuth token endpoint for a service account (the JWT-bearer grant
  ``google-auth`` sends to the key file's ``token_uri``): answers an access token;
- ``POST /v1/projects/{p}/locations/{l}/publishers/google/models/{model}:generateContent``
  (https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/inference): the
  request is answered by the chat server's own logic (``FakeLLM._answer``) over the same
  request in chat form (:func:`as_chat`), and its answer comes back as Gemini's
  ``GenerateContentResponse`` (:func:`as_gemini`): the verdict as the candidate's text,
  ``finishReason`` ``STOP`` or ``MAX_TOKENS``, ``usageMetadata``; an HTTP error as Google's
  ``{"error": {"code", "message", "status"}}``;
- Cloud Storage's JSON API (https://cloud.google.com/storage/docs/json_api): ``POST
  /upload/storage/v1/b/{bucket}/o?uploadType=media&name=`` (an object resource),
  ``GET /storage/v1/b/{bucket}/o?prefix=`` (a listing), ``GET
  /storage/v1/b/{bucket}/o/{object}?alt=media`` (the bytes);
- ``POST /v1/projects/{p}/locations/{l}/batchPredictionJobs`` and ``GET .../{id}``
  (https://cloud.google.com/vertex-ai/docs/reference/rest/v1/projects.locations.batchPredictionJobs):
  a job is ``JOB_STATE_PENDING`` when created, ``JOB_STATE_RUNNING`` at its first poll and
  run at the next (unless held): every input row ``{"request": <GenerateContentRequest>}``
  is answered as ``generateContent`` would answer it, and the output prefix gets
  ``prediction-model-<time>/predictions.jsonl`` with one row per request, Vertex's format
  for Gemini: ``{"request", "status": "", "response", "processed_time"}``, and for a request
  that failed ``{"request", "status": <the error>, "processed_time"}``; the job is then
  ``JOB_STATE_SUCCEEDED`` with ``outputInfo.gcsOutputDirectory`` and ``completionStats``.

``mode``: ``"complete"``, ``"hold"`` (the job stays ``RUNNING`` until the test sets another
mode) or ``"fail"`` (``JOB_STATE_FAILED`` with ``error``, no output). ``faults`` answers the
next calls of a route with an HTTP error, once each (``faulted`` lists those answered).
``created`` lists the jobs created, ``tokens`` the access tokens issued, ``grants`` the signed
assertions received for them, ``bearers`` the tokens received.

``mangle``, when a test sets it, rewrites the result file's lines (JSON texts) before they are
served, as a provider that writes a broken, odd or contradictory line would.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

Answer = Callable[[dict[str, Any], dict[str, str]], Awaitable[tuple[int, dict[str, Any]]]]
Handler = Callable[[web.Request], Awaitable[web.Response]]
# google.rpc.Code names of HTTP statuses (https://cloud.google.com/apis/design/errors)
STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 429: "RESOURCE_EXHAUSTED",
          500: "INTERNAL", 503: "UNAVAILABLE"}  # fmt: skip
FAILED_JOB = {"code": 3, "message": "fake: the batch input failed validation"}
JOBS = "/v1/projects/{project}/locations/{location}/batchPredictionJobs"


def _texts(parts: list[dict[str, Any]] | None) -> str:
    return "".join(p.get("text", "") for p in parts or [])


def as_chat(body: dict[str, Any]) -> dict[str, Any]:
    """The ``generateContent`` request ``body`` as the chat request the fake's logic answers."""
    system = body.get("systemInstruction") or body.get("system_instruction")
    messages = [{"role": "system", "content": _texts(system["parts"])}] if system else []
    for content in body.get("contents") or []:
        role = "assistant" if content.get("role") == "model" else "user"
        messages.append({"role": role, "content": _texts(content.get("parts"))})
    config = body.get("generationConfig") or body.get("generation_config") or {}

    def get(*names: str) -> Any:  # Vertex takes camelCase and snake_case field names alike
        return next((config[n] for n in names if n in config), None)

    schema = get("responseJsonSchema", "response_json_schema", "responseSchema",
                 "response_schema") or {}  # fmt: skip
    chat: dict[str, Any] = {
        "messages": messages,
        "response_format": {"type": "json_schema", "json_schema": {"schema": schema}},
    }
    for ours, theirs in (("max_tokens", ("maxOutputTokens", "max_output_tokens")),
                         ("temperature", ("temperature",)), ("seed", ("seed",))):  # fmt: skip
        if get(*theirs) is not None:
            chat[ours] = get(*theirs)
    return chat


def as_gemini(status: int, payload: dict[str, Any], model: str) -> dict[str, Any]:
    """The fake's chat answer (``status``, ``payload``) as Vertex's answer."""
    if status != 200:
        message = (payload.get("error") or {}).get("message", "error")
        return {
            "error": {"code": status, "message": message, "status": STATUS.get(status, "UNKNOWN")}
        }
    choice = payload["choices"][0]
    usage = payload["usage"]
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": choice["message"]["content"]}]},
                "finishReason": "MAX_TOKENS" if choice["finish_reason"] == "length" else "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {
            "promptTokenCount": usage["prompt_tokens"],
            "candidatesTokenCount": usage["completion_tokens"],
            "totalTokenCount": usage["total_tokens"],
        },
        "modelVersion": model,
        "createTime": "2026-01-01T00:00:00.000000Z",
        "responseId": f"fake{time.time_ns()}",
    }


class FakeVertex:
    def __init__(self, answer: Answer) -> None:
        self._answer = answer
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self.objects: dict[tuple[str, str], bytes] = {}
        self.jobs: dict[str, dict[str, Any]] = {}
        self.created: list[str] = []
        self.tokens: list[str] = []
        self.bearers: set[str] = set()
        self.grants: list[str] = []
        self.mode = "complete"
        self.mangle: Callable[[list[str]], list[str]] | None = None
        #: (route, HTTP status) answered once each, in order, before the route works again:
        #: route ``upload``, ``create``, ``job`` or ``download``
        self.faults: list[tuple[str, int]] = []
        self.faulted: list[tuple[str, int]] = []

    def reset(self) -> None:
        with self._lock:
            self.objects.clear()
            self.jobs.clear()
            self.created.clear()
            self.grants.clear()
            self.bearers.clear()
            self.mode = "complete"
            self.mangle = None
            self.faults.clear()
            self.faulted.clear()
            # issued tokens stay valid: google-auth caches them across tests

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/token", self._token)
        model = "/v1/projects/{project}/locations/{location}/publishers/google/models/{call}"
        app.router.add_post(model, self._checked(self._generate))
        app.router.add_post("/upload/storage/v1/b/{bucket}/o", self._checked(self._upload))
        app.router.add_get("/storage/v1/b/{bucket}/o", self._checked(self._list))
        app.router.add_get("/storage/v1/b/{bucket}/o/{name:.+}", self._checked(self._download))
        app.router.add_post(JOBS, self._checked(self._create))
        app.router.add_get(JOBS + "/{id}", self._checked(self._retrieve))

    def input_rows(self) -> list[dict[str, Any]]:
        """The rows of every batch input file a job was created over."""
        with self._lock:
            rows = []
            for jid in self.created:
                uri = self.jobs[jid]["inputConfig"]["gcsSource"]["uris"][0]
                data = self.objects[_split(uri)]
                rows += [json.loads(line) for line in data.decode().splitlines() if line]
            return rows

    def _fault(self, route: str) -> web.Response | None:
        """The injected error for ``route``, if one is next (``faults``)."""
        with self._lock:
            if not self.faults or self.faults[0][0] != route:
                return None
            fault = self.faults.pop(0)
            self.faulted.append(fault)
        error = {"code": fault[1], "message": f"fake {route} error", "status": STATUS[fault[1]]}
        return web.json_response({"error": error}, status=fault[1])

    # -- auth ---------------------------------------------------------------------------------
    async def _token(self, request: web.Request) -> web.Response:
        form = await request.post()
        if form.get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer":
            return web.json_response({"error": "unsupported_grant_type"}, status=400)
        with self._lock:
            token = f"ya29.fake-token-{len(self.tokens) + 1}"
            self.tokens.append(token)
            self.grants.append(str(form.get("assertion")))
        return web.json_response(
            {"access_token": token, "expires_in": 3600, "token_type": "Bearer"}
        )

    def _checked(self, handler: Handler) -> Handler:
        async def checked(request: web.Request) -> web.Response:
            token = request.headers.get("Authorization", "").removeprefix("Bearer ")
            if token not in self.tokens:
                error = {"code": 401, "message": "invalid token", "status": "UNAUTHENTICATED"}
                return web.json_response({"error": error}, status=401)
            with self._lock:
                self.bearers.add(token)
            return await handler(request)

        return checked

    # -- Gemini -------------------------------------------------------------------------------
    async def _reply(self, body: dict[str, Any], model: str) -> tuple[int, dict[str, Any]]:
        status, payload = await self._answer(as_chat(body), {})
        return status, as_gemini(status, payload, model)

    async def _generate(self, request: web.Request) -> web.Response:
        model, _, method = request.match_info["call"].partition(":")
        if method != "generateContent":
            return web.json_response({"error": {"code": 404, "message": method}}, status=404)
        status, body = await self._reply(await request.json(), model)
        return web.json_response(body, status=status)

    # -- Cloud Storage ------------------------------------------------------------------------
    def _resource(self, bucket: str, name: str) -> dict[str, Any]:
        data = self.objects[(bucket, name)]
        return {
            "kind": "storage#object",
            "id": f"{bucket}/{name}/1767225600000000",
            "name": name,
            "bucket": bucket,
            "generation": "1767225600000000",
            "contentType": "application/json",
            "size": str(len(data)),
            "timeCreated": "2026-01-01T00:00:00.000Z",
        }

    async def _upload(self, request: web.Request) -> web.Response:
        if fault := self._fault("upload"):
            return fault
        bucket, name = request.match_info["bucket"], request.query.get("name", "")
        if request.query.get("uploadType") != "media" or not name:
            return web.json_response(
                {"error": {"code": 400, "message": "media upload"}}, status=400
            )
        data = await request.read()
        with self._lock:
            self.objects[(bucket, name)] = data
        return web.json_response(self._resource(bucket, name))

    async def _list(self, request: web.Request) -> web.Response:
        bucket, prefix = request.match_info["bucket"], request.query.get("prefix", "")
        with self._lock:
            names = sorted(n for b, n in self.objects if b == bucket and n.startswith(prefix))
            items = [self._resource(bucket, n) for n in names]
        return web.json_response({"kind": "storage#objects", **({"items": items} if items else {})})

    async def _download(self, request: web.Request) -> web.Response:
        if fault := self._fault("download"):
            return fault
        key = (request.match_info["bucket"], request.match_info["name"])
        data = self.objects.get(key)
        if data is None or request.query.get("alt") != "media":
            error = {"code": 404, "message": f"No such object: {key[0]}/{key[1]}"}
            return web.json_response({"error": error}, status=404)
        return web.Response(body=data, content_type="application/octet-stream")

    # -- batch prediction jobs ----------------------------------------------------------------
    async def _create(self, request: web.Request) -> web.Response:
        if fault := self._fault("create"):
            return fault
        body = await request.json()
        uris = ((body.get("inputConfig") or {}).get("gcsSource") or {}).get("uris") or []
        prefix = ((body.get("outputConfig") or {}).get("gcsDestination") or {}).get(
            "outputUriPrefix"
        )
        if len(uris) != 1 or _split(uris[0]) not in self.objects or not prefix:
            error = {"code": 400, "message": "gcsSource.uris and outputUriPrefix required"}
            return web.json_response({"error": error}, status=400)
        if not str(body.get("model", "")).startswith("publishers/google/models/"):
            return web.json_response({"error": {"code": 400, "message": "model"}}, status=400)
        with self._lock:
            jid = str(8_000_000_000_000_000_000 + next(self._ids))
            info = request.match_info
            self.jobs[jid] = {
                **body,
                "name": f"projects/{info['project']}/locations/{info['location']}"
                f"/batchPredictionJobs/{jid}",
                "state": "JOB_STATE_PENDING",
                "createTime": "2026-01-01T00:00:00.000000Z",
                "updateTime": "2026-01-01T00:00:00.000000Z",
            }
            self.created.append(jid)
            return web.json_response(dict(self.jobs[jid]))

    async def _retrieve(self, request: web.Request) -> web.Response:
        if fault := self._fault("job"):
            return fault
        job = self.jobs.get(request.match_info["id"])
        if job is None:
            return web.json_response({"error": {"code": 404, "message": "no such job"}}, status=404)
        if job["state"] == "JOB_STATE_PENDING":
            job["state"] = "JOB_STATE_RUNNING"
        elif job["state"] == "JOB_STATE_RUNNING" and self.mode != "hold":
            await self._run(job)
        return web.json_response(dict(job))

    async def _run(self, job: dict[str, Any]) -> None:
        now = "2026-01-01T00:00:01.000000Z"
        if self.mode == "fail":
            job.update(state="JOB_STATE_FAILED", error=FAILED_JOB, endTime=now)
            return
        model = job["model"].rsplit("/", 1)[-1]
        data = self.objects[_split(job["inputConfig"]["gcsSource"]["uris"][0])]
        out: list[str] = []
        failed = 0
        for line in data.decode().splitlines():
            row = json.loads(line)
            status, body = await self._reply(row["request"], model)
            result: dict[str, Any] = {"request": row["request"]}
            if status == 200:
                result.update(status="", response=body)
            else:
                failed += 1
                result["status"] = json.dumps(body)
            result["processed_time"] = "2026-01-01T00:00:01.000+00:00"
            out.append(json.dumps(result))
        if self.mangle is not None:
            out = self.mangle(out)
        bucket, prefix = _split(job["outputConfig"]["gcsDestination"]["outputUriPrefix"])
        folder = f"{prefix.rstrip('/')}/prediction-model-2026-01-01T00:00:01.000000Z"
        with self._lock:
            self.objects[(bucket, f"{folder}/predictions.jsonl")] = ("\n".join(out) + "\n").encode()
        job.update(
            state="JOB_STATE_SUCCEEDED",
            endTime=now,
            outputInfo={"gcsOutputDirectory": f"gs://{bucket}/{folder}"},
            completionStats={"successfulCount": str(len(out) - failed), "failedCount": str(failed)},
        )


def _split(uri: str) -> tuple[str, str]:
    """``gs://bucket/name`` as (bucket, name)."""
    bucket, _, name = uri.removeprefix("gs://").partition("/")
    return bucket, name
