"""An OTLP/HTTP receiver for the tests (run in ``.venv-servers/otelsink``, see
``tests/backends/_otlp_sink.py``): oteltest's ``HttpSink`` on ``127.0.0.1:PORT``, which decodes
every request to ``/v1/logs`` with the official ``opentelemetry-proto`` message by its content
type (binary protobuf, or JSON).

``python otlp_sink.py PORT OUT [STOP_AFTER]``: each decoded ``ExportLogsServiceRequest`` is
appended to ``OUT`` as one JSON line: its content type and headers, the number of fields the
message did not know (``unknown``, over the whole message tree) and the request itself
(``google.protobuf.json_format``: ids in base64, as protobuf writes bytes). With
``STOP_AFTER`` = n the process dies on receiving request n + 1, before recording or answering
it: a collector gone in the middle of an export.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from http.server import HTTPServer
from typing import Any

import oteltest.sink
from google.protobuf import unknown_fields
from google.protobuf.json_format import MessageToDict
from google.protobuf.message import Message
from oteltest.sink import HttpSink
from oteltest.sink.handler import RequestHandler


class _Loopback(HTTPServer):
    """HttpSink serves on every interface (``("", port)``): here, on loopback only."""

    def __init__(self, address: tuple[str, int], handler: Any) -> None:
        super().__init__(("127.0.0.1", address[1]), handler)


def unknown(message: Message) -> int:
    """Fields the message's schema does not have, in it and every message inside it."""
    n = len(unknown_fields.UnknownFieldSet(message))
    for field, value in message.ListFields():
        if field.message_type is None:
            continue
        if field.is_repeated:
            if field.message_type.GetOptions().map_entry:
                continue
            n += sum(unknown(v) for v in value)
        else:
            n += unknown(value)
    return n


class Recorder(RequestHandler):
    def __init__(self, out: str, stop_after: int | None) -> None:
        self.out = out
        self.stop_after = stop_after
        self.seen = 0

    def handle_logs(self, request: Any, headers: dict[str, str]) -> None:
        if self.stop_after is not None and self.seen >= self.stop_after:
            os._exit(3)  # no answer, nothing recorded: the sender sees the connection drop
        self.seen += 1
        line = {
            "content_type": headers.get("Content-Type"),
            "headers": {k.lower(): v for k, v in headers.items()},
            "unknown": unknown(request),
            "request": MessageToDict(request),
        }
        with open(self.out, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(line) + "\n")

    def handle_metrics(self, request: Any, headers: dict[str, str]) -> None:
        pass

    def handle_trace(self, request: Any, headers: dict[str, str]) -> None:
        pass


def main() -> None:
    port, out = int(sys.argv[1]), sys.argv[2]
    stop_after = int(sys.argv[3]) if len(sys.argv) > 3 else None
    oteltest.sink.HTTPServer = _Loopback  # type: ignore[attr-defined]
    sink = HttpSink(Recorder(out, stop_after), logging.getLogger("otlp-sink"), port, daemon=False)
    sink.start()


if __name__ == "__main__":
    main()
