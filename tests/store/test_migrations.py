"""Schema migrations: a store written by an older trajudge upgrades in place, rows kept.

``data/store_v1.sql`` is a real version-1 store: written by trajudge's own ``Store`` at the
last commit with schema version 1 and dumped with ``sqlite3 .dump``.
"""

from __future__ import annotations

import sqlite3
import warnings
from pathlib import Path
from typing import Any

from sqlalchemy import inspect

from trajudge.store import Store

V1_DUMP = Path(__file__).parent / "data" / "store_v1.sql"


def _v1_store(path: Path) -> str:
    con = sqlite3.connect(path)
    con.executescript(V1_DUMP.read_text())
    con.close()
    return f"sqlite:///{path}"


def _index_sql(store: Store, table: str) -> list[tuple[str, str]]:
    with store.sql_engine.connect() as conn:
        rows = conn.exec_driver_sql(
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? "
            "AND sql IS NOT NULL ORDER BY name",
            (table,),
        )
        return [(r[0], " ".join(r[1].split())) for r in rows]


def _shape(url: str) -> dict[str, Any]:
    """Columns (name, type, nullable), unique constraints and indexes of every table."""
    store = Store(url)
    insp = inspect(store.sql_engine)
    warnings.filterwarnings("ignore", "Skipped unsupported reflection of expression-based index")
    shape = {
        t: {
            "columns": [(c["name"], str(c["type"]), c["nullable"]) for c in insp.get_columns(t)],
            "unique": sorted(
                (u["name"], tuple(u["column_names"])) for u in insp.get_unique_constraints(t)
            ),
            "indexes": sorted((i["name"], tuple(i["column_names"])) for i in insp.get_indexes(t)),
            "fks": [(f["referred_table"], f["options"]) for f in insp.get_foreign_keys(t)],
            # SQLAlchemy does not reflect SQLite's indexes over expressions: their DDL
            "index_sql": _index_sql(store, t),
        }
        for t in insp.get_table_names()
    }
    store.close()
    return shape


def test_a_version_1_store_upgrades_to_the_schema_of_a_new_one(tmp_path: Path) -> None:
    old = _v1_store(tmp_path / "old.db")
    con = sqlite3.connect(tmp_path / "old.db")
    assert con.execute("SELECT version FROM schema_migrations").fetchall() == [(1,)]
    before = con.execute("SELECT * FROM judgments ORDER BY id").fetchall()
    assert len(before) == 3
    upgraded = _shape(old)
    fresh = _shape(f"sqlite:///{tmp_path / 'new.db'}")
    assert upgraded == fresh
    assert fresh["judgments"]["unique"] == []  # the key is an index over expressions
    assert (
        "uq_judgment_key",
        "CREATE UNIQUE INDEX uq_judgment_key ON judgments (dataset, trajectory_id, "
        "coalesce(other_id, ''), judge, coalesce(config_sha256, ''), rubric_version, "
        '"order", sample)',
    ) in fresh["judgments"]["index_sql"]
    assert con.execute("SELECT version FROM schema_migrations").fetchall() == [
        (v,) for v in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)
    ]
    # every row kept, ids included; the configuration of old rows is unknown (NULL), and so
    # are their expected scores (version 5)
    after = con.execute("SELECT * FROM judgments ORDER BY id").fetchall()
    assert [row[:24] for row in after] == before
    assert all(row[24:] == (None, None, None, None) for row in after)
    assert "aligned_judges" in upgraded and "leases" in upgraded and "label_draws" in upgraded
    assert "pull_cursors" in upgraded and "export_marks" in upgraded
    assert "accounts" in upgraded and "sign_in_events" in upgraded
    # re-opening applies nothing twice
    Store(old).close()
    assert con.execute("SELECT count(*) FROM schema_migrations").fetchone()[0] == 12


def test_an_upgraded_store_keeps_old_judgments_apart_from_new_configurations(
    tmp_path: Path,
) -> None:
    store = Store(_v1_store(tmp_path / "old.db"))
    assert store.judgment_keys("ds", "j") == {
        ("a-0", None, "j", None, "0123456789abcdef", "ab", 0)
    }  # the errored row (a-1) is not a finished judgment
    row = dict(
        trajectory_id="a-0", other_id="a-1", judge="p", rubric_id="trajectory_preference",
        rubric_version="0123456789abcdef", model="openai/new-model", mode="pairwise",
        order="ab", sample=0, score=3.0, verdict="win", config_sha256="c" * 64,
        judge_config='{"model": "openai/new-model"}',
    )  # fmt: skip
    # same pair, judge, rubric, order and sample as the old row: a new configuration is a
    # new judgment (the version-1 unique key would have refused it)
    assert store.add_judgment("ds", row)
    assert not store.add_judgment("ds", row)
    frame = store.judgments_frame("ds", "p")
    assert frame["config_sha256"].isna().tolist() == [True, False]
    assert frame["config_sha256"].iloc[1] == "c" * 64
    assert frame["model"].tolist() == ["openai/old-model", "openai/new-model"]


def test_version_3_keeps_old_labels_and_adds_category_and_pair_labels(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    _v1_store(path)
    con = sqlite3.connect(path)
    con.execute(
        "INSERT INTO labels (id, dataset, trajectory_id, rubric_id, annotator, value, unsure, "
        "skipped, source, adjudication, created_at, updated_at) VALUES "
        "(7, 'ds', 'a-0', 'r', 'ann', 4.0, 0, 0, 'human', 0, 't0', 't0')"
    )
    con.execute(
        "INSERT INTO label_history (label_id, value, unsure, skipped, changed_at) "
        "VALUES (7, 3.0, 0, 0, 't-1')"
    )
    con.commit()
    store = Store(f"sqlite:///{path}")
    frame = store.labels_frame("ds")
    assert frame[["id", "value", "category"]].values.tolist() == [[7, 4.0, None]]
    assert [h["category"] for h in store.label_history(7)] == [None]
    # a category label and a pair label can be written at once
    store.save_label("ds", "a-1", "kinds", "ann", None, category="wrong_tool")
    store.save_pair_label("ds", "a-0", "a-1", "pref", "ann", "B", left_id="a-1")
    assert store.labels_frame("ds", rubric_id="kinds")["category"].tolist() == ["wrong_tool"]
    pairs = store.pair_labels_frame("ds")
    assert pairs[["trajectory_id", "other_id", "category", "left_id"]].values.tolist() == [
        ["a-0", "a-1", "B", "a-1"]
    ]
    store.close()
    assert con.execute("SELECT max(version) FROM schema_migrations").fetchone()[0] == 12
