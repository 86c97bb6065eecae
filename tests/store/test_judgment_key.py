"""The judgment key is unique whatever its NULLs (schema version 6).

A pointwise judgment has no ``other_id`` and a judgment from before version 2 no
``config_sha256``; under a unique constraint on the columns those NULLs never collided, so the
same judgment could be stored any number of times. Runs on SQLite and PostgreSQL.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, insert, select
from sqlalchemy.exc import IntegrityError

from _postgres import PostgresServer
from trajudge.store import Store
from trajudge.store._schema import judgments
from trajudge.trajectories import Trajectory

V1_DUMP = Path(__file__).parent / "data" / "store_v1.sql"


def _row(trajectory_id: str, **extra: Any) -> dict[str, Any]:
    row = dict(
        dataset="ds", trajectory_id=trajectory_id, other_id=None, judge="j",
        rubric_id="r", rubric_version="v1", model="m", mode="pointwise", order="ab",
        sample=0, score=4.0, verdict="pass", cache_hit=False, created_at="t0",
        config_sha256="c" * 64, error=None,
    )  # fmt: skip
    row.update(extra)
    return row


@pytest.mark.parametrize("config", ["c" * 64, None], ids=["configured", "before-v2"])
def test_the_same_pointwise_judgment_cannot_be_inserted_twice(
    db_url: str, config: str | None
) -> None:
    store = Store(db_url)
    store.import_dataset("ds", [Trajectory(id="a", task_id="k")])
    row = _row("a", config_sha256=config)
    with store.sql_write_engine.begin() as conn:
        conn.execute(insert(judgments), [row])
    with pytest.raises(IntegrityError), store.sql_write_engine.begin() as conn:
        conn.execute(insert(judgments), [row])
    # a pairwise judgment of the same trajectory is another key
    with store.sql_write_engine.begin() as conn:
        conn.execute(insert(judgments), [_row("a", other_id="b", config_sha256=config)])
    with store.sql_engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(judgments)).scalar() == 2
    # pointwise reads back without an other_id, as before
    assert store.judgments_frame("ds")["other_id"].isna().tolist() == [True, False]
    assert ("a", None) in {k[:2] for k in store.judgment_keys("ds")}
    store.close()


# Rows added to the version-1 store's (ids 1-3), duplicates the old constraint let in. Kept,
# by the rule "the earliest without an error, else the latest error": a-0 keeps 1 (result),
# a-1 keeps 12 (2 and 11 are errors, 12 the first result), a-2 keeps 15 (errors only).
_DUPLICATES = [
    (10, "a-0", None, 4.0),
    (11, "a-1", "timeout", None),
    (12, "a-1", None, 2.0),
    (13, "a-1", None, 5.0),
    (14, "a-2", "refused", None),
    (15, "a-2", "timeout", None),
]
_KEPT = [(1, "a-0"), (3, "a-0"), (12, "a-1"), (15, "a-2")]


def test_a_sqlite_store_with_duplicates_keeps_one_of_each_when_migrated(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    con = sqlite3.connect(path)
    con.executescript(V1_DUMP.read_text())
    for id_, tid, error, score in _DUPLICATES:
        con.execute(
            "INSERT INTO judgments (id, dataset, trajectory_id, other_id, judge, rubric_id, "
            'rubric_version, model, mode, "order", sample, score, cache_hit, error, '
            "created_at) SELECT ?, dataset, ?, NULL, judge, rubric_id, rubric_version, model, "
            'mode, "order", sample, ?, 0, ?, created_at FROM judgments WHERE id = 1',
            (id_, tid, score, error),
        )
    con.commit()
    assert con.execute("SELECT count(*) FROM judgments").fetchone()[0] == 9
    store = Store(f"sqlite:///{path}")
    assert con.execute("SELECT id, trajectory_id FROM judgments ORDER BY id").fetchall() == _KEPT
    assert not store.add_judgment("ds", _row("a-0", rubric_id="trajectory_reasonableness",
        rubric_version="0123456789abcdef", config_sha256=None))  # fmt: skip
    assert con.execute("SELECT count(*) FROM judgments").fetchone()[0] == 4
    store.close()


@pytest.mark.postgres
def test_a_postgres_store_at_version_5_with_duplicates_is_migrated(
    postgres_server: PostgresServer,
) -> None:
    with postgres_server.database() as url:
        store = Store(url)
        store.import_dataset("ds", [Trajectory(id=t, task_id=t) for t in ("a-0", "a-1")])
        with store.sql_write_engine.begin() as conn:  # back to version 5's schema
            conn.exec_driver_sql("DROP INDEX uq_judgment_key")
            conn.exec_driver_sql(
                "ALTER TABLE judgments ADD CONSTRAINT uq_judgment UNIQUE (dataset, "
                'trajectory_id, other_id, judge, config_sha256, rubric_version, "order", sample)'
            )
            conn.exec_driver_sql("DELETE FROM schema_migrations WHERE version = 6")
            rows = [_row("a-0", id=1, other_id="a-1"), _row("a-0", id=3)]
            rows += [_row(t, id=i, error=e, score=s) for i, t, e, s in _DUPLICATES]
            rows.append(_row("a-0", id=2, config_sha256=None))  # no collision: another config
            conn.execute(insert(judgments), rows)
        store.close()
        store = Store(url)
        with store.sql_engine.connect() as conn:
            kept = conn.execute(
                select(judgments.c.id, judgments.c.trajectory_id).order_by(judgments.c.id)
            ).all()
            # a-0 keeps 3 (earliest result; 1 is pairwise, 2 has no configuration)
            assert [tuple(r) for r in kept] == [
                (1, "a-0"),
                (2, "a-0"),
                (3, "a-0"),
                (12, "a-1"),
                (15, "a-2"),
            ]
            versions = conn.exec_driver_sql("SELECT max(version) FROM schema_migrations")
            assert versions.scalar() == 12
        with pytest.raises(IntegrityError), store.sql_write_engine.begin() as conn:
            conn.execute(insert(judgments), [_row("a-0")])
        store.close()
