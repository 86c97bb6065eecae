"""Two ``trajudge judge`` processes on the same dataset and judge: one calls, the other
refuses with the holder named (exit 2) or, with ``--wait``, waits and makes no call.

Real processes of the CLI against the fake OpenAI-compatible server, whose ``block`` keeps
the first run's calls in flight until the test lets them answer: the second run meets the
lease held, whatever the machine's speed (the tests wait on that state, not on time).
"""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_judge import _load_fake
from test_store_faults import _store

pytestmark = pytest.mark.timeout(300)
JUDGE = "f=openai/fake:trajectory_reasonableness"
ITEMS = 4


@pytest.fixture
def fake() -> Iterator[Any]:
    server = _load_fake().FakeLLM().start()
    server.default = "block"
    yield server
    server.release()
    server.stop()


@pytest.fixture
def db(tmp_path: Path) -> str:
    return _store(tmp_path / "trajudge.db", ITEMS)


def _judge(fake: Any, db: str, *extra: str) -> subprocess.Popen[str]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONUNBUFFERED": "1"}
    code = "from trajudge.cli import main; main()"
    cmd = [sys.executable, "-c", code, "judge", "ds", "--judge", JUDGE, "--api-base",
           fake.api_base, "--no-cache", "--max-retries", "0", "--db", db, *extra]  # fmt: skip
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _until_in_flight(fake: Any, proc: subprocess.Popen[str]) -> None:
    """Wait until ``proc`` has a call in flight on the fake server (it holds the lease)."""
    while fake.in_flight == 0:
        assert proc.poll() is None, proc.communicate()[0]
        time.sleep(0.05)


def _finish(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    """Exit code, stdout (whitespace collapsed) and stderr of ``proc``."""
    out, err = proc.communicate(timeout=240)
    return proc.returncode, " ".join(out.split()), err


def test_a_second_run_names_the_holder_and_exits_2(fake: Any, db: str) -> None:
    first = _judge(fake, db)
    _until_in_flight(fake, first)
    code, _, err = _finish(_judge(fake, db))
    assert code == 2, err
    assert len(err.splitlines()) == 1 and err.startswith("error: "), err  # one line
    assert f"dataset ds: judge f: already being judged with this configuration by pid " \
           f"{first.pid} on {socket.gethostname()} since " in " ".join(err.split())  # fmt: skip
    fake.release()
    code, out, _ = _finish(first)
    assert code == 0, out
    assert f"judged {ITEMS} of {ITEMS} calls this run" in out
    assert fake.calls == ITEMS  # every item called once, not once per run
    with sqlite3.connect(db.removeprefix("sqlite:///")) as con:
        assert con.execute("SELECT count(*) FROM leases").fetchone()[0] == 0  # released


def test_with_wait_the_second_run_judges_after_the_first_and_calls_nothing(
    fake: Any, db: str
) -> None:
    first = _judge(fake, db)
    _until_in_flight(fake, first)
    second = _judge(fake, db, "--wait")
    assert second.stdout is not None
    # the second run says whom it waits for: its state, read as it comes
    while "waiting for" not in (line := second.stdout.readline()):
        assert line, second.communicate()
    assert f"waiting for judge f on ds: held by pid {first.pid} on " in line, line
    fake.release()
    code, out, _ = _finish(first)
    assert code == 0, out
    code, out, _ = _finish(second)
    assert code == 0, out
    assert f"judged 0 of 0 calls this run; {ITEMS} already stored" in out
    assert fake.calls == ITEMS


def test_the_lease_of_a_killed_run_is_taken_over(fake: Any, db: str) -> None:
    first = _judge(fake, db)
    _until_in_flight(fake, first)
    os.kill(first.pid, signal.SIGKILL)
    first.communicate()  # reaped: its pid is gone, its lease still stored
    with sqlite3.connect(db.removeprefix("sqlite:///")) as con:
        assert con.execute("SELECT pid FROM leases").fetchall() == [(first.pid,)]
    fake.release()
    calls_before = fake.calls
    code, out, _ = _finish(_judge(fake, db))
    assert code == 0, out
    assert f"judged {ITEMS} of {ITEMS} calls this run" in out
    assert fake.calls == calls_before + ITEMS
