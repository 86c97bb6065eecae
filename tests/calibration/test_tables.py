"""``read_table``: three formats, and errors that name file, row and column."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from trajudge.calibration import parse_verdict, read_table
from trajudge.core import InputError

FRAME = pd.DataFrame(
    {
        "item": ["a", "a", "b"],
        "judge": "j",
        "order": ["ab", "BA", "ab"],
        "sample": [0, 0, 1],
        "verdict": ["pass", "FAIL", "true"],
        "latency_s": [1.0, 2.0, np.nan],
    }
)


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_three_formats_read_the_same(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"j{suffix}"
    if suffix == ".csv":
        FRAME.to_csv(path, index=False)
    elif suffix == ".jsonl":
        FRAME.to_json(path, orient="records", lines=True)
    else:
        FRAME.to_parquet(path)
    df = read_table(path, schema="judgments")
    assert df["verdict"].tolist() == [1.0, 0.0, 1.0]
    assert df["score"].tolist() == [1.0, 0.0, 1.0]  # score falls back on the verdict
    assert df["order"].tolist() == ["ab", "ba", "ab"]
    assert df["sample"].tolist() == [0, 0, 1] and df["item"].tolist() == ["a", "a", "b"]
    assert df["latency_s"].iloc[:2].tolist() == [1.0, 2.0] and np.isnan(df["latency_s"].iloc[2])


def test_csv_error_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "j.csv"
    FRAME.assign(order=["ab", "ab", "sideways"]).to_csv(path, index=False)
    with pytest.raises(InputError) as info:
        read_table(path, schema="judgments")
    # header is line 1, the third data row is line 4
    assert str(info.value).startswith(f"{path}: line 4: order: ")


def test_jsonl_error_names_the_real_line(tmp_path: Path) -> None:
    path = tmp_path / "l.jsonl"
    path.write_text(
        '{"item": "a", "annotator": "h", "label": 1}\n\n'
        '{"item": "b", "annotator": "h", "label": "great"}\n'
    )
    with pytest.raises(InputError) as info:
        read_table(path, schema="labels")
    assert (info.value.record, info.value.field) == ("line 3", "label")
    path.write_text('{"item": "a"\n')
    with pytest.raises(InputError, match="line 1: invalid JSON"):
        read_table(path)


def test_missing_columns_file_and_format(tmp_path: Path) -> None:
    path = tmp_path / "l.csv"
    pd.DataFrame({"item": ["a"], "label": [1]}).to_csv(path, index=False)
    with pytest.raises(InputError) as info:
        read_table(path, schema="labels")
    assert info.value.field == "annotator" and info.value.reason == "missing column"
    with pytest.raises(InputError, match="no such file"):
        read_table(tmp_path / "nope.csv")
    (tmp_path / "x.xlsx").write_text("")
    with pytest.raises(InputError, match=r"\.csv, \.jsonl or \.parquet"):
        read_table(tmp_path / "x.xlsx")


def test_labels_and_outcomes_values(tmp_path: Path) -> None:
    path = tmp_path / "l.csv"
    pd.DataFrame({"item": [1, 2, 3], "annotator": "h", "label": ["4", "", "fail"]}).to_csv(
        path, index=False
    )
    df = read_table(path, schema="labels")
    assert df["item"].tolist() == ["1", "2", "3"]
    assert df["label"].iloc[0] == 4.0 and np.isnan(df["label"].iloc[1]) and df["label"].iloc[2] == 0
    out = tmp_path / "o.csv"
    pd.DataFrame({"item": ["a", "a"], "outcome": [1, 0]}).to_csv(out, index=False)
    with pytest.raises(InputError, match="duplicate"):
        read_table(out, schema="outcomes")


def test_parse_verdict() -> None:
    assert [parse_verdict(v) for v in (True, "Yes", 0, "0", "PASS", "f")] == [1, 1, 0, 0, 1, 0]
    assert np.isnan(parse_verdict(None)) and np.isnan(parse_verdict(""))
    with pytest.raises(ValueError, match="verdict"):
        parse_verdict("0.5")
