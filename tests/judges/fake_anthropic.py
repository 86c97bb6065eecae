"""Anthropic's Messages and Message Batches APIs on the fake server (:mod:`fake_llm`).

Routes, in Anthropic's formats (https://docs.anthropic.com/en/api/messages,
https://docs.anthropic.com/en/api/creating-message-batches), each requiring an
``anthropic-version`` header and the key, as ``x-api-key`` (litellm sends it so) or as
``Authorization: Bearer`` (the anthropic SDK 2.x sends it so):

- ``POST /v1/messages``: one message. The request is answered by the chat server's own logic
  (``FakeLLM._answer``: its script, ``action_for``, ``decide``, ``choose``) over the same
  request in chat form (system and user text, the schema of the forced ``json_tool_call``
  tool or of ``output_format`` as ``response_format``); its answer comes back as Anthropic's
  message: the verdict as that tool's ``input`` (``stop_reason`` ``tool_use``) or as JSON
  text, a cut one as text with ``stop_reason`` ``max_tokens``, an HTTP error as
  ``{"type": "error", "error": {"type", "message"}}`` with the error type of its status;
- ``POST /v1/messages/batches`` (``{"requests": [{"custom_id", "params"}]}``): a batch,
  ``processing_status`` ``in_progress``;
- ``GET /v1/messages/batches/{id}``: the batch; one that is not held is run at this request
  (every request as ``POST /v1/messages`` would answer it) and ``ended``, with its
  ``results_url``;
- ``GET /v1/messages/batches/{id}/results``: JSONL, one ``{"custom_id", "result"}`` per
  request: ``succeeded`` with the ``message``, ``errored`` with the error body, or
  ``expired``.

``mode``: ``"complete"``, ``"hold"`` (stays ``in_progress`` until the test sets another
mode) or ``"expire:N"`` (the first N requests run, the others expire). ``created`` lists the
batches created, ``keys`` the keys received, ``betas`` the
``anthropic-beta`` header of each batch creation.

``mangle``, when a test sets it, rewrites the result file's lines (JSON texts) before they are
served, as a provider that writes a broken, odd or contradictory line would.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

Answer = Callable[[dict[str, Any], dict[str, str]], Awaitable[tuple[int, dict[str, Any]]]]
Handler = Callable[[web.Request], Awaitable[web.Response]]
TOOL = "json_tool_call"
# Anthropic's error type for each HTTP status (https://docs.anthropic.com/en/api/errors)
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content or [] if b.get("type") == "text")


def as_chat(params: dict[str, Any]) -> dict[str, Any]:
    """The Messages request ``params`` as the chat request the fake's logic answers."""
    messages = (
        [{"role": "system", "content": _text(params["system"])}] if "system" in params else []
    )
    messages += [{"role": m["role"], "content": _text(m["content"])} for m in params["messages"]]
    tools = params.get("tools") or []
    schema = next((t["input_schema"] for t in tools if t.get("name") == TOOL), None)
    if schema is None:  # structured outputs: ``output_format``, or ``output_config.format``
        fmt = params.get("output_format") or (params.get("output_config") or {}).get("format")
        schema = (fmt or {}).get("schema") or {}
    chat = {k: params[k] for k in ("model", "max_tokens", "temperature") if k in params}
    return {
        **chat,
        "messages": messages,
        "response_format": {"type": "json_schema", "json_schema": {"schema": schema}},
    }


def as_message(params: dict[str, Any], status: int, payload: dict[str, Any]) -> dict[str, Any]:
    """The fake's chat answer (``status``, ``payload``) as Anthropic's answer to ``params``."""
    if status != 200:
        message = (payload.get("error") or {}).get("message", "error")
        kind = ERROR_TYPES.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}
    choice = payload["choices"][0]
    content = choice["message"]["content"]
    usage = payload["usage"]
    tool = any(t.get("name") == TOOL for t in params.get("tools") or [])
    if choice["finish_reason"] == "length":
        block: dict[str, Any] = {"type": "text", "text": content}
        stop = "max_tokens"
    else:
        try:
            verdict = json.loads(content)
        except ValueError:
            verdict = None
        if tool and verdict is not None:
            block = {"type": "tool_use", "id": "toolu_fake", "name": TOOL, "input": verdict}
            stop = "tool_use"
        else:
            block, stop = {"type": "text", "text": content}, "end_turn"
    return {
        "id": f"msg_fake{time.time_ns()}",
        "type": "message",
        "role": "assistant",
        "model": params.get("model", "fake"),
        "content": [block],
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {
            "input_tokens": usage["prompt_tokens"],
            "output_tokens": usage["completion_tokens"],
        },
    }


