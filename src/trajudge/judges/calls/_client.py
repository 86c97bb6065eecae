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
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import random
import time
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlparse

from pydantic import BaseModel

from trajudge.core import canonical_json
from trajudge.judges.calls._cache import CachedResponse, ResponseCache
from trajudge.judges.calls._logprobs import completion_tokens, field_probabilities
from trajudge.rubrics._schema import response_schema
from trajudge.store import install_log_redaction, redact, register_secret

#: litellm settings trajudge sets unless the environment does: litellm fetches some tables at
#: run time (its price table at import; an Anthropic beta-header table on the first Anthropic
#: request; Hugging Face tokenizers), which stalls without a network (5 s per fetch) and makes
#: what is sent depend on a file that can change between two runs. The bundled copies are used.
LITELLM_ENV = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS": "True",
    "LITELLM_OFFLINE_MODE": "true",
}


def use_bundled_litellm_tables() -> None:
    """Set :data:`LITELLM_ENV` where the environment does not (before litellm is imported)."""
    for name, value in LITELLM_ENV.items():
        os.environ.setdefault(name, value)


use_bundled_litellm_tables()

JUDGES_EXTRA_HINT = "pip install 'trajudge[judges]'"

_OPENAI_COMPATIBLE = ("hosted_vllm/", "lm_studio/", "llamafile/", "vllm/", "local/")
_JSON_MODE = ("ollama/", "ollama_chat/")


#: Providers spoken to in OpenAI's format, whose key litellm would otherwise take from
#: OPENAI_API_KEY. Every other provider keeps its own credentials when given an
#: ``api_base`` (AZURE_API_KEY, ANTHROPIC_API_KEY, AWS signatures, Google OAuth, ...): a
#: placeholder key would replace them (Bedrock would even send it as a bearer token).
_PLACEHOLDER_KEY_PROVIDERS = frozenset(
    ("openai", "text-completion-openai", *(p.rstrip("/") for p in _OPENAI_COMPATIBLE + _JSON_MODE))
)


def _takes_placeholder_key(model: str) -> bool:
    provider = model.split("/", 1)[0] if "/" in model else "openai"
    return provider in _PLACEHOLDER_KEY_PROVIDERS


def _import_litellm() -> Any:
    try:
        import litellm
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError(f"LLM judges need litellm and instructor: {JUDGES_EXTRA_HINT}") from exc
    litellm.suppress_debug_info = True
    litellm.drop_params = True
    return litellm


def _import_instructor() -> Any:
    try:
        import instructor
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError(f"LLM judges need litellm and instructor: {JUDGES_EXTRA_HINT}") from exc
    # instructor logs every failed attempt at ERROR; trajudge records failures itself
    logging.getLogger("instructor").setLevel(logging.CRITICAL)
    return instructor


_SCHEMAS: weakref.WeakKeyDictionary[type[BaseModel], tuple[dict[str, Any], str, str]] = (
    weakref.WeakKeyDictionary()
)


def _schema(model: type[BaseModel]) -> tuple[dict[str, Any], str, str]:
    """``model``'s JSON schema, its JSON text in pydantic's order (sent: a server that decodes
    by grammar keeps the properties' order, ``reasoning`` first) and its canonical JSON (the
    cache key), computed once per model (pydantic builds a schema in about 0.4 ms). The dict
    is shared: read it, never change it."""
    known = _SCHEMAS.get(model)
    if known is None:
        schema = response_schema(model)
        known = _SCHEMAS[model] = (schema, json.dumps(schema), canonical_json(schema))
    return known


_KEY_JSON: dict[str, str] = {}  # a dict key's JSON text, made once per key


def _canonical_dict(value: dict[str, Any], known: dict[str, str]) -> str:
    """``canonical_json(value)`` for a flat dict, with the canonical JSON of some values
    given in ``known`` instead of serialised again (the same text, character for character)."""
    parts = []
    for k in sorted(value):
        key = _KEY_JSON.get(k)
        if key is None:
            key = _KEY_JSON[k] = json.dumps(k, ensure_ascii=False)
        parts.append(key + ":" + (known[k] if k in known else canonical_json(value[k])))
    return "{" + ",".join(parts) + "}"


