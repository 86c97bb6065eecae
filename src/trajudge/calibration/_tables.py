"""Reading and validating the judgments, labels and outcomes tables.

Bad input raises :class:`trajudge.trajectories.InputError` naming the file, the row and the
column; nothing is skipped silently. Rows are named the way a user finds them: ``line N`` in
a CSV (header = line 1) or JSONL file, ``row N`` (1-based) in Parquet or a DataFrame.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from trajudge.calibration._validation import parse_verdict
from trajudge.core import InputError
from trajudge.rubrics._kinds import CATEGORICAL, KINDS, SWAP, pairwise_verdict
from trajudge.trajectories import load_json

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
                obj = load_json(line, str(path), f"line {n}")
            except json.JSONDecodeError as exc:
                raise InputError(
                    str(path), record=f"line {n}", reason=f"invalid JSON: {exc.msg}"
                ) from exc
            if not isinstance(obj, dict):
                raise InputError(str(path), record=f"line {n}", reason="expected a JSON object")
            records.append(obj)
            lines.append(n)
    return pd.DataFrame.from_records(records), lines


@dataclass(frozen=True)
class RawTable:
    """A table as read, before validation, with how its rows are named in messages."""

    frame: pd.DataFrame
    source: str
    row_name: RowName

    def validate(
        self,
        schema: Schema,
        *,
        rows: Sequence[int] | None = None,
        kind: str | None = None,
        ba_mapped: bool | None = None,
    ) -> pd.DataFrame:
        """:func:`validate_table` of the whole table, or of the rows at positions ``rows``
        (messages still name each row's line in the file)."""
        if rows is None:
            frame, name = self.frame, self.row_name
        else:
            positions = list(rows)
            frame = self.frame.iloc[positions]
            name = lambda i: self.row_name(positions[i])  # noqa: E731
        return validate_table(
            frame, schema, source=self.source, row_name=name, kind=kind, ba_mapped=ba_mapped
        )


def read_raw_table(path: str | Path) -> RawTable:
    """Read a CSV, JSONL or Parquet table without validating it (see :func:`read_table`)."""
    p = Path(path)
    suffix = p.suffix.lower()
    if not p.is_file():
        raise InputError(str(p), reason="no such file")
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
            raise InputError(str(p), reason="expected a .csv, .jsonl or .parquet file")
    except InputError:
        raise
    except Exception as exc:  # pandas / pyarrow parse errors: report as bad input
        raise InputError(str(p), reason=f"cannot read: {exc}") from exc
    return RawTable(df, str(p), row_name)


def read_table(
    path: str | Path,
    *,
    schema: Schema | None = None,
    kind: str | None = None,
    ba_mapped: bool | None = None,
) -> pd.DataFrame:
    """Read a CSV, JSONL or Parquet table and, with ``schema``, validate and normalise it.

    Parameters
    ----------
    path : str or Path
        ``.csv``, ``.jsonl`` / ``.ndjson`` or ``.parquet`` / ``.pq``.
    schema : {"judgments", "labels", "outcomes"}, optional
        Validate the columns of that table (see :func:`validate_table`).
    kind, ba_mapped :
        The verdict kind and, for pairwise judgments, whether verdicts in order ``ba`` are
        already mapped back (see :func:`validate_table`).

    Raises
    ------
    InputError
        Unreadable file, unknown extension, missing column or bad value (file, row, column).
    """
    raw = read_raw_table(path)
    if schema is None:
        return raw.frame
    return raw.validate(schema, kind=kind, ba_mapped=ba_mapped)


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
            raise InputError(source, record=row_name(i), field=col, reason=str(exc)) from None
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


def _category(kind: str) -> Callable[[Any], Any]:
    """The parser of one categorical value: None for a missing one (a skipped label, or an
    errored judgment), A/B/tie for pairwise values, the stripped name for nominal ones."""

    def parse(value: Any) -> Any:
        if _missing(value) or not str(value).strip():
            return None
        if kind == "pairwise":
            return pairwise_verdict(value)
        text = str(value).strip()
        return str(int(value)) if isinstance(value, float) and value.is_integer() else text

    return parse


def validate_table(
    df: pd.DataFrame,
    schema: Schema,
    *,
    source: str = "<table>",
    row_name: RowName | None = None,
    kind: str | None = None,
    ba_mapped: bool | None = None,
) -> pd.DataFrame:
    """Check columns and values of a judgments / labels / outcomes table; return a clean copy.

    ``kind`` "pairwise" or "nominal": verdicts and labels are categories (``A``, ``B``,
    ``tie`` in any case; or names), kept as text in ``verdict`` / ``label`` (None where
    missing), and a judgment needs a ``verdict`` column. Pairwise verdicts are in the ORIGINAL
    numbering (A = the pair's first item) once validated: ``ba_mapped`` says whether rows of
    order ``ba`` (B shown first) already are (True) or name the side as shown (False: A and B
    are swapped here); with ``ba`` rows it must be given. Any other ``kind`` (or None): the
    numeric path below.

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
        raise InputError(source, field=", ".join(missing), reason="missing column")
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
    if kind is not None and kind not in KINDS:
        raise InputError(source, field="scale", reason=f"{kind!r} is not one of {', '.join(KINDS)}")
    categorical = kind in CATEGORICAL
    if schema == "labels":
        parse = _category(str(kind)) if categorical else _parse_label
        out["label"] = _column(out, "label", parse, source, name)
        _unique(out, ["item", "annotator", *rubric], source, name)
    elif schema == "outcomes":
        out["outcome"] = _column(out, "outcome", parse_verdict, source, name)
        _unique(out, ["item"], source, name)
    elif categorical:
        _categorical_judgments(out, str(kind), ba_mapped, source, name, rubric)
    else:
        _judgments(out, source, name, rubric)
    return out


def _categorical_judgments(
    out: pd.DataFrame,
    kind: str,
    ba_mapped: bool | None,
    source: str,
    name: RowName,
    rubric: list[str],
) -> None:
    if "verdict" not in out:
        raise InputError(
            source, field="verdict", reason=f"missing column (a {kind} judge's category)"
        )
    out["order"] = _column(out, "order", _order, source, name)
    out["sample"] = _column(out, "sample", _sample, source, name)
    out["error"] = _column(out, "error", _error, source, name) if "error" in out else None
    out["verdict"] = _column(out, "verdict", _category(kind), source, name)
    out["score"] = math.nan
    for col in _NUMERIC:
        if col in out:
            out[col] = _column(out, col, _float, source, name)
    for col in ("system_a", "system_b"):
        if col in out:
            out[col] = [None if _missing(v) else _ident(v) for v in out[col].tolist()]
    # a row without a verdict and without an error: the verdict is missing (an unparsed
    # answer); it is an errored call, counted and never scored
    lost = out["error"].isna() & out["verdict"].isna()
    out.loc[lost, "error"] = "no verdict"
    ba = out["order"] == "ba"
    if kind == "pairwise" and ba.any():
        if ba_mapped is None:
            i = int(np.flatnonzero(ba.to_numpy())[0])
            raise InputError(
                source,
                record=name(i),
                field="order",
                reason="pairwise verdicts in order ba: say whether they are already mapped back to "
                "the original numbering (--ba-mapped) or name the side as shown "
                "(--ba-as-shown)",
            )
        if not ba_mapped:
            out.loc[ba, "verdict"] = out.loc[ba, "verdict"].map(
                lambda v: None if v is None else SWAP[v]
            )
    _unique(out, ["item", "judge", "order", "sample", *rubric], source, name)


def infer_kind(judgments: pd.DataFrame, labels: pd.DataFrame) -> tuple[str, str]:
    """The verdict kind of raw tables, and why: from the ``verdict`` and ``label`` values.

    A/B/tie only (any case): ``pairwise``; other words: ``nominal``; pass/fail words and 0/1
    only: ``binary``; any other number: ``ordinal`` (its threshold comes from --threshold or the
    rubric). Numbers mixed with words are ambiguous: ``InputError`` asks for ``--scale``.

    >>> j = pd.DataFrame({"verdict": ["A", "b", None]}); l = pd.DataFrame({"label": ["tie"]})
    >>> infer_kind(j, l)[0]
    'pairwise'
    """
    values: list[Any] = []
    for frame, cols in ((judgments, ("verdict", "score")), (labels, ("label",))):
        for col in cols:
            if col in frame:
                values += [v for v in frame[col].tolist() if not _missing(v) and str(v).strip()]
    words, numbers, verdicts = set(), set(), set()
    for v in values:
        try:
            number = float(v)
        except (TypeError, ValueError):
            number = math.nan
        if not math.isnan(number) and not isinstance(v, bool):
            numbers.add(number)
            continue
        try:
            verdicts.add(parse_verdict(v))
        except ValueError:
            words.add(str(v).strip())
    shown = ", ".join(sorted(words)[:6]) + (" …" if len(words) > 6 else "")
    if words and (numbers or verdicts):
        raise InputError(
            "--scale",
            reason=f"cannot tell the verdict kind: the tables mix numbers or pass/fail with words "
            f"({shown}); give --scale binary, ordinal, pairwise or nominal",
        )
    if words:
        if {w.lower() for w in words} <= {"a", "b", "tie"}:
            return "pairwise", f"the values are {shown}"
        return "nominal", f"the values are categories ({shown})"
    if numbers <= {0.0, 1.0}:
        return "binary", "the values are pass/fail"
    return "ordinal", f"the values are numbers {min(numbers):g}..{max(numbers):g}"


def _unique(df: pd.DataFrame, key: list[str], source: str, name: RowName) -> None:
    dup = df.duplicated(key)
    if dup.any():
        i = int(np.flatnonzero(dup.to_numpy())[0])
        raise InputError(
            source, record=name(i), field=", ".join(key), reason="duplicate of an earlier row"
        )


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
        raise InputError(
            source,
            record=name(i),
            field="score",
            reason="no score or verdict, and no error recorded",
        )
    _unique(out, ["item", "judge", "order", "sample", *rubric], source, name)
