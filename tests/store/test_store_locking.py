"""Reads take no write lock; every write takes it up front (SQLite, WAL).

Before: every transaction began with ``BEGIN IMMEDIATE``, so a streaming read (``trajudge
check`` reading while it saves results, an annotator's page) held the write lock and every
other connection waited 30 s on it and died with "database is locked".
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, event, insert
from sqlalchemy.exc import OperationalError

from trajudge.store import Store, import_labels
from trajudge.store._schema import datasets
from trajudge.trajectories import Step, TaskSpec, Trajectory

DS = "ds"


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    """SQLite only: these tests pin SQLite's locking (PostgreSQL has row locks and MVCC, and
    its concurrency is tested in test_store_backends.py)."""
    return f"sqlite:///{tmp_path / 'trajudge.db'}"


def _traj(i: int) -> Trajectory:
    return Trajectory(id=f"t{i}", task_id=f"task{i % 3}", trial=i // 3, steps=[Step(tool="a")])


def _store(db_url: str, n: int = 6) -> Store:
    store = Store(db_url)
    store.import_dataset(DS, [_traj(i) for i in range(n)])
    return store


def _judgment(tid: str) -> dict[str, Any]:
    return {
        "trajectory_id": tid,
        "judge": "j",
        "rubric_id": "r",
        "rubric_version": "v",
        "model": "m",
        "mode": "pointwise",
        "order": "ab",
        "sample": 0,
        "score": 3.0,
    }


def _rule_row(tid: str) -> dict[str, Any]:
    return {"trajectory_id": tid, "spec_sha256": "s", "gates_passed": True, "data": {}}


def _labels_csv(tmp_path: Path) -> Path:
    path = tmp_path / "labels.csv"
    path.write_text("trajectory_id,rubric_id,annotator,value\nt1,r,file,1\n", encoding="utf-8")
    return path


def _writes(store: Store, db_url: str, tmp_path: Path) -> dict[str, Callable[[], object]]:
    """Every way trajudge writes to a store, by name."""
    return {
        "open a new store (migrate)": lambda: Store(f"sqlite:///{tmp_path / 'other.db'}"),
        "import_dataset": lambda: store.import_dataset("other", [_traj(0)]),
        "import_dataset (same dataset)": lambda: store.import_dataset(DS, [_traj(99)]),
        "save_task_specs": lambda: store.save_task_specs(DS, {"task0": TaskSpec()}),
        "save_rule_results": lambda: store.save_rule_results(DS, [_rule_row("t0")]),
        "add_judgment": lambda: store.add_judgment(DS, _judgment("t0")),
        "save_label": lambda: store.save_label(DS, "t0", "r", "ann", 4.0),
        "save_label (adjudication)": lambda: store.save_label(
            DS, "t0", "r", "lead", 3.0, adjudication=True
        ),
        "import_labels": lambda: import_labels(store, _labels_csv(tmp_path), DS),
    }


def _reads(store: Store, db_url: str) -> dict[str, Callable[[], object]]:
    return {
        "open an up-to-date store": lambda: Store(db_url),
        "datasets": store.datasets,
        "trajectories": lambda: store.trajectories(DS),
        "count_trajectories": lambda: store.count_trajectories(DS),
        "task_specs": lambda: store.task_specs(DS),
        "rule_results": lambda: store.rule_results(DS),
        "judgments_frame": lambda: store.judgments_frame(DS),
        "labels_frame": lambda: store.labels_frame(DS),
        "trajectory_keys": lambda: store.trajectory_keys(DS),
        "label_counts": lambda: store.label_counts(DS, "r"),
        "item_labels": lambda: store.item_labels(DS, "t0"),
    }


def test_streaming_read_blocks_neither_writers_nor_readers(db_url: str, tmp_path: Path) -> None:
    store = _store(db_url)
    stream = store.iter_trajectories(DS, batch=1)
    first = next(stream)  # the read transaction is open and stays open below
    other = Store(db_url)  # another connection, as another process or annotator would have
    # each of these waited 30 s on the stream's lock and failed with "database is locked"
    for write in _writes(other, db_url, tmp_path).values():
        write()
    for read in _reads(other, db_url).values():
        read()
    # the stream reads its snapshot: the trajectory added meanwhile is not part of it
    rest = list(stream)
    assert [first.id, *(t.id for t in rest)] == [f"t{i}" for i in range(6)]
    assert "t99" in {t.id for t in other.trajectories(DS)}
    assert other.rule_results(DS)["t0"]["gates_passed"] is True
    assert set(other.labels_frame(DS)["annotator"]) == {"ann", "lead", "file"}


@contextmanager
def _statements(store: Store) -> Iterator[list[str]]:
    seen: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        seen.append(statement.strip().upper())

    event.listen(store.sql_engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(store.sql_engine, "before_cursor_execute", record)


def test_every_write_begins_immediate_and_no_read_does(db_url: str, tmp_path: Path) -> None:
    store = _store(db_url)
    for name, write in _writes(store, db_url, tmp_path).items():
        if name.startswith("open"):
            continue  # a new Store has its own engine: checked below
        with _statements(store) as seen:
            write()
        assert "BEGIN IMMEDIATE" in seen, name
    for name, read in _reads(store, db_url).items():
        with _statements(store) as seen:
            read()
        assert not [s for s in seen if "IMMEDIATE" in s], name


def test_opening_a_store_takes_the_write_lock_only_to_create_it(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'new.db'}"
    created: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        created.append(statement.strip().upper())

    event.listen(Engine, "before_cursor_execute", record)
    try:
        Store(url)
        assert "BEGIN IMMEDIATE" in created  # creating the tables is a write
        created.clear()
        Store(url)
        assert not [s for s in created if "IMMEDIATE" in s]  # up to date: a read only
    finally:
        event.remove(Engine, "before_cursor_execute", record)


def test_a_write_sent_down_the_read_path_fails_at_once(db_url: str) -> None:
    store = _store(db_url)
    with pytest.raises(OperationalError, match="readonly"), store.sql_engine.begin() as conn:
        conn.execute(insert(datasets).values(name="x", created_at="now"))
    assert store.datasets() == [DS]


def test_save_rule_results_replaces_in_bulk(db_url: str) -> None:
    # 1,203 trajectories: more than one IN (...) chunk of 500 per batch
    store = _store(db_url, 1203)
    ids = [f"t{i}" for i in range(1203)]
    store.save_rule_results(DS, [{**_rule_row(i), "score": 0.5} for i in ids])
    # a second batch replaces the results it names and leaves the others alone; a trajectory
    # named twice in one batch keeps its last row
    again = [{**_rule_row(i), "gates_passed": False, "score": 0.0} for i in ids[::2]]
    again.append({**_rule_row("t0"), "score": 1.0, "gates_passed": True})
    assert store.save_rule_results(DS, again) == len(ids[::2])
    got = store.rule_results(DS)
    assert len(got) == 1203
    assert (got["t0"]["gates_passed"], got["t0"]["score"]) == (True, 1.0)
    assert (got["t2"]["gates_passed"], got["t2"]["score"]) == (False, 0.0)
    assert (got["t1201"]["gates_passed"], got["t1201"]["score"]) == (True, 0.5)


def test_eight_first_opens_of_a_new_database_all_succeed_every_time(tmp_path: Path) -> None:
    """Eight annotators opening the app on a new, empty SQLite store at the same moment, 60
    times over. Switching a new database to WAL answers "database is locked" at once (no busy
    handler) to all but one connection; before the store waited for that lock, about 1 open in
    17 of this kind failed (12 of 200 measured), so 60 rounds would almost surely catch it."""
    import threading

    for round_ in range(60):
        url = f"sqlite:///{tmp_path / f'r{round_}.db'}"
        barrier = threading.Barrier(8)
        errors: list[BaseException] = []

        def open_once(
            url: str = url,
            barrier: threading.Barrier = barrier,
            errors: list[BaseException] = errors,
        ) -> None:
            try:
                barrier.wait()
                Store(url).close()
            except BaseException as exc:  # reported below
                errors.append(exc)

        threads = [threading.Thread(target=open_once) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == [], (round_, errors)


def test_one_idle_connection_serves_sequential_transactions_until_close(
    db_url: str, tmp_path: Path
) -> None:
    """Each SQLite connection costs its PRAGMAs, and the last one to close checkpoints the
    WAL: a store keeps one open, so reads and writes one after another open it once; a second
    thread at the same moment gets a connection of its own (closed when given back); close()
    lets the WAL go (SQLite removes the -wal file when its last connection closes)."""
    import threading

    store = _store(db_url)
    opened: list[object] = []
    event.listen(store.sql_engine, "connect", lambda conn, _rec: opened.append(conn))
    for _ in range(5):
        store.datasets()
        store.add_judgments(DS, [])
        store.import_dataset(DS, [_traj(i) for i in range(6)])
    assert len(opened) == 0  # the idle connection made by _store() served them all

    inside, release = threading.Event(), threading.Event()

    def hold() -> None:
        with store.sql_engine.connect():
            inside.set()
            release.wait(60)

    worker = threading.Thread(target=hold)
    worker.start()
    assert inside.wait(60)
    assert store.datasets() == [DS]  # not blocked: a second connection
    release.set()
    worker.join(60)
    assert len(opened) == 1
    wal = tmp_path / "trajudge.db-wal"
    assert wal.exists()
    store.close()
    assert not wal.exists()