class FakeAnthropic:
    def __init__(self, answer: Answer) -> None:
        self._answer = answer
        self._lock = threading.Lock()
        self.batches: dict[str, dict[str, Any]] = {}
        self.requests: dict[str, list[dict[str, Any]]] = {}
        self.results: dict[str, list[str]] = {}
        self.created: list[str] = []
        self.keys: list[str] = []
        self.betas: list[str | None] = []
        self.mode = "complete"
        self.mangle: Callable[[list[str]], list[str]] | None = None

    def reset(self) -> None:
        with self._lock:
            for store in (self.batches, self.requests, self.results):
                store.clear()
            self.created.clear()
            self.keys.clear()
            self.betas.clear()
            self.mode = "complete"
            self.mangle = None

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/messages", self._checked(self._message))
        app.router.add_post("/v1/messages/batches", self._checked(self._create))
        app.router.add_get("/v1/messages/batches/{id}", self._checked(self._retrieve))
        app.router.add_get("/v1/messages/batches/{id}/results", self._checked(self._results))

    def input_params(self) -> list[dict[str, Any]]:
        """The ``params`` of every batch request received."""
        with self._lock:
            return [r["params"] for bid in self.created for r in self.requests[bid]]

    def _checked(self, handler: Handler) -> Handler:
        async def checked(request: web.Request) -> web.Response:
            bearer = request.headers.get("Authorization", "").removeprefix("Bearer ")
            key = request.headers.get("x-api-key") or bearer
            if not key or not request.headers.get("anthropic-version"):
                error = {"type": "authentication_error", "message": "x-api-key required"}
                return web.json_response({"type": "error", "error": error}, status=401)
            with self._lock:
                self.keys.append(key)
            return await handler(request)

        return checked

    async def _reply(self, params: dict[str, Any], headers: dict[str, str]) -> tuple[int, Any]:
        status, payload = await self._answer(as_chat(params), headers)
        return status, as_message(params, status, payload)

    async def _message(self, request: web.Request) -> web.Response:
        params = await request.json()
        status, body = await self._reply(params, dict(request.headers))
        return web.json_response(body, status=status)

    def _batch(self, bid: str, now: str) -> dict[str, Any]:
        n = len(self.requests[bid])
        return {
            "id": bid,
            "type": "message_batch",
            "processing_status": "in_progress",
            "request_counts": {
                "processing": n,
                "succeeded": 0,
                "errored": 0,
                "canceled": 0,
                "expired": 0,
            },
            "ended_at": None,
            "created_at": now,
            "expires_at": now,
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": None,
        }

    async def _create(self, request: web.Request) -> web.Response:
        body = await request.json()
        requests = body.get("requests") or []
        ids = [r.get("custom_id", "") for r in requests]
        if not requests or len(set(ids)) != len(ids) or not all(map(CUSTOM_ID.match, ids)):
            error = {"type": "invalid_request_error", "message": "unique custom_id required"}
            return web.json_response({"type": "error", "error": error}, status=400)
        with self._lock:
            bid = f"msgbatch_{len(self.batches) + 1:02d}"
            self.requests[bid] = requests
            self.batches[bid] = self._batch(bid, "2026-01-01T00:00:00Z")
            self.created.append(bid)
            self.betas.append(request.headers.get("anthropic-beta"))
            return web.json_response(dict(self.batches[bid]))

    async def _retrieve(self, request: web.Request) -> web.Response:
        bid = request.match_info["id"]
        batch = self.batches.get(bid)
        if batch is None:
            error = {"type": "not_found_error", "message": f"no batch {bid}"}
            return web.json_response({"type": "error", "error": error}, status=404)
        if batch["processing_status"] == "in_progress" and self.mode != "hold":
            await self._run(bid, batch, request)
        return web.json_response(dict(batch))

    async def _run(self, bid: str, batch: dict[str, Any], request: web.Request) -> None:
        limit = int(self.mode.split(":", 1)[1]) if self.mode.startswith("expire:") else None
        counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        lines: list[str] = []
        for i, req in enumerate(self.requests[bid]):
            if limit is not None and i >= limit:
                result: dict[str, Any] = {"type": "expired"}
            else:
                status, body = await self._reply(req["params"], {})
                result = (
                    {"type": "succeeded", "message": body}
                    if status == 200
                    else {"type": "errored", "error": body}
                )
            counts[result["type"]] += 1
            lines.append(json.dumps({"custom_id": req["custom_id"], "result": result}))
        self.results[bid] = self.mangle(lines) if self.mangle is not None else lines
        base = f"{request.scheme}://{request.host}"
        batch.update(
            processing_status="ended",
            request_counts=counts,
            ended_at="2026-01-01T00:00:01Z",
            results_url=f"{base}/v1/messages/batches/{bid}/results",
        )

    async def _results(self, request: web.Request) -> web.Response:
        lines = self.results.get(request.match_info["id"])
        if lines is None:
            error = {"type": "not_found_error", "message": "the batch has not ended"}
            return web.json_response({"type": "error", "error": error}, status=404)
        return web.Response(body="\n".join(lines) + "\n", content_type="application/binary")
