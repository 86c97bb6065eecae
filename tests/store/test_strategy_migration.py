"""Version 12 (the lead's queue strategy, the phase of each label draw) on a version-11 store,
SQLite and PostgreSQL: the draws frozen before keep their rows with no phase, the strategy
table works, and each version is recorded once."""

from __future__ import annotations

import pytest
from sqlalchemy import inspect

from trajudge.store import NotLead, Store
from trajudge.store._schema import MIGRATIONS
from trajudge.trajectories import Step, Trajectory

DS = "d"


def _version_11_store(url: str) -> None:
    """A store as version 11 left it: no label_strategies, label_draws without phase."""
    store = Store(url)
    store.import_dataset(DS, [Trajectory(id="t0", task_id="k0", steps=[Step(tool="a")])])
    assert store.freeze_draws(
        DS, "r", [{"trajectory_id": "t0", "position": 0, "probability": 0.5, "drawn": 1}], "{}"
    )
    store.add_account("cho", "lead", secret="h", secret_kind="password")
    with store.sql_write_engine.begin() as conn:
        conn.exec_driver_sql("DROP TABLE label_strategies")
        conn.exec_driver_sql("ALTER TABLE label_draws DROP COLUMN phase")
        conn.exec_driver_sql("DELETE FROM schema_migrations WHERE version = 12")
        tables = set(inspect(conn).get_table_names())
        columns = {c["name"] for c in inspect(conn).get_columns("label_draws")}
    store.close()
    assert "label_strategies" not in tables and "phase" not in columns


def test_a_version_11_store_gets_strategies_and_draw_phases(db_url: str) -> None:
    _version_11_store(db_url)
    store = Store(db_url)
    with store.sql_engine.connect() as conn:
        versions = sorted(
            r[0] for r in conn.exec_driver_sql("SELECT version FROM schema_migrations")
        )
    assert versions == [v for v, _ in MIGRATIONS] and versions[-1] == 12
    draws = store.label_draws(DS, "r")
    assert draws["trajectory_id"].tolist() == ["t0"] and draws["phase"].tolist() == [None]
    assert store.draw_phases(DS, "r") == (0,)  # frozen whole, as before version 12
    with pytest.raises(NotLead):
        store.set_label_strategy(DS, "r", "active", name="nobody", started_with="random")
    row = store.set_label_strategy(DS, "r", "active", name="cho", started_with="random", budget=9)
    assert (row["previous"], row["strategy"], row["budget"]) == ("random", "active", 9)
    assert store.label_strategy(DS, "r") == row
    store.close()
    Store(db_url).close()  # re-opening applies nothing twice
    with Store(db_url).sql_engine.connect() as conn:
        n = conn.exec_driver_sql("SELECT count(*) FROM schema_migrations").scalar()
    assert n == len(MIGRATIONS)
