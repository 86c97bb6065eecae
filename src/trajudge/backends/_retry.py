"""Requests to a backend server or collector, tried again while the failure is transient.

A request answered 429, 502, 503 or 504, or lost on the way, is tried again after the server's
``Retry-After`` (seconds; capped) or else a growing wait with jitter, ``ATTEMPTS`` in all; the
last answer (or the lost connection) is then the caller's to report. That is what the OTLP
specification asks of an exporter, and what a server behind a busy proxy needs.

A request that is not idempotent (it creates something: an MLflow assessment or run) is tried
again only when the server cannot have acted on it: the connection was never made, or the
answer was 429 / 503 (the server refused it unprocessed). After a 502, a 504 or a connection
lost mid-answer it may have been applied, and a second one would write it twice.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx

ATTEMPTS = 5
BACKOFF_S = 0.5  # the first wait; doubled per attempt, plus up to as much again of jitter
MAX_WAIT_S = 30.0
TRANSIENT = frozenset({429, 502, 503, 504})
UNPROCESSED = frozenset({429, 503})


def send(call: Callable[[], httpx.Response], *, idempotent: bool) -> httpx.Response:
    """``call()``'s answer once it is not a transient failure (or after ``ATTEMPTS``); the
    last :class:`httpx.TransportError` is raised when every attempt was lost."""
    # imported on use: only the backend commands need an HTTP client
    import httpx

    retried = TRANSIENT if idempotent else UNPROCESSED
    for attempt in range(1, ATTEMPTS + 1):
        try:
            response = call()
        except httpx.TransportError as exc:
            if attempt == ATTEMPTS or not (idempotent or isinstance(exc, httpx.ConnectError)):
                raise
            wait = backoff(attempt)
        else:
            if response.status_code not in retried or attempt == ATTEMPTS:
                return response
            wait = retry_after(response.headers.get("Retry-After"), attempt)
        time.sleep(wait)
    raise AssertionError("unreachable: the last attempt returns or raises")


def backoff(attempt: int) -> float:
    """Seconds to wait after failed attempt ``attempt`` (1 = the first)."""
    wait = BACKOFF_S * 2 ** (attempt - 1)
    return float(min(MAX_WAIT_S, wait + random.uniform(0, wait)))


def retry_after(value: str | None, attempt: int) -> float:
    """The server's ``Retry-After`` in seconds, capped; else :func:`backoff` (an HTTP date is
    not trusted to agree with this machine's clock)."""
    if value is None:
        return backoff(attempt)
    try:
        return min(MAX_WAIT_S, max(0.0, float(value)))
    except ValueError:
        return backoff(attempt)
