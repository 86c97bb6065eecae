"""Schema version 8: aligned judges saved as "cut" are rewritten as "threshold", hash included.

``data/store_v7_aligned.sql`` is a real version-7 store: its aligned judge was fitted and saved
by trajudge's own ``align_judge`` at the last commit that wrote ``cut`` (how: the file's
header), so the keys renamed here are the ones an older trajudge really stored.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import insert

from _postgres import PostgresServer
from trajudge.core import canonical_json
from trajudge.store import Store
from trajudge.store._schema import aligned_judges

V7_DUMP = Path(__file__).parent / "data" / "store_v7_aligned.sql"


def _v7_store(path: Path) -> dict[str, Any]:
    con = sqlite3.connect(path)
    con.executescript(V7_DUMP.read_text())
    (text,) = con.execute("SELECT data FROM aligned_judges").fetchone()
    con.close()
    data: dict[str, Any] = json.loads(text)
    return data


def test_an_aligned_judge_saved_as_cut_reads_as_threshold(tmp_path: Path) -> None:
    before = _v7_store(tmp_path / "old.db")
    assert "cut" in before["rule"] and "cut" in before["trust"]["cut"]  # the old words
    store = Store(f"sqlite:///{tmp_path / 'old.db'}")
    record = store.aligned_judge(before["name"])
    assert record is not None
    assert "cut" not in record["rule"] and "cut" not in record["trust"]
    assert record["rule"]["threshold"] == before["rule"]["cut"]
    trust = record["trust"]["threshold"]
    assert trust["value"] == before["trust"]["cut"]["cut"] and "cut" not in trust
    # nothing else moved: the other keys of the rule, the trust block and the record
    assert {k: v for k, v in record["rule"].items() if k != "threshold"} == {
        k: v for k, v in before["rule"].items() if k != "cut"
    }
    assert {k: v for k, v in trust.items() if k != "value"} == {
        k: v for k, v in before["trust"]["cut"].items() if k != "cut"
    }
    assert {k: v for k, v in record["trust"].items() if k != "threshold"} == {
        k: v for k, v in before["trust"].items() if k != "cut"
    }
    rest = {k: v for k, v in record.items() if k not in ("rule", "trust", "version", "created_at")}
    assert rest == {k: v for k, v in before.items() if k not in ("rule", "trust")}
    # the stored hash is the new text's, so saving the same judge again adds no version
    with store.sql_engine.connect() as conn:
        text, sha = conn.exec_driver_sql("SELECT data, sha256 FROM aligned_judges").one()
    assert sha == hashlib.sha256(text.encode()).hexdigest()
    assert store.save_aligned_judge(record) == record["version"] == 1
    store.close()


def test_the_rewrite_runs_once_and_leaves_new_words_alone(tmp_path: Path) -> None:
    _v7_store(tmp_path / "old.db")
    url = f"sqlite:///{tmp_path / 'old.db'}"
    Store(url).close()
    con = sqlite3.connect(tmp_path / "old.db")
    once = con.execute("SELECT data, sha256 FROM aligned_judges").fetchall()
    Store(url).close()  # version 8 is recorded: nothing is rewritten twice
    assert con.execute("SELECT data, sha256 FROM aligned_judges").fetchall() == once
    assert con.execute("SELECT max(version) FROM schema_migrations").fetchone() == (9,)
    con.close()


@pytest.mark.postgres
def test_a_postgres_store_at_version_7_is_rewritten(
    postgres_server: PostgresServer, tmp_path: Path
) -> None:
    before = _v7_store(tmp_path / "old.db")  # the record as version 7 stored it
    text = canonical_json(before)
    with postgres_server.database() as url:
        store = Store(url)
        with store.sql_write_engine.begin() as conn:  # back to version 7, with that record
            conn.execute(
                insert(aligned_judges).values(
                    name=before["name"], version=1, created_at="2026-12-04T20:10:34+00:00",
                    dataset=before["dataset"], base_judge=before["base_judge"],
                    config_sha256=before["config_sha256"],
                    sha256=hashlib.sha256(text.encode()).hexdigest(), data=text,
                )
            )  # fmt: skip
            conn.exec_driver_sql("DELETE FROM schema_migrations WHERE version = 8")
        store.close()
        store = Store(url)
        record = store.aligned_judge(before["name"])
        assert record is not None
        assert record["rule"]["threshold"] == before["rule"]["cut"]
        assert record["trust"]["threshold"]["value"] == before["trust"]["cut"]["cut"]
        assert store.save_aligned_judge(record) == 1
        store.close()
