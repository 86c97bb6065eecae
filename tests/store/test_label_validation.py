"""Every way a label is written refuses a label the report could not use, with one clear line.

Before: ``Store.save_label`` stored a label on an unknown trajectory id (after which every
report of the dataset failed) and raised a raw ``NoResultFound`` for a missing dataset.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from trajudge.core import InputError
from trajudge.report import build_report
from trajudge.store import Store, import_labels
from trajudge.trajectories import Trajectory

DS = "ds"
RUBRIC = "trajectory_reasonableness"


@pytest.fixture
def store(db_url: str) -> Store:
    s = Store(db_url)
    trajs = [
        Trajectory(id=f"t{i}", task_id=f"k{i % 2}", trial=i // 2, outcome=i % 3 == 0)
        for i in range(6)
    ]
    s.import_dataset(DS, trajs)
    s.import_dataset("other", [Trajectory(id="elsewhere", task_id="k0")])
    return s


@pytest.mark.parametrize("adjudication", [False, True])
@pytest.mark.parametrize(
    ("dataset", "tid", "field", "reason"),
    [
        (DS, "nope", "trajectory_id", "unknown trajectory id 'nope' in dataset 'ds'"),
        # a trajectory of another dataset is not one of this dataset's
        (DS, "elsewhere", "trajectory_id", "unknown trajectory id 'elsewhere' in dataset 'ds'"),
        ("missing", "t0", "dataset", "no dataset 'missing' (known: ds, other)"),
    ],
)
def test_label_on_an_unknown_target_is_refused(
    store: Store, dataset: str, tid: str, field: str, reason: str, adjudication: bool
) -> None:
    with pytest.raises(InputError) as info:
        store.save_label(dataset, tid, RUBRIC, "ann", 4.0, adjudication=adjudication)
    assert (info.value.file, info.value.field, info.value.reason) == (store.url, field, reason)
    assert store.labels_frame(DS).empty and store.labels_frame("other").empty


@pytest.mark.parametrize(
    ("kwargs", "field", "reason"),
    [
        ({"value": None}, "value", "must be a number (None only when skipped)"),
        ({"value": math.nan}, "value", "expected a finite number, got nan"),
        ({"value": math.inf}, "value", "expected a finite number, got inf"),
        ({"value": True}, "value", "expected a number, got a boolean"),
        ({"value": "4"}, "value", "expected a number, got '4'"),
        ({"annotator": "  "}, "annotator", "must not be empty"),
        ({"annotator": "a" * 101}, "annotator", "longer than 100 characters"),
        ({"rubric_id": ""}, "rubric_id", "must not be empty"),
    ],
)
def test_label_with_an_unusable_field_is_refused(
    store: Store, kwargs: dict[str, Any], field: str, reason: str
) -> None:
    args: dict[str, Any] = {"rubric_id": RUBRIC, "annotator": "ann", "value": 3.0, **kwargs}
    with pytest.raises(InputError) as info:
        store.save_label(DS, "t0", **args)
    assert (info.value.field, info.value.reason) == (field, reason)
    assert store.labels_frame(DS).empty


def test_valid_labels_still_save_and_the_report_builds(store: Store) -> None:
    store.save_label(DS, "t0", RUBRIC, "ann", None, skipped=True)  # a skip needs no value
    for i in range(6):
        store.save_label(DS, f"t{i}", RUBRIC, "bob", float(1 + i % 5))
    store.save_label(DS, "t1", RUBRIC, "lead", np.int64(5), adjudication=True)  # any real number
    with pytest.raises(InputError):
        store.save_label(DS, "nope", RUBRIC, "bob", 1.0)
    frame = store.labels_frame(DS)
    assert len(frame) == 8
    assert frame.loc[frame["annotator"] == "lead", "value"].tolist() == [5.0]
    report = build_report(store, DS, n_boot=10, ks=(1,))
    assert report.n_labeled_items == 6


def test_label_files_refuse_unknown_ids_and_missing_datasets(store: Store, tmp_path: Path) -> None:
    f = tmp_path / "labels.csv"
    f.write_text(f"trajectory_id,rubric_id,annotator,value\nt0,{RUBRIC},x,1\nnope,{RUBRIC},x,2\n")
    with pytest.raises(InputError, match="line 3: trajectory_id: unknown trajectory id 'nope'"):
        import_labels(store, f, DS)
    with pytest.raises(InputError, match="no dataset 'missing'"):
        import_labels(store, f, "missing")
    assert store.labels_frame(DS).empty
