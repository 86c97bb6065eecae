"""Reading and validating the judgments, labels and outcomes tables.

Bad input raises :class:`trajudge.trajectories.InputError` naming the file, the row and the
column; nothing is skipped silently. Rows are named the way a user finds them: ``line N`` in
a CSV (header = line 1) or JSONL file, ``row N`` (1-based) in Parquet or a DataFrame.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from trajudge.calibration._validation import parse_verdict
from trajudge.trajectories import InputError

Schema = Literal["judgments", "labels", "outcomes"]
RowName = Callable[[int], str]

REQUIRED: dict[str, tuple[str, ...]] = {
    "judgments": ("item", "judge", "order", "sample"),
    "labels": ("item", "annotator", "label"),
    "outcomes": ("item", "outcome"),
}
_NUMERIC = ("latency_s", "cost_usd", "length")


def _row_name(kind: str) -> RowName:
    if kind == "csv":
        return lambda i: f"line {i + 2}"
    if kind == "jsonl":
        return lambda i: f"line {i + 1}"
    return lambda i: f"row {i + 1}"


def _read_jsonl(path: Path) -> tuple[pd.DataFrame, list[int]]:
    records, lines = [], []
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(str(path), f"line {n}", None, f"invalid JSON: {exc.msg}") from exc
            if not isinstance(obj, dict):
                raise InputError(str(path), f"line {n}", None, "expected a JSON object")
            records.append(obj)
            lines.append(n)
    return pd.DataFrame.from_records(records), lines


def read_table(path: str | Path, *, schema: Schema | None = None) -> pd.DataFrame:
    """Read a CSV, JSONL or Parquet table and, with ``schema``, validate and normalise it.

    Parameters
    ----------
    path : str or Path
        ``.csv``, ``.jsonl`` / ``.ndjson`` or ``.parquet`` / ``.pq``.
    schema : {"judgments", "labels", "outcomes"}, optional
        Validate the columns of that table (see :func:`validate_table`).

    Raises
    ------
    InputError
        Unreadable file, unknown extension, missing column or bad value (file, row, column).
    """
    p = Path(path)
    suffix = p.suffix.lower()
    if not p.is_file():
        raise InputError(str(p), None, None, "no such file")
    row_name = _row_name("csv")
    try:
        if suffix == ".csv":
            df = pd.read_csv(p, dtype=object, keep_default_na=True)
        elif suffix in (".jsonl", ".ndjson"):
            df, lines = _read_jsonl(p)
            row_name = lambda i: f"line {lines[i]}"  # noqa: E731 - keeps real line numbers
        elif suffix in (".parquet", ".pq"):
            df = pd.read_parquet(p)
            row_name = _row_name("parquet")
        else:
            raise InputError(str(p), None, None, "expected a .csv, .jsonl or .parquet file")
    except InputError:
        raise
    except Exception as exc:  # pandas / pyarrow parse errors: report as bad input
        raise InputError(str(p), None, None, f"cannot read: {exc}") from exc
    if schema is None:
        return df
    return validate_table(df, schema, source=str(p), row_name=row_name)


def _parse_label(value: Any) -> float:
    try:
        return parse_verdict(value)
    except ValueError:
        pass
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"cannot read {value!r} as a label (a number or pass/fail)") from None
    if math.isinf(out):
        raise ValueError(f"label {value!r} is not finite")
    return out


def _float(value: Any) -> float:
    if value is None or value is pd.NA or (isinstance(value, str) and not value.strip()):
        return math.nan
    return float(value)


def _column(
    df: pd.DataFrame, col: str, parse: Callable[[Any], Any], source: str, row_name: RowName
) -> list[Any]:
    out = []
    for i, value in enumerate(df[col].tolist()):
        try:
            out.append(parse(value))
        except (TypeError, ValueError) as exc:
            raise InputError(source, row_name(i), col, str(exc)) from None
    return out


def _missing(value: Any) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def _ident(value: Any) -> str:
    if _missing(value) or not str(value).strip():
        raise ValueError("missing value")
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _order(value: Any) -> str:
    text = "" if _missing(value) else str(value).strip().lower()
    if text not in ("ab", "ba"):
        raise ValueError(f"order must be 'ab' or 'ba', got {value!r}")
    return text


def _sample(value: Any) -> int:
    out = float(value) if not _missing(value) else math.nan
    if not (out >= 0 and out.is_integer()):
        raise ValueError(f"sample must be an integer >= 0, got {value!r}")
    return int(out)


def _error(value: Any) -> str | None:
    if _missing(value) or not str(value).strip():
        return None
    return str(value)


def validate_table(
    df: pd.DataFrame,
    schema: Schema,
    *,
    source: str = "<table>",
    row_name: RowName | None = None,
) -> pd.DataFrame:
    """Check columns and values of a judgments / labels / outcomes table; return a clean copy.

    * judgments: ``item``, ``judge``, ``order`` (ab|ba), ``sample`` (int >= 0) and ``score``
      and/or ``verdict``; optional ``error``, ``latency_s``, ``cost_usd``, ``length``,
      ``task_id``, ``agent_model``, ``judge_model``, ``rubric_id``. A row without error needs
      a score or a verdict; (item, judge, order, sample[, rubric_id]) must be unique.
    * labels: ``item``, ``annotator``, ``label`` (number or pass/fail; empty = skipped);
      optional ``rubric_id``: (item, annotator[, rubric_id]) must be unique, so one annotator
      may label an item under two rubrics.
    * outcomes: ``item``, ``outcome`` (pass/fail, 1/0); optional ``task_id``.

    An optional ``rubric_id`` column that is empty throughout is dropped; otherwise every row
    needs one.

    Raises
    ------
    InputError
        Naming ``source``, the row and the column.
    """
    name = row_name or _row_name("frame")
    missing = [c for c in REQUIRED[schema] if c not in df.columns]
    if schema == "judgments" and "score" not in df.columns and "verdict" not in df.columns:
        missing.append("score or verdict")
    if missing:
        raise InputError(source, None, ", ".join(missing), "missing column")
    out = df.copy().reset_index(drop=True)
    if "rubric_id" in out and schema != "outcomes":
        if all(_missing(v) or not str(v).strip() for v in out["rubric_id"].tolist()):
            out = out.drop(columns="rubric_id")
        else:
            out["rubric_id"] = _column(out, "rubric_id", _ident, source, name)
    rubric = ["rubric_id"] if "rubric_id" in out else []
    ids = {"judgments": ("item", "judge"), "labels": ("item", "annotator"), "outcomes": ("item",)}
    for col in ids[schema] + tuple(c for c in ("task_id",) if c in out.columns):
        if col == "task_id":
            out[col] = [None if _missing(v) else _ident(v) for v in out[col].tolist()]
        else:
            out[col] = _column(out, col, _ident, source, name)
    if schema == "labels":
        out["label"] = _column(out, "label", _parse_label, source, name)
        _unique(out, ["item", "annotator", *rubric], source, name)
    elif schema == "outcomes":
        out["outcome"] = _column(out, "outcome", parse_verdict, source, name)
        _unique(out, ["item"], source, name)
    else:
        _judgments(out, source, name, rubric)
    return out


def _unique(df: pd.DataFrame, key: list[str], source: str, name: RowName) -> None:
    dup = df.duplicated(key)
    if dup.any():
        i = int(np.flatnonzero(dup.to_numpy())[0])
        raise InputError(source, name(i), ", ".join(key), "duplicate of an earlier row")


def _judgments(out: pd.DataFrame, source: str, name: RowName, rubric: list[str]) -> None:
    out["order"] = _column(out, "order", _order, source, name)
    out["sample"] = _column(out, "sample", _sample, source, name)
    out["error"] = _column(out, "error", _error, source, name) if "error" in out else None
    out["verdict"] = (
        _column(out, "verdict", parse_verdict, source, name) if "verdict" in out else math.nan
    )
    out["score"] = _column(out, "score", _float, source, name) if "score" in out else math.nan
    out["score"] = out["score"].astype(float).fillna(out["verdict"].astype(float))
    for col in _NUMERIC:
        if col in out:
            out[col] = _column(out, col, _float, source, name)
    ok = out["error"].isna()
    empty = ok & out["score"].isna()
    if empty.any():
        i = int(np.flatnonzero(empty.to_numpy())[0])
        raise InputError(source, name(i), "score", "no score or verdict, and no error recorded")
    _unique(out, ["item", "judge", "order", "sample", *rubric], source, name)
