"""Labels in the store: saved one by one, edits kept as history, safe under concurrency."""

from __future__ import annotations

import multiprocessing as mp
import threading

import pytest
from sqlalchemy import func, select

from trajudge.store import Store
from trajudge.store._schema import label_history, labels
from trajudge.trajectories import Step, Trajectory

DS = "d"


def _store(url: str, n: int = 5) -> Store:
    store = Store(url)
    store.import_dataset(
        DS,
        [
            Trajectory(
                id=f"t{i}",
                task_id=f"k{i}",
                steps=[Step(tool="a")],
                intent="x" if i % 2 else "y",
            )
            for i in range(n)
        ],
    )
    return store


def test_save_edit_and_history(db_url: str) -> None:
    store = _store(db_url)
    first = store.save_label(DS, "t1", "r", "ann", 3.0, note="hm", criteria={"a": 2})
    assert store.save_label(DS, "t1", "r", "ann", 3.0, note="hm", criteria={"a": 2}) == first
    assert store.label_history(first) == []  # identical values: nothing rewritten
    assert store.save_label(DS, "t1", "r", "ann", 5.0, note="sure now") == first
    history = store.label_history(first)
    assert [(h["value"], h["note"]) for h in history] == [(3.0, "hm")]
    frame = store.labels_frame(DS)
    assert len(frame) == 1
    assert frame.loc[0, "value"] == 5.0 and frame.loc[0, "note"] == "sure now"
    assert frame.loc[0, "criteria"] is None
    # an adjudication is a separate row, not an edit of the annotator's label
    adj = store.save_label(DS, "t1", "r", "ann", 4.0, adjudication=True)
    assert adj != first
    assert len(store.labels_frame(DS)) == 2


def test_progress_and_item_queries(db_url: str) -> None:
    store = _store(db_url)
    store.save_label(DS, "t0", "r", "ann", 1.0)
    store.save_label(DS, "t1", "r", "ann", None, skipped=True)
    store.save_label(DS, "t1", "r", "bob", 2.0)
    store.save_label(DS, "t2", "r", "bob", 2.0, adjudication=True)
    store.save_label(DS, "t3", "other", "bob", 2.0)
    assert store.label_counts(DS, "r", annotator="ann") == {"labeled": 1, "skipped": 1, "items": 2}
    # everyone, rubric r, adjudications excluded: t0 (ann), t1 (ann skipped, bob) -> 2 items
    assert store.label_counts(DS, "r") == {"labeled": 2, "skipped": 1, "items": 2}
    assert store.label_annotators(DS, "r") == ["ann", "bob"]
    assert sorted(store.labels_on_items(DS, "r", ["t1", "t2", "t9"])) == [
        ("t1", "ann", True),
        ("t1", "bob", False),
    ]
    assert [r["annotator"] for r in store.item_labels(DS, "t1", "r")] == ["ann", "bob"]
    assert set(store.annotator_label_ids(DS, "r", "ann")) == {"t0", "t1"}
    assert store.trajectory_keys(DS)[:2] == [("t0", "y"), ("t1", "x")]
    assert store.known_trajectory_ids(DS, ["t0", "nope", "t4"]) == {"t0", "t4"}
    assert store.item_judgments(DS, "t0") == []
    assert store.item_rule_result(DS, "t0") is None
    store.save_rule_results(
        DS, [{"trajectory_id": "t0", "spec_sha256": "s", "gates_passed": False, "data": {"a": 1}}]
    )
    assert store.item_rule_result(DS, "t0") == store.rule_results(DS)["t0"]


def _annotate(url: str, annotator: str, ids: list[str], barrier: object) -> None:
    store = Store(url)
    barrier.wait()  # type: ignore[attr-defined]
    for i, tid in enumerate(ids):
        store.save_label(DS, tid, "r", annotator, float(i % 5 + 1), note=f"{annotator}:{tid}")
    store.close()


def test_eight_annotators_write_1000_labels_at_once(db_url: str) -> None:
    url = db_url
    _store(url, n=125).close()
    ids = [f"t{i}" for i in range(125)]
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(8)
    procs = [
        ctx.Process(target=_annotate, args=(url, f"a{k}", ids[k:] + ids[:k], barrier))
        for k in range(8)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0] * 8
    store = Store(url)
    frame = store.labels_frame(DS)
    assert len(frame) == 8 * 125  # none lost
    assert not frame.duplicated(["trajectory_id", "annotator"]).any()  # none duplicated
    assert (frame["note"] == frame["annotator"] + ":" + frame["trajectory_id"]).all()
    with store.sql_engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(label_history)).scalar() == 0


def test_same_key_from_two_threads_is_one_row_with_history(db_url: str) -> None:
    store = _store(db_url)
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def write(value: float) -> None:
        try:
            s = Store(db_url)
            barrier.wait()
            for _ in range(20):
                s.save_label(DS, "t0", "r", "ann", value)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(v,)) for v in (1.0, 2.0)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with store.sql_engine.connect() as conn:
        n = conn.execute(select(func.count()).select_from(labels)).scalar()
        (label_id,) = conn.execute(select(labels.c.id)).one()
    assert n == 1
    hist = store.label_history(label_id)
    # every change of value left a history row; 40 saves, the first inserted
    assert 1 <= len(hist) <= 39
    assert {h["value"] for h in hist} <= {1.0, 2.0}


@pytest.mark.parametrize("skipped", [True, False])
def test_skip_is_a_label_without_value(db_url: str, skipped: bool) -> None:
    store = _store(db_url)
    value = None if skipped else 2.0
    store.save_label(DS, "t0", "r", "ann", value, skipped=skipped)
    row = store.labels_frame(DS).iloc[0]
    assert bool(row["skipped"]) is skipped


def test_pair_labels_keep_history_and_refuse_bad_fields(db_url: str) -> None:
    from trajudge.core import InputError
    from trajudge.store import Store
    from trajudge.trajectories import Step, Trajectory

    store = Store(db_url)
    trajs = [
        Trajectory(id=f"t-{i}", task_id="t", trial=i, steps=[Step(tool="search")]) for i in range(3)
    ]
    store.import_dataset("ds", trajs)
    first = store.save_pair_label("ds", "t-0", "t-1", "pref", "ann", "A", left_id="t-1")
    again = store.save_pair_label("ds", "t-0", "t-1", "pref", "ann", "tie", left_id="t-1")
    assert first == again
    assert [h["category"] for h in store.pair_label_history(first)] == ["A"]
    store.save_pair_label("ds", "t-0", "t-2", "pref", "ann", None, skipped=True)
    assert store.pair_label_counts("ds", "pref", annotator="ann") == {
        "labeled": 1,
        "skipped": 1,
        "items": 2,
    }
    assert sorted(store.pair_labels_on("ds", "pref", [("t-0", "t-1"), ("t-1", "t-2")])) == [
        ("t-0", "t-1", "ann", False)
    ]
    for kwargs, field in (
        ({"category": "C"}, "category"),
        ({"other_id": "t-0"}, "other_id"),
        ({"left_id": "t-2"}, "left_id"),
        ({"other_id": "nope"}, "trajectory_id"),
        ({"category": None}, "value"),
    ):
        args = {"category": "A", "other_id": "t-1", **kwargs}
        with pytest.raises(InputError) as info:
            store.save_pair_label(
                "ds", "t-0", args.pop("other_id"), "pref", "ann2", args.pop("category"), **args
            )
        assert info.value.field == field
    assert len(store.pair_labels_frame("ds")) == 2  # nothing written by the refused calls
    store.close()
