"""Labels of a pair of trajectories (pairwise rubrics), each saved in its own transaction.

A pair label says which of two trajectories of one task is better: ``A``, ``B`` or ``tie`` in
the ORIGINAL numbering of the pair (A = ``trajectory_id``, B = ``other_id``, the order in
which ``trajudge judge`` stores a pair), whichever side each was shown on. ``left_id`` records
which trajectory the annotator saw on the left. Edits keep the previous values as history,
like single labels.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
from sqlalchemy import Engine, case, func, select

from trajudge.store._labels import check_label, require_trajectory, upsert_with_history
from trajudge.store._schema import pair_label_history, pair_labels
from trajudge.trajectories import InputError

PAIR_CATEGORIES = ("A", "B", "tie")
_IN_CHUNK = 200


class PairLabelsMixin:
    """Pair-label queries for :class:`trajudge.store.Store`."""

    url: str
    engine: Engine
    write_engine: Engine

    def save_pair_label(
        self,
        dataset: str,
        trajectory_id: str,
        other_id: str,
        rubric_id: str,
        annotator: str,
        category: str | None,
        *,
        left_id: str | None = None,
        note: str | None = None,
        unsure: bool = False,
        skipped: bool = False,
        source: str = "human",
        adjudication: bool = False,
    ) -> int:
        """Save (or edit) the label of the pair (``trajectory_id``, ``other_id``); its id.

        ``category`` is ``A`` (``trajectory_id`` is better), ``B`` (``other_id`` is) or
        ``tie``, None only when ``skipped``; ``left_id`` (one of the two) is the trajectory
        shown on the left. Raises :class:`InputError` (writing nothing) for an unknown dataset
        or trajectory, a pair of one trajectory with itself, or a bad field.
        """
        from trajudge.store._store import now_iso

        src = self.url
        check_label(
            src,
            rubric_id=rubric_id,
            annotator=annotator,
            value=None,
            skipped=skipped,
            category=category,
        )
        if category is not None and category not in PAIR_CATEGORIES:
            raise InputError(src, None, "category", f"{category!r} is not A, B or tie")
        if trajectory_id == other_id:
            raise InputError(src, None, "other_id", "a pair needs two different trajectories")
        if left_id is not None and left_id not in (trajectory_id, other_id):
            raise InputError(src, None, "left_id", f"{left_id!r} is not one of the pair")
        key = {
            "dataset": dataset,
            "trajectory_id": trajectory_id,
            "other_id": other_id,
            "rubric_id": rubric_id,
            "annotator": annotator,
            "adjudication": adjudication,
        }
        values = {
            "category": category,
            "left_id": left_id,
            "note": note,
            "unsure": unsure,
            "skipped": skipped,
            "source": source,
        }
        with self.write_engine.begin() as conn:
            require_trajectory(conn, src, dataset, trajectory_id)
            require_trajectory(conn, src, dataset, other_id)
            label_id, _ = upsert_with_history(
                conn, pair_labels, pair_label_history, "pair_label_id", key, values, now_iso()
            )
        return label_id

    def pair_labels_frame(
        self, dataset: str, *, rubric_id: str | None = None, source: str | None = None
    ) -> pd.DataFrame:
        """Current pair labels of a dataset as a DataFrame (one row per label)."""
        q = select(pair_labels).where(pair_labels.c.dataset == dataset)
        if rubric_id is not None:
            q = q.where(pair_labels.c.rubric_id == rubric_id)
        if source is not None:
            q = q.where(pair_labels.c.source == source)
        with self.engine.connect() as conn:
            rows = conn.execute(q.order_by(pair_labels.c.id)).mappings().all()
        return pd.DataFrame([dict(r) for r in rows], columns=[c.name for c in pair_labels.columns])

    def pair_label_history(self, pair_label_id: int) -> list[dict[str, Any]]:
        """Earlier versions of one pair label, oldest first."""
        q = (
            select(pair_label_history)
            .where(pair_label_history.c.pair_label_id == pair_label_id)
            .order_by(pair_label_history.c.id)
        )
        with self.engine.connect() as conn:
            return [dict(r) for r in conn.execute(q).mappings()]

    def pair_labels_on(
        self,
        dataset: str,
        rubric_id: str,
        pairs: Sequence[tuple[str, str]],
        *,
        source: str = "human",
    ) -> list[tuple[str, str, str, bool]]:
        """``(trajectory_id, other_id, annotator, skipped)`` of the labels on ``pairs``
        (adjudications left out): who labeled which pair, never the value."""
        out: list[tuple[str, str, str, bool]] = []
        wanted = set(pairs)
        firsts = sorted({a for a, _ in pairs})
        with self.engine.connect() as conn:
            for start in range(0, len(firsts), _IN_CHUNK):
                q = select(
                    pair_labels.c.trajectory_id,
                    pair_labels.c.other_id,
                    pair_labels.c.annotator,
                    pair_labels.c.skipped,
                ).where(
                    pair_labels.c.dataset == dataset,
                    pair_labels.c.rubric_id == rubric_id,
                    pair_labels.c.trajectory_id.in_(firsts[start : start + _IN_CHUNK]),
                    pair_labels.c.adjudication.is_(False),
                    pair_labels.c.source == source,
                )
                for r in conn.execute(q):
                    if (r[0], r[1]) in wanted:
                        out.append((r[0], r[1], r[2], bool(r[3])))
        return out

    def pair_label_counts(
        self, dataset: str, rubric_id: str, *, annotator: str | None = None, source: str = "human"
    ) -> dict[str, int]:
        """``labeled`` and ``skipped`` pair labels (an annotator's, or everyone's) and the
        distinct ``items`` (pairs) touched."""
        q = select(
            func.count(),
            func.coalesce(func.sum(case((pair_labels.c.skipped.is_(True), 1), else_=0)), 0),
        ).where(
            pair_labels.c.dataset == dataset,
            pair_labels.c.rubric_id == rubric_id,
            pair_labels.c.adjudication.is_(False),
            pair_labels.c.source == source,
        )
        pairs = (
            select(pair_labels.c.trajectory_id, pair_labels.c.other_id)
            .where(
                pair_labels.c.dataset == dataset,
                pair_labels.c.rubric_id == rubric_id,
                pair_labels.c.adjudication.is_(False),
                pair_labels.c.source == source,
            )
            .distinct()
        )
        if annotator is not None:
            q = q.where(pair_labels.c.annotator == annotator)
            pairs = pairs.where(pair_labels.c.annotator == annotator)
        with self.engine.connect() as conn:
            total, skipped = conn.execute(q).one()
            items = conn.execute(select(func.count()).select_from(pairs.subquery())).scalar_one()
        return {"labeled": int(total) - int(skipped), "skipped": int(skipped), "items": int(items)}

    def pair_item_labels(
        self, dataset: str, trajectory_id: str, other_id: str, rubric_id: str
    ) -> list[dict[str, Any]]:
        """Every label of one pair under one rubric (all annotators, adjudications too)."""
        q = select(pair_labels).where(
            pair_labels.c.dataset == dataset,
            pair_labels.c.trajectory_id == trajectory_id,
            pair_labels.c.other_id == other_id,
            pair_labels.c.rubric_id == rubric_id,
        )
        with self.engine.connect() as conn:
            return [dict(r) for r in conn.execute(q.order_by(pair_labels.c.id)).mappings()]
