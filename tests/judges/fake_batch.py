"""OpenAI's batch API on the fake server (:mod:`fake_llm`): files and batches, on loopback.

Routes, in OpenAI's formats (https://platform.openai.com/docs/api-reference/batch):

- ``POST /v1/files`` (multipart, ``purpose=batch``): stores the JSONL input, answers a file
  object;
- ``POST /v1/batches``: creates a batch over an uploaded file (status ``validating``);
- ``GET /v1/batches/{id}``: the batch; a batch that is not held is run at this request: every
  input line is answered by the chat server's own logic (``FakeLLM._answer``: its script,
  ``action_for``, ``decide``, ``choose``), 200s go to the output file and other statuses to the
  error file as ``{"response": {"status_code", "request_id", "body"}, "error": null}``;
- ``GET /v1/files/{id}/content``: an uploaded, output or error file.

Azure OpenAI's global batches are served too, as litellm's Azure client calls them: the same
routes under ``/openai`` (``/openai/files``, ``/openai/batches``, ...), each requiring an
``api-version`` query parameter and an ``api-key`` header, with the endpoint (and every
line's ``url``) ``/chat/completions`` instead of ``/v1/chat/completions``. ``azure_keys``
records the ``api-key`` headers received.

``mode`` says how a batch ends: ``"complete"``; ``"hold"`` (stays ``in_progress`` until the
test sets another mode: a test waits on that state, not on time); ``"expire:N"`` (the first N
lines run, the rest land in the error file with code ``batch_expired``, status ``expired``);
``"fail"`` (status ``failed`` with ``errors``, no output file, as a batch that fails
validation). ``uploads`` and ``created`` count the files uploaded and batches created.

``mangle``, when a test sets it, rewrites the result file's lines (JSON texts) before they are
served, as a provider that writes a broken, odd or contradictory line would.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

Handler = Callable[[web.Request], Awaitable[web.Response]]
Answer = Callable[[dict[str, Any], dict[str, str]], Awaitable[tuple[int, dict[str, Any]]]]
ENDPOINT = "/v1/chat/completions"
EXPIRED_MESSAGE = "This request could not be executed before the completion window expired."


class FakeBatches:
    def __init__(self, answer: Answer) -> None:
        self._answer = answer
        self._lock = threading.Lock()
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.uploads: list[str] = []
        self.created: list[str] = []
        self.retrieved = 0
        self.mode = "complete"
        self.mangle: Callable[[list[str]], list[str]] | None = None
        self.azure_keys: list[str] = []

    def reset(self) -> None:
        with self._lock:
            self.files.clear()
            self.batches.clear()
            self.uploads.clear()
            self.created.clear()
            self.retrieved = 0
            self.mode = "complete"
            self.mangle = None
            self.azure_keys.clear()

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/files", self._upload)
        app.router.add_post("/v1/batches", self._create)
        app.router.add_get("/v1/batches/{id}", self._retrieve)
        app.router.add_get("/v1/files/{id}/content", self._content)
        app.router.add_post("/openai/files", self._azure(self._upload))
        app.router.add_post("/openai/batches", self._azure(self._create))
        app.router.add_get("/openai/batches/{id}", self._azure(self._retrieve))
        app.router.add_get("/openai/files/{id}/content", self._azure(self._content))

    def _azure(self, handler: Handler) -> Handler:
        async def checked(request: web.Request) -> web.Response:
            key = request.headers.get("api-key")
            if not request.query.get("api-version") or not key:
                return web.json_response(
                    {"error": {"code": "404", "message": "api-version and api-key required"}},
                    status=404,
                )
            with self._lock:
                self.azure_keys.append(key)
            return await handler(request)

        return checked

    def input_bodies(self) -> list[dict[str, Any]]:
        """The request bodies of every uploaded batch input line."""
        with self._lock:
            return [
                json.loads(line)["body"]
                for fid in self.uploads
                for line in self.files[fid].decode().splitlines()
            ]

    def _new_file(self, data: bytes) -> str:
        with self._lock:
            fid = f"file-{len(self.files) + 1}"
            self.files[fid] = data
        return fid

    async def _upload(self, request: web.Request) -> web.Response:
        form = await request.post()
        field = form.get("file")
        if form.get("purpose") != "batch" or not isinstance(field, web.FileField):
            return web.json_response({"error": {"message": "purpose=batch and a file"}}, status=400)
        data = field.file.read()
        fid = self._new_file(data)
        with self._lock:
            self.uploads.append(fid)
        return web.json_response(
            {
                "id": fid,
                "object": "file",
                "bytes": len(data),
                "created_at": int(time.time()),
                "filename": field.filename,
                "purpose": "batch",
                "status": "processed",
            }
        )

    async def _create(self, request: web.Request) -> web.Response:
        body = await request.json()
        fid = body.get("input_file_id")
        endpoint = "/chat/completions" if request.path.startswith("/openai/") else ENDPOINT
        if fid not in self.files or body.get("endpoint") != endpoint:
            return web.json_response({"error": {"message": "unknown input file"}}, status=400)
        lines = self.files[fid].decode().splitlines()
        if any(json.loads(line).get("url") != endpoint for line in lines):
            message = f"every line's url must be the batch endpoint {endpoint}"
            return web.json_response({"error": {"message": message}}, status=400)
        with self._lock:
            bid = f"batch_{len(self.batches) + 1}"
            self.batches[bid] = {
                "id": bid,
                "object": "batch",
                "endpoint": body["endpoint"],
                "errors": None,
                "input_file_id": fid,
                "completion_window": body.get("completion_window", "24h"),
                "status": "validating",
                "output_file_id": None,
                "error_file_id": None,
                "created_at": int(time.time()),
                "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
                "metadata": body.get("metadata"),
            }
            self.created.append(bid)
            return web.json_response(dict(self.batches[bid]))

    async def _retrieve(self, request: web.Request) -> web.Response:
        bid = request.match_info["id"]
        with self._lock:
            self.retrieved += 1
            batch = self.batches.get(bid)
        if batch is None:
            return web.json_response({"error": {"message": f"no batch {bid}"}}, status=404)
        if batch["status"] in ("validating", "in_progress"):
            if self.mode == "hold":
                batch["status"] = "in_progress"
            else:
                await self._run(batch)
        return web.json_response(dict(batch))

    async def _run(self, batch: dict[str, Any]) -> None:
        mode = self.mode
        now = int(time.time())
        if mode == "fail":
            batch.update(
                status="failed",
                failed_at=now,
                errors={
                    "object": "list",
                    "data": [
                        {
                            "code": "invalid_request",
                            "message": "fake: the batch failed validation",
                            "param": None,
                            "line": 1,
                        }
                    ],
                },
            )
            return
        limit = int(mode.split(":", 1)[1]) if mode.startswith("expire:") else None
        out: list[str] = []
        err: list[str] = []
        for i, line in enumerate(self.files[batch["input_file_id"]].decode().splitlines()):
            req = json.loads(line)
            record: dict[str, Any] = {"id": f"batch_req_{i}", "custom_id": req["custom_id"]}
            if limit is not None and i >= limit:
                record.update(
                    response=None, error={"code": "batch_expired", "message": EXPIRED_MESSAGE}
                )
                err.append(json.dumps(record))
                continue
            status, body = await self._answer(req["body"], {})
            record.update(
                response={"status_code": status, "request_id": f"req_{i}", "body": body},
                error=None,
            )
            (out if status == 200 else err).append(json.dumps(record))
        if self.mangle is not None:
            out = self.mangle(out)
        batch.update(
            status="expired" if limit is not None else "completed",
            output_file_id=self._new_file(("\n".join(out) + "\n").encode()) if out else None,
            error_file_id=self._new_file(("\n".join(err) + "\n").encode()) if err else None,
            request_counts={
                "total": len(out) + len(err),
                "completed": len(out),
                "failed": len(err),
            },
            completed_at=now,
        )

    async def _content(self, request: web.Request) -> web.Response:
        data = self.files.get(request.match_info["id"])
        if data is None:
            return web.json_response({"error": {"message": "no such file"}}, status=404)
        return web.Response(body=data, content_type="application/octet-stream")
