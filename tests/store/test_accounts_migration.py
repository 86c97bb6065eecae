"""Version 11 (accounts, sign-in throttle, sign-in log, reservations) on a store made before
it: from a version-8 store (no label draws yet either), a version-9 and a version-10 store, on
SQLite and PostgreSQL. Old rows stay, the new tables work, each version is recorded once."""

from __future__ import annotations

import pytest
from sqlalchemy import inspect

from trajudge.core import InputError
from trajudge.store import Store
from trajudge.trajectories import Step, Trajectory

DS = "d"
# the tables each version after 8 adds (from _schema.py's comments), newest first
_ADDED = {
    12: ("label_strategies",),
    11: ("reservations", "sign_in_events", "sign_in_throttle", "accounts"),
    10: ("pull_cursors", "export_marks"),
    9: ("label_draws",),
}


def _old_store(url: str, version: int) -> None:
    """A store as version ``version`` left it: the later versions' tables and records gone."""
    store = Store(url)
    store.import_dataset(DS, [Trajectory(id="t0", task_id="k0", steps=[Step(tool="a")])])
    store.save_label(DS, "t0", "r", "ann", 4.0)
    if version >= 9:
        assert store.freeze_draws(
            DS, "r", [{"trajectory_id": "t0", "position": 0, "probability": 0.5, "drawn": 1}], "{}"
        )
    with store.sql_write_engine.begin() as conn:
        for v in sorted(_ADDED, reverse=True):
            if v > version:
                for table in _ADDED[v]:
                    conn.exec_driver_sql(f"DROP TABLE {table}")
                if v == 12:  # version 12 also added a column
                    conn.exec_driver_sql("ALTER TABLE label_draws DROP COLUMN phase")
                conn.exec_driver_sql(f"DELETE FROM schema_migrations WHERE version = {v}")
        tables = set(inspect(conn).get_table_names())
        versions = {r[0] for r in conn.exec_driver_sql("SELECT version FROM schema_migrations")}
    store.close()
    assert versions == set(range(1, version + 1))
    assert "accounts" not in tables and ("label_draws" in tables) == (version >= 9)


@pytest.mark.parametrize("version", [8, 9, 10])
def test_a_store_before_version_11_gets_accounts(db_url: str, version: int) -> None:
    _old_store(db_url, version)
    store = Store(db_url)
    with store.sql_engine.connect() as conn:
        versions = [r[0] for r in conn.exec_driver_sql("SELECT version FROM schema_migrations")]
    assert sorted(versions) == list(range(1, 13))  # each once, 9 and 10 too when missing
    # the old rows stayed
    assert store.labels_frame(DS)["value"].tolist() == [4.0]
    assert len(store.label_draws(DS, "r")) == (1 if version >= 9 else 0)
    # the new tables work: an account (its e-mail unique), the throttle, the log, a reservation
    store.add_account(
        "alice", "annotator", email="Alice@Example.test", secret="h", secret_kind="password"
    )
    found = store.account_by_email("alice@example.test")
    assert found is not None and found.name == "alice" and not found.disabled
    with pytest.raises(InputError, match="e-mail is taken"):
        store.add_account(
            "bob", "annotator", email="alice@example.test", secret="h", secret_kind="password"
        )
    assert store.reserve(DS, "r", "t0", "alice", ttl_s=60.0)
    assert not store.reserve(DS, "r", "t0", "bob", ttl_s=60.0)
    store.log_sign_in("alice", "127.0.0.1", "sign-in")
    assert [e["event"] for e in store.sign_in_log()] == ["sign-in"]
    store.close()
    Store(db_url).close()  # re-opening applies nothing twice
    with Store(db_url).sql_engine.connect() as conn:
        n = conn.exec_driver_sql("SELECT count(*) FROM schema_migrations").scalar()
    assert n == 12
