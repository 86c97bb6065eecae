"""Judgment rows: written one by one as they complete, read back as a table."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pandas as pd
from sqlalchemy import Engine, delete, select
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from trajudge.store._redact import redact
from trajudge.store._schema import datasets, judgments, trajectories

JUDGMENT_COLUMNS = [c.name for c in judgments.columns if c.name != "id"]
#: Free-text columns, redacted on write (:func:`trajudge.store.redact`): an error quoting a
#: key, or a verdict quoting one from a trajectory, never reaches the disk.
_TEXT_COLUMNS = ("error", "reasoning", "raw", "criteria", "judge_config")
_JSON_COLUMNS = ("criteria", "score_probs")


def _nullable_eq(column: Any, value: Any) -> Any:
    return column.is_(None) if value is None else column == value


def _lock_trajectory(conn: Connection, dataset: str, trajectory_id: str) -> None:
    """Make writers of one trajectory's judgments take turns until commit.

    The unique key cannot do it alone: ``other_id`` is NULL for pointwise judgments and NULLs
    never collide in a unique constraint, so two server-database writers could both insert.
    Locks the trajectory's row (its dataset's row when the trajectory is not stored) FOR NO KEY
    UPDATE, which leaves other writers' foreign-key checks alone. SQLite renders no FOR
    UPDATE: its BEGIN IMMEDIATE already serialises writers.
    """
    row = conn.execute(
        select(trajectories.c.id)
        .where(trajectories.c.dataset == dataset, trajectories.c.id == trajectory_id)
        .with_for_update(key_share=True)
    ).first()
    if row is None:
        conn.execute(
            select(datasets.c.name)
            .where(datasets.c.name == dataset)
            .with_for_update(key_share=True)
        )


class JudgmentsMixin:
    """Judgment queries for :class:`trajudge.store.Store`."""

    engine: Engine
    write_engine: Engine

    def add_judgment(self, dataset: str, row: Mapping[str, Any]) -> bool:
        """Insert one judgment in its own transaction.

        Returns False (and writes nothing) when the same judgment key (trajectory, other,
        judge, judge configuration, rubric version, order, sample) is already stored, so a
        resumed batch never duplicates. An earlier row that holds only an error is replaced by
        a new result. Text fields are redacted before they are written.
        """
        from trajudge.store._store import now_iso

        values = {k: row.get(k) for k in JUDGMENT_COLUMNS if k in row}
        values["dataset"] = dataset
        values.setdefault("created_at", now_iso())
        values.setdefault("cache_hit", False)
        for col in _JSON_COLUMNS:
            if isinstance(values.get(col), dict):
                values[col] = json.dumps(values[col], sort_keys=True)
        for col in _TEXT_COLUMNS:
            text = values.get(col)
            if isinstance(text, str):
                values[col] = redact(text)
        key = (
            judgments.c.dataset == dataset,
            judgments.c.trajectory_id == values["trajectory_id"],
            _nullable_eq(judgments.c.other_id, values.get("other_id")),
            judgments.c.judge == values["judge"],
            _nullable_eq(judgments.c.config_sha256, values.get("config_sha256")),
            judgments.c.rubric_version == values["rubric_version"],
            judgments.c.order == values["order"],
            judgments.c.sample == values["sample"],
        )
        with self.write_engine.begin() as conn:
            _lock_trajectory(conn, dataset, row["trajectory_id"])
            prev = conn.execute(select(judgments.c.id, judgments.c.error).where(*key)).first()
            if prev is not None:
                if prev.error is None:
                    return False
                conn.execute(delete(judgments).where(judgments.c.id == prev.id))
            try:
                with conn.begin_nested():
                    conn.execute(judgments.insert().values(**values))
            except IntegrityError:  # a concurrent writer stored it first
                return False
        return True

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
        with self.engine.connect() as conn:
            return {tuple(r) for r in conn.execute(q)}

    def judgments_frame(self, dataset: str, judge: str | None = None) -> pd.DataFrame:
        """All judgments of a dataset as a DataFrame (one row per call)."""
        q = select(judgments).where(judgments.c.dataset == dataset)
        if judge is not None:
            q = q.where(judgments.c.judge == judge)
        with self.engine.connect() as conn:
            rows = conn.execute(q.order_by(judgments.c.id)).mappings().all()
        return pd.DataFrame([dict(r) for r in rows], columns=[c.name for c in judgments.columns])
