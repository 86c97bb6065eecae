"""The requests-per-minute limit: :class:`RateLimiter` in one process and the
:class:`Limiter` protocol every limiter keeps.

It is apart from :mod:`trajudge.judges.calls._client` because the engines bring limiters of
their own (one shared by a cluster's workers, one whose permits come from the driver process)
and name the protocol without needing the client.
"""

from __future__ import annotations

import asyncio
import time
from typing import Protocol


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


class Limiter(Protocol):
    """Anything that spaces request starts: :class:`RateLimiter` in one process, or one
    shared by the workers of a cluster (:class:`trajudge.judges.RayEngine`)."""

    async def wait(self) -> None: ...
