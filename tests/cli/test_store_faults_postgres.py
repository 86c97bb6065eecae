"""PostgreSQL lost under ``trajudge judge``: the server goes down mid-run (an immediate
shutdown, as a crash or a failover does). The run must end with one line naming the store
(without its password) and exit code 3, never a summary of success; what was committed before
stays, and once the server is back the same command makes only the missing calls.

A server of this test's own (the shared one serves other tests), the real ``trajudge judge``
process and the fake OpenAI-compatible server, whose calls after the first ``BEFORE`` wait
until the server is down, so the fault lands mid-run whatever the machine's speed.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from typing import Any

import pytest
from test_store_faults import BEFORE, ITEMS, _finish, _judge, fake  # noqa: F401

from _postgres import ROLE_PASSWORD, PostgresServer, start_server
from trajudge.store import Store
from trajudge.trajectories import Step, Trajectory

pytestmark = pytest.mark.timeout(300)


@pytest.fixture
def own_server() -> Iterator[PostgresServer]:
    server = start_server()
    try:
        yield server
    finally:
        server.stop()


def _count(url: str) -> int:
    store = Store(url)
    try:
        return len(store.judgments_frame("ds"))
    finally:
        store.close()


def _down(server: PostgresServer) -> None:
    """Immediate shutdown (SIGQUIT): every backend ends at once, nothing is flushed politely."""
    assert server.proc is not None
    server.proc.send_signal(signal.SIGQUIT)
    server.proc.wait(120)


def test_postgres_lost_mid_run_fails_in_one_line_and_a_rerun_makes_only_the_rest(
    fake: Any,  # noqa: F811
    own_server: PostgresServer,
) -> None:
    name = own_server.create_database()
    # the test servers run with synchronous_commit off (durability buys them nothing), so an
    # immediate shutdown may drop commits not yet written: this database asks for them
    own_server.admin(f"ALTER DATABASE {name} SET synchronous_commit = on")
    url = own_server.url(name)
    store = Store(url)
    store.import_dataset(
        "ds",
        [
            Trajectory(id=f"t-{i}", task_id=f"t-{i}", input="help", steps=[Step(tool="search")])
            for i in range(ITEMS)
        ],
    )
    store.close()
    fake.script = ["ok"] * BEFORE
    fake.default = "block"
    run = _judge(fake, url)
    while not (fake.in_flight and _count(url) >= BEFORE):
        assert run.poll() is None, run.communicate()
        time.sleep(0.05)
    _down(own_server)
    fake.release()
    code, out, err = _finish(run)
    assert code == 3, (out, err)
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert "store fault" in err and f"127.0.0.1:{own_server.port}" in err, err
    assert ROLE_PASSWORD not in err + out
    assert "calls this run" not in out  # no summary of a run that did not finish

    assert own_server._launch(own_server.port)  # the same cluster, back on its port
    kept = _count(url)
    assert BEFORE <= kept < ITEMS  # what was committed before the fault is there
    fake.reset()
    fake.default = "ok"
    again = _judge(fake, url)
    code, out, err = _finish(again)
    assert code == 0, (out, err)
    assert fake.calls == ITEMS - kept  # only what was not stored
    assert _count(url) == ITEMS
