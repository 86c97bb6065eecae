"""Judgment rows: written in small batched transactions as they complete, read back as a table."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from operator import itemgetter
from typing import Any

import pandas as pd
from sqlalchemy import Engine, delete, select
from sqlalchemy.dialects import sqlite
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from trajudge.core import now_iso
from trajudge.store._redact import redact
from trajudge.store._schema import datasets, judgments, trajectories

JUDGMENT_COLUMNS = [c.name for c in judgments.columns if c.name != "id"]
#: Free-text columns, redacted on write (:func:`trajudge.store.redact`): an error quoting a
#: key, or a verdict quoting one from a trajectory, never reaches the disk.
_TEXT_COLUMNS = ("error", "reasoning", "raw", "criteria", "judge_config")
_JSON_COLUMNS = ("criteria", "score_probs")


_KEY = ("trajectory_id", "other_id", "judge", "config_sha256", "rubric_version", "order", "sample")
_LOCK_CHUNK = 30_000  # trajectory ids per locking query (PostgreSQL allows 65,535 parameters)
_IN_CHUNK = 500  # ids per IN (...) list elsewhere: well below SQLite's bound-parameter limit


def _lock_trajectories(conn: Connection, dataset: str, trajectory_ids: Sequence[str]) -> None:
    """Make writers of the same trajectories' judgments take turns until commit.

    The unique key (``uq_judgment_key``) refuses a second copy, but only at insert: without
    the locks, two server-database writers would both read "not stored" and one would fall
    back to row-by-row inserts, and an error row could not be replaced safely. Locks the
    trajectories' rows (and the dataset's row when one of them is not stored) FOR NO KEY
    UPDATE, which leaves other writers' foreign-key checks alone, in one ORDER BY so that two
    writers of overlapping batches lock in the same order and cannot deadlock. SQLite
    needs nothing: its BEGIN IMMEDIATE already serialises writers.
    """
    if conn.dialect.name == "sqlite":
        return
    ids = sorted(set(trajectory_ids))
    found: set[str] = set()
    for start in range(0, len(ids), _LOCK_CHUNK):
        rows = conn.execute(
            select(trajectories.c.id)
            .where(
                trajectories.c.dataset == dataset,
                trajectories.c.id.in_(ids[start : start + _LOCK_CHUNK]),
            )
            .order_by(trajectories.c.id)
            .with_for_update(key_share=True)
        )
        found.update(r[0] for r in rows)
    if len(found) < len(ids):
        conn.execute(
            select(datasets.c.name)
            .where(datasets.c.name == dataset)
            .with_for_update(key_share=True)
        )


def _values(
    dataset: str, row: Mapping[str, Any], now: str, redacted: dict[str, str]
) -> dict[str, Any]:
    """A judgment row as stored: every column, criteria and score probabilities as JSON, text
    fields redacted.

    ``redacted`` remembers redactions within one write (a batch's rows share their judge's
    configuration text).
    """
    values = {k: row.get(k) for k in JUDGMENT_COLUMNS}
    values["dataset"] = dataset
    values["created_at"] = row.get("created_at") or now
    values["cache_hit"] = bool(row.get("cache_hit", False))
    for col in _JSON_COLUMNS:
        if isinstance(values.get(col), dict):
            values[col] = json.dumps(values[col], sort_keys=True)
    for col in _TEXT_COLUMNS:
        text = values.get(col)
        if isinstance(text, str) and text:
            clean = redacted.get(text)
            if clean is None:
                clean = redacted[text] = redact(text)
            values[col] = clean
    return values


@functools.cache
def _sqlite_insert() -> tuple[str, itemgetter[Any]]:
    """The judgments INSERT compiled for SQLite, and the getter of a row's values in the
    order of its ``?`` parameters."""
    compiled = judgments.insert().compile(dialect=sqlite.dialect(), column_keys=JUDGMENT_COLUMNS)
    return str(compiled), itemgetter(*(compiled.positiontup or ()))


def _execute_insert(conn: Connection, rows: list[dict[str, Any]]) -> None:
    """``INSERT`` of ``rows``. On SQLite, one ``executemany`` of the driver with the statement
    compiled once: the values are already what the columns hold (text, numbers, booleans,
    None), so SQLAlchemy's per-row parameter processing (about a third of writing a cached
    re-run's judgments) is skipped. Elsewhere SQLAlchemy's own bulk insert."""
    if conn.dialect.name != "sqlite":
        conn.execute(judgments.insert(), rows)
        return
    sql, values = _sqlite_insert()
    conn.exec_driver_sql(sql, list(map(values, rows)))


def _insert(conn: Connection, rows: list[dict[str, Any]]) -> set[tuple[Any, ...]]:
    """Insert ``rows`` at once and return the keys that were already stored (none under the
    locks; should a writer that took no lock have stored one, the rows go one by one)."""
    try:
        with conn.begin_nested():
            _execute_insert(conn, rows)
        return set()
    except IntegrityError:
        pass
    taken: set[tuple[Any, ...]] = set()
    for row in rows:
        try:
            with conn.begin_nested():
                _execute_insert(conn, [row])
        except IntegrityError:
            taken.add(tuple(row[k] for k in _KEY))
    return taken


class JudgmentsMixin:
    """Judgment queries for :class:`trajudge.store.Store`."""

    sql_engine: Engine
    sql_write_engine: Engine

    def add_judgment(self, dataset: str, row: Mapping[str, Any]) -> bool:
        """Insert one judgment in its own transaction (see :meth:`add_judgments`).

        Returns False (and writes nothing) when the same judgment key (trajectory, other,
        judge, judge configuration, rubric version, order, sample) is already stored, so a
        resumed batch never duplicates. An earlier row that holds only an error is replaced by
        a new result. Text fields are redacted before they are written.
        """
        return self.add_judgments(dataset, [row])[0]

    def add_judgments(self, dataset: str, rows: Sequence[Mapping[str, Any]]) -> list[bool]:
        """Insert judgments in ONE transaction, each as :meth:`add_judgment` would.

        Returns, per row, whether it was stored: False when its key is already stored without
        error (by an earlier run, a concurrent writer, or an earlier row of ``rows``); a
        stored error is replaced by the new row. The whole batch takes the same per-trajectory
        locks as a single write, so concurrent writers stay correct on every backend; it costs
        a few statements whatever the number of rows.
        """

        if not rows:
            return []
        now = now_iso()
        redacted: dict[str, str] = {}
        values = [_values(dataset, row, now, redacted) for row in rows]
        stored: list[bool] = []
        with self.sql_write_engine.begin() as conn:
            tids = sorted({v["trajectory_id"] for v in values})
            _lock_trajectories(conn, dataset, tids)
            names = sorted({v["judge"] for v in values})
            existing: dict[tuple[Any, ...], tuple[int, bool]] = {}
            cols = [judgments.c[k] for k in _KEY]
            for start in range(0, len(tids), _IN_CHUNK):
                q = select(judgments.c.id, judgments.c.error, *cols).where(
                    judgments.c.dataset == dataset,
                    judgments.c.judge.in_(names),
                    judgments.c.trajectory_id.in_(tids[start : start + _IN_CHUNK]),
                )
                for r in conn.execute(q):
                    existing[tuple(r[2:])] = (r.id, r.error is None)
            inserts: dict[tuple[Any, ...], dict[str, Any]] = {}
            stale: list[int] = []
            for v in values:
                key = tuple(v[k] for k in _KEY)
                earlier = inserts.get(key)
                if earlier is not None:  # the same key earlier in this batch
                    if earlier["error"] is None:
                        stored.append(False)
                        continue
                    inserts[key] = v  # a result replaces an error, as two writes would
                    stored.append(True)
                    continue
                prev = existing.get(key)
                if prev is not None:
                    if prev[1]:
                        stored.append(False)
                        continue
                    stale.append(prev[0])
                inserts[key] = v
                stored.append(True)
            for start in range(0, len(stale), _IN_CHUNK):
                conn.execute(
                    delete(judgments).where(judgments.c.id.in_(stale[start : start + _IN_CHUNK]))
                )
            taken = _insert(conn, list(inserts.values())) if inserts else set()
        if taken:
            stored = [
                ok and tuple(v[k] for k in _KEY) not in taken
                for ok, v in zip(stored, values, strict=True)
            ]
        return stored

    def judgment_keys(self, dataset: str, judge: str | None = None) -> set[tuple[Any, ...]]:
        """Keys of judgments already stored without error: what a resumed batch skips.

        A key is (trajectory, other, judge, config_sha256, rubric version, order, sample).
        """
        q = select(
            judgments.c.trajectory_id,
            judgments.c.other_id,
            judgments.c.judge,
            judgments.c.config_sha256,
            judgments.c.rubric_version,
            judgments.c.order,
            judgments.c.sample,
        ).where(judgments.c.dataset == dataset, judgments.c.error.is_(None))
        if judge is not None:
            q = q.where(judgments.c.judge == judge)
        with self.sql_engine.connect() as conn:
            return {tuple(r) for r in conn.execute(q)}

    def judgments_frame(self, dataset: str, judge: str | None = None) -> pd.DataFrame:
        """All judgments of a dataset as a DataFrame (one row per call)."""
        q = select(judgments).where(judgments.c.dataset == dataset)
        if judge is not None:
            q = q.where(judgments.c.judge == judge)
        with self.sql_engine.connect() as conn:
            rows = conn.execute(q.order_by(judgments.c.id)).mappings().all()
        return pd.DataFrame([dict(r) for r in rows], columns=[c.name for c in judgments.columns])
