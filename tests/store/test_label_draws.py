"""The active labelling design in the store (version 9): frozen once, read back in order, on
SQLite and PostgreSQL."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest
from sqlalchemy.engine import Connection

from _postgres import PostgresServer
from trajudge.store import Store
from trajudge.trajectories import Step, Trajectory

DS = "d"


def _store(url: str) -> Store:
    store = Store(url)
    store.import_dataset(
        DS, [Trajectory(id=f"t{i}", task_id=f"k{i}", steps=[Step(tool="a")]) for i in range(4)]
    )
    return store


def _back_to_version_8(conn: Connection) -> None:
    """Drop what versions 9 (label draws), 10 (backends) and 11 (accounts) added, as a
    version-8 store."""
    for table in AFTER_8:
        conn.exec_driver_sql(f"DROP TABLE {table}")
    conn.exec_driver_sql("DELETE FROM schema_migrations WHERE version > 8")


def _rows(probability: float) -> list[dict[str, object]]:
    return [
        {"trajectory_id": f"t{i}", "position": 3 - i, "probability": probability, "drawn": i % 2}
        for i in range(4)
    ]


def test_a_design_is_frozen_and_read_in_order(db_url: str) -> None:
    store = _store(db_url)
    assert store.label_draws(DS, "r").empty
    assert store.freeze_draws(DS, "r", _rows(0.25), '{"budget": 1}')
    assert not store.freeze_draws(DS, "r", _rows(0.5), '{"budget": 2}')  # the first one stays
    frame = store.label_draws(DS, "r")
    assert frame["trajectory_id"].tolist() == ["t3", "t2", "t1", "t0"]
    assert frame["probability"].tolist() == [0.25] * 4
    assert frame["drawn"].astype(bool).tolist() == [True, False, True, False]
    assert set(frame["design"]) == {'{"budget": 1}'}
    assert store.label_draws(DS, "other").empty  # per rubric
    assert store.freeze_draws(DS, "other", _rows(0.5), "{}")


def test_two_sessions_freezing_at_once_store_one_design(db_url: str) -> None:
    _store(db_url).close()
    results: list[bool] = []
    barrier = threading.Barrier(4)

    def freeze(k: int) -> None:
        s = Store(db_url)
        barrier.wait()
        results.append(s.freeze_draws(DS, "r", _rows(0.1 * (k + 1)), str(k)))
        s.close()

    threads = [threading.Thread(target=freeze, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [False, False, False, True]
    frame = Store(db_url).label_draws(DS, "r")
    assert len(frame) == 4 and frame["design"].nunique() == 1


#: The tables of the versions after 8 (a store taken back to version 8 has none of them).
AFTER_8 = (
    "label_draws",
    "pull_cursors",
    "export_marks",
    "accounts",
    "sign_in_throttle",
    "sign_in_events",
    "reservations",
)


@pytest.mark.postgres
def test_a_postgres_store_at_version_8_gets_the_table(postgres_server: PostgresServer) -> None:
    """Version 9's upgrade on a PostgreSQL store made before it: the table appears, the
    datasets foreign key holds (deleting the dataset deletes its design), recorded once."""
    with postgres_server.database() as url:
        store = _store(url)
        with store.sql_write_engine.begin() as conn:  # back to version 8
            _back_to_version_8(conn)
        store.close()
        store = Store(url)
        assert store.freeze_draws(DS, "r", _rows(0.5), "{}")
        assert len(store.label_draws(DS, "r")) == 4
        with store.sql_write_engine.begin() as conn:
            versions = [r[0] for r in conn.exec_driver_sql("SELECT version FROM schema_migrations")]
            conn.exec_driver_sql("DELETE FROM datasets WHERE name = 'd'")
        assert versions.count(9) == 1
        assert store.label_draws(DS, "r").empty
        store.close()


def test_a_sqlite_store_at_version_8_gets_the_table(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 's.db'}"
    store = _store(url)
    with store.sql_write_engine.begin() as conn:
        _back_to_version_8(conn)
    store.close()
    con = sqlite3.connect(tmp_path / "s.db")
    assert con.execute("SELECT max(version) FROM schema_migrations").fetchone() == (8,)
    store = Store(url)
    assert store.freeze_draws(DS, "r", _rows(0.5), "{}")
    assert con.execute("SELECT count(*) FROM label_draws").fetchone() == (4,)
    assert con.execute("SELECT max(version) FROM schema_migrations").fetchone() == (12,)
    store.close()
    con.close()
