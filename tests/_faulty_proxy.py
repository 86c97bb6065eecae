"""A loopback HTTP proxy in front of a real server that fails chosen requests: the fault a
test needs (a page that fails mid-pull, a server that goes away mid-export) on the real
server's real answers. Every request's path and query are kept (``seen``)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx


class FaultyProxy:
    """``with FaultyProxy(target) as p:`` forwards ``p.url`` to ``target``; ``p.fail(path,
    n)`` answers the ``n``-th next request whose path contains ``path`` with HTTP 502 (or
    ``status`` with ``headers``) unforwarded, and every one after it while ``sticky``;
    ``p.replace(path, n, status, content_type, body)`` forwards that request and gives the
    client this answer instead of the server's."""

    def __init__(self, target: str) -> None:
        self.target = target.rstrip("/")
        self.seen: list[str] = []
        self._rule: tuple[str, int, bool] | None = None
        self._fault: tuple[int, dict[str, str]] = (502, {})
        self._answer: tuple[int, str, bytes] | None = None  # replaces the server's
        self._count = 0
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def _forward(self) -> None:
                size = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(size) if size else b""
                with proxy._lock:
                    proxy.seen.append(self.path)
                    fail = proxy._should_fail(self.path)
                if fail and proxy._answer is None:
                    status, extra = proxy._fault
                    self.send_response(status, "injected fault")
                    for k, v in extra.items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
                r = httpx.request(
                    self.command, proxy.target + self.path, content=body, headers=headers,
                    timeout=120,
                )  # fmt: skip
                if fail and proxy._answer is not None:
                    status, kind, data = proxy._answer
                    self.send_response(status)
                    self.send_header("Content-Type", kind)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                data = r.content
                self.send_response(r.status_code)
                for k, v in r.headers.items():
                    if k.lower() not in ("content-length", "transfer-encoding", "content-encoding",
                                         "connection"):  # fmt: skip
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _forward

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def fail(
        self,
        path: str,
        n: int,
        *,
        sticky: bool = False,
        status: int = 502,
        headers: dict[str, str] | None = None,
    ) -> None:
        with self._lock:
            self._rule, self._count = (path, n, sticky), 0
            self._fault, self._answer = (status, dict(headers or {})), None

    def replace(self, path: str, n: int, status: int, content_type: str, body: bytes) -> None:
        with self._lock:
            self._rule, self._count = (path, n, False), 0
            self._answer = (status, content_type, body)

    def heal(self) -> None:
        with self._lock:
            self._rule, self._answer = None, None

    def _should_fail(self, path: str) -> bool:
        if self._rule is None or self._rule[0] not in path:
            return False
        self._count += 1
        return self._count == self._rule[1] or (self._rule[2] and self._count > self._rule[1])

    def __enter__(self) -> FaultyProxy:
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
