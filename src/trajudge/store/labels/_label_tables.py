"""What single labels and pair labels share: one table of current labels, one of earlier
versions, and the same save, history and counting logic over either.

A :class:`LabelTable` names the two tables and the columns that identify the labeled thing
(``trajectory_id`` for an item, ``trajectory_id`` and ``other_id`` for a pair); every function
here is written once over it. ``_labels`` and ``_pair_labels`` only add what differs (the
value fields and their checks).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
from sqlalchemy import ColumnElement, Engine, Table, case, func, insert, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from trajudge.core import InputError, now_iso
from trajudge.store._schema import (
    datasets,
    label_history,
    labels,
    pair_label_history,
    pair_labels,
    trajectories,
)


@dataclass(frozen=True)
class LabelTable:
    """A label table, its history table (whose ``history_key`` column points at the label
    row) and the columns naming the labeled item (each a trajectory id of the dataset)."""

    table: Table
    history: Table
    history_key: str
    item_cols: tuple[str, ...]


ITEM_LABELS = LabelTable(labels, label_history, "label_id", ("trajectory_id",))
PAIR_LABELS = LabelTable(
    pair_labels, pair_label_history, "pair_label_id", ("trajectory_id", "other_id")
)


def require_trajectory(conn: Connection, src: str, dataset: str, trajectory_id: str) -> None:
    """Raise :class:`InputError` unless ``trajectory_id`` is a trajectory of ``dataset``."""
    found = conn.execute(
        select(trajectories.c.id).where(
            trajectories.c.dataset == dataset, trajectories.c.id == trajectory_id
        )
    ).first()
    if found is not None:
        return
    if conn.execute(select(datasets.c.name).where(datasets.c.name == dataset)).first() is None:
        names = conn.execute(select(datasets.c.name).order_by(datasets.c.name)).scalars()
        known = ", ".join(names) or "none"
        raise InputError(src, field="dataset", reason=f"no dataset {dataset!r} (known: {known})")
    raise InputError(
        src,
        field="trajectory_id",
        reason=f"unknown trajectory id {trajectory_id!r} in dataset {dataset!r}",
    )


def upsert_with_history(
    conn: Connection,
    lt: LabelTable,
    key: Mapping[str, Any],
    values: Mapping[str, Any],
    ts: str,
) -> tuple[int, str]:
    """Insert or edit one label row in the caller's transaction, the previous values copied
    to the history table first. Returns ``(id, what)``: "added", "updated" or "unchanged"
    (identical values: no history row, nothing written)."""
    table, history = lt.table, lt.history
    where = [table.c[k] == v for k, v in key.items()]
    # FOR UPDATE: a concurrent editor of the same label waits, then reads what we wrote, so no
    # edit is lost from the history (a no-op on SQLite, whose BEGIN IMMEDIATE already serialises)
    current = select(table).where(*where).with_for_update()
    prev = conn.execute(current).mappings().first()
    if prev is None:
        try:
            with conn.begin_nested():
                result = conn.execute(
                    insert(table).values(**key, created_at=ts, updated_at=ts, **values)
                )
            pk = result.inserted_primary_key
            assert pk is not None
            return int(pk[0]), "added"
        except IntegrityError:
            # another connection inserted the same key between our SELECT and INSERT (possible
            # on server databases; SQLite's BEGIN IMMEDIATE serialises writers): edit it instead
            prev = conn.execute(current).mappings().one()
    if all(prev[k] == v for k, v in values.items()):
        return int(prev["id"]), "unchanged"
    kept = {c.name: prev[c.name] for c in history.columns if c.name in prev and c.name != "id"}
    conn.execute(insert(history).values(**kept, **{lt.history_key: prev["id"]}, changed_at=ts))
    conn.execute(update(table).where(table.c.id == prev["id"]).values(updated_at=ts, **values))
    return int(prev["id"]), "updated"


def save_one(
    sql_write_engine: Engine,
    lt: LabelTable,
    src: str,
    key: Mapping[str, Any],
    values: Mapping[str, Any],
) -> int:
    """Save (or edit) one label in its own transaction, after checking that the dataset
    holds every trajectory of its item; the label's id."""

    with sql_write_engine.begin() as conn:
        for col in lt.item_cols:
            require_trajectory(conn, src, key["dataset"], key[col])
        label_id, _ = upsert_with_history(conn, lt, key, values, now_iso())
    return label_id


