"""Labels to and from files: CSV, JSONL and Parquet.

Export writes atomically (a temporary file in the target folder, then a rename). Import checks
every row first and writes all of them in one transaction, or none: a bad row or an unknown
trajectory id raises :class:`InputError` naming the file, the row and the column.
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from trajudge.core import InputError, atomic_write_bytes, now_iso
from trajudge.store._names import LABEL_FORMATS, LabelFormat
from trajudge.store.labels._labels import encode_criteria, write_label
from trajudge.trajectories import load_json

if TYPE_CHECKING:
    from trajudge.store._store import Store

EXPORT_COLUMNS = [
    "dataset",
    "trajectory_id",
    "rubric_id",
    "annotator",
    "value",
    "category",
    "criteria",
    "note",
    "unsure",
    "skipped",
    "source",
    "adjudication",
    "created_at",
    "updated_at",
]
_SUFFIXES: dict[str, LabelFormat] = {
    ".csv": "csv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".parquet": "parquet",
    ".pq": "parquet",
}
_TRUE = {"true", "1", "yes", "y", "t"}
_FALSE = {"false", "0", "no", "n", "f", ""}


def label_format(path: str | Path, fmt: str | None = None) -> LabelFormat:
    """The file format: ``fmt`` when given, otherwise from the file name's suffix."""
    if fmt is not None:
        if fmt not in LABEL_FORMATS:
            raise InputError(
                str(path), field="format", reason=f"{fmt!r} is not one of csv, jsonl, parquet"
            )
        return fmt
    suffix = Path(path).suffix.lower()
    if suffix not in _SUFFIXES:
        raise InputError(
            str(path),
            field="format",
            reason="cannot tell the format from the suffix; pass --format",
        )
    return _SUFFIXES[suffix]


def labels_export_frame(
    store: Store, dataset: str, *, rubric_id: str | None = None, source: str | None = None
) -> pd.DataFrame:
    """The dataset's current labels with the export columns, in save order."""
    frame = store.labels_frame(dataset, rubric_id=rubric_id, source=source)
    out = frame.reindex(columns=EXPORT_COLUMNS)
    for col in ("unsure", "skipped", "adjudication"):
        out[col] = out[col].astype(bool)
    out["value"] = out["value"].astype(float)
    return out.reset_index(drop=True)


#: What makes a spreadsheet read a cell as a formula (OWASP, "CSV Injection").
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def inert_csv_cell(value: Any) -> Any:
    """A text cell that a spreadsheet would run as a formula (``=HYPERLINK(...)``, ``+1-1``),
    prefixed with ``'`` as OWASP advises; numbers and other text unchanged.

    >>> inert_csv_cell("=1+1"), inert_csv_cell("-2+3"), inert_csv_cell("ok"), inert_csv_cell(-2.0)
    ("'=1+1", "'-2+3", 'ok', -2.0)
    """
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def _read_csv_cell(value: Any) -> Any:
    """The cell :func:`inert_csv_cell` wrote, as it was: a label file round-trips."""
    if isinstance(value, str) and value.startswith("'") and value[1:].startswith(_FORMULA_START):
        return value[1:]
    return value


def encode_labels(frame: pd.DataFrame, fmt: LabelFormat) -> bytes:
    """A label frame as the bytes of a CSV, JSONL or Parquet file; a CSV's formula-like text
    cells are made inert (:func:`inert_csv_cell`), for the CLI export and the app's download."""
    if fmt == "csv":
        inert = frame.astype(object).map(inert_csv_cell)
        return inert.to_csv(index=False).encode("utf-8")
    if fmt == "jsonl":
        lines = [
            json.dumps({k: _jsonable(v) for k, v in rec.items()}, ensure_ascii=False)
            for rec in frame.to_dict(orient="records")
        ]
        return ("".join(line + "\n" for line in lines)).encode("utf-8")
    buf = io.BytesIO()
    frame.to_parquet(buf, index=False, engine="pyarrow")
    return buf.getvalue()


def _jsonable(v: Any) -> Any:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    if hasattr(v, "item"):  # numpy scalars
        return v.item()
    return v


