"""The store: pinned schema, idempotent transactional imports, judgments and label history."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import inspect

from trajudge.core import InputError
from trajudge.store import Store
from trajudge.trajectories import Step, TaskSpec, Trajectory


def traj(i: str, task: str = "t1", trial: int = 0, **kw: object) -> Trajectory:
    return Trajectory(id=i, task_id=task, trial=trial, steps=[Step(tool="search")], **kw)  # type: ignore[arg-type]


EXPECTED_SCHEMA = {
    "schema_migrations": ["version", "name", "applied_at"],
    "datasets": ["name", "created_at", "source", "source_sha256", "fmt"],
    "trajectories": [
        "dataset", "id", "seq", "task_id", "trial", "intent", "outcome", "n_steps", "sha256",
        "data",
    ],
    "task_specs": ["dataset", "task_id", "data"],
    "rule_results": ["dataset", "trajectory_id", "spec_sha256", "gates_passed", "score", "data"],
    "judgments": [
        "id", "dataset", "trajectory_id", "other_id", "judge", "rubric_id", "rubric_version",
        "model", "mode", "order", "sample", "score", "verdict", "reasoning", "criteria", "raw",
        "prompt_tokens", "completion_tokens", "cost_usd", "latency_s", "cache_hit", "error",
        "request_sha256", "created_at", "config_sha256", "judge_config", "expected_score",
        "score_probs",
    ],
    "labels": [
        "id", "dataset", "trajectory_id", "rubric_id", "annotator", "value", "criteria", "note",
        "unsure", "skipped", "source", "adjudication", "created_at", "updated_at", "category",
    ],
    "label_history": [
        "id", "label_id", "value", "criteria", "note", "unsure", "skipped", "changed_at",
        "category",
    ],
    "pair_labels": [
        "id", "dataset", "trajectory_id", "other_id", "rubric_id", "annotator", "category",
        "left_id", "note", "unsure", "skipped", "source", "adjudication", "created_at",
        "updated_at",
    ],
    "pair_label_history": [
        "id", "pair_label_id", "category", "left_id", "note", "unsure", "skipped", "changed_at",
    ],
    "provider_batches": [
        "id", "dataset", "batch_id", "provider", "api_base", "model", "input_file_id", "status",
        "output_file_id", "error_file_id", "requests", "detail", "created_at", "updated_at",
    ],
    "provider_batch_items": [
        "batch", "custom_id", "request_sha256", "trajectory_id", "other_id", "judge",
        "config_sha256", "rubric_version", "order", "sample", "failed",
    ],
    "aligned_judges": [
        "name", "version", "created_at", "dataset", "base_judge", "config_sha256", "sha256",
        "data",
    ],
}  # fmt: skip


def test_schema_is_pinned(db_url: str) -> None:
    store = Store(db_url)
    insp = inspect(store.sql_engine)
    got = {
        t: [c["name"] for c in insp.get_columns(t)]
        for t in insp.get_table_names()
        if not t.startswith("sqlite_")
    }
    # the schema may only grow by ordered migrations; a change here must be deliberate
    for table, cols in EXPECTED_SCHEMA.items():
        assert got[table][: len(cols)] == cols, table
    assert set(EXPECTED_SCHEMA) <= set(got)


def test_sqlite_uses_wal_and_records_migrations(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    Store(f"sqlite:///{path}")
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert con.execute("SELECT version FROM schema_migrations").fetchall() == [
        (v,) for v in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)
    ]
    Store(f"sqlite:///{path}")  # re-opening does not re-apply
    assert con.execute("SELECT count(*) FROM schema_migrations").fetchone()[0] == 12


def test_import_is_idempotent_and_detects_changes(db_url: str) -> None:
    store = Store(db_url)
    items = [traj("a"), traj("b", trial=1)]
    specs = {"t1": TaskSpec(required_tools=["search"])}
    s1 = store.import_dataset("d", items, specs)
    assert (s1.added, s1.updated, s1.unchanged, s1.specs) == (2, 0, 0, 1)
    s2 = store.import_dataset("d", items, specs)
    assert (s2.added, s2.updated, s2.unchanged) == (0, 0, 2)
    changed = [traj("a", outcome=True), traj("b", trial=1)]
    s3 = store.import_dataset("d", changed)
    assert (s3.added, s3.updated, s3.unchanged) == (0, 1, 1)
    assert store.count_trajectories("d") == 2
    assert [t.id for t in store.trajectories("d")] == ["a", "b"]
    assert store.trajectory("d", "a") == changed[0]
    assert store.task_specs("d")["t1"].required_tools == ["search"]


def test_duplicates_fail_and_nothing_is_half_written(db_url: str) -> None:
    store = Store(db_url)
    with pytest.raises(InputError, match=r"record 1: task_id/trial: duplicate"):
        store.import_dataset("d", [traj("a"), traj("b")])  # same (t1, 0)
    with pytest.raises(InputError, match=r"record 1: id: duplicate id 'a'"):
        store.import_dataset("d", [traj("a"), traj("a", trial=1)])
    assert store.datasets() == []
    store.import_dataset("d", [traj("a")])
    # a second file claiming (t1, 0) under another id is refused, the first kept whole
    with pytest.raises(InputError, match="already stored as trajectory 'a'"):
        store.import_dataset("d", [traj("z", task="t2"), traj("b")])
    assert [t.id for t in store.trajectories("d")] == ["a"]


def test_a_stream_is_imported_in_batches_and_all_or_nothing(db_url: str) -> None:
    """1,200 trajectories from a generator span three write batches (WRITE_BATCH = 500): a
    stream that fails at its last item, or a clash found in the third batch, leaves the store
    as it was; a whole stream lands in import order."""
    from trajudge.store._import import WRITE_BATCH

    n = 1200
    assert n > 2 * WRITE_BATCH
    store = Store(db_url)

    def stream(fail_at: int | None = None, first_task: str = "t") -> Iterator[Trajectory]:
        for i in range(n):
            if i == fail_at:
                raise InputError(
                    "big.jsonl", record=f"line {i + 1}", field="id", reason="bad record"
                )
            yield traj(f"x{i}", task=first_task if i == 0 else "t", trial=i)

    with pytest.raises(InputError, match="line 1200: id: bad record"):
        store.import_dataset("d", stream(fail_at=n - 1))
    assert store.datasets() == []
    store.import_dataset("d", [traj("keep", task="t", trial=1100)])
    # x1100 claims (t, 1100), already "keep": found while writing the third batch
    with pytest.raises(InputError, match=r"record 1100: .*already stored as trajectory 'keep'"):
        store.import_dataset("d", stream(first_task="other"))
    assert [t.id for t in store.trajectories("d")] == ["keep"]
    s = store.import_dataset("e", stream())
    assert (s.added, s.updated, s.unchanged) == (n, 0, 0)
    assert [t.id for t in store.iter_trajectories("e")] == [f"x{i}" for i in range(n)]


def test_require_dataset_names_the_known_ones(db_url: str) -> None:
    store = Store(db_url)
    store.import_dataset("known", [traj("a")])
    with pytest.raises(InputError, match=r"dataset: no dataset 'other' \(known: known\)"):
        store.require_dataset("other")


def test_judgments_resume_without_duplicates_and_errors_are_replaced(db_url: str) -> None:
    store = Store(db_url)
    store.import_dataset("d", [traj("a")])
    row = dict(
        trajectory_id="a", judge="j", rubric_id="r", rubric_version="v1", model="m",
        mode="pointwise", order="ab", sample=0,
    )  # fmt: skip
    assert store.add_judgment("d", {**row, "error": "timeout"})
    assert store.judgment_keys("d") == set()  # an error is not a finished judgment
    assert store.add_judgment("d", {**row, "score": 4.0})
    assert not store.add_judgment("d", {**row, "score": 2.0})  # resumed run: kept once
    frame = store.judgments_frame("d")
    assert frame["score"].tolist() == [4.0]
    assert store.judgment_keys("d") == {("a", None, "j", None, "v1", "ab", 0)}
    # another judge configuration under the same name is another judgment, kept beside it
    assert store.add_judgment("d", {**row, "config_sha256": "c2", "score": 2.0})
    assert store.judgment_keys("d") == {
        ("a", None, "j", None, "v1", "ab", 0),
        ("a", None, "j", "c2", "v1", "ab", 0),
    }


def test_label_edits_keep_history(db_url: str) -> None:
    store = Store(db_url)
    store.import_dataset("d", [traj("a")])
    lid = store.save_label("d", "a", "r", "ann", 1.0, note="first")
    assert store.save_label("d", "a", "r", "ann", 0.0, note="changed my mind") == lid
    frame = store.labels_frame("d")
    assert frame["value"].tolist() == [0.0]
    hist = store.label_history(lid)
    assert [(h["value"], h["note"]) for h in hist] == [(1.0, "first")]


def test_concurrent_writers_on_one_store(db_url: str) -> None:
    store = Store(db_url)
    store.import_dataset("d", [traj(f"t{i}", task=f"t{i}") for i in range(50)])
    errors: list[BaseException] = []

    def work(w: int) -> None:
        s = Store(db_url)
        try:
            for i in range(50):
                s.save_label("d", f"t{i}", "r", f"ann{w}", float(i % 2))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(store.labels_frame("d")) == 200


def test_store_creates_the_folder_and_reports_an_unopenable_file(tmp_path: Path) -> None:
    nested = tmp_path / "a" / "b" / "s.db"
    Store(f"sqlite:///{nested}")
    assert nested.exists()
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(InputError, match="db: cannot open the store"):
        Store(f"sqlite:///{blocker}/s.db")