def labels_frame(
    sql_engine: Engine,
    lt: LabelTable,
    dataset: str,
    *,
    rubric_id: str | None = None,
    source: str | None = None,
) -> pd.DataFrame:
    """The current labels of a dataset (one row per label, every column), in save order."""
    t = lt.table
    q = select(t).where(t.c.dataset == dataset)
    if rubric_id is not None:
        q = q.where(t.c.rubric_id == rubric_id)
    if source is not None:
        q = q.where(t.c.source == source)
    with sql_engine.connect() as conn:
        rows = conn.execute(q.order_by(t.c.id)).mappings().all()
    return pd.DataFrame([dict(r) for r in rows], columns=[c.name for c in t.columns])


def history_rows(sql_engine: Engine, lt: LabelTable, label_id: int) -> list[dict[str, Any]]:
    """Earlier versions of one label, oldest first."""
    h = lt.history
    q = select(h).where(h.c[lt.history_key] == label_id).order_by(h.c.id)
    with sql_engine.connect() as conn:
        return [dict(r) for r in conn.execute(q).mappings()]


def item_rows(
    sql_engine: Engine, lt: LabelTable, dataset: str, item: Sequence[str], rubric_id: str | None
) -> list[dict[str, Any]]:
    """Every label of one item (its ids in ``lt.item_cols`` order): all annotators,
    adjudications included, in save order."""
    t = lt.table
    q = select(t).where(
        t.c.dataset == dataset, *(t.c[c] == v for c, v in zip(lt.item_cols, item, strict=True))
    )
    if rubric_id is not None:
        q = q.where(t.c.rubric_id == rubric_id)
    with sql_engine.connect() as conn:
        return [dict(r) for r in conn.execute(q.order_by(t.c.id)).mappings()]


def _human_rows(
    lt: LabelTable, dataset: str, rubric_id: str | None, source: str
) -> list[ColumnElement[bool]]:
    t = lt.table
    where = [t.c.dataset == dataset, t.c.source == source, t.c.adjudication.is_(False)]
    if rubric_id is not None:
        where.append(t.c.rubric_id == rubric_id)
    return where


def marks(
    sql_engine: Engine, lt: LabelTable, dataset: str, rubric_id: str, *, source: str
) -> list[tuple[tuple[str, ...], str, bool]]:
    """``(item, annotator, skipped)`` of every human label (adjudications left out): who
    answered which item, never the value; the rows are as many as the labels given."""
    t = lt.table
    q = select(*(t.c[c] for c in lt.item_cols), t.c.annotator, t.c.skipped).where(
        *_human_rows(lt, dataset, rubric_id, source)
    )
    n = len(lt.item_cols)
    with sql_engine.connect() as conn:
        return [(tuple(r[:n]), str(r[n]), bool(r[n + 1])) for r in conn.execute(q)]


def annotators(
    sql_engine: Engine, lt: LabelTable, dataset: str, rubric_id: str | None, *, source: str
) -> list[str]:
    """Annotators with at least one (non-adjudication) label, sorted."""
    t = lt.table
    q = select(t.c.annotator).where(*_human_rows(lt, dataset, rubric_id, source)).distinct()
    with sql_engine.connect() as conn:
        return sorted(r[0] for r in conn.execute(q))


def counts(
    sql_engine: Engine,
    lt: LabelTable,
    dataset: str,
    rubric_id: str,
    *,
    annotator: str | None,
    source: str,
) -> dict[str, int]:
    """Progress counts in one query: ``labeled`` and ``skipped`` labels (an annotator's, or
    everyone's) and the distinct ``items`` touched."""
    t = lt.table
    where = _human_rows(lt, dataset, rubric_id, source)
    if annotator is not None:
        where.append(t.c.annotator == annotator)
    touched = select(*(t.c[c] for c in lt.item_cols)).where(*where).distinct().subquery()
    q = select(
        func.count(),
        func.coalesce(func.sum(case((t.c.skipped.is_(True), 1), else_=0)), 0),
        select(func.count()).select_from(touched).scalar_subquery(),
    ).where(*where)
    with sql_engine.connect() as conn:
        total, skipped, items = conn.execute(q).one()
    return {"labeled": int(total) - int(skipped), "skipped": int(skipped), "items": int(items)}