def is_local_base(api_base: str | None) -> bool:
    """Whether ``api_base`` points at this machine (calls to it cost nothing)."""
    if not api_base:
        return False
    host = urlparse(api_base).hostname or ""
    return host in ("127.0.0.1", "localhost", "::1") or host.startswith("127.")


def choose_mode(model: str, api_base: str | None, override: str | None = None) -> str:
    """The instructor mode for a provider (the value of an ``instructor.Mode``).

    - local and OpenAI-compatible servers (an ``api_base``, or vLLM / LM Studio / llamafile
      prefixes): ``json_schema_mode`` -> ``response_format={"type": "json_schema", ...}``,
      which llama.cpp and vLLM enforce by constrained decoding, so output always parses;
    - Ollama: ``json_mode`` (``format=json``);
    - hosted providers (OpenAI, Anthropic, Gemini, Bedrock, Mistral, ...): ``tool_call``,
      which litellm translates into each provider's function calling.
    """
    if override:
        return override
    if model.startswith(_JSON_MODE):
        return "json_mode"
    if api_base or model.startswith(_OPENAI_COMPATIBLE):
        return "json_schema_mode"
    return "tool_call"


class RateLimiter:
    """Space request starts at least ``60 / rpm`` seconds apart (a smooth RPM limit)."""

    def __init__(self, rpm: float) -> None:
        self.interval = 60.0 / rpm
        self._next = 0.0
        self._lock = asyncio.Lock()

    async def wait(self) -> None:
        async with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self.interval
        if start > now:
            await asyncio.sleep(start - now)


@dataclass
class CallResult:
    """The outcome of one request (a cache hit, a parsed verdict, or an error)."""

    verdict: dict[str, Any] | None
    content: str | None
    request_sha256: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None
    latency_s: float | None = None
    cache_hit: bool = False
    error: str | None = None
    attempts: int = 0
    timed_out: bool = False  # the last attempt hit ``timeout``
    truncated: bool = False  # the last attempt's output was cut by ``max_tokens``
    stored: bool = False  # its judgment is already in the store (written by a Ray worker)
    #: ``{field: {value: probability}}`` read from the token log-probabilities (see
    #: :func:`trajudge.judges.calls._logprobs.field_probabilities`); None when there were none
    probs: dict[str, dict[str, float]] | None = None

    @classmethod
    def from_cache(cls, key: str, hit: CachedResponse) -> CallResult:
        """A cache hit: the stored verdict with the original call's usage."""
        return cls(
            hit.verdict,
            hit.content,
            key,
            hit.prompt_tokens,
            hit.completion_tokens,
            hit.cost_usd,
            hit.latency_s,
            cache_hit=True,
            probs=hit.probs,
        )

    def cache_entry(self) -> CachedResponse | None:
        """What the response cache keeps of this result (None: errors are never cached)."""
        if self.error is not None or self.verdict is None or self.cache_hit:
            return None
        return CachedResponse(
            self.verdict,
            self.content or "",
            self.prompt_tokens,
            self.completion_tokens,
            self.cost_usd,
            self.latency_s,
            self.probs,
        )


class IncompleteOutputException(Exception):
    """The model stopped at ``max_tokens`` (``finish_reason == "length"``): a cut verdict.

    Named and worded as instructor's, so a stored error reads the same on either path.
    """


class _Retryable(Exception):
    """A failure worth retrying (the original is its ``__cause__``)."""


