"""A real MLflow tracking server for the tests, started and stopped by the tests themselves.

MLflow is heavy and pins its own versions of what trajudge also uses, so it lives in a venv of
its own, built from ``servers/mlflow.txt`` into ``.venv-servers/mlflow`` at the repository
root by ``make servers``, or by the first test that needs it when missing (about a minute), and
reused while that file is unchanged (``.installed`` holds a copy of it). The same venv runs
the fixture generator (``tests/fixtures/traces/gen_mlflow.py``), which traces the scripted agent
run with MLflow's own tracing into the server and an OTLP file at once.

One server per test session: ``mlflow server --workers 1`` with job execution off (its default
four workers and job processes take ~3.5 GB), a SQLite backend store and artifact root in a
temporary directory, a free loopback port; start-up waits on ``/health`` answering, never on a
fixed delay. It runs in its own process group, stopped whole at the end.

Where the venv cannot be built (no package index), the tests are skipped, unless
``TRAJUDGE_REQUIRE_MLFLOW=1`` (``.ci/run``) makes that a failure.
"""

from __future__ import annotations

import contextlib
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
from typing import NoReturn

import httpx
import pytest

from _postgres import free_port

ROOT = Path(__file__).resolve().parents[2]
REQUIREMENTS = ROOT / "servers" / "mlflow.txt"
VENV = ROOT / ".venv-servers" / "mlflow"
GENERATOR = ROOT / "tests" / "fixtures" / "traces" / "gen_mlflow.py"
REQUIRE_ENV = "TRAJUDGE_REQUIRE_MLFLOW"
_START_TIMEOUT_S = 300.0  # an upper bound for a loaded machine; start-up waits on state


def unavailable(reason: str) -> NoReturn:
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"MLflow is required ({REQUIRE_ENV}=1) but {reason}", pytrace=False)
    pytest.skip(f"MLflow server not available: {reason}")


def server_venv() -> Path:
    """The MLflow venv's bin directory, built (or rebuilt) when the requirements changed."""
    want = REQUIREMENTS.read_text()
    stamp = VENV / ".installed"  # what `make servers` writes too: a copy of the requirements
    if stamp.is_file() and stamp.read_text() == want:
        return VENV / "bin"
    # the stamp is written last: an interrupted build is never taken for a finished one
    shutil.rmtree(VENV, ignore_errors=True)
    VENV.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    done = subprocess.run(
        [str(VENV / "bin" / "pip"), "install", "-q", "-r", str(REQUIREMENTS)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        unavailable(f"pip could not install {REQUIREMENTS.name}: {done.stderr[-500:]}")
    stamp.write_text(want)
    return VENV / "bin"


@dataclass
class MlflowServer:
    url: str  # http://127.0.0.1:PORT
    bin: Path
    home: Path
    process: subprocess.Popen[bytes]

    def trace_runs(
        self, experiment: str, otlp_file: Path, runs: int = 1, first: int = 0, mode: str = "trace"
    ) -> None:
        """Trace ``runs`` scripted agent runs into ``experiment`` and ``otlp_file``; ``mode``
        ``session``: each user turn a trace, a run's traces one MLflow session (see the
        generator)."""
        done = subprocess.run(
            [
                str(self.bin / "python"),
                str(GENERATOR),
                self.url,
                experiment,
                str(otlp_file),
                str(runs),
                str(first),
                mode,
            ],
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, "MLFLOW_TRACKING_URI": self.url},
        )
        assert done.returncode == 0, done.stderr[-3000:]

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=60)
        shutil.rmtree(self.home, ignore_errors=True)


def start_server() -> MlflowServer:
    try:
        bin_dir = server_venv()
    except (OSError, subprocess.CalledProcessError) as exc:
        unavailable(f"the venv could not be built: {exc}")
    home = Path(tempfile.mkdtemp(prefix="trajudge-mlflow-"))
    port = free_port()
    log = open(home / "server.log", "wb")  # noqa: SIM115 (the server writes it until stopped)
    process = subprocess.Popen(
        [
            str(bin_dir / "mlflow"),
            "server",
            "--workers",
            "1",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--backend-store-uri",
            f"sqlite:///{home / 'mlflow.db'}",
            "--default-artifact-root",
            str(home / "artifacts"),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"},
        start_new_session=True,  # its own process group: workers are stopped with it
        cwd=home,
    )
    server = MlflowServer(f"http://127.0.0.1:{port}", bin_dir, home, process)
    deadline = time.monotonic() + _START_TIMEOUT_S
    while True:
        if process.poll() is not None:
            text = (home / "server.log").read_text(errors="replace")[-2000:]
            shutil.rmtree(home, ignore_errors=True)
            pytest.fail(f"mlflow server exited ({process.returncode}): {text}", pytrace=False)
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{server.url}/health", timeout=5).status_code == 200:
                return server
        if time.monotonic() > deadline:
            server.stop()
            pytest.fail("mlflow server did not answer /health in time", pytrace=False)
        time.sleep(0.2)  # polling interval of the wait on state above


@pytest.fixture(scope="session")
def mlflow_server() -> Iterator[MlflowServer]:
    server = start_server()
    try:
        yield server
    finally:
        server.stop()
