"""The throw-away PostgreSQL server of the tests (tests/_postgres.py): it stops and leaves
nothing behind, also when the test process is killed, and it skips only where allowed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from _postgres import REQUIRE_ENV, remove_orphans, start_server, unavailable
from trajudge.core import InputError
from trajudge.store import Store

TESTS = Path(__file__).parent


def _gone(pid: int, timeout: float = 120.0) -> bool:
    """Whether process ``pid`` has ended (polled: its state, not a fixed delay)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:  # a zombie (ended, not yet reaped by its parent) counts as ended
            if Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].startswith("Z"):
                return True
        except (OSError, IndexError):
            return True
        time.sleep(0.05)
    return False


def test_missing_postgres_skips_in_a_clone_and_fails_in_ci(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(REQUIRE_ENV, raising=False)
    with pytest.raises(pytest.skip.Exception, match="PostgreSQL not available: no initdb"):
        unavailable("no initdb")
    monkeypatch.setenv(REQUIRE_ENV, "1")
    with pytest.raises(pytest.fail.Exception, match=f"{REQUIRE_ENV}=1"):
        unavailable("no initdb")


@pytest.mark.postgres
def test_stop_ends_the_server_and_removes_its_directory() -> None:
    server = start_server()
    assert server.root is not None and server.proc is not None
    root, pid = server.root, server.proc.pid
    url = server.url(server.create_database())
    Store(url).close()
    server.stop()
    assert not root.exists()
    assert _gone(pid)
    with pytest.raises(InputError, match="cannot open the store"):
        Store(url + "?connect_timeout=10")


@pytest.mark.postgres
def test_a_killed_test_process_takes_its_server_along(tmp_path: Path) -> None:
    script = (
        "from _postgres import start_server\n"
        "import sys, time\n"
        "s = start_server()\n"
        "print(s.proc.pid, s.root, flush=True)\n"
        "time.sleep(3600)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), *sys.path])}
    owner = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert owner.stdout is not None
        line = owner.stdout.readline()  # printed once the server answers
        pid_text, root_text = line.split()
        owner.send_signal(signal.SIGKILL)
        owner.wait(60)
    finally:
        if owner.poll() is None:
            owner.kill()
            owner.wait()
    assert _gone(int(pid_text))  # SIGQUIT from the kernel: PostgreSQL's immediate shutdown
    root = Path(root_text)
    assert root.exists()  # nobody was left to remove it ...
    remove_orphans(root.parent)
    assert not root.exists()  # ... so the next session does


def test_only_directories_of_dead_sessions_are_removed(tmp_path: Path) -> None:
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, check=True)  # fmt: skip
    dead, alive, creating = (tmp_path / f"trajudge-pg-{k}" for k in ("dead", "alive", "new"))
    for d in (dead, alive, creating):
        d.mkdir()
    (dead / "owner.pid").write_text(finished.stdout.strip())
    (alive / "owner.pid").write_text(str(os.getpid()))
    remove_orphans(tmp_path)
    assert (not dead.exists(), alive.exists(), creating.exists()) == (True, True, True)
