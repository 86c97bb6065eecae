"""A real Phoenix server for the tests, started and stopped by the tests themselves.

The server (``arize-phoenix``) lives in a venv of its own, ``.venv-servers/phoenix`` at the
repository root, built from ``servers/phoenix.txt`` by ``make servers`` or, when missing, by the
first test that needs it (under a file lock: two workers never build it at once). One server per
test session: ``phoenix serve`` with ``PHOENIX_WORKING_DIR`` in a fresh temporary directory
(SQLite), free loopback HTTP and gRPC ports, in a process group of its own that is stopped at the
end; if the test process dies first, the kernel stops the server (``setpriv --pdeathsig``).
Start-up waits on state (``/healthz`` answering), never on a fixed delay.

A scripted agent run is traced into it by ``tests/fixtures/traces/gen_phoenix_run.py`` (run in
the same venv): :meth:`Phoenix.trace_run` returns once the server holds every span the run wrote
to its OTLP file.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from _postgres import free_port

ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / ".venv-servers" / "phoenix"
REQUIREMENTS = ROOT / "servers" / "phoenix.txt"
TRACES = ROOT / "tests" / "fixtures" / "traces"
REQUIRE_ENV = "TRAJUDGE_REQUIRE_PHOENIX"
_START_TIMEOUT_S = 300.0  # an upper bound for a loaded machine; start-up waits on state
_BUILD_TIMEOUT_S = 1800.0


def unavailable(reason: str) -> None:
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"Phoenix is required ({REQUIRE_ENV}=1) but {reason}", pytrace=False)
    pytest.skip(f"Phoenix not available: {reason}")


def ensure_venv() -> Path:
    """The venv's python, built from ``servers/phoenix.txt`` when missing or out of date."""
    python = VENV / "bin" / "python"
    stamp = VENV / ".installed"
    want = REQUIREMENTS.read_text()
    VENV.parent.mkdir(parents=True, exist_ok=True)
    with open(VENV.parent / ".phoenix.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if stamp.exists() and stamp.read_text() == want and python.exists():
            return python
        if not python.exists():
            subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        done = subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "-r", str(REQUIREMENTS)],
            capture_output=True,
            text=True,
            timeout=_BUILD_TIMEOUT_S,
        )
        if done.returncode != 0:
            unavailable(f"pip install -r {REQUIREMENTS.name} failed: {done.stderr[-500:]}")
        stamp.write_text(want)
    return python


@dataclass(frozen=True)
class TracedRun:
    """A run traced into a project of the server and into an OTLP file."""

    project: str
    file: Path  # the same spans as OTLP JSON lines
    url: str  # phoenix+http://.../PROJECT


class Phoenix:
    """A running server: ``url`` (``http://127.0.0.1:PORT``), ``otlp`` (its traces endpoint)."""

    def __init__(self, python: Path, workdir: Path) -> None:
        self.python = python
        self.workdir = workdir
        self.port = free_port()
        self.grpc_port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.otlp = f"{self.url}/v1/traces"
        self.log = workdir / "phoenix.log"
        env = {
            **os.environ,
            "PHOENIX_WORKING_DIR": str(workdir),
            "PHOENIX_HOST": "127.0.0.1",
            "PHOENIX_PORT": str(self.port),
            "PHOENIX_GRPC_PORT": str(self.grpc_port),
            "PHOENIX_TELEMETRY_ENABLED": "false",
        }
        setpriv = shutil.which("setpriv")
        guard = [setpriv, "--pdeathsig", "SIGTERM", "--"] if setpriv else []
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                [*guard, str(python.parent / "phoenix"), "serve"],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # a process group of its own, stopped whole
            )
        deadline = time.monotonic() + _START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"phoenix exited: {self.log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=5).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"phoenix did not answer /healthz: {self.log.read_text()[-2000:]}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()

    def spans(self, project: str) -> list[dict[str, object]]:
        """Every span of ``project`` as the REST API gives it (empty for a new project)."""
        out: list[dict[str, object]] = []
        cursor = None
        while True:
            params: dict[str, str | int] = {"limit": 1000, **({"cursor": cursor} if cursor else {})}
            r = httpx.get(f"{self.url}/v1/projects/{project}/spans", params=params, timeout=60)
            if r.status_code == 404:
                return []
            r.raise_for_status()
            out += r.json()["data"]
            cursor = r.json()["next_cursor"]
            if not cursor:
                return out

    def trace_run(self, project: str, file: Path, n: int = 1, first: int = 0) -> int:
        """Trace ``n`` scripted conversations (``conv-phoenix-<first>``...) into ``project`` and
        into the OTLP file ``file`` (appended); returns once the server holds all the spans
        the file holds, and gives their number."""
        before = len(self.spans(project))
        lines_before = file.read_text().count("\n") if file.exists() else 0
        subprocess.run(
            [
                str(self.python),
                "gen_phoenix_run.py",
                self.otlp,
                project,
                str(file),
                str(n),
                str(first),
            ],
            cwd=TRACES,
            check=True,
            timeout=1800,
            env={**os.environ, "OTEL_SDK_DISABLED": "false"},
        )
        written = sum(
            len(s["spans"])
            for line in file.read_text().splitlines()[lines_before:]
            for r in json.loads(line)["resourceSpans"]
            for s in r["scopeSpans"]
        )
        deadline = time.monotonic() + 600
        while len(self.spans(project)) < before + written:
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"phoenix holds {len(self.spans(project))} spans of {before + written}"
                )
            time.sleep(0.2)
        return written


def phoenix_server() -> Iterator[Phoenix]:
    """The body of a session fixture: a server for the whole session."""
    try:
        python = ensure_venv()
    except (OSError, subprocess.SubprocessError) as exc:
        unavailable(f"its venv cannot be built: {exc}")
        raise
    workdir = Path(tempfile.mkdtemp(prefix="trajudge-phoenix-"))
    server = Phoenix(python, workdir)
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)
