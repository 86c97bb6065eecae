"""A real OpenAI-compatible chat server on loopback, for tests (no mocks of litellm).

It runs an aiohttp app in a background thread. Each request to ``/v1/chat/completions`` takes
the next behaviour from ``server.script`` (then ``server.default``):

- ``"ok"``: a valid verdict for the requested JSON schema (``server.choose`` picks values),
- ``"500"`` / ``"503"`` / ``"429"`` / ``"400"`` / ``"401"``: that HTTP error,
- ``"garbage"``: HTTP 200 with content that is not JSON,
- ``"delay:<seconds>"``: sleep, then answer like ``"ok"``,
- ``"hold:<n>"``: wait until ``n`` requests are in flight at once (60 s at most), then
  answer like ``"ok"``: a test of a concurrency limit waits on that state, not on time;
  ``"hold:<n>:<s>"`` waits ``s`` seconds at most, for a test that shows a bound is never
  passed (``n`` is then never reached and every answer takes ``s``),
- ``"block"``: wait until the test calls ``server.release()`` (or ``reset()``; 120 s at most),
  then answer like ``"ok"``: the request stays in flight for as long as the test needs,
- ``"length"``: HTTP 200 with the verdict cut short and ``finish_reason: "length"`` (the
  output ran into ``max_tokens``),
- ``"401-echo"``: HTTP 401 quoting the credentials it received, as some gateways do
  ("Incorrect API key provided: <the Authorization bearer token>; api-key header: <value>").

A request with ``tools`` (instructor's tool-call mode) is answered with a tool call whose
arguments are the verdict for the first tool's parameters.

A request that asks for ``logprobs`` gets ``choices[0].logprobs.content`` (OpenAI's shape:
``token``, ``logprob``, ``bytes``, ``top_logprobs``) from ``server.logprobs(content)`` when
a test sets it; without it the answer has no log-probabilities, as some providers do.

It records every request body (``server.requests``), its headers (``server.headers``) and the
peak number of requests in flight (``server.max_in_flight``). ``GET /calls`` answers the number
of chat requests so far and the SHA-256 of each one's messages (``?since=N`` from the N-th on),
for a benchmark that runs the server in another process.

``server.batches`` serves OpenAI's batch API (files, batches, output and error files) over the
same answers: see ``fake_batch.py``; ``server.anthropic`` serves Anthropic's Messages and
Message Batches APIs over them: see ``fake_anthropic.py``; ``server.vertex`` serves Vertex AI
(OAuth, Cloud Storage, Gemini, batch prediction jobs) over them: see ``fake_vertex.py``;
``server.bedrock`` serves Bedrock's InvokeModel and batch inference jobs and the S3 they use:
see ``fake_bedrock.py``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from aiohttp import web

if str(Path(__file__).resolve().parent) not in sys.path:  # loaded by path from other folders
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from fake_anthropic import FakeAnthropic
from fake_batch import FakeBatches
from fake_bedrock import FakeBedrock
from fake_vertex import FakeVertex


def _sample(schema: dict[str, Any], defs: dict[str, Any], choose: Callable[[str, list[Any]], Any]):
    if "$ref" in schema:
        return _sample(defs[schema["$ref"].split("/")[-1]], defs, choose)
    if "enum" in schema:
        return choose("enum", schema["enum"])
    if "const" in schema:
        return schema["const"]
    typ = schema.get("type")
    if typ == "object":
        return {
            name: (choose(name, sub["enum"]) if "enum" in sub else _sample(sub, defs, choose))
            for name, sub in schema.get("properties", {}).items()
        }
    if typ == "string":
        return "fake reasoning"
    if typ in ("integer", "number"):
        return 1
    if typ == "boolean":
        return True
    return None


def _token(text: str, p: float, tops: Sequence[tuple[str, float]]) -> dict[str, Any]:
    return {
        "token": text,
        "logprob": math.log(p),
        "bytes": list(text.encode()),
        "top_logprobs": [
            {"token": t, "logprob": math.log(q), "bytes": list(t.encode())} for t, q in tops
        ],
    }


def token_logprobs(
    content: str, fields: dict[str, list[tuple[str, Sequence[tuple[str, float]]]]]
) -> list[dict[str, Any]]:
    """``logprobs.content`` for the verdict text ``content``: one token per character, each
    certain, except right after the colon of each field of ``fields``: its tokens (text,
    alternatives with their probabilities; the token's own probability is its entry)."""
    special: dict[int, list[tuple[str, Sequence[tuple[str, float]]]]] = {}
    for name, tokens in fields.items():
        special[content.index(f'"{name}":') + len(name) + 3] = tokens
    out: list[dict[str, Any]] = []
    i = 0
    while i < len(content):
        if i in special:
            for text, tops in special[i]:
                assert content.startswith(text, i), (content, i, text)
                out.append(_token(text, dict(tops)[text], tops))
                i += len(text)
            continue
        out.append(_token(content[i], 1.0, [(content[i], 1.0)]))
        i += 1
    return out


class FakeLLM:
    def __init__(self) -> None:
        self.script: list[str] = []
        self.default = "ok"
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.choose: Callable[[str, list[Any]], Any] = lambda name, values: values[-1]
        # optional: (user prompt, sampled verdict) -> the verdict to return
        self.decide: Callable[[str, dict[str, Any]], dict[str, Any]] | None = None
        # optional: the verdict text -> ``logprobs.content`` for a request asking for them
        self.logprobs: Callable[[str], list[dict[str, Any]]] | None = None
        # optional: request body -> the behaviour for it (None: the script, then the default),
        # so that a fault hits the same request whatever order the requests come in
        self.action_for: Callable[[dict[str, Any]], str | None] | None = None
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._runner: web.AppRunner | None = None
        self.port = 0
        self._ready = threading.Event()
        self._released = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        #: OpenAI's batch API over the same answers (fake_batch.py)
        self.batches = FakeBatches(self._answer)
        #: Anthropic's Messages and Message Batches APIs over the same answers
        self.anthropic = FakeAnthropic(self._answer)
        #: Vertex AI's Gemini, Cloud Storage, batch jobs and OAuth over the same answers
        self.vertex = FakeVertex(self._answer)
        #: Bedrock's runtime and batch inference, and S3, over the same answers
        self.bedrock = FakeBedrock(self._answer)

    # -- lifecycle ----------------------------------------------------------------------------
    def start(self) -> FakeLLM:
        self._thread.start()
        self._ready.wait(10)
        return self

    def stop(self) -> None:
        async def _cleanup() -> None:
            if self._runner is not None:
                await self._runner.cleanup()

        asyncio.run_coroutine_threadsafe(_cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def calls(self) -> int:
        return len(self.requests)

    def release(self) -> None:
        """Let every ``"block"`` request (now and later) answer."""
        self._released.set()

    def reset(self) -> None:
        self.release()
        deadline = time.monotonic() + 10
        while self.in_flight and time.monotonic() < deadline:  # let earlier requests finish
            time.sleep(0.05)
        with self._lock:
            self.requests.clear()
            self.headers.clear()
            self.script.clear()
            self.default = "ok"
            self.max_in_flight = 0
            self.decide = None
            self.logprobs = None
            self.action_for = None
            self._released.clear()
        self.batches.reset()
        self.anthropic.reset()
        self.vertex.reset()
        self.bedrock.reset()

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat)
        # Azure OpenAI's route for a deployment (litellm's azure/<deployment> models)
        app.router.add_post("/openai/deployments/{deployment}/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/calls", self._calls)
        self.batches.routes(app)
        self.anthropic.routes(app)
        self.vertex.routes(app)
        self.bedrock.routes(app)  # last: its S3 routes match /{bucket}/{key}
        self._runner = web.AppRunner(app)
        self._loop.run_until_complete(self._runner.setup())
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        self._loop.run_until_complete(site.start())
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._ready.set()
        self._loop.run_forever()

    # -- handlers -----------------------------------------------------------------------------
    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "fake", "object": "model"}]})

    async def _calls(self, request: web.Request) -> web.Response:
        since = int(request.query.get("since", "0"))
        with self._lock:
            bodies = self.requests[since:]
            n = len(self.requests)
        digests = [
            hashlib.sha256(json.dumps(b.get("messages"), sort_keys=True).encode()).hexdigest()
            for b in bodies
        ]
        return web.json_response({"calls": n, "messages_sha256": digests})

    def _next(self) -> str:
        with self._lock:
            return self.script.pop(0) if self.script else self.default

    async def _chat(self, request: web.Request) -> web.Response:
        body = await request.json()
        status, payload = await self._answer(body, dict(request.headers))
        return web.json_response(payload, status=status)

    async def _answer(
        self, body: dict[str, Any], headers: dict[str, str]
    ) -> tuple[int, dict[str, Any]]:
        """The (HTTP status, JSON body) of one chat request, by its behaviour (module
        docstring); chat requests and the lines of a batch are answered alike."""
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            chosen = self.action_for(body) if self.action_for is not None else None
            action = chosen if chosen is not None else self._next()
            if action.startswith("hold:"):
                _, wanted, *most = action.split(":")
                deadline = time.monotonic() + (float(most[0]) if most else 60)
                while self.max_in_flight < int(wanted):
                    if time.monotonic() > deadline:
                        break
                    await asyncio.sleep(0.02)
                action = "ok"
            if action == "block":
                deadline = time.monotonic() + 120
                while not self._released.is_set() and time.monotonic() < deadline:
                    await asyncio.sleep(0.02)
                action = "ok"
            if action.startswith("delay:"):
                await asyncio.sleep(float(action.split(":", 1)[1]))
                action = "ok"
            if action == "401-echo":
                token = headers.get("Authorization", "").removeprefix("Bearer ")
                header = headers.get("api-key", "")
                return 401, {
                    "error": {
                        "message": f"Incorrect API key provided: {token}; api-key header: "
                        f"{header}. You can find your API key in your dashboard.",
                        "type": "invalid_request_error",
                        "code": "invalid_api_key",
                    }
                }
            if action.isdigit():
                code = int(action)
                return code, {
                    "error": {"message": f"fake error {code}", "type": "fake", "code": code}
                }
            finish = "stop"
            if body.get("tools"):
                return 200, self._tool_call(body)
            if action == "garbage":
                content = "this is not JSON {"
            elif action == "length":
                content, finish = json.dumps(self._verdict(body))[:20], "length"
            else:
                content = json.dumps(self._verdict(body))
            choice: dict[str, Any] = {
                "index": 0,
                "finish_reason": finish,
                "message": {"role": "assistant", "content": content},
            }
            if body.get("logprobs") and self.logprobs is not None:
                choice["logprobs"] = {"content": self.logprobs(content)}
            return 200, {
                "id": f"fake-{time.time_ns()}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "fake"),
                "choices": [choice],
                "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
            }
        finally:
            with self._lock:
                self.in_flight -= 1

    def _tool_call(self, body: dict[str, Any]) -> dict[str, Any]:
        function = body["tools"][0]["function"]
        arguments = self._verdict(body, function.get("parameters") or {})
        call = {
            "id": "call-fake",
            "type": "function",
            "function": {"name": function["name"], "arguments": json.dumps(arguments)},
        }
        return {
            "id": f"fake-{time.time_ns()}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "fake"),
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "message": {"role": "assistant", "content": None, "tool_calls": [call]},
                }
            ],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
        }

    def _verdict(self, body: dict[str, Any], schema: dict[str, Any] | None = None) -> Any:
        if schema is None:
            fmt = body.get("response_format") or {}
            schema = (fmt.get("json_schema") or {}).get("schema") or fmt.get("schema") or {}
        verdict = _sample(schema, schema.get("$defs", {}), self.choose)
        if self.decide is not None:
            user = "".join(
                m.get("content") or "" for m in body.get("messages", []) if m.get("role") == "user"
            )
            verdict = self.decide(user, verdict)
        return verdict
