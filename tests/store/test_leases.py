"""Leases (schema version 7): one run at a time per dataset and judge configuration.

Runs on SQLite and PostgreSQL (``db_url``). The command-line side (two ``trajudge judge``
processes) is in tests/cli/test_judge_lease.py.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from typing import Any

import pytest
from sqlalchemy import insert

from trajudge.store import LeaseHeldError, Store
from trajudge.store._schema import leases
from trajudge.trajectories import Trajectory

pytestmark = pytest.mark.timeout(120)
CONFIG = "c" * 64


def _store(db_url: str) -> Store:
    store = Store(db_url)
    store.import_dataset("ds", [Trajectory(id="a", task_id="k")])
    return store


def _dead_pid() -> int:
    """The pid of a process that has ended and been reaped."""
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    return int(proc.stdout)


def _put(store: Store, **row: Any) -> None:
    values = dict(dataset="ds", config_sha256=CONFIG, judge="j", host=socket.gethostname(),
                  pid=1, token="t" * 32, acquired_at="2026-12-01T00:00:00+00:00",
                  expires_at=time.time() + 3600)  # fmt: skip
    values.update(row)
    with store.sql_write_engine.begin() as conn:
        conn.execute(insert(leases).values(**values))


def test_a_held_lease_is_refused_naming_its_holder_and_released_after(db_url: str) -> None:
    store = _store(db_url)
    with store.holding_leases("ds", [("j", CONFIG)]) as held:
        (mine,) = held
        assert store.lease("ds", CONFIG) == mine
        other = Store(db_url)  # another run (same process: its pid is alive)
        with pytest.raises(LeaseHeldError) as err, other.holding_leases("ds", [("j", CONFIG)]):
            pass
        text = str(err.value)
        assert f"pid {mine.pid} on {socket.gethostname()} since {mine.acquired_at}" in text
        assert text.startswith(f"{store.url}: dataset ds: judge j: ") and "\n" not in text
        # another configuration of the same judge, or another dataset, is another lease
        assert other.try_lease("ds", "d" * 64, "j")[0]
        assert other.try_lease("ds2", CONFIG, "j")[0]
        other.close()
    assert store.lease("ds", CONFIG) is None
    with pytest.raises(RuntimeError), store.holding_leases("ds", [("j", CONFIG)]):
        raise RuntimeError("the run failed")
    assert store.lease("ds", CONFIG) is None  # released on the way out of a failure too
    store.close()


@pytest.mark.parametrize(
    "stale",
    [
        pytest.param({"pid": "dead"}, id="dead-pid"),
        pytest.param({"host": "elsewhere", "expires_at": 0.0}, id="expired"),
    ],
)
def test_a_stale_lease_is_taken_over(db_url: str, stale: dict[str, Any]) -> None:
    store = _store(db_url)
    _put(store, **{k: (_dead_pid() if v == "dead" else v) for k, v in stale.items()})
    ok, lease = store.try_lease("ds", CONFIG, "j")
    assert ok and lease.token != "t" * 32 and store.lease("ds", CONFIG) == lease
    store.close()


def test_a_live_lease_on_another_host_is_not_taken_over(db_url: str) -> None:
    store = _store(db_url)
    _put(store, host="elsewhere", pid=_dead_pid())  # its pid means nothing on this host
    ok, holder = store.try_lease("ds", CONFIG, "j")
    assert not ok and holder.host == "elsewhere"
    store.close()


def test_of_many_runs_taking_over_one_stale_lease_exactly_one_wins(db_url: str) -> None:
    store = _store(db_url)
    _put(store, expires_at=0.0)
    stores = [Store(db_url) for _ in range(6)]
    start = threading.Barrier(len(stores))
    won: list[bool] = []

    def take(s: Store) -> None:
        start.wait()
        won.append(s.try_lease("ds", CONFIG, "j")[0])

    threads = [threading.Thread(target=take, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(won) == [False] * 5 + [True]
    for s in stores:
        s.close()
    store.close()


def test_wait_takes_the_lease_once_its_holder_releases_it(db_url: str) -> None:
    store = _store(db_url)
    waiting = threading.Event()
    got: list[str] = []
    holder = store.holding_leases("ds", [("j", CONFIG)])
    first = holder.__enter__()[0]

    def second() -> None:
        other = Store(db_url)
        with other.holding_leases(
            "ds", [("j", CONFIG)], wait=True, notify=lambda _: waiting.set(), poll_s=0.05
        ) as held:
            got.append(held[0].token)
        other.close()

    thread = threading.Thread(target=second)
    thread.start()
    assert waiting.wait(60)  # the second run saw the lease held and waits
    assert not got
    holder.__exit__(None, None, None)
    thread.join(60)
    assert len(got) == 1 and got[0] != first.token
    store.close()


def test_the_heartbeat_moves_the_expiry_on(db_url: str) -> None:
    store = _store(db_url)
    with store.holding_leases("ds", [("j", CONFIG)], ttl_s=0.6) as (mine,):
        deadline = time.monotonic() + 60
        while (now := store.lease("ds", CONFIG)) is not None and now.expires_at == mine.expires_at:
            assert time.monotonic() < deadline, "no heartbeat"
            time.sleep(0.05)
        assert now is not None and now.token == mine.token and now.expires_at > mine.expires_at
    store.close()
