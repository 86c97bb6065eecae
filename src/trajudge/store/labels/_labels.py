"""Label rows: each label saved in its own transaction; edits are kept as history.

Besides saving and reading labels, this module holds the small queries the labeling app runs
on every page view (the annotator queue, progress, one item's judgments and rule result), so
that they stay index-backed and cheap on a store of 100,000 trajectories.
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd
from sqlalchemy import Engine, select
from sqlalchemy.engine import Connection

from trajudge.core import InputError
from trajudge.store._schema import judgments, labels, rule_results, trajectories
from trajudge.store.labels._label_tables import (
    ITEM_LABELS,
    annotators,
    counts,
    history_rows,
    item_rows,
    labels_frame,
    marks,
    save_one,
    upsert_with_history,
)

_IN_CHUNK = 500  # ids per IN (...) list: well below SQLite's bound-parameter limit


def check_label(
    src: str,
    *,
    rubric_id: str,
    annotator: str,
    value: float | None,
    skipped: bool,
    category: str | None = None,
) -> None:
    """Refuse label fields the report could not use, as :func:`import_labels` does per row.

    ``rubric_id`` (at most 200 characters) and ``annotator`` (at most 100) must not be empty;
    ``value`` is a finite number, or ``category`` a category name (a nominal rubric's label,
    at most 200 characters), never both; neither only for a skipped item.
    """
    for field, text, max_len in (("rubric_id", rubric_id, 200), ("annotator", annotator, 100)):
        if not isinstance(text, str) or not text.strip():
            raise InputError(src, field=field, reason="must not be empty")
        if len(text) > max_len:
            raise InputError(src, field=field, reason=f"longer than {max_len} characters")
    if category is not None:
        if value is not None:
            raise InputError(
                src, field="category", reason="a label has a value or a category, not both"
            )
        if not isinstance(category, str) or not category.strip() or len(category) > 200:
            raise InputError(src, field="category", reason="a category name of 1-200 characters")
        return
    if value is None:
        if not skipped:
            raise InputError(src, field="value", reason="must be a number (None only when skipped)")
        return
    if isinstance(value, bool):
        raise InputError(src, field="value", reason="expected a number, got a boolean")
    if not isinstance(value, numbers.Real):
        raise InputError(src, field="value", reason=f"expected a number, got {value!r}")
    if not math.isfinite(value):
        raise InputError(src, field="value", reason=f"expected a finite number, got {value!r}")


def encode_criteria(criteria: Mapping[str, Any] | None) -> str | None:
    """Per-criterion values as canonical JSON text, or None when there are none."""
    return json.dumps(dict(criteria), sort_keys=True) if criteria else None


def label_row(
    *,
    dataset: str,
    trajectory_id: str,
    rubric_id: str,
    annotator: str,
    value: float | None,
    criteria: str | None,
    note: str | None,
    unsure: bool,
    skipped: bool,
    source: str,
    adjudication: bool,
    category: str | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(key, values)`` of one label row: the columns naming it and those an edit changes."""
    key = {
        "dataset": dataset,
        "trajectory_id": trajectory_id,
        "rubric_id": rubric_id,
        "annotator": annotator,
        "adjudication": adjudication,
    }
    values = {
        "value": value,
        "category": category,
        "criteria": criteria,
        "note": note,
        "unsure": unsure,
        "skipped": skipped,
        "source": source,
    }
    return key, values


def write_label(conn: Connection, *, ts: str, **fields: Any) -> tuple[int, str]:
    """Insert or edit one label (the fields of :func:`label_row`) inside the caller's
    transaction.

    Returns ``(label_id, what)`` with ``what`` one of ``"added"``, ``"updated"`` (the previous
    values were copied to ``label_history`` first) or ``"unchanged"`` (identical values: no
    history row, nothing written).
    """
    key, values = label_row(**fields)
    return upsert_with_history(conn, ITEM_LABELS, key, values, ts)


