"""A Phoenix server over its REST API (httpx; trajudge needs no Phoenix package).

Spans: ``GET /v1/projects/{name}/spans`` in insertion order (``sort=id&order=asc``), a page
at a time, the ``next_cursor`` of one page being the first span of the next; span
annotations: ``POST /v1/span_annotations?sync=true`` and ``GET
/v1/projects/{name}/span_annotations``. ``PHOENIX_API_KEY`` in the environment, when set, is
sent as a bearer token (never shown). Every failure is one :class:`InputError` naming the URL
as shown (no credentials).
"""

from __future__ import annotations

import base64
import os
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from trajudge.backends._urls import BackendClient, BackendURL, path_part
from trajudge.core import InputError

if TYPE_CHECKING:
    import httpx

PAGE = 1000  # spans per page: Phoenix's largest


def span_cursor(rowid: int) -> str:
    """Phoenix's cursor for the span stored ``rowid``-th (its Relay global id, ``Span:N``)."""
    return base64.b64encode(f"Span:{rowid}".encode()).decode()


def span_rowid(global_id: str) -> int:
    """The row id in a span's global id (its ``id`` field, or a cursor)."""
    try:
        kind, _, n = base64.b64decode(global_id).decode().partition(":")
        if kind != "Span":
            raise ValueError(kind)
        return int(n)
    except (ValueError, UnicodeDecodeError):
        raise ValueError(f"not a Phoenix span id: {global_id!r}") from None


class PhoenixClient(BackendClient):
    """One Phoenix server and project; use as a context manager."""

    SERVER = "Phoenix"
    REFUSED_HINT = "set PHOENIX_API_KEY"

    def __init__(self, url: BackendURL) -> None:
        headers = {}
        key = os.environ.get("PHOENIX_API_KEY")
        if key:
            headers["Authorization"] = f"Bearer {key}"
        auth = (url.username, url.password or "") if url.username else None
        super().__init__(url, headers, auth)

    def _json(self, response: httpx.Response, what: str) -> Any:
        if response.status_code != 200:
            raise InputError(
                self.url.shown,
                reason=f"{what}: HTTP {response.status_code} {_detail(response)}".rstrip(),
            )
        try:
            return response.json()
        except ValueError:
            raise InputError(
                self.url.shown, reason=f"not a Phoenix server ({what}: the answer is not JSON)"
            ) from None

    def projects(self) -> list[str]:
        """The names of the server's projects."""
        names: list[str] = []
        cursor = None
        while True:
            params = {"limit": 100, **({"cursor": cursor} if cursor else {})}
            response = self._request("GET", "/v1/projects", params=params)
            if response.status_code == 404:
                raise InputError(
                    self.url.shown,
                    reason="not a Phoenix server (GET /v1/projects answered 404)",
                )
            body = self._json(response, "listing the projects")
            names += [str(p.get("name")) for p in _data(body, self.url.shown)]
            cursor = body.get("next_cursor")
            if not cursor:
                return names

    def check_project(self) -> None:
        """Refuse a project the server does not have, naming the ones it has."""
        response = self._request("GET", f"/v1/projects/{path_part(self.url.name)}")
        if response.status_code == 200:
            # Phoenix answers any other path with its web page: a wrong prefix is told here
            body = self._json(response, f"project {self.url.name!r}")
            if not isinstance(body, dict) or not isinstance(body.get("data"), dict):
                raise InputError(self.url.shown, reason="not a Phoenix server (no project data)")
            return
        names = self.projects()  # also tells a server that is not Phoenix
        if response.status_code == 404:
            have = ", ".join(sorted(names)) or "none"
            raise InputError(
                self.url.shown, reason=f"no project {self.url.name!r} (projects: {have})"
            )
        self._json(response, f"project {self.url.name!r}")

    def span_page(
        self,
        cursor: str | None,
        *,
        limit: int = PAGE,
        start_time: str | None = None,
        end_time: str | None = None,
        trace_ids: Sequence[str] = (),
    ) -> tuple[list[dict[str, Any]], str | None]:
        """One page of the project's spans in insertion order from ``cursor`` (inclusive),
        and the cursor of the next page (None: the last page)."""
        params: list[tuple[str, str | int]] = [("sort", "id"), ("order", "asc"), ("limit", limit)]
        if cursor:
            params.append(("cursor", cursor))
        if start_time:
            params.append(("start_time", start_time))
        if end_time:
            params.append(("end_time", end_time))
        params += [("trace_id", t) for t in trace_ids]
        path = f"/v1/projects/{path_part(self.url.name)}/spans"
        body = self._json(self._request("GET", path, params=params), "reading spans")
        return _data(body, self.url.shown), body.get("next_cursor")

    def trace_spans(self, trace_ids: Sequence[str]) -> Iterator[dict[str, Any]]:
        """Every span of the traces ``trace_ids`` (a few dozen ids per request)."""
        for i in range(0, len(trace_ids), 50):
            cursor = None
            while True:
                spans, cursor = self.span_page(cursor, trace_ids=trace_ids[i : i + 50])
                yield from spans
                if cursor is None:
                    break

    def annotate(self, rows: list[dict[str, Any]]) -> None:
        """Upsert span annotations (unique on name, span and identifier), synchronously."""
        response = self._request(
            "POST",
            "/v1/span_annotations",
            params={"sync": "true"},
            json={"data": rows},
            idempotent=True,  # an upsert: sent twice, it writes once
        )
        self._json(response, "writing span annotations")

    def annotations(self, span_ids: Sequence[str]) -> list[dict[str, Any]]:
        """The span annotations on ``span_ids``."""
        out: list[dict[str, Any]] = []
        path = f"/v1/projects/{path_part(self.url.name)}/span_annotations"
        for i in range(0, len(span_ids), 50):
            cursor = None
            while True:
                params: list[tuple[str, str | int]] = [("limit", 1000)]
                params += [("span_ids", s) for s in span_ids[i : i + 50]]
                if cursor:
                    params.append(("cursor", cursor))
                body = self._json(self._request("GET", path, params=params), "reading annotations")
                out += _data(body, self.url.shown)
                cursor = body.get("next_cursor")
                if not cursor:
                    break
        return out


def _data(body: Any, shown: str) -> list[dict[str, Any]]:
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list) or not all(isinstance(d, dict) for d in data):
        raise InputError(shown, reason="unexpected answer: no list under 'data'")
    return data


def _detail(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return ""
    detail = body.get("detail") if isinstance(body, dict) else None
    return "" if detail is None else " ".join(str(detail).split())[:200]
