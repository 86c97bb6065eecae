"""Run the real ``trajudge`` CLI in a process capped in address space and time, and measure it.

Hostile-input tests need more than an exit code: the refusal must come within bounded memory
and time, so each run is a process under ``RLIMIT_AS`` (trajudge with every import needs about
600 MB of address space, far less resident) whose peak RSS is read back with ``os.wait4``.

The measured process must not be a child of pytest. On Linux, ``exec`` folds the replaced
memory map's high-water mark into the process's peak RSS, so a child forked (or vforked) from
a pytest process at 1.6 GB reports 1.6 GB whatever it then does. Instead pytest starts
``_WRAPPER``, a bare ``python -S`` of about 10 MB; the wrapper forks the measured process from
itself (so its inherited mark is the wrapper's), caps it, execs the command, waits for it and
writes its exit status and ``ru_maxrss`` to a file. A timeout kills the wrapper's whole process
group, the measured process with it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

GB = 1 << 30
CLI = [sys.executable, "-c", "from trajudge.cli import main; main()"]

# argv: result file, address-space cap, the command. Stdlib only, no site: it stays small.
_WRAPPER = """
import json, os, resource, sys
result, cap, argv = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
pid = os.fork()
if pid == 0:
    try:
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        os.execvp(argv[0], argv)
    except BaseException as exc:
        print(f"cannot run {argv[0]}: {exc}", file=sys.stderr)
    os._exit(127)
_, status, usage = os.wait4(pid, 0)
with open(result, "w") as fh:
    json.dump({"status": status, "maxrss_kb": usage.ru_maxrss}, fh)
"""


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
    """``trajudge *args`` with ``address_space`` bytes of address space at most, killed after
    ``timeout`` seconds."""
    return run_capped_command(
        [*CLI, *args], cwd=cwd, env=env, address_space=address_space, timeout=timeout
    )


def run_capped_command(
    argv: list[str],
    *,
    cwd: Path,
    env: dict[str, str] | None = None,
    address_space: int = GB,
    timeout: float = 60,
) -> Run:
    """Any command, run and measured as ``run_capped`` runs trajudge."""
    full_env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", **(env or {})}
    with (
        tempfile.TemporaryDirectory() as tmp,
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
    ):
        result = Path(tmp) / "result.json"
        wrapper = [sys.executable, "-S", "-c", _WRAPPER, str(result), str(address_space)]
        start = time.monotonic()
        proc = subprocess.Popen(
            [*wrapper, *argv],
            cwd=cwd,
            env=full_env,
            stdout=out,
            stderr=err,
            start_new_session=True,  # its own process group, killed whole on a timeout
        )
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise AssertionError(f"killed after {timeout} s: {argv[-4:]}") from None
        seconds = time.monotonic() - start
        assert proc.returncode == 0, f"the wrapper failed ({proc.returncode})"
        measured = json.loads(result.read_text())
        out.seek(0)
        err.seek(0)
        return Run(
            os.waitstatus_to_exitcode(measured["status"]),
            out.read().decode("utf-8", "replace"),
            err.read().decode("utf-8", "replace"),
            seconds,
            measured["maxrss_kb"] / 1024,
        )
