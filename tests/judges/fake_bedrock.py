"""Amazon Bedrock (runtime and batch inference) and the S3 it reads on the fake server.

Routes, in AWS's formats, each requiring a SigV4 ``Authorization`` header (its access key id
is recorded in ``access_keys``; the signature itself is not checked):

- ``POST /model/{modelId}/invoke`` (bedrock-runtime InvokeModel): an Anthropic Messages body
  (``anthropic_version`` ``bedrock-2023-05-31``) answered by the chat server's own logic
  over the request in chat form (:func:`fake_anthropic.as_chat`), as Anthropic's message
  (:func:`fake_anthropic.as_message`); an HTTP error as ``{"message"}`` with that status;
- ``PUT /{bucket}/{key}`` and ``GET /{bucket}/{key}`` (S3 PutObject and GetObject, path
  style; buckets are named ``trajudge-...``); a missing object is S3's ``NoSuchKey`` XML;
- ``POST /model-invocation-job`` (CreateModelInvocationJob: ``modelId``, ``jobName``,
  ``roleArn``, ``inputDataConfig.s3InputDataConfig.s3Uri``,
  ``outputDataConfig.s3OutputDataConfig.s3Uri``): a job, status ``Submitted``; the input
  object must exist and each line be ``{"recordId", "modelInput"}`` with unique ids;
- ``GET /model-invocation-job/{jobIdentifier}`` (GetModelInvocationJob): the job; one that
  is not held is run at this request: each record is answered as InvokeModel would answer
  its ``modelInput``, and ``<output prefix><job id>/<input file name>.out`` gets one line per
  record, ``{"recordId", "modelInput", "modelOutput"}`` or, for a failed record,
  ``{"recordId", "modelInput", "error": {"errorCode", "errorMessage"}}``, plus
  ``manifest.json.out`` with the counts
  (https://docs.aws.amazon.com/bedrock/latest/userguide/batch-inference-results.html).

``mode`` says how a job ends: ``"complete"`` (``Completed``); ``"hold"`` (``InProgress``
until the test sets another mode); ``"stop:N"`` (the first N records run, then ``Stopped``,
as a job a user stopped; ``"stop:0"`` writes no output file); ``"partial:N"`` (the first N
records run, then ``PartiallyCompleted``, as a job whose time ran out); ``"fail"``
(``Failed`` with a ``message``, no output); ``"refuse"`` (CreateModelInvocationJob answers
400, no job).
``created`` lists the job ARNs created, ``inputs()`` the records of their input files,
``invoked`` the InvokeModel bodies received, ``access_keys`` and ``services`` the access key
id and service name of each signed request.

``mangle``, when a test sets it, rewrites the result file's lines (JSON texts) before they are
served, as a provider that writes a broken, odd or contradictory line would.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import unquote

from aiohttp import web
from fake_anthropic import as_chat, as_message

Answer = Callable[[dict[str, Any], dict[str, str]], Awaitable[tuple[int, dict[str, Any]]]]
Handler = Callable[[web.Request], Awaitable[web.Response]]
ACCOUNT = "123456789012"
REGION = "us-east-1"
CREDENTIAL = re.compile(r"^AWS4-HMAC-SHA256 Credential=([^/]+)/\d{8}/([a-z0-9-]+)/([a-z0-9-]+)/")
FAILED_MESSAGE = "fake: the role cannot read the input bucket"
REFUSED_MESSAGE = "fake: the service role is not assumable by bedrock.amazonaws.com"


def _s3_uri(uri: str) -> tuple[str, str]:
    bucket, _, key = uri.removeprefix("s3://").partition("/")
    return bucket, key


class FakeBedrock:
    def __init__(self, answer: Answer) -> None:
        self._answer = answer
        self._lock = threading.Lock()
        self.objects: dict[tuple[str, str], bytes] = {}
        self.jobs: dict[str, dict[str, Any]] = {}
        self.created: list[str] = []
        self.access_keys: list[str] = []
        self.services: list[str] = []
        self.invoked: list[dict[str, Any]] = []
        self.mode = "complete"
        self.mangle: Callable[[list[str]], list[str]] | None = None

    def reset(self) -> None:
        with self._lock:
            self.objects.clear()
            self.jobs.clear()
            self.created.clear()
            self.access_keys.clear()
            self.services.clear()
            self.invoked.clear()
            self.mode = "complete"
            self.mangle = None

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/model/{model}/invoke", self._signed(self._invoke))
        app.router.add_post("/model-invocation-job", self._signed(self._create))
        app.router.add_get("/model-invocation-job/{job:.+}", self._signed(self._get))
        app.router.add_put("/{bucket:trajudge-[a-z0-9-]+}/{key:.+}", self._signed(self._put))
        app.router.add_get("/{bucket:trajudge-[a-z0-9-]+}/{key:.+}", self._signed(self._object))

    def inputs(self) -> list[dict[str, Any]]:
        """The records of every job's input file, in order of creation."""
        with self._lock:
            return [r for arn in self.created for r in self._records(self.jobs[arn])]

    def _records(self, job: dict[str, Any]) -> list[dict[str, Any]]:
        data = self.objects[_s3_uri(job["inputDataConfig"]["s3InputDataConfig"]["s3Uri"])]
        return [json.loads(line) for line in data.decode().splitlines() if line.strip()]

    def _signed(self, handler: Handler) -> Handler:
        async def checked(request: web.Request) -> web.Response:
            match = CREDENTIAL.match(request.headers.get("Authorization", ""))
            if match is None:
                return web.json_response({"message": "missing SigV4 authorization"}, status=403)
            with self._lock:
                self.access_keys.append(match.group(1))
                self.services.append(match.group(3))
            return await handler(request)

        return checked

    # -- bedrock-runtime ---------------------------------------------------------------------
    async def _reply(self, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        status, payload = await self._answer(as_chat(params), {})
        message = as_message(params, status, payload)
        if status != 200:
            return status, {"message": message["error"]["message"]}
        return status, message

    async def _invoke(self, request: web.Request) -> web.Response:
        params = await request.json()
        with self._lock:
            self.invoked.append(params)
        if params.get("anthropic_version") != "bedrock-2023-05-31":
            return web.json_response({"message": "anthropic_version required"}, status=400)
        status, body = await self._reply(params)
        return web.json_response(body, status=status)

    # -- S3 ----------------------------------------------------------------------------------
    async def _put(self, request: web.Request) -> web.Response:
        data = await request.read()
        with self._lock:
            self.objects[(request.match_info["bucket"], unquote(request.match_info["key"]))] = data
        return web.Response(status=200, headers={"ETag": f'"{len(data):032x}"'})

    async def _object(self, request: web.Request) -> web.Response:
        key = unquote(request.match_info["key"])
        data = self.objects.get((request.match_info["bucket"], key))
        if data is None:
            xml = (
                '<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code>'
                f"<Message>The specified key does not exist.</Message><Key>{key}</Key></Error>"
            )
            return web.Response(status=404, body=xml, content_type="application/xml")
        return web.Response(
            body=data,
            content_type="application/octet-stream",
            headers={
                "ETag": f'"{len(data):032x}"',
                "Last-Modified": "Thu, 01 Jan 2026 00:00:00 GMT",
            },
        )

    # -- control plane -----------------------------------------------------------------------
    async def _create(self, request: web.Request) -> web.Response:
        body = await request.json()
        try:
            uri = body["inputDataConfig"]["s3InputDataConfig"]["s3Uri"]
            body["outputDataConfig"]["s3OutputDataConfig"]["s3Uri"]
            fields = (body["modelId"], body["jobName"], body["roleArn"])
        except (KeyError, TypeError) as exc:
            return web.json_response({"message": f"missing {exc}"}, status=400)
        if not all(isinstance(f, str) and f for f in fields):
            return web.json_response({"message": "modelId, jobName, roleArn required"}, status=400)
        if self.mode == "refuse":
            return web.json_response({"message": REFUSED_MESSAGE}, status=400)
        if _s3_uri(uri) not in self.objects:
            return web.json_response({"message": f"no input object {uri}"}, status=400)
        with self._lock:
            job_id = f"job{len(self.jobs) + 1:04d}"
            arn = f"arn:aws:bedrock:{REGION}:{ACCOUNT}:model-invocation-job/{job_id}"
            job = {
                "jobArn": arn,
                "jobName": body["jobName"],
                "modelId": body["modelId"],
                "roleArn": body["roleArn"],
                "status": "Submitted",
                "submitTime": "2026-01-01T00:00:00Z",
                "lastModifiedTime": "2026-01-01T00:00:00Z",
                "inputDataConfig": body["inputDataConfig"],
                "outputDataConfig": body["outputDataConfig"],
                "timeoutDurationInHours": body.get("timeoutDurationInHours", 24),
            }
            records = self._records(job)
            ids = [r.get("recordId") for r in records]
            if len(set(ids)) != len(ids) or not all(
                isinstance(r.get("modelInput"), dict) for r in records
            ):
                return web.json_response(
                    {"message": "each record needs a unique recordId and a modelInput"}, status=400
                )
            self.jobs[arn] = job
            self.created.append(arn)
        return web.json_response({"jobArn": arn})

    async def _get(self, request: web.Request) -> web.Response:
        arn = unquote(request.match_info["job"])
        job = self.jobs.get(arn)
        if job is None:
            return web.json_response({"message": f"no job {arn}"}, status=404)
        if job["status"] in ("Submitted", "InProgress"):
            if self.mode == "hold":
                job["status"] = "InProgress"
            else:
                await self._run(job)
        return web.json_response(dict(job))

    async def _run(self, job: dict[str, Any]) -> None:
        if self.mode == "fail":
            job.update(status="Failed", message=FAILED_MESSAGE, endTime="2026-01-01T00:00:01Z")
            return
        kind, _, n = self.mode.partition(":")
        limit = int(n) if kind in ("stop", "partial") else None
        lines: list[str] = []
        ok = 0
        records = self._records(job)
        for i, record in enumerate(records):
            if limit is not None and i >= limit:
                break
            params = record["modelInput"]
            status, body = await self._reply(params)
            line: dict[str, Any] = {"recordId": record["recordId"], "modelInput": params}
            if status == 200:
                line["modelOutput"] = body
                ok += 1
            else:
                line["error"] = {"errorCode": status, "errorMessage": body["message"]}
            lines.append(json.dumps(line))
        if self.mangle is not None:
            lines = self.mangle(lines)
        bucket, prefix = _s3_uri(job["outputDataConfig"]["s3OutputDataConfig"]["s3Uri"])
        prefix = prefix if prefix.endswith("/") else prefix + "/"
        job_id = job["jobArn"].rsplit("/", 1)[1]
        name = job["inputDataConfig"]["s3InputDataConfig"]["s3Uri"].rsplit("/", 1)[1]
        manifest = {
            "totalRecordCount": len(records),
            "processedRecordCount": len(lines),
            "successRecordCount": ok,
            "errorRecordCount": len(lines) - ok,
        }
        with self._lock:
            if limit == 0 and kind == "stop":  # stopped before it ran a record: no output
                job.update(status="Stopped", endTime="2026-01-01T00:00:01Z")
                return
            self.objects[(bucket, f"{prefix}{job_id}/{name}.out")] = (
                "\n".join(lines) + "\n"
            ).encode()
            self.objects[(bucket, f"{prefix}{job_id}/manifest.json.out")] = json.dumps(
                manifest
            ).encode()
        job.update(
            status={"stop": "Stopped", "partial": "PartiallyCompleted"}.get(kind, "Completed"),
            endTime="2026-01-01T00:00:01Z",
            totalRecordCount=len(records),
            processedRecordCount=len(lines),
            successRecordCount=ok,
            errorRecordCount=len(lines) - ok,
        )