def write_atomic(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename (no partial file)."""
    target = Path(path)
    if not target.parent.is_dir():
        raise InputError(str(target), reason="the folder does not exist")
    atomic_write_bytes(target, data)


def export_labels(
    store: Store,
    dataset: str,
    out: str | Path,
    *,
    fmt: str | None = None,
    rubric_id: str | None = None,
    source: str | None = None,
) -> int:
    """Write the dataset's labels to ``out`` (atomically) and return the number of rows."""
    kind = label_format(out, fmt)
    store.require_dataset(dataset)
    frame = labels_export_frame(store, dataset, rubric_id=rubric_id, source=source)
    write_atomic(out, encode_labels(frame, kind))
    return len(frame)


@dataclass(frozen=True)
class LabelImportSummary:
    """What a label import did: rows added, edited (history kept) and already identical."""

    dataset: str
    added: int
    updated: int
    unchanged: int
    outside: int = 0  # rows left out because their trajectory is not in the dataset

    @property
    def total(self) -> int:
        return self.added + self.updated + self.unchanged


def _read_rows(path: Path, kind: LabelFormat) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield ``(record name, row)`` pairs; the record name is what an error message shows."""
    src = str(path)
    if not path.is_file():
        raise InputError(src, reason="file not found")
    if kind == "jsonl":
        with path.open(encoding="utf-8") as fh:
            for n, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    rec = load_json(line, src, f"line {n}")
                except json.JSONDecodeError as exc:
                    raise InputError(
                        src, record=f"line {n}", reason=f"invalid JSON: {exc.msg}"
                    ) from None
                if not isinstance(rec, dict):
                    raise InputError(src, record=f"line {n}", reason="expected a JSON object")
                yield f"line {n}", rec
        return
    try:
        if kind == "csv":
            frame = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8")
            frame = frame.map(_read_csv_cell)
            first, name = 2, "line"  # line 1 is the header
        else:
            frame = pd.read_parquet(path, engine="pyarrow")
            first, name = 1, "row"
    except UnicodeDecodeError:
        raise InputError(src, reason="not UTF-8 text") from None
    except (ValueError, OSError, pd.errors.ParserError) as exc:
        reason = " ".join(str(exc).split())
        raise InputError(src, reason=f"cannot read {kind}: {reason}") from None
    frame = frame.astype(object).where(frame.notna(), None)
    for i, rec in enumerate(frame.to_dict(orient="records")):
        yield f"{name} {i + first}", {str(k): v for k, v in rec.items()}


def _text(src: str, where: str, col: str, v: Any, *, required: bool, max_len: int) -> str | None:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        v = ""
    if isinstance(v, bool) or not isinstance(v, str | int):
        raise InputError(
            src, record=where, field=col, reason=f"expected text, got {type(v).__name__}"
        )
    text = str(v).strip()
    if not text:
        if required:
            raise InputError(src, record=where, field=col, reason="must not be empty")
        return None
    if len(text) > max_len:
        raise InputError(src, record=where, field=col, reason=f"longer than {max_len} characters")
    return text


def _flag(src: str, where: str, col: str, v: Any) -> bool:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return False
    if isinstance(v, bool):
        return v
    text = str(v).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise InputError(src, record=where, field=col, reason=f"expected true/false, got {v!r}")


def _number(src: str, where: str, col: str, v: Any) -> float | None:
    if v is None or (isinstance(v, str) and not v.strip()):
        return None
    if isinstance(v, bool):
        raise InputError(src, record=where, field=col, reason="expected a number, got a boolean")
    try:
        num = float(v)
    except (TypeError, ValueError):
        raise InputError(
            src, record=where, field=col, reason=f"expected a number, got {v!r}"
        ) from None
    if math.isnan(num) and not isinstance(v, str):
        return None  # a missing value in a Parquet float column
    if not math.isfinite(num):
        raise InputError(
            src, record=where, field=col, reason=f"expected a finite number, got {v!r}"
        )
    return num


def _criteria(src: str, where: str, v: Any) -> str | None:
    if v is None or (isinstance(v, str) and not v.strip()):
        return None
    obj = v
    if isinstance(v, str):
        try:
            obj = load_json(v, src, where, "criteria")
        except json.JSONDecodeError:
            raise InputError(
                src, record=where, field="criteria", reason="expected a JSON object"
            ) from None
    if not isinstance(obj, dict):
        raise InputError(src, record=where, field="criteria", reason="expected a JSON object")
    return encode_criteria(obj)


def import_labels(
    store: Store,
    path: str | Path,
    dataset: str,
    *,
    annotator_column: str = "annotator",
    source: str = "human",
    fmt: str | None = None,
    only_dataset: bool = False,
) -> LabelImportSummary:
    """Import labels made elsewhere into ``dataset``: every row, or none.

    With ``only_dataset`` a row whose trajectory is not in the dataset (e.g. a labels file
    for a whole benchmark imported into a subset) is left out and counted in ``outside``;
    without it, such a row is an error. Every row is still validated.

    Columns: ``trajectory_id``, ``rubric_id``, the annotator column, ``value`` (a number;
    empty when ``category`` holds a nominal rubric's category name, or the row is
    ``skipped``), and optionally ``category``, ``note``, ``unsure``, ``skipped``,
    ``adjudication`` and ``criteria`` (a JSON object). A label that already exists for the
    same trajectory, rubric and annotator is edited with its previous values kept as history.
    """

    p = Path(path)
    src = str(p)
    kind = label_format(p, fmt)
    store.require_dataset(dataset)
    if not source.strip():
        raise InputError(src, field="source", reason="must not be empty")
    required = ("trajectory_id", "rubric_id", annotator_column, "value")
    rows: list[dict[str, Any]] = []
    seen: dict[tuple[Any, ...], str] = {}
    for where, rec in _read_rows(p, kind):
        if _text(src, where, "other_id", rec.get("other_id"), required=False, max_len=400):
            raise InputError(
                src,
                record=where,
                field="other_id",
                reason="a pair label: import pair labels with --pairs",
            )
        missing = [c for c in required if c not in rec]
        if missing:
            raise InputError(
                src,
                record=where,
                field=missing[0],
                reason=f"missing column (found: {', '.join(rec)})",
            )
        skipped = _flag(src, where, "skipped", rec.get("skipped"))
        value = _number(src, where, "value", rec["value"])
        category = _text(src, where, "category", rec.get("category"), required=False, max_len=200)
        if category is not None and value is not None:
            raise InputError(
                src,
                record=where,
                field="category",
                reason="a label has a value or a category, not both",
            )
        if value is None and category is None and not skipped:
            raise InputError(
                src,
                record=where,
                field="value",
                reason="must be a number, or category a nominal rubric's category (empty only when "
                "skipped)",
            )
        row = {
            "trajectory_id": _text(
                src, where, "trajectory_id", rec["trajectory_id"], required=True, max_len=400
            ),
            "rubric_id": _text(
                src, where, "rubric_id", rec["rubric_id"], required=True, max_len=200
            ),
            "annotator": _text(
                src, where, annotator_column, rec[annotator_column], required=True, max_len=100
            ),
            "value": value,
            "category": category,
            "note": _text(src, where, "note", rec.get("note"), required=False, max_len=100_000),
            "unsure": _flag(src, where, "unsure", rec.get("unsure")),
            "skipped": skipped,
            "adjudication": _flag(src, where, "adjudication", rec.get("adjudication")),
            "criteria": _criteria(src, where, rec.get("criteria")),
        }
        key = (row["trajectory_id"], row["rubric_id"], row["annotator"], row["adjudication"])
        if key in seen:
            raise InputError(
                src,
                record=where,
                field="trajectory_id",
                reason=f"duplicate label (same as {seen[key]}): {key[:3]}",
            )
        seen[key] = where
        rows.append({"where": where, **row})
    known = store.known_trajectory_ids(dataset, (r["trajectory_id"] for r in rows))
    outside = 0
    if only_dataset:
        kept = [r for r in rows if r["trajectory_id"] in known]
        outside = len(rows) - len(kept)
        rows = kept
    for r in rows:
        if r["trajectory_id"] not in known:
            raise InputError(
                src,
                record=r["where"],
                field="trajectory_id",
                reason=f"unknown trajectory id {r['trajectory_id']!r} in dataset {dataset!r}",
            )
    counts = {"added": 0, "updated": 0, "unchanged": 0}
    ts = now_iso()
    with store.sql_write_engine.begin() as conn:
        for r in rows:
            _, what = write_label(
                conn,
                dataset=dataset,
                trajectory_id=r["trajectory_id"],
                rubric_id=r["rubric_id"],
                annotator=r["annotator"],
                value=r["value"],
                category=r["category"],
                criteria=r["criteria"],
                note=r["note"],
                unsure=r["unsure"],
                skipped=r["skipped"],
                source=source,
                adjudication=r["adjudication"],
                ts=ts,
            )
            counts[what] += 1
    return LabelImportSummary(
        dataset, counts["added"], counts["updated"], counts["unchanged"], outside
    )
