"""Label rows: each label saved in its own transaction; edits are kept as history."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pandas as pd
from sqlalchemy import Engine, insert, select, update

from trajudge.store._schema import label_history, labels


class LabelsMixin:
    """Label queries for :class:`trajudge.store.Store`."""

    engine: Engine

    def save_label(
        self,
        dataset: str,
        trajectory_id: str,
        rubric_id: str,
        annotator: str,
        value: float | None,
        *,
        criteria: Mapping[str, Any] | None = None,
        note: str | None = None,
        unsure: bool = False,
        skipped: bool = False,
        source: str = "human",
        adjudication: bool = False,
    ) -> int:
        """Save (or edit) one label in its own transaction and return its id.

        Editing an existing label copies the previous values to ``label_history`` first, so
        nothing is silently overwritten.
        """
        from trajudge.store._store import now_iso

        ts = now_iso()
        crit = json.dumps(dict(criteria), sort_keys=True) if criteria else None
        key = (
            labels.c.dataset == dataset,
            labels.c.trajectory_id == trajectory_id,
            labels.c.rubric_id == rubric_id,
            labels.c.annotator == annotator,
            labels.c.adjudication == adjudication,
        )
        values = {
            "value": value,
            "criteria": crit,
            "note": note,
            "unsure": unsure,
            "skipped": skipped,
            "source": source,
            "updated_at": ts,
        }
        with self.engine.begin() as conn:
            prev = conn.execute(select(labels).where(*key)).mappings().first()
            if prev is None:
                result = conn.execute(
                    insert(labels).values(
                        dataset=dataset,
                        trajectory_id=trajectory_id,
                        rubric_id=rubric_id,
                        annotator=annotator,
                        adjudication=adjudication,
                        created_at=ts,
                        **values,
                    )
                )
                pk = result.inserted_primary_key
                assert pk is not None
                return int(pk[0])
            conn.execute(
                insert(label_history).values(
                    label_id=prev["id"],
                    value=prev["value"],
                    criteria=prev["criteria"],
                    note=prev["note"],
                    unsure=prev["unsure"],
                    skipped=prev["skipped"],
                    changed_at=ts,
                )
            )
            conn.execute(update(labels).where(labels.c.id == prev["id"]).values(**values))
            return int(prev["id"])

    def labels_frame(
        self, dataset: str, *, rubric_id: str | None = None, source: str | None = None
    ) -> pd.DataFrame:
        """Current labels of a dataset as a DataFrame."""
        q = select(labels).where(labels.c.dataset == dataset)
        if rubric_id is not None:
            q = q.where(labels.c.rubric_id == rubric_id)
        if source is not None:
            q = q.where(labels.c.source == source)
        with self.engine.connect() as conn:
            rows = conn.execute(q.order_by(labels.c.id)).mappings().all()
        return pd.DataFrame([dict(r) for r in rows], columns=[c.name for c in labels.columns])

    def label_history(self, label_id: int) -> list[dict[str, Any]]:
        """Earlier versions of one label, oldest first."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(label_history)
                .where(label_history.c.label_id == label_id)
                .order_by(label_history.c.id)
            ).mappings()
            return [dict(r) for r in rows]
