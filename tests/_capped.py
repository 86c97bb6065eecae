"""Run the real ``trajudge`` CLI in a process capped in address space and time, and measure it.

Hostile-input tests need more than an exit code: the refusal must come within bounded memory
and time, so each run is a child process under ``RLIMIT_AS`` (trajudge with every import needs
about 600 MB of address space, far less resident) whose peak RSS is read back with
``os.wait4``.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

GB = 1 << 30
CLI = [sys.executable, "-c", "from trajudge.cli import main; main()"]


@dataclass(frozen=True)
class Run:
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    max_rss_mb: float

    def one_line_error(self) -> str:
        """The single stderr line of a clean refusal (exit 2, no traceback), or an assert."""
        assert self.returncode == 2, (self.returncode, self.stderr[-3000:])
        assert "Traceback" not in self.stderr, self.stderr[-3000:]
        lines = [line for line in self.stderr.splitlines() if line.strip()]
        assert len(lines) == 1, self.stderr[-3000:]
        return lines[0]


def run_capped(
    args: list[str],
    *,
    cwd: Path,
    env: dict[str, str] | None = None,
    address_space: int = GB,
    timeout: float = 60,
) -> Run:
    """``trajudge *args`` in a child with ``address_space`` bytes of address space at most,
    killed after ``timeout`` seconds."""

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))

    full_env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", **(env or {})}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.monotonic()
        proc = subprocess.Popen(
            [*CLI, *args], cwd=cwd, env=full_env, stdout=out, stderr=err, preexec_fn=cap
        )
        timer = threading.Timer(timeout, os.kill, (proc.pid, signal.SIGKILL))
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)  # the child's own peak RSS
        finally:
            timer.cancel()
        seconds = time.monotonic() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        assert seconds < timeout, f"killed after {timeout} s"
        out.seek(0)
        err.seek(0)
        return Run(
            proc.returncode,
            out.read().decode("utf-8", "replace"),
            err.read().decode("utf-8", "replace"),
            seconds,
            usage.ru_maxrss / 1024,
        )
