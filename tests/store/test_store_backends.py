"""What must hold on every backend: the same limits, and writers at the same time.

A team store has many writers. SQLite serialises them (BEGIN IMMEDIATE); a server database runs
them side by side, so each check-then-write in the store must hold a lock or be settled by a
constraint.
"""

from __future__ import annotations

import itertools
import random
import threading
from collections.abc import Callable

import pytest
from sqlalchemy import func, select

from trajudge.core import InputError
from trajudge.store import MIGRATIONS, Store
from trajudge.store._schema import judgments, schema_migrations
from trajudge.trajectories import Step, TaskSpec, Trajectory

DS = "d"
N_THREADS = 8


def _run_together(n: int, work: Callable[[int], None]) -> None:
    """Run ``work(k)`` for k < n in threads that start at one barrier; re-raise any error."""
    barrier = threading.Barrier(n)
    errors: list[BaseException] = []

    def run(k: int) -> None:
        try:
            barrier.wait()
            work(k)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [], errors


def _store(url: str, n: int = 10) -> Store:
    store = Store(url)
    store.import_dataset(
        DS, [Trajectory(id=f"t{i}", task_id=f"k{i}", steps=[Step(tool="a")]) for i in range(n)]
    )
    return store


def _row(tid: str, other: str | None, **kw: object) -> dict[str, object]:
    return {
        "trajectory_id": tid,
        "other_id": other,
        "judge": "j",
        "rubric_id": "r",
        "rubric_version": "v1",
        "model": "m",
        "mode": "pointwise" if other is None else "pairwise",
        "order": "ab",
        "sample": 0,
        **kw,
    }


def test_same_judgment_from_eight_writers_is_stored_once(db_url: str) -> None:
    store = _store(db_url)
    # pointwise keys (other_id NULL, which a unique constraint does not compare) and pairwise
    keys = [(f"t{i}", None) for i in range(10)] + [(f"t{i}", f"t{i + 1}") for i in range(9)]
    for tid, other in keys[::2]:  # half start as stored errors, which a result replaces
        assert store.add_judgment(DS, _row(tid, other, error="timeout"))
    added = [0] * N_THREADS

    def write(k: int) -> None:
        s = Store(db_url)
        mine = list(keys)
        random.Random(k).shuffle(mine)
        for tid, other in mine:
            added[k] += s.add_judgment(DS, _row(tid, other, score=float(k)))
        s.close()

    _run_together(N_THREADS, write)
    frame = store.judgments_frame(DS)
    assert len(frame) == len(keys)  # one row per key: none duplicated, none lost
    assert frame["error"].isna().all()  # every stored error was replaced by a result
    assert sum(added) == len(keys)  # exactly one writer was told it stored each key


def test_concurrent_edits_of_one_label_keep_an_unbroken_history(db_url: str) -> None:
    """Each history row holds the value the label had just before an edit, so consecutive
    history values (and the last one and the current value) differ: a lost update shows up as
    two equal neighbours, the value some writer stored having vanished without a trace."""
    store = _store(db_url)

    def write(k: int) -> None:
        s = Store(db_url)
        for _ in range(15):
            s.save_label(DS, "t0", "r", "ann", float(k % 2))
        s.close()

    _run_together(4, write)
    frame = store.labels_frame(DS)
    assert len(frame) == 1
    values = [h["value"] for h in store.label_history(int(frame.loc[0, "id"]))]
    chain = [*values, frame.loc[0, "value"]]
    assert len(values) >= 1
    assert all(a != b for a, b in itertools.pairwise(chain)), chain


def test_first_open_by_many_stores_at_once_migrates_once(db_url: str) -> None:
    """Annotators opening the app on a new, empty database at the same moment."""
    _run_together(N_THREADS, lambda k: Store(db_url).close())
    store = Store(db_url)
    with store.sql_engine.connect() as conn:
        versions = [r[0] for r in conn.execute(select(schema_migrations.c.version))]
        assert conn.execute(select(func.count()).select_from(judgments)).scalar() == 0
    assert sorted(versions) == [v for v, _ in MIGRATIONS]


@pytest.mark.parametrize(("field", "limit"), [("id", 400), ("task_id", 400), ("intent", 200)])
def test_text_longer_than_its_column_is_refused_alike(db_url: str, field: str, limit: int) -> None:
    """The same file imports on both backends or on neither: SQLite would store any length,
    PostgreSQL's varchar would fail with a driver traceback."""
    store = Store(db_url)
    ok = {"id": "a", "task_id": "k", "intent": None}
    at_limit = Trajectory(**{**ok, "id": "b", "task_id": "k2", field: "x" * limit})
    store.import_dataset("d", [Trajectory(**ok), at_limit])
    assert store.trajectory("d", "x" * limit if field == "id" else "b") == at_limit
    too_long = Trajectory(**{**ok, "id": "c", "task_id": "k3", field: "é" * (limit + 1)})
    message = rf"runs\.jsonl: record 1: {field}: longer than {limit} characters"
    with pytest.raises(InputError, match=message):
        store.import_dataset("e", [Trajectory(**ok), too_long], source="runs.jsonl")
    assert store.datasets() == ["d"]  # nothing of the refused file was written


def test_long_dataset_name_and_spec_task_id_are_refused(db_url: str) -> None:
    store = Store(db_url)
    with pytest.raises(InputError, match="dataset: longer than 200 characters"):
        store.import_dataset("n" * 201, [Trajectory(id="a", task_id="k")])
    with pytest.raises(InputError, match="task spec: task_id: longer than 400 characters"):
        store.import_dataset("d", [Trajectory(id="a", task_id="k")], {"k" * 401: TaskSpec()})
    assert store.datasets() == []


def test_judgment_batches_from_eight_writers_store_each_key_once(db_url: str) -> None:
    """Batched writes (``add_judgments``, one transaction per batch) of overlapping keys in
    different orders: no duplicate, no lost key, no deadlock, errors replaced by results."""
    store = _store(db_url)
    keys = [(f"t{i}", None) for i in range(10)] + [(f"t{i}", f"t{i + 1}") for i in range(9)]
    keys.append(("not-stored", None))  # a trajectory the store does not hold: the dataset lock
    assert store.add_judgments(DS, [_row(t, o, error="timeout") for t, o in keys[::3]]) == [
        True
    ] * len(keys[::3])
    added = [0] * N_THREADS

    def write(k: int) -> None:
        s = Store(db_url)
        mine = list(keys)
        random.Random(k).shuffle(mine)
        for start in range(0, len(mine), 4):
            batch = [_row(t, o, score=float(k)) for t, o in mine[start : start + 4]]
            added[k] += sum(s.add_judgments(DS, batch))
        s.close()

    _run_together(N_THREADS, write)
    frame = store.judgments_frame(DS)
    assert len(frame) == len(keys) and frame["error"].isna().all()
    assert sum(added) == len(keys)


def test_a_batch_with_one_key_twice_stores_it_as_two_writes_would(db_url: str) -> None:
    store = _store(db_url)
    stored = store.add_judgments(
        DS,
        [
            _row("t0", None, error="timeout"),
            _row("t0", None, score=4.0),  # replaces the error, as a second write would
            _row("t0", None, score=2.0),  # a result is kept: not stored
            _row("t1", None, score=3.0),
        ],
    )
    assert stored == [True, True, False, True]
    frame = store.judgments_frame(DS).sort_values("trajectory_id")
    assert list(frame["score"]) == [4.0, 3.0] and frame["error"].isna().all()
    assert store.add_judgments(DS, [_row("t1", None, score=1.0)]) == [False]
