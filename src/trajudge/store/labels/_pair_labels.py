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
from sqlalchemy import Engine, select
from sqlalchemy.engine import Connection

from trajudge.core import InputError
from trajudge.store._schema import pair_labels
from trajudge.store.labels._label_tables import (
    PAIR_LABELS,
    annotators,
    counts,
    history_rows,
    item_rows,
    labels_frame,
    marks,
    save_one,
    upsert_with_history,
)
from trajudge.store.labels._labels import check_label

PAIR_CATEGORIES = ("A", "B", "tie")
_IN_CHUNK = 200


def check_pair_label(
    src: str,
    where: str | None,
    *,
    trajectory_id: str,
    other_id: str,
    category: str | None,
    left_id: str | None,
) -> None:
    """Refuse what no pair label may be (``where`` names the record in an error): a category
    other than A, B or tie, a pair of one trajectory with itself, a ``left_id`` not of the
    pair."""
    if category is not None and category not in PAIR_CATEGORIES:
        raise InputError(
            src, record=where, field="category", reason=f"{category!r} is not A, B or tie"
        )
    if trajectory_id == other_id:
        raise InputError(
            src, record=where, field="other_id", reason="a pair needs two different trajectories"
        )
    if left_id is not None and left_id not in (trajectory_id, other_id):
        raise InputError(
            src, record=where, field="left_id", reason=f"{left_id!r} is not one of the pair"
        )


def pair_label_row(
    *,
    dataset: str,
    trajectory_id: str,
    other_id: str,
    rubric_id: str,
    annotator: str,
    category: str | None,
    left_id: str | None,
    note: str | None,
    unsure: bool,
    skipped: bool,
    source: str,
    adjudication: bool,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(key, values)`` of one pair-label row: the columns naming it and those an edit
    changes."""
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
    return key, values


def write_pair_label(conn: Connection, *, ts: str, **fields: Any) -> tuple[int, str]:
    """Insert or edit one pair label (the fields of :func:`pair_label_row`) inside the
    caller's transaction; ``(id, what)`` as :func:`trajudge.store.labels._labels.write_label`."""
    key, values = pair_label_row(**fields)
    return upsert_with_history(conn, PAIR_LABELS, key, values, ts)


class PairLabelsMixin:
    """Pair-label queries for :class:`trajudge.store.Store`."""

    url: str
    sql_engine: Engine
    sql_write_engine: Engine

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
        check_label(
            self.url,
            rubric_id=rubric_id,
            annotator=annotator,
            value=None,
            skipped=skipped,
            category=category,
        )
        check_pair_label(
            self.url,
            None,
            trajectory_id=trajectory_id,
            other_id=other_id,
            category=category,
            left_id=left_id,
        )
        key, values = pair_label_row(
            dataset=dataset,
            trajectory_id=trajectory_id,
            other_id=other_id,
            rubric_id=rubric_id,
            annotator=annotator,
            category=category,
            left_id=left_id,
            note=note,
            unsure=unsure,
            skipped=skipped,
            source=source,
            adjudication=adjudication,
        )
        return save_one(self.sql_write_engine, PAIR_LABELS, self.url, key, values)

    def pair_labels_frame(
        self, dataset: str, *, rubric_id: str | None = None, source: str | None = None
    ) -> pd.DataFrame:
        """Current pair labels of a dataset as a DataFrame (one row per label)."""
        return labels_frame(
            self.sql_engine, PAIR_LABELS, dataset, rubric_id=rubric_id, source=source
        )

    def pair_label_history(self, pair_label_id: int) -> list[dict[str, Any]]:
        """Earlier versions of one pair label, oldest first."""
        return history_rows(self.sql_engine, PAIR_LABELS, pair_label_id)

    def pair_label_annotators(
        self, dataset: str, rubric_id: str | None = None, *, source: str = "human"
    ) -> list[str]:
        """Annotators with at least one (non-adjudication) pair label, sorted."""
        return annotators(self.sql_engine, PAIR_LABELS, dataset, rubric_id, source=source)

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
        with self.sql_engine.connect() as conn:
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

    def pair_label_marks(
        self, dataset: str, rubric_id: str, *, source: str = "human"
    ) -> list[tuple[str, str, str, bool]]:
        """``(trajectory_id, other_id, annotator, skipped)`` of every non-adjudication pair
        label of the rubric: what an annotator's progress is counted from."""
        rows = marks(self.sql_engine, PAIR_LABELS, dataset, rubric_id, source=source)
        return [(item[0], item[1], who, skipped) for item, who, skipped in rows]

    def pair_label_counts(
        self, dataset: str, rubric_id: str, *, annotator: str | None = None, source: str = "human"
    ) -> dict[str, int]:
        """``labeled`` and ``skipped`` pair labels (an annotator's, or everyone's) and the
        distinct ``items`` (pairs) touched."""
        return counts(
            self.sql_engine, PAIR_LABELS, dataset, rubric_id, annotator=annotator, source=source
        )

    def pair_item_labels(
        self, dataset: str, trajectory_id: str, other_id: str, rubric_id: str
    ) -> list[dict[str, Any]]:
        """Every label of one pair under one rubric (all annotators, adjudications too)."""
        return item_rows(
            self.sql_engine, PAIR_LABELS, dataset, (trajectory_id, other_id), rubric_id
        )
