"""Pair labels to and from files (CSV, JSONL, Parquet), as single labels are.

Export writes atomically; import checks every row first and writes all of them in one
transaction, or none, a bad row raising :class:`InputError` naming the file, the row and the
column. The columns are :data:`PAIR_EXPORT_COLUMNS`; ``category`` is ``A`` (``trajectory_id``
is better), ``B`` (``other_id`` is) or ``tie`` in the pair's original numbering, whichever side
each trajectory was shown on (``left_id``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from trajudge.core import InputError, now_iso
from trajudge.store.labels._label_files import (
    LabelImportSummary,
    _flag,
    _read_rows,
    _text,
    encode_labels,
    label_format,
    write_atomic,
)
from trajudge.store.labels._pair_labels import check_pair_label, write_pair_label

if TYPE_CHECKING:
    from trajudge.store._store import Store

PAIR_EXPORT_COLUMNS = [
    "dataset",
    "trajectory_id",
    "other_id",
    "rubric_id",
    "annotator",
    "category",
    "left_id",
    "note",
    "unsure",
    "skipped",
    "source",
    "adjudication",
    "created_at",
    "updated_at",
]


def pair_labels_export_frame(
    store: Store, dataset: str, *, rubric_id: str | None = None, source: str | None = None
) -> pd.DataFrame:
    """The dataset's current pair labels with the export columns, in save order."""
    frame = store.pair_labels_frame(dataset, rubric_id=rubric_id, source=source)
    out = frame.reindex(columns=PAIR_EXPORT_COLUMNS)
    for col in ("unsure", "skipped", "adjudication"):
        out[col] = out[col].astype(bool)
    return out.reset_index(drop=True)


def export_pair_labels(
    store: Store,
    dataset: str,
    out: str | Path,
    *,
    fmt: str | None = None,
    rubric_id: str | None = None,
    source: str | None = None,
) -> int:
    """Write the dataset's pair labels to ``out`` (atomically); the number of rows."""
    kind = label_format(out, fmt)
    store.require_dataset(dataset)
    frame = pair_labels_export_frame(store, dataset, rubric_id=rubric_id, source=source)
    write_atomic(out, encode_labels(frame, kind))
    return len(frame)


def _pair_row(src: str, where: str, rec: dict[str, Any], annotator_column: str) -> dict[str, Any]:
    """One checked row of a pair-label file (the fields of ``write_pair_label``)."""

    def text(col: str, *, required: bool, max_len: int, name: str | None = None) -> str | None:
        return _text(src, where, name or col, rec.get(col), required=required, max_len=max_len)

    skipped = _flag(src, where, "skipped", rec.get("skipped"))
    category = text("category", required=False, max_len=20)
    if category is None and not skipped:
        raise InputError(
            src,
            record=where,
            field="category",
            reason="must be A, B or tie (empty only when skipped)",
        )
    a = text("trajectory_id", required=True, max_len=400)
    b = text("other_id", required=True, max_len=400)
    left = text("left_id", required=False, max_len=400)
    assert a is not None and b is not None
    check_pair_label(src, where, trajectory_id=a, other_id=b, category=category, left_id=left)
    return {
        "trajectory_id": a,
        "other_id": b,
        "rubric_id": text("rubric_id", required=True, max_len=200),
        "annotator": text(annotator_column, required=True, max_len=100),
        "category": category,
        "left_id": left,
        "note": text("note", required=False, max_len=100_000),
        "unsure": _flag(src, where, "unsure", rec.get("unsure")),
        "skipped": skipped,
        "adjudication": _flag(src, where, "adjudication", rec.get("adjudication")),
    }


def import_pair_labels(
    store: Store,
    path: str | Path,
    dataset: str,
    *,
    annotator_column: str = "annotator",
    source: str = "human",
    fmt: str | None = None,
    only_dataset: bool = False,
) -> LabelImportSummary:
    """Import pair labels into ``dataset``: every row, or none.

    Columns: ``trajectory_id`` and ``other_id`` (the pair, in its original numbering),
    ``rubric_id``, the annotator column, ``category`` (``A``, ``B`` or ``tie``; empty only
    when ``skipped`` is true), and optionally ``left_id`` (which of the two was shown on the
    left), ``note``, ``unsure``, ``skipped`` and ``adjudication``. A label that already
    exists for the same pair, rubric and annotator is edited with its previous values kept
    as history. With ``only_dataset`` a row naming a trajectory outside the dataset is left
    out (counted in ``outside``); without it, such a row is an error.
    """

    p = Path(path)
    src = str(p)
    kind = label_format(p, fmt)
    store.require_dataset(dataset)
    if not source.strip():
        raise InputError(src, field="source", reason="must not be empty")
    required = ("trajectory_id", "other_id", "rubric_id", annotator_column, "category")
    rows: list[dict[str, Any]] = []
    seen: dict[tuple[Any, ...], str] = {}
    for where, rec in _read_rows(p, kind):
        missing = [c for c in required if c not in rec]
        if missing:
            raise InputError(
                src,
                record=where,
                field=missing[0],
                reason=f"missing column (found: {', '.join(rec)})",
            )
        row = _pair_row(src, where, rec, annotator_column)
        key = tuple(
            row[c] for c in ("trajectory_id", "other_id", "rubric_id", "annotator", "adjudication")
        )
        if key in seen:
            raise InputError(
                src,
                record=where,
                field="trajectory_id",
                reason=f"duplicate label (same as {seen[key]}): {key[:4]}",
            )
        seen[key] = where
        rows.append({"where": where, **row})
    ids = [r[c] for r in rows for c in ("trajectory_id", "other_id")]
    known = store.known_trajectory_ids(dataset, ids)
    outside = 0
    if only_dataset:
        kept = [r for r in rows if {r["trajectory_id"], r["other_id"]} <= known]
        outside = len(rows) - len(kept)
        rows = kept
    for r in rows:
        for col in ("trajectory_id", "other_id"):
            if r[col] not in known:
                raise InputError(
                    src,
                    record=r["where"],
                    field=col,
                    reason=f"unknown trajectory id {r[col]!r} in dataset {dataset!r}",
                )
    tally = {"added": 0, "updated": 0, "unchanged": 0}
    ts = now_iso()
    with store.sql_write_engine.begin() as conn:
        for r in rows:
            fields = {k: v for k, v in r.items() if k != "where"}
            _, what = write_pair_label(conn, ts=ts, dataset=dataset, source=source, **fields)
            tally[what] += 1
    return LabelImportSummary(
        dataset, tally["added"], tally["updated"], tally["unchanged"], outside
    )
