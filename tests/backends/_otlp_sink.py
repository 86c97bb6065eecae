"""A real OTLP/HTTP receiver for the tests, started and stopped by the tests themselves.

oteltest's ``HttpSink`` (``tests/backends/otlp_sink.py``) runs in a venv of its own,
``.venv-servers/otelsink`` at the repository root, built from ``servers/otelsink.txt`` by
``make servers`` or, when missing, by the first test that needs it (under a file lock). It
listens on a free loopback port in a process of its own (killed with the test process,
``setpriv --pdeathsig``) and writes what it decoded to a file the tests read; start-up waits on
its port accepting connections, never on a fixed delay.

Where the venv cannot be built (no package index), the tests are skipped, unless
``TRAJUDGE_REQUIRE_OTLP_SINK=1`` (``.ci/run``) makes that a failure.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

import pytest

from _postgres import free_port

ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / ".venv-servers" / "otelsink"
REQUIREMENTS = ROOT / "servers" / "otelsink.txt"
SCRIPT = Path(__file__).with_name("otlp_sink.py")
REQUIRE_ENV = "TRAJUDGE_REQUIRE_OTLP_SINK"
_START_TIMEOUT_S = 120.0  # an upper bound for a loaded machine; start-up waits on state


def unavailable(reason: str) -> NoReturn:
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"the OTLP sink is required ({REQUIRE_ENV}=1) but {reason}", pytrace=False)
    pytest.skip(f"OTLP sink not available: {reason}")


def ensure_venv() -> Path:
    """The venv's python, built from ``servers/otelsink.txt`` when missing or out of date."""
    python = VENV / "bin" / "python"
    stamp = VENV / ".installed"  # what `make servers` writes too: a copy of the requirements
    want = REQUIREMENTS.read_text()
    VENV.parent.mkdir(parents=True, exist_ok=True)
    with open(VENV.parent / ".otelsink.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if stamp.exists() and stamp.read_text() == want and python.exists():
            return python
        if not python.exists():
            subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        done = subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "-r", str(REQUIREMENTS)],
            capture_output=True,
            text=True,
            timeout=1800,
        )
        if done.returncode != 0:
            unavailable(f"pip install -r {REQUIREMENTS.name} failed: {done.stderr[-500:]}")
        stamp.write_text(want)  # last: an interrupted build is never taken for a finished one
    return python


def hex_id(b64: str) -> str:
    """An id as the receiver decoded it (protobuf JSON: base64 bytes) in OTLP's hex."""
    return base64.b64decode(b64).hex()


class OtlpSink:
    """A running receiver: ``url`` (``http://127.0.0.1:PORT``, the base the exporter adds
    ``/v1/logs`` to), what it decoded in :meth:`received`."""

    def __init__(self, python: Path, workdir: Path) -> None:
        self.python = python
        self.workdir = workdir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.out = workdir / "received.jsonl"
        self.log = workdir / "sink.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, stop_after: int | None = None) -> None:
        """Start it (again, on the same port); ``stop_after`` requests, it dies on the next."""
        setpriv = shutil.which("setpriv")
        guard = [setpriv, "--pdeathsig", "SIGTERM", "--"] if setpriv else []
        extra = [] if stop_after is None else [str(stop_after)]
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [*guard, str(self.python), str(SCRIPT), str(self.port), str(self.out), *extra],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + _START_TIMEOUT_S
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the OTLP sink exited: {self.log.read_text()[-2000:]}")
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), timeout=1),
            ):
                return
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the OTLP sink did not listen: {self.log.read_text()[-2000:]}")
            time.sleep(0.1)  # polling interval of the wait on state above

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def wait_exited(self, timeout: float = 60.0) -> int:
        """The exit code of a sink that stops by itself (``stop_after``)."""
        assert self.proc is not None
        return self.proc.wait(timeout=timeout)

    def received(self) -> list[dict[str, Any]]:
        """Every request decoded since :meth:`clear`: ``content_type``, ``unknown`` (fields the
        official message does not have) and ``request`` (the message as protobuf JSON)."""
        if not self.out.exists():
            return []
        return [json.loads(line) for line in self.out.read_text().splitlines() if line]

    def clear(self) -> None:
        self.out.unlink(missing_ok=True)


def otlp_sink() -> Iterator[OtlpSink]:
    """The body of a session fixture: one receiver for the whole session."""
    try:
        python = ensure_venv()
    except (OSError, subprocess.SubprocessError) as exc:
        unavailable(f"its venv cannot be built: {exc}")
    sink = OtlpSink(python, Path(tempfile.mkdtemp(prefix="trajudge-otlp-sink-")))
    sink.start()
    try:
        yield sink
    finally:
        sink.stop()
        shutil.rmtree(sink.workdir, ignore_errors=True)
