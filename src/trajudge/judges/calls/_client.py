"""The LLM client: litellm + instructor behind one small async interface.

One call = one judgment request. Around it: the response cache, a concurrency limit
(``asyncio.Semaphore``), a requests-per-minute limit, and retries with exponential backoff
and jitter on 429, 5xx, timeouts, connection errors and unparseable output. After the last
retry the call returns a result with ``error`` set: it is recorded as an error, never as a
pass or a fail. Tokens, cost and latency are measured per call.

The pieces are separate so that a batch runner can look the cache up in bulk:
:meth:`LLMClient.request_key` (the cache key), :meth:`LLMClient.call` (the model, with limits
and retries, never the cache) and :meth:`CallResult.cache_entry` (what to cache);
:meth:`LLMClient.complete` chains them for one request.

Validation: every verdict is validated with the rubric's pydantic verdict model. In
``json_schema_mode`` (local and OpenAI-compatible servers) the client sends litellm the very
request instructor would (``response_format`` = ``{"type": "json_schema", "json_schema":
{"name": <model name>, "schema": <model JSON schema>}}``) and parses the answer as instructor's
JSON-schema handler does (``finish_reason == "length"`` is a cut verdict; otherwise
``model_validate_json`` of the message content), without instructor's per-call machinery
(patching, hooks, its retry wrapper), which cost about 45% of a bare litellm call
(``benchmarks/judge_batch.py``). Every other mode (``tool_call`` for hosted providers,
``json_mode`` for Ollama, any override) goes through instructor, which knows each provider's
function calling.

litellm's and the OpenAI SDK's own retries are switched off (``num_retries=0``,
``max_retries=0`` on the SDK client) so that every attempt is counted here, once.

Secrets: the client reads the API key and the ``extra_headers`` values from the environment
variables the judge names, registers each value with :func:`trajudge.store.register_secret`
and redacts every error it builds (:func:`trajudge.store.redact`); log records of the whole
process are redacted too (:func:`trajudge.store.install_log_redaction`).

Beside it: :mod:`~trajudge.judges.calls._provider` (litellm's environment and import, the
mode per provider, the schema as sent) and :mod:`~trajudge.judges.calls._result`
(:class:`CallResult`, the parse, what a failure is), which the engines use without a client;
:mod:`~trajudge.judges.calls._limits` (the RPM limit).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import random
import time
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from trajudge.core import canonical_json
from trajudge.judges.calls._cache import ResponseCache
from trajudge.judges.calls._limits import Limiter, RateLimiter
from trajudge.judges.calls._provider import (
    canonical_dict,
    choose_mode,
    import_instructor,
    import_litellm,
    is_local_base,
    schema_forms,
    takes_placeholder_key,
)
from trajudge.judges.calls._result import (
    CallResult,
    FatalFailure,
    RetryableFailure,
    completion_content,
    is_timeout,
    is_truncated,
    one_line,
    parse_json_schema,
    retryable,
    verdict_probabilities,
)
from trajudge.store import install_log_redaction, register_secret


@dataclass
class _LoopState:
    semaphore: asyncio.Semaphore
    limiter: Limiter | None


@dataclass
class LLMClient:
    """Calls one model through litellm + instructor, with cache, limits and retries.

    ``model`` is a litellm model string; ``api_key_env`` names an environment variable that
    holds the key, and ``extra_headers`` maps HTTP header names to environment variables that
    hold their values (a gateway's ``api-key`` or ``x-api-key``); no value is ever stored, and
    every value is redacted from errors and logs. ``endpoint`` is what identifies the server in
    cache keys when ``api_base`` does not (the embedded model's port changes every run).
    ``via_instructor`` sends ``json_schema_mode`` requests through instructor too (the same
    request and verdict, at instructor's per-call cost; see the module docstring).
    """

    model: str
    api_base: str | None = None
    api_key_env: str | None = None
    timeout: float = 120.0
    concurrency: int = 4
    rpm: float | None = None
    max_retries: int = 4
    backoff_s: float = 1.0
    backoff_max_s: float = 30.0
    mode: str | None = None
    cache: ResponseCache | None = None
    extra_headers: dict[str, str] = field(default_factory=dict)
    endpoint: str | None = None
    via_instructor: bool = False
    #: spaces request starts instead of a limiter of ``rpm`` in this process (shared by the
    #: workers of a cluster); must work from any event loop
    limiter: Limiter | None = None
    #: litellm arguments sent with every call and not hashed into cache keys (where a model
    #: runs: ``vertex_project``, ``vertex_location``)
    provider_params: dict[str, str] = field(default_factory=dict)
    _states: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopState] = field(
        default_factory=weakref.WeakKeyDictionary, repr=False
    )
    _fixed_memo: tuple[dict[str, Any], dict[str, str]] | None = field(
        default=None, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        install_log_redaction()
        self._secrets()

    def _secrets(self) -> tuple[str | None, dict[str, str]]:
        """The API key and header values from the environment, each registered as a secret."""
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        register_secret(key, self.api_key_env or "")
        headers = {}
        for header, env in self.extra_headers.items():
            value = os.environ.get(env, "")
            register_secret(value, env)
            headers[header] = value
        return key, headers

    @property
    def instructor_mode(self) -> str:
        return choose_mode(self.model, self.api_base, self.mode)

    @property
    def is_local(self) -> bool:
        return is_local_base(self.api_base)

    def _state(self) -> _LoopState:
        # asyncio primitives belong to one event loop; the sync wrapper makes a new loop per
        # call, so the semaphore and limiter are created per loop.
        loop = asyncio.get_running_loop()
        state = self._states.get(loop)
        if state is None:
            limiter = self.limiter or (RateLimiter(self.rpm) if self.rpm else None)
            state = _LoopState(asyncio.Semaphore(max(1, self.concurrency)), limiter)
            self._states[loop] = state
        return state

    def describe(
        self,
        messages: list[dict[str, str]],
        response_model: type[BaseModel],
        params: dict[str, Any],
        extra: dict[str, Any],
    ) -> dict[str, Any]:
        """The full request description that the cache key hashes (never a secret value)."""
        return {
            **self._fixed(),
            "messages": messages,
            "params": params,
            "schema": schema_forms(response_model)[0],
            **extra,
        }

    def _fixed(self) -> dict[str, Any]:
        """The parts of :meth:`describe` that every request of this client shares."""
        return {
            "model": self.model,
            "api_base": self.endpoint or self.api_base,
            "headers": sorted(self.extra_headers),
            "mode": self.instructor_mode,
        }

    def request_key(
        self,
        messages: list[dict[str, str]],
        response_model: type[BaseModel],
        params: dict[str, Any],
        extra: dict[str, Any],
    ) -> str:
        """The cache key of a request: SHA-256 of :meth:`describe` (its canonical JSON), with
        the response schema's JSON made once per verdict model."""
        description = self.describe(messages, response_model, params, extra)
        text = canonical_dict(description, self._fixed_json(response_model))
        return hashlib.sha256(text.encode()).hexdigest()

    def _fixed_json(self, response_model: type[BaseModel]) -> dict[str, str]:
        """The canonical JSON of the parts of :meth:`describe` that every request of this
        client shares (model, endpoint, header names, mode; the schema per verdict model),
        made once and remade only if one of them changes."""
        fixed = self._fixed()
        memo = self._fixed_memo
        if memo is None or memo[0] != fixed:
            memo = self._fixed_memo = (fixed, {k: canonical_json(v) for k, v in fixed.items()})
        return {**memo[1], "schema": schema_forms(response_model)[2]}

    async def complete(
        self,
        messages: list[dict[str, str]],
        response_model: type[BaseModel],
        params: dict[str, Any],
        extra: dict[str, Any],
    ) -> CallResult:
        """Get a verdict for ``messages``: from the cache, or from the model with retries.

        ``params`` are sampling parameters sent to the model (temperature, max_tokens, ...);
        ``extra`` is hashed into the cache key but not sent (rubric version, sample index).
        """
        key = self.request_key(messages, response_model, params, extra)
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                return CallResult.from_cache(key, hit)
        result = await self.call(key, messages, response_model, params)
        entry = result.cache_entry()
        if entry is not None and self.cache is not None:
            self.cache.put(key, self.model, entry)
        return result

    async def call(
        self,
        key: str,
        messages: list[dict[str, str]],
        response_model: type[BaseModel],
        params: dict[str, Any],
    ) -> CallResult:
        """Ask the model (never the cache) under the concurrency and rate limits, with retries.

        ``key`` is the request's cache key, carried on the result. Never raises for an LLM
        failure: after the last retry the result has ``error`` set.
        """
        state = self._state()
        result = CallResult(None, None, key)
        last: BaseException | None = None
        for attempt in range(1, self.max_retries + 2):
            if attempt > 1:
                await asyncio.sleep(self._backoff(attempt - 1))
            result.attempts = attempt
            try:
                async with state.semaphore:
                    if state.limiter is not None:
                        await state.limiter.wait()
                    await self._attempt(messages, response_model, params, result)
                return result
            except RetryableFailure as exc:
                last = exc.__cause__ or exc
            except FatalFailure as exc:
                result.error = one_line(exc.__cause__ or exc, result.attempts)
                return result
        result.error = one_line(last, result.attempts)
        result.timed_out = last is not None and is_timeout(last)
        result.truncated = last is not None and is_truncated(last)
        return result

    def _backoff(self, retry: int) -> float:
        """Seconds before retry number ``retry`` (1 = the second attempt): ``backoff_s`` doubled
        per retry, plus up to ``backoff_s`` of random jitter (so that workers that failed
        together do not retry together), at most ``backoff_max_s``."""
        wait = self.backoff_s * 2 ** (retry - 1) + random.uniform(0, self.backoff_s)
        return float(min(self.backoff_max_s, wait))

    def _request_kwargs(self, params: dict[str, Any]) -> dict[str, Any]:
        kwargs: dict[str, Any] = {**params, **self.provider_params}
        key, headers = self._secrets()
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self.api_key_env:
            kwargs["api_key"] = key or ""
        elif self.api_base and takes_placeholder_key(self.model):
            # an OpenAI-compatible server that may want no key: a placeholder, so that the
            # SDK neither refuses nor sends OPENAI_API_KEY to a server that is not OpenAI's
            kwargs["api_key"] = "sk-no-key-needed"
        if headers:
            kwargs["extra_headers"] = headers
        return kwargs

    async def _attempt(
        self,
        messages: list[dict[str, str]],
        response_model: type[BaseModel],
        params: dict[str, Any],
        result: CallResult,
    ) -> None:
        litellm = import_litellm()
        kwargs = self._request_kwargs(params)
        direct = self.instructor_mode == "json_schema_mode" and not self.via_instructor
        t0 = time.perf_counter()
        try:
            if direct:
                verdict, completion = await self._json_schema_create(
                    litellm, messages, response_model, kwargs
                )
            else:
                instructor = import_instructor()
                mode = instructor.Mode(self.instructor_mode)
                client = instructor.from_litellm(litellm.acompletion, mode=mode)
                verdict, completion = await client.chat.completions.create_with_completion(
                    model=self.model,
                    messages=messages,
                    response_model=response_model,
                    max_retries=0,  # instructor: one attempt; retries happen here
                    num_retries=0,  # litellm, and the OpenAI SDK client it builds
                    timeout=self.timeout,
                    **kwargs,
                )
        except Exception as exc:
            result.latency_s = time.perf_counter() - t0
            # instructor wraps the failure (its cause is the original); the direct path not
            root = exc if direct or exc.__cause__ is None else exc.__cause__
            if retryable(root):
                raise RetryableFailure(str(root)) from root
            raise FatalFailure(str(root)) from root
        result.latency_s = time.perf_counter() - t0
        self.fill(result, verdict, completion, self._cost(litellm, completion))

    async def _json_schema_create(
        self,
        litellm: Any,
        messages: list[dict[str, str]],
        response_model: type[BaseModel],
        kwargs: dict[str, Any],
    ) -> tuple[BaseModel, Any]:
        """Instructor's JSON_SCHEMA request and parse, without instructor (module docstring)."""
        completion = await litellm.acompletion(
            **self.json_schema_request(messages, response_model, kwargs)
        )
        return parse_json_schema(completion, response_model), completion

    def json_schema_request(
        self,
        messages: list[dict[str, str]],
        response_model: type[BaseModel],
        kwargs: dict[str, Any],
    ) -> dict[str, Any]:
        """The ``litellm.acompletion`` arguments of a ``json_schema_mode`` request (the batch
        engine turns the same arguments into its request bodies)."""
        schema_json = schema_forms(response_model)[1]
        return dict(
            model=self.model,
            messages=messages,
            num_retries=0,  # litellm, and the OpenAI SDK client it builds
            timeout=self.timeout,
            **kwargs,
            response_format={
                "type": "json_schema",
                # a fresh copy per request: litellm may adapt a schema in place per provider
                "json_schema": {"name": response_model.__name__, "schema": json.loads(schema_json)},
            },
        )

    def fill(
        self,
        result: CallResult,
        verdict: BaseModel,
        completion: Any,
        cost: float | None,
    ) -> None:
        """Record a parsed verdict and its completion's usage on ``result``."""
        result.verdict = verdict.model_dump(mode="json")
        result.content = completion_content(completion)
        usage = getattr(completion, "usage", None)
        result.prompt_tokens = getattr(usage, "prompt_tokens", None)
        result.completion_tokens = getattr(usage, "completion_tokens", None)
        result.cost_usd = cost
        result.probs = verdict_probabilities(type(verdict), completion, result.content)
        result.error = None

    def _cost(self, litellm: Any, completion: Any) -> float | None:
        """The call's cost in USD: 0 on this machine; else the cost litellm stamped on the
        response (``response_cost``, None when its price table does not know the model), so
        the price table is not walked a second time per call (0.2 ms for a known model, 0.5-0.7
        ms for an unknown one, e.g. a self-hosted server on another host); a response without
        the stamp is priced here."""
        if self.is_local:
            return 0.0
        hidden = getattr(completion, "_hidden_params", None)
        if isinstance(hidden, Mapping) and "response_cost" in hidden:
            stamped = hidden["response_cost"]
            return None if stamped is None else float(stamped)
        try:
            return float(litellm.completion_cost(completion_response=completion, model=self.model))
        except Exception:  # the price table does not know this model
            return None