class LabelsMixin:
    """Label queries for :class:`trajudge.store.Store`."""

    url: str
    sql_engine: Engine
    sql_write_engine: Engine

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
        category: str | None = None,
    ) -> int:
        """Save (or edit) one label in its own transaction and return its id.

        ``value`` is the number of a binary or ordinal rubric; a nominal rubric's label is
        ``category`` (its name) with ``value`` None.

        Editing an existing label copies the previous values to ``label_history`` first, so
        nothing is silently overwritten; saving identical values again writes nothing.
        Raises :class:`~trajudge.trajectories.InputError` (and writes nothing) for a missing
        dataset, a trajectory id that is not in it, or a field :func:`check_label` refuses.
        """
        check_label(
            self.url,
            rubric_id=rubric_id,
            annotator=annotator,
            value=value,
            skipped=skipped,
            category=category,
        )
        key, values = label_row(
            dataset=dataset,
            trajectory_id=trajectory_id,
            rubric_id=rubric_id,
            annotator=annotator,
            value=None if value is None else float(value),
            criteria=encode_criteria(criteria),
            note=note,
            unsure=unsure,
            skipped=skipped,
            source=source,
            adjudication=adjudication,
            category=category,
        )
        return save_one(self.sql_write_engine, ITEM_LABELS, self.url, key, values)

    def labels_frame(
        self, dataset: str, *, rubric_id: str | None = None, source: str | None = None
    ) -> pd.DataFrame:
        """Current labels of a dataset as a DataFrame."""
        return labels_frame(
            self.sql_engine, ITEM_LABELS, dataset, rubric_id=rubric_id, source=source
        )

    def label_history(self, label_id: int) -> list[dict[str, Any]]:
        """Earlier versions of one label, oldest first."""
        return history_rows(self.sql_engine, ITEM_LABELS, label_id)

    # -- queries for the labeling app ---------------------------------------------------------
    def trajectory_keys(self, dataset: str) -> list[tuple[str, str | None]]:
        """``(id, intent)`` of every trajectory of a dataset, in import order."""
        q = (
            select(trajectories.c.id, trajectories.c.intent)
            .where(trajectories.c.dataset == dataset)
            .order_by(trajectories.c.seq)
        )
        with self.sql_engine.connect() as conn:
            return [(r[0], r[1]) for r in conn.execute(q)]

    def label_annotators(
        self, dataset: str, rubric_id: str | None = None, *, source: str = "human"
    ) -> list[str]:
        """Annotators with at least one (non-adjudication) label, sorted."""
        return annotators(self.sql_engine, ITEM_LABELS, dataset, rubric_id, source=source)

    def labels_on_items(
        self, dataset: str, rubric_id: str, ids: Sequence[str], *, source: str = "human"
    ) -> list[tuple[str, str, bool]]:
        """``(trajectory_id, annotator, skipped)`` of the non-adjudication labels on ``ids``."""
        out: list[tuple[str, str, bool]] = []
        with self.sql_engine.connect() as conn:
            for start in range(0, len(ids), _IN_CHUNK):
                q = select(labels.c.trajectory_id, labels.c.annotator, labels.c.skipped).where(
                    labels.c.dataset == dataset,
                    labels.c.trajectory_id.in_(list(ids[start : start + _IN_CHUNK])),
                    labels.c.rubric_id == rubric_id,
                    labels.c.adjudication.is_(False),
                    labels.c.source == source,
                )
                out.extend((r[0], r[1], bool(r[2])) for r in conn.execute(q))
        return out

    def label_marks(
        self, dataset: str, rubric_id: str, *, source: str = "human"
    ) -> list[tuple[str, str, bool]]:
        """``(trajectory_id, annotator, skipped)`` of every non-adjudication label of the
        rubric: what an annotator's progress is counted from."""
        rows = marks(self.sql_engine, ITEM_LABELS, dataset, rubric_id, source=source)
        return [(item[0], who, skipped) for item, who, skipped in rows]

    def label_counts(
        self, dataset: str, rubric_id: str, *, annotator: str | None = None, source: str = "human"
    ) -> dict[str, int]:
        """Progress counts: ``labeled`` and ``skipped`` labels, and distinct ``items`` touched.

        With ``annotator`` the counts are that annotator's; without, everyone's.
        """
        return counts(
            self.sql_engine, ITEM_LABELS, dataset, rubric_id, annotator=annotator, source=source
        )

    def item_labels(
        self, dataset: str, trajectory_id: str, rubric_id: str | None = None
    ) -> list[dict[str, Any]]:
        """Every label on one trajectory (all annotators, adjudications included)."""
        return item_rows(self.sql_engine, ITEM_LABELS, dataset, (trajectory_id,), rubric_id)

    def annotator_label_ids(
        self, dataset: str, rubric_id: str, annotator: str, *, limit: int = 200
    ) -> list[str]:
        """Trajectory ids this annotator labeled (or skipped), most recently edited first."""
        q = (
            select(labels.c.trajectory_id)
            .where(
                labels.c.dataset == dataset,
                labels.c.rubric_id == rubric_id,
                labels.c.annotator == annotator,
                labels.c.adjudication.is_(False),
            )
            .order_by(labels.c.updated_at.desc())
            .limit(limit)
        )
        with self.sql_engine.connect() as conn:
            return [r[0] for r in conn.execute(q)]

    def item_judgments(self, dataset: str, trajectory_id: str) -> list[dict[str, Any]]:
        """The judgments of one trajectory (as candidate), oldest first."""
        q = (
            select(judgments)
            .where(judgments.c.dataset == dataset, judgments.c.trajectory_id == trajectory_id)
            .order_by(judgments.c.id)
        )
        with self.sql_engine.connect() as conn:
            return [dict(r) for r in conn.execute(q).mappings()]

    def item_rule_result(self, dataset: str, trajectory_id: str) -> dict[str, Any] | None:
        """The stored rule result of one trajectory (as in :meth:`rule_results`), or None."""
        q = select(rule_results).where(
            rule_results.c.dataset == dataset, rule_results.c.trajectory_id == trajectory_id
        )
        with self.sql_engine.connect() as conn:
            r = conn.execute(q).first()
        if r is None:
            return None
        return {
            "gates_passed": r.gates_passed,
            "score": r.score,
            "spec_sha256": r.spec_sha256,
            "data": json.loads(r.data),
        }

    def known_trajectory_ids(self, dataset: str, ids: Iterable[str]) -> set[str]:
        """The subset of ``ids`` stored in ``dataset``."""
        wanted = list(dict.fromkeys(ids))
        found: set[str] = set()
        with self.sql_engine.connect() as conn:
            for start in range(0, len(wanted), _IN_CHUNK):
                q = select(trajectories.c.id).where(
                    trajectories.c.dataset == dataset,
                    trajectories.c.id.in_(wanted[start : start + _IN_CHUNK]),
                )
                found.update(r[0] for r in conn.execute(q))
        return found
