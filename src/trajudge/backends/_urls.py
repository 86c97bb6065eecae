"""Backend URLs: ``phoenix+http://HOST:PORT/PROJECT``, ``otlp+http://HOST:PORT``,
``otlp-file:PATH``.

The scheme before ``+`` names the backend, the rest is the server's own URL; the path after it
names the project (or experiment). Credentials in the URL are used but never shown:
:attr:`BackendURL.shown` is what messages and the store's cursor table name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Self
from urllib.parse import quote, unquote, urlsplit, urlunsplit

from trajudge.backends._retry import send
from trajudge.core import InputError

if TYPE_CHECKING:
    import httpx

#: Seconds a backend server has to answer one request.
TIMEOUT_S = 60.0


@dataclass(frozen=True)
class BackendURL:
    """A parsed backend URL: ``kind`` (``phoenix``, ``otlp``, ...), the server's base URL
    (``base``, credentials kept for the request), the ``name`` after it (project) and the URL
    as shown (``shown``: no credentials)."""

    kind: str
    base: str
    name: str
    shown: str
    username: str | None = None
    password: str | None = None


def is_backend_url(text: str) -> bool:
    """Whether ``text`` is a backend URL (``KIND+http(s)://...``) rather than a file."""
    head, sep, rest = text.partition("+")
    return bool(sep) and head.isalnum() and rest.startswith(("http://", "https://"))


def parse_backend_url(text: str, *, kinds: tuple[str, ...], need_name: bool) -> BackendURL:
    """Split ``KIND+http(s)://[user:pass@]HOST[:PORT][/prefix]/NAME``; ``InputError`` naming
    the URL (without credentials) when it is not one of ``kinds`` or lacks a host or name."""
    kind, _, rest = text.partition("+")
    try:
        parts = urlsplit(rest)
        port = parts.port  # raises for a port that is not a number
    except ValueError as exc:
        raise InputError(_hide(text), reason=f"not a valid URL: {exc}") from None
    host = parts.hostname or ""
    netloc = host if ":" not in host else f"[{host}]"
    if port is not None:
        netloc += f":{port}"
    path = parts.path.rstrip("/")
    prefix, _, name = path.rpartition("/") if need_name else (path, "", "")
    shown = urlunsplit((f"{kind}+{parts.scheme}", netloc, path, "", ""))
    if kind not in kinds:
        raise InputError(shown, reason=f"unknown backend {kind!r} (choose from {', '.join(kinds)})")
    if not host:
        raise InputError(shown, reason="no host in the URL")
    if need_name and not name:
        raise InputError(shown, reason="no project in the URL (…/PROJECT at its end)")
    base = urlunsplit((parts.scheme, netloc, prefix, "", ""))
    return BackendURL(
        kind=kind,
        base=base,
        name=unquote(name),
        shown=shown,
        username=None if parts.username is None else unquote(parts.username),
        password=None if parts.password is None else unquote(parts.password),
    )


def path_part(name: str) -> str:
    """``name`` quoted as one path segment."""
    return quote(name, safe="")


def _hide(text: str) -> str:
    """``text`` with anything between ``//`` and ``@`` (credentials) left out."""
    head, sep, rest = text.partition("//")
    return head + sep + rest.rpartition("@")[2] if sep else text


class BackendClient:
    """One HTTP client for a backend server (use as a context manager): its requests, with a
    server that cannot be reached or that refuses the credentials said in one line naming the
    URL as shown. Subclasses name the server (``SERVER``) and the settings that carry its
    credentials (``REFUSED_HINT``)."""

    SERVER = "backend"
    REFUSED_HINT = ""

    def __init__(
        self,
        url: BackendURL,
        headers: dict[str, str],
        auth: tuple[str, str] | None,
    ) -> None:
        # imported on use: only the backend commands need an HTTP client
        import httpx

        self.url = url
        self._http = httpx.Client(base_url=url.base, headers=headers, auth=auth, timeout=TIMEOUT_S)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.close()

    def _request(
        self, method: str, path: str, *, idempotent: bool | None = None, **kw: Any
    ) -> httpx.Response:
        """The server's answer, tried again while the failure is transient (``_retry``): any
        GET, and a POST the caller says is ``idempotent`` (a search, an upsert); a POST that
        creates something only while the server cannot have acted on it."""
        # imported on use, as in __init__ (its TransportError)
        import httpx

        again = method == "GET" if idempotent is None else idempotent
        try:
            response = send(lambda: self._http.request(method, path, **kw), idempotent=again)
        except httpx.TransportError as exc:
            detail = " ".join(str(exc).split()) or type(exc).__name__
            raise InputError(
                self.url.shown, reason=f"cannot reach the {self.SERVER} server: {detail}"
            ) from None
        if response.status_code in (401, 403):
            raise InputError(
                self.url.shown,
                reason=f"the server refused the request (HTTP {response.status_code}): "
                f"{self.REFUSED_HINT}",
            )
        return response
