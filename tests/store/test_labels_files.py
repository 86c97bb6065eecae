"""Label export (CSV, JSONL, Parquet; atomic) and all-or-nothing import."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from trajudge.core import InputError
from trajudge.store import LABEL_FORMATS, Store, export_labels, import_labels, label_format
from trajudge.trajectories import Trajectory

DS = "d"


@pytest.fixture
def store(db_url: str) -> Store:
    s = Store(db_url)
    s.import_dataset(DS, [Trajectory(id=f"t{i}", task_id=f"k{i}") for i in range(4)])
    return s


def _seed(store: Store) -> None:
    store.save_label(DS, "t0", "r", "ann", 4.0, note='a "quoted", note\nwith newline')
    store.save_label(DS, "t1", "r", "ann", None, skipped=True)
    store.save_label(DS, "t1", "r", "bob", 2.0, unsure=True, criteria={"tool_choice": 3})
    store.save_label(DS, "t1", "r", "carol", 3.0, adjudication=True)


@pytest.mark.parametrize("fmt", LABEL_FORMATS)
def test_export_then_import_round_trip(store: Store, tmp_path: Path, db_url: str, fmt: str) -> None:
    _seed(store)
    out = tmp_path / f"labels.{fmt}"
    assert export_labels(store, DS, out) == 4
    other = Store(f"sqlite:///{tmp_path / 'other.db'}")
    other.import_dataset(DS, [Trajectory(id=f"t{i}", task_id=f"k{i}") for i in range(4)])
    summary = import_labels(other, out, DS)
    assert (summary.added, summary.updated, summary.unchanged) == (4, 0, 0)
    cols = ["trajectory_id", "rubric_id", "annotator", "value", "criteria", "note", "unsure"]
    cols += ["skipped", "adjudication", "source"]
    key = ["trajectory_id", "annotator", "adjudication"]
    a = store.labels_frame(DS)[cols].sort_values(key).reset_index(drop=True)
    b = other.labels_frame(DS)[cols].sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b)
    # a second import changes nothing
    again = import_labels(other, out, DS)
    assert (again.added, again.updated, again.unchanged) == (0, 0, 4)


def test_export_formats_read_back_with_other_readers(store: Store, tmp_path: Path) -> None:
    _seed(store)
    export_labels(store, DS, tmp_path / "x.out", fmt="csv")
    csv = pd.read_csv(tmp_path / "x.out")
    assert list(csv["annotator"]) == ["ann", "ann", "bob", "carol"]
    assert csv.loc[0, "note"] == 'a "quoted", note\nwith newline'
    export_labels(store, DS, tmp_path / "x.jsonl")
    lines = (tmp_path / "x.jsonl").read_text().splitlines()
    assert json.loads(lines[1])["value"] is None and json.loads(lines[1])["skipped"] is True
    export_labels(store, DS, tmp_path / "x.parquet", rubric_id="nope")
    assert len(pd.read_parquet(tmp_path / "x.parquet")) == 0


def test_export_is_atomic(store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _seed(store)
    out = tmp_path / "labels.csv"
    out.write_text("old content")

    def boom(*_a: object, **_k: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr("os.fsync", boom)
    with pytest.raises(OSError):
        export_labels(store, DS, out)
    assert out.read_text() == "old content"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".labels")] == []


def test_import_csv_with_annotator_column_and_source(store: Store, tmp_path: Path) -> None:
    f = tmp_path / "ext.csv"
    f.write_text("trajectory_id,rubric_id,rater,value,note,unsure\nt0,r,x,1,,yes\nt2,r,y,0,ok,\n")
    s = import_labels(store, f, DS, annotator_column="rater", source="vendor")
    assert s.added == 2
    frame = store.labels_frame(DS)
    assert list(frame["annotator"]) == ["x", "y"]
    assert list(frame["source"]) == ["vendor", "vendor"]
    assert list(frame["unsure"]) == [True, False]
    assert frame.loc[1, "note"] == "ok" and pd.isna(frame.loc[0, "note"])


@pytest.mark.parametrize(
    ("body", "where", "field", "reason"),
    [
        ("t0,r,a,2\nt1,r,a,abc\n", "line 3", "value", "expected a number"),
        ("t0,r,a,2\nt1,r,a,\n", "line 3", "value", "empty only when skipped"),
        ("t0,r,a,2\nt1,r,,1\n", "line 3", "annotator", "must not be empty"),
        ("t0,r,a,2\nzzz,r,a,1\n", "line 3", "trajectory_id", "unknown trajectory id 'zzz'"),
        ("t0,r,a,2\nt0,r,a,3\n", "line 3", "trajectory_id", "duplicate label"),
        ("t0,r,a,inf\n", "line 2", "value", "finite"),
    ],
)
def test_import_bad_rows_write_nothing(
    store: Store, tmp_path: Path, body: str, where: str, field: str, reason: str
) -> None:
    f = tmp_path / "bad.csv"
    f.write_text("trajectory_id,rubric_id,annotator,value\n" + body)
    with pytest.raises(InputError) as info:
        import_labels(store, f, DS)
    err = info.value
    assert (err.file, err.record, err.field) == (str(f), where, field)
    assert reason in err.reason
    assert store.labels_frame(DS).empty  # all or nothing


def test_import_jsonl_errors_name_the_line(store: Store, tmp_path: Path) -> None:
    f = tmp_path / "bad.jsonl"
    good = {"trajectory_id": "t0", "rubric_id": "r", "annotator": "a", "value": 1}
    f.write_text(json.dumps(good) + "\n\n" + '{"trajectory_id": "t1", "rubric_id": "r"}\n')
    with pytest.raises(InputError) as info:
        import_labels(store, f, DS)
    assert info.value.record == "line 3" and info.value.field == "annotator"
    f.write_text(json.dumps(good) + "\n{not json\n")
    with pytest.raises(InputError, match="line 2: invalid JSON"):
        import_labels(store, f, DS)
    f.write_text(json.dumps({**good, "unsure": "maybe"}) + "\n")
    with pytest.raises(InputError, match="unsure: expected true/false"):
        import_labels(store, f, DS)
    assert store.labels_frame(DS).empty


def test_import_unknown_dataset_and_format(store: Store, tmp_path: Path) -> None:
    f = tmp_path / "x.csv"
    f.write_text("trajectory_id,rubric_id,annotator,value\nt0,r,a,1\n")
    with pytest.raises(InputError, match="no dataset 'nope'"):
        import_labels(store, f, "nope")
    with pytest.raises(InputError, match="pass --format"):
        label_format(tmp_path / "x.txt")
    with pytest.raises(InputError, match="file not found"):
        import_labels(store, tmp_path / "missing.csv", DS)


def test_only_dataset_leaves_out_and_counts_rows_of_other_trajectories(tmp_path: Path) -> None:
    from trajudge.store import Store
    from trajudge.store.labels._label_files import import_labels
    from trajudge.trajectories import Trajectory

    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    store.import_dataset("d", [Trajectory(id="a", task_id="t")])
    f = tmp_path / "labels.csv"
    f.write_text("trajectory_id,rubric_id,annotator,value\na,r,x,1\nb,r,x,0\nc,r,x,1\n")
    with pytest.raises(InputError, match="unknown trajectory id 'b'"):
        import_labels(store, f, "d")
    assert store.labels_frame("d").empty  # all or nothing
    s = import_labels(store, f, "d", only_dataset=True)
    assert (s.added, s.outside) == (1, 2)
    assert store.labels_frame("d")["trajectory_id"].tolist() == ["a"]


@pytest.mark.parametrize("fmt", LABEL_FORMATS)
def test_a_nominal_label_keeps_its_category_through_a_round_trip(
    store: Store, tmp_path: Path, fmt: str
) -> None:
    store.save_label(DS, "t0", "kinds", "ann", None, category="wrong_tool", note="n")
    store.save_label(DS, "t1", "r", "ann", 2.0)
    out = tmp_path / f"labels.{fmt}"
    assert export_labels(store, DS, out) == 2
    store.import_dataset("copy", [Trajectory(id=f"t{i}", task_id=f"k{i}") for i in range(4)])
    summary = import_labels(store, out, "copy")
    assert (summary.added, summary.updated, summary.unchanged) == (2, 0, 0)
    got = [store.item_labels("copy", t)[0] for t in ("t0", "t1")]
    assert [(r["value"], r["category"]) for r in got] == [(None, "wrong_tool"), (2.0, None)]


def test_a_row_with_both_a_value_and_a_category_is_refused(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "both.csv"
    path.write_text("trajectory_id,rubric_id,annotator,value,category\nt0,r,a,2,wrong_tool\n")
    with pytest.raises(InputError) as info:
        import_labels(store, path, DS)
    assert (info.value.record, info.value.field) == ("line 2", "category")
    assert store.labels_frame(DS).empty
