"""Pair-label export (CSV, JSONL, Parquet) and all-or-nothing import, on both backends."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from trajudge.core import InputError
from trajudge.store import (
    LABEL_FORMATS,
    PAIR_EXPORT_COLUMNS,
    Store,
    export_pair_labels,
    import_labels,
    import_pair_labels,
)
from trajudge.trajectories import Trajectory

DS = "d"
RUBRIC = "trajectory_preference"
COLS = ["trajectory_id", "other_id", "rubric_id", "annotator", "category", "left_id", "note"]
COLS += ["unsure", "skipped", "adjudication", "source"]
KEY = ["trajectory_id", "other_id", "annotator", "adjudication"]


def _trajectories() -> list[Trajectory]:
    return [Trajectory(id=f"t{i}", task_id="k", trial=i) for i in range(4)]


@pytest.fixture
def store(db_url: str) -> Store:
    s = Store(db_url)
    s.import_dataset(DS, _trajectories())
    return s


def _seed(store: Store) -> None:
    note = 'a "quoted", note\nwith newline, <b>not markup</b>'
    store.save_pair_label(DS, "t0", "t1", RUBRIC, "ann", "A", left_id="t1", note=note)
    store.save_pair_label(DS, "t0", "t2", RUBRIC, "ann", None, skipped=True)
    store.save_pair_label(DS, "t0", "t2", RUBRIC, "bob", "tie", left_id="t0", unsure=True)
    store.save_pair_label(DS, "t0", "t2", RUBRIC, "carol", "B", adjudication=True)
    store.save_pair_label(DS, "t1", "t3", RUBRIC, "bob", "B", left_id="t3")
    # an edit: history in the source store, only the current value travels
    store.save_pair_label(DS, "t1", "t3", RUBRIC, "bob", "A", left_id="t3")


def _current(store: Store) -> pd.DataFrame:
    frame = store.pair_labels_frame(DS)[COLS]
    return frame.sort_values(KEY).reset_index(drop=True)


@pytest.mark.parametrize("fmt", LABEL_FORMATS)
def test_pair_labels_round_trip(store: Store, tmp_path: Path, db_url: str, fmt: str) -> None:
    _seed(store)
    out = tmp_path / f"pairs.{fmt}"
    assert export_pair_labels(store, DS, out) == 5
    # into an empty store of the same backend (a second dataset of the same database)
    store.import_dataset("copy", _trajectories())
    summary = import_pair_labels(store, out, "copy")
    assert (summary.added, summary.updated, summary.unchanged) == (5, 0, 0)
    copied = store.pair_labels_frame("copy")[COLS].sort_values(KEY).reset_index(drop=True)
    pd.testing.assert_frame_equal(_current(store), copied)
    row = copied[(copied["annotator"] == "bob") & (copied["other_id"] == "t3")].iloc[0]
    assert (row["category"], row["left_id"]) == ("A", "t3")  # the edited value
    # a second import changes nothing; an edited file edits with history kept
    again = import_pair_labels(store, out, "copy")
    assert (again.added, again.updated, again.unchanged) == (0, 0, 5)


def test_edited_file_edits_with_history(store: Store, tmp_path: Path) -> None:
    _seed(store)
    out = tmp_path / "pairs.csv"
    export_pair_labels(store, DS, out)
    frame = pd.read_csv(out, dtype=str, keep_default_na=False)
    frame.loc[frame["annotator"] == "ann", "category"] = ["B", ""]  # second is the skip
    frame.to_csv(out, index=False)
    s = import_pair_labels(store, out, DS)
    assert (s.added, s.updated, s.unchanged) == (0, 1, 4)
    cur = store.pair_labels_frame(DS).set_index(["trajectory_id", "other_id", "annotator"])
    assert cur.loc[("t0", "t1", "ann"), "category"] == "B"
    history = store.pair_label_history(int(cur.loc[("t0", "t1", "ann"), "id"]))
    assert [h["category"] for h in history] == ["A"]


def test_export_columns_and_other_readers(store: Store, tmp_path: Path) -> None:
    _seed(store)
    export_pair_labels(store, DS, tmp_path / "p.csv")
    csv = pd.read_csv(tmp_path / "p.csv")
    assert list(csv.columns) == PAIR_EXPORT_COLUMNS
    assert list(csv["category"].fillna("")) == ["A", "", "tie", "B", "A"]
    assert csv.loc[0, "note"].startswith('a "quoted", note\nwith newline')
    export_pair_labels(store, DS, tmp_path / "p.jsonl", rubric_id=RUBRIC)
    lines = [json.loads(x) for x in (tmp_path / "p.jsonl").read_text().splitlines()]
    assert lines[1]["category"] is None and lines[1]["skipped"] is True
    assert lines[3]["adjudication"] is True and lines[3]["annotator"] == "carol"
    assert export_pair_labels(store, DS, tmp_path / "none.parquet", rubric_id="nope") == 0


def _jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


GOOD = {"trajectory_id": "t0", "other_id": "t1", "rubric_id": RUBRIC, "annotator": "q"}


@pytest.mark.parametrize(
    ("bad", "field", "reason"),
    [
        ({"category": "C"}, "category", "'C' is not A, B or tie"),
        ({"category": ""}, "category", "empty only when skipped"),
        ({"other_id": "t0", "category": "A"}, "other_id", "two different trajectories"),
        ({"left_id": "t3", "category": "A"}, "left_id", "'t3' is not one of the pair"),
        ({"other_id": "zz", "category": "A"}, "other_id", "unknown trajectory id 'zz'"),
        ({"category": "A", "unsure": "maybe"}, "unsure", "expected true/false"),
        ({"category": "A", "annotator": "ann"}, "trajectory_id", "duplicate label"),
    ],
)
def test_a_bad_row_names_file_row_and_field_and_writes_nothing(
    store: Store, tmp_path: Path, bad: dict[str, object], field: str, reason: str
) -> None:
    first = {**GOOD, "annotator": "ann", "category": "A"}
    path = _jsonl(tmp_path / "bad.jsonl", [first, {**GOOD, **bad}])
    with pytest.raises(InputError) as info:
        import_pair_labels(store, path, DS)
    err = info.value
    assert (err.file, err.record, err.field) == (str(path), "line 2", field)
    assert reason in err.reason
    assert store.pair_labels_frame(DS).empty  # the good first row was not written either


def test_missing_column_and_files_of_the_other_kind(store: Store, tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "p.jsonl", [{"trajectory_id": "t0", "rubric_id": RUBRIC}])
    with pytest.raises(InputError) as info:
        import_pair_labels(store, path, DS)
    assert (info.value.record, info.value.field) == ("line 1", "other_id")
    # a pair-label file given to the item import is refused by name, not read as items
    pairs = _jsonl(tmp_path / "q.jsonl", [{**GOOD, "category": "A", "value": 1}])
    with pytest.raises(InputError) as info:
        import_labels(store, pairs, DS)
    assert (info.value.record, info.value.field) == ("line 1", "other_id")
    assert "--pairs" in info.value.reason


def test_only_dataset_leaves_out_pairs_outside_it(store: Store, tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path / "p.jsonl",
        [{**GOOD, "category": "A"}, {**GOOD, "other_id": "elsewhere", "category": "B"}],
    )
    s = import_pair_labels(store, path, DS, only_dataset=True)
    assert (s.added, s.outside) == (1, 1)
    assert store.pair_labels_frame(DS)["other_id"].tolist() == ["t1"]