class Limiter(Protocol):
    """Anything that spaces request starts: :class:`RateLimiter` in one process, or one
    shared by the workers of a cluster (:class:`trajudge.judges.RayEngine`)."""

    async def wait(self) -> None: ...


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
            "schema": _schema(response_model)[0],
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
        text = _canonical_dict(description, self._fixed_json(response_model))
        return hashlib.sha256(text.encode()).hexdigest()

    def _fixed_json(self, response_model: type[BaseModel]) -> dict[str, str]:
        """The canonical JSON of the parts of :meth:`describe` that every request of this
        client shares (model, endpoint, header names, mode; the schema per verdict model),
        made once and remade only if one of them changes."""
        fixed = self._fixed()
        memo = self._fixed_memo
        if memo is None or memo[0] != fixed:
            memo = self._fixed_memo = (fixed, {k: canonical_json(v) for k, v in fixed.items()})
        return {**memo[1], "schema": _schema(response_model)[2]}

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
            except _Retryable as exc:
                last = exc.__cause__ or exc
            except _Fatal as exc:
                result.error = _one_line(exc.__cause__ or exc, result.attempts)
                return result
        result.error = _one_line(last, result.attempts)
        result.timed_out = last is not None and _is_timeout(last)
        result.truncated = last is not None and _is_truncated(last)
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
        elif self.api_base and _takes_placeholder_key(self.model):
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
        litellm = _import_litellm()
        kwargs = self._request_kwargs(params)
        direct = self.instructor_mode == "json_schema_mode" and not self.via_instructor
        t0 = time.perf_counter()
        try:
            if direct:
                verdict, completion = await self._json_schema_create(
                    litellm, messages, response_model, kwargs
                )
            else:
                instructor = _import_instructor()
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
            if _retryable(root):
                raise _Retryable(str(root)) from root
            raise _Fatal(str(root)) from root
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
        schema_json = _schema(response_model)[1]
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
        result.content = _content(completion)
        usage = getattr(completion, "usage", None)
        result.prompt_tokens = getattr(usage, "prompt_tokens", None)
        result.completion_tokens = getattr(usage, "completion_tokens", None)
        result.cost_usd = cost
        result.probs = _probabilities(type(verdict), completion, result.content)
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


def parse_json_schema(completion: Any, response_model: type[BaseModel]) -> BaseModel:
    """Instructor's JSON_SCHEMA parse: a cut verdict (``finish_reason == "length"``) raises
    :class:`IncompleteOutputException`, anything else is validated with ``response_model``."""
    choices = getattr(completion, "choices", None) or []
    if choices and choices[0].finish_reason == "length":
        raise IncompleteOutputException(
            "The output is incomplete due to a max_tokens length limit."
        )
    text = (choices[0].message.content if choices else None) or ""
    return response_model.model_validate_json(text)


def _probabilities(
    response_model: type[BaseModel], completion: Any, content: str
) -> dict[str, dict[str, float]] | None:
    """The allowed values' probabilities of the verdict's enumerated fields, when the
    completion carries token log-probabilities (see :mod:`trajudge.judges.calls._logprobs`)."""
    tokens = completion_tokens(completion)
    if tokens is None:
        return None
    props = _schema(response_model)[0].get("properties", {})
    enums = {k: v["enum"] for k, v in props.items() if isinstance(v, dict) and "enum" in v}
    return field_probabilities(tokens, content, enums)


class _Fatal(Exception):
    """A failure that retrying cannot fix (bad request, authentication, unknown model)."""


def _content(completion: Any) -> str:
    try:
        message = completion.choices[0].message
    except (AttributeError, IndexError):
        return ""
    if message.content:
        return str(message.content)
    calls = getattr(message, "tool_calls", None) or []
    return str(calls[0].function.arguments) if calls else ""


def _retryable(exc: BaseException) -> bool:
    from pydantic import ValidationError

    retry = (ValidationError, json.JSONDecodeError, asyncio.TimeoutError, IncompleteOutputException)
    if isinstance(exc, retry):
        return True
    name = type(exc).__name__
    if name in (
        "RateLimitError",
        "Timeout",
        "APITimeoutError",
        "APIConnectionError",
        "InternalServerError",
        "ServiceUnavailableError",
        "BadGatewayError",
        "IncompleteOutputException",
        "ResponseParsingError",
        "ValidationError",
    ):
        return True
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and (status == 429 or status >= 500)


def _is_timeout(exc: BaseException) -> bool:
    return isinstance(exc, (asyncio.TimeoutError, TimeoutError)) or type(exc).__name__ in (
        "Timeout",
        "APITimeoutError",
    )


def _is_truncated(exc: BaseException) -> bool:
    return type(exc).__name__ == "IncompleteOutputException"  # ours or instructor's


def _one_line(exc: BaseException | None, attempts: int) -> str:
    """One line for the ``error`` column: redacted first, then cut (a cut key would slip by)."""
    text = redact(" ".join(str(exc).split())) if exc is not None else "unknown error"
    name = type(exc).__name__ if exc is not None else "Error"
    return f"{name} after {attempts} attempt(s): {text[:400]}"
