"""A call's result: :class:`CallResult`, a completion read into one, a failure classified.

Here: what one request came to (:class:`CallResult`: a cache hit, a parsed verdict, or an
error), instructor's JSON-schema parse done without instructor (:func:`parse_json_schema`:
``finish_reason == "length"`` is a cut verdict, :class:`IncompleteOutputException`; anything
else is ``model_validate_json`` of the message content), what a completion says
(:func:`completion_content`, :func:`verdict_probabilities`), and what a failure is: worth a
retry or not (:func:`retryable`), a timeout, a cut verdict, and the one line the ``error``
column keeps (:func:`one_line`).

It is apart from :mod:`trajudge.judges.calls._client` because the engines read results and
failures the client never sent (a provider batch's result lines, a worker process's answer,
a Ray task that raised) and classify them exactly as the client does; most of them need
:class:`CallResult` and not the client.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from trajudge.judges.calls._cache import CachedResponse
from trajudge.judges.calls._logprobs import completion_tokens, field_probabilities
from trajudge.judges.calls._provider import schema_forms
from trajudge.store import redact


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


class RetryableFailure(Exception):
    """A failure worth retrying (the original is its ``__cause__``)."""


class FatalFailure(Exception):
    """A failure that retrying cannot fix (bad request, authentication, unknown model)."""


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


def verdict_probabilities(
    response_model: type[BaseModel], completion: Any, content: str
) -> dict[str, dict[str, float]] | None:
    """The allowed values' probabilities of the verdict's enumerated fields, when the
    completion carries token log-probabilities (see :mod:`trajudge.judges.calls._logprobs`)."""
    tokens = completion_tokens(completion)
    if tokens is None:
        return None
    props = schema_forms(response_model)[0].get("properties", {})
    enums = {k: v["enum"] for k, v in props.items() if isinstance(v, dict) and "enum" in v}
    return field_probabilities(tokens, content, enums)


def completion_content(completion: Any) -> str:
    """The verdict's text: the message content, else the first tool call's arguments."""
    try:
        message = completion.choices[0].message
    except (AttributeError, IndexError):
        return ""
    if message.content:
        return str(message.content)
    calls = getattr(message, "tool_calls", None) or []
    return str(calls[0].function.arguments) if calls else ""


def retryable(exc: BaseException) -> bool:
    """Whether another attempt may succeed: 429, 5xx, timeouts, lost connections,
    unparseable or cut output."""
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


def is_timeout(exc: BaseException) -> bool:
    """Whether ``exc`` is a timeout (asyncio's, the SDK's or litellm's)."""
    return isinstance(exc, (asyncio.TimeoutError, TimeoutError)) or type(exc).__name__ in (
        "Timeout",
        "APITimeoutError",
    )


def is_truncated(exc: BaseException) -> bool:
    """Whether ``exc`` is a verdict cut by ``max_tokens``."""
    return type(exc).__name__ == "IncompleteOutputException"  # ours or instructor's


def one_line(exc: BaseException | None, attempts: int) -> str:
    """One line for the ``error`` column: redacted first, then cut (a cut key would slip by)."""
    text = redact(" ".join(str(exc).split())) if exc is not None else "unknown error"
    name = type(exc).__name__ if exc is not None else "Error"
    return f"{name} after {attempts} attempt(s): {text[:400]}"
