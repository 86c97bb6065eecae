"""The Host check in front of the app's server: DNS rebinding closed.

A page on another site can make a browser resolve its own name to this machine (DNS
rebinding) and then talk to the app as a same-origin page: the request carries the foreign
name in its Host header, and a WebSocket upgrade carries it in Host and Origin. The app
therefore answers only requests whose Host, and Origin when there is one, names a host it was
started for (loopback names by default, more with ``trajudge label --allowed-host``); any
other gets 403 before Streamlit sees it, a WebSocket upgrade included.

:class:`HostCheck` is an ASGI middleware; ``_server_app.py`` puts it in front of Streamlit
through ``st.App`` (``streamlit run`` runs that file's app under uvicorn).
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

from trajudge.labeling_app._config import ENV_ALLOWED_HOSTS, LOOPBACK_HOSTS

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_REFUSED = b"This server does not answer to that host name.\n"


def _hostname(host_header: str) -> str | None:
    """The name in a Host header (port and IPv6 brackets removed), lower case."""
    try:
        return urlsplit(f"//{host_header.strip()}").hostname
    except ValueError:
        return None


def host_allowed(host_header: str, allowed: Iterable[str]) -> bool:
    """Whether a Host header names one of the ``allowed`` host names."""
    name = _hostname(host_header)
    return name is not None and name in set(allowed)


def origin_allowed(origin: str, allowed: Iterable[str]) -> bool:
    """Whether an Origin header (``scheme://host[:port]``) names an allowed host."""
    try:
        parts = urlsplit(origin.strip())
        name = parts.hostname
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and name is not None and name in set(allowed)


def allowed_from_env() -> tuple[str, ...]:
    """The allowed host names `trajudge label` passed to the server (loopback by default)."""
    names = [h.strip().lower() for h in os.environ.get(ENV_ALLOWED_HOSTS, "").split(",")]
    return tuple(h for h in names if h) or LOOPBACK_HOSTS


class HostCheck:
    """ASGI middleware: 403 for a request (or WebSocket upgrade) whose Host or Origin names a
    host not allowed."""

    def __init__(self, app: ASGIApp, allowed: Iterable[str] | None = None) -> None:
        self.app = app
        self.allowed = frozenset(allowed_from_env() if allowed is None else allowed)

    def _ok(self, scope: Scope) -> bool:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        if not host_allowed(headers.get("host", ""), self.allowed):
            return False
        origin = headers.get("origin")
        return origin is None or origin_allowed(origin, self.allowed)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or self._ok(scope):
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await receive()  # websocket.connect; closing before accepting answers 403
            await send({"type": "websocket.close", "code": 1008})
            return
        await send(
            {
                "type": "http.response.start",
                "status": 403,
                "headers": [
                    (b"content-type", b"text/plain; charset=utf-8"),
                    (b"content-length", str(len(_REFUSED)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": _REFUSED})
