"""The active labelling design (``label_draws``, versions 9 and 12) and the label queue's
strategy the lead chose in the app (``label_strategies``, version 12).

A design is frozen once built, so every label keeps the probability it was drawn with. A
design with a learning phase is frozen in two parts: the uniform draws of the learning phase
(phase 1), then, once their labels are in, the rest of the items with the probabilities fitted
on them (phase 2); each part is written whole in one transaction, and only once.

The strategy rows are append-only: the newest of a dataset and rubric is in force, and each
row keeps who chose it, when, and what was in force before (the audit the lead's page shows).
Only an account with the role lead, enabled, may add one: the check reads the account in the
same transaction as the write.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
from sqlalchemy import Engine, insert, select
from sqlalchemy.exc import IntegrityError

from trajudge.core import now_iso
from trajudge.store._schema import accounts, label_draws, label_strategies

DRAW_COLUMNS = ["trajectory_id", "position", "probability", "drawn", "design", "phase"]
STRATEGY_COLUMNS = ["strategy", "budget", "learn", "previous", "name", "at"]


class NotLead(PermissionError):
    """Only an enabled account with the role lead may choose the label queue's strategy."""


class DrawsMixin:
    """Active-design and queue-strategy queries for :class:`trajudge.store.Store`."""

    sql_engine: Engine
    sql_write_engine: Engine

    def freeze_draws(
        self,
        dataset: str,
        rubric_id: str,
        rows: Sequence[Mapping[str, Any]],
        design: str,
        *,
        phase: int | None = None,
    ) -> bool:
        """Store the active design of ``dataset`` and ``rubric_id`` (rows of
        ``trajectory_id, position, probability, drawn``) unless one is stored: a design is
        frozen once built, so every label keeps the probability it was drawn with. True when
        these rows were written; False when a design was there (it is kept, these dropped).

        ``phase`` 2 adds the second part of a design whose phase 1 is stored (False when a
        phase 2 is there already); ``phase`` None or 1 starts a design. One transaction: a
        part is stored whole or not at all."""
        ts = now_iso()
        t = label_draws
        key = (t.c.dataset == dataset) & (t.c.rubric_id == rubric_id)
        with self.sql_write_engine.begin() as conn:
            there = select(t.c.position).where(key)
            if phase == 2:
                there = there.where(t.c.phase == 2)
            if conn.execute(there.limit(1)).first():
                return False
            try:
                with conn.begin_nested():
                    conn.execute(
                        insert(t),
                        [
                            {
                                "dataset": dataset,
                                "rubric_id": rubric_id,
                                "design": design,
                                "created_at": ts,
                                "phase": phase,
                                "trajectory_id": str(r["trajectory_id"]),
                                "position": int(r["position"]),
                                "drawn": bool(r["drawn"]),
                                "probability": float(r["probability"]),
                            }
                            for r in rows
                        ],
                    )
            except IntegrityError:  # another session froze the same part first: keep it
                return False
        return True

    def label_draws(self, dataset: str, rubric_id: str) -> pd.DataFrame:
        """The stored active design of a dataset and rubric, in the order of the draws
        (columns ``trajectory_id, position, probability, drawn, design, phase``); empty if
        none. ``phase`` is None for a design frozen whole, else 1 (learning) or 2."""
        t = label_draws
        q = (
            select(*(t.c[c] for c in DRAW_COLUMNS))
            .where(t.c.dataset == dataset, t.c.rubric_id == rubric_id)
            .order_by(t.c.position)
        )
        with self.sql_engine.connect() as conn:
            rows = conn.execute(q).all()
        out = pd.DataFrame([tuple(r) for r in rows], columns=DRAW_COLUMNS)
        out["phase"] = out["phase"].astype(object).where(out["phase"].notna(), None)
        return out

    def draw_phases(self, dataset: str, rubric_id: str) -> tuple[int, ...]:
        """The parts of the stored design: ``()`` none, ``(0,)`` frozen whole, ``(1,)`` the
        learning phase alone, ``(1, 2)`` both. Asked before every item under ``active``:
        two ``LIMIT 1`` lookups on the key's index, not a scan of the design (a DISTINCT
        over 100,000 draws took 16 ms on SQLite)."""
        t = label_draws
        key = (t.c.dataset == dataset) & (t.c.rubric_id == rubric_id)
        with self.sql_engine.connect() as conn:
            first = conn.execute(select(t.c.phase).where(key).limit(1)).first()
            if first is None:
                return ()
            if first.phase is None:  # a design frozen whole has no phase on any row
                return (0,)
            second = conn.execute(select(t.c.position).where(key, t.c.phase == 2).limit(1))
            return (1, 2) if second.first() is not None else (1,)

    def learning_draws(self, dataset: str, rubric_id: str) -> list[str]:
        """The items the learning phase (phase 1) drew, in the draw order: the few rows the
        app checks before each item while that phase lasts (reading the whole design, 25,000
        rows of a 100,000-item dataset, took 136 ms)."""
        t = label_draws
        q = (
            select(t.c.trajectory_id)
            .where(t.c.dataset == dataset, t.c.rubric_id == rubric_id)
            .where(t.c.phase == 1, t.c.drawn.is_(True))
            .order_by(t.c.position)
        )
        with self.sql_engine.connect() as conn:
            return [str(r[0]) for r in conn.execute(q)]

    def label_strategy(self, dataset: str, rubric_id: str) -> dict[str, Any] | None:
        """The strategy the lead chose for ``dataset`` and ``rubric_id`` (the newest row:
        ``strategy, budget, learn, previous, name, at``), None when no lead chose one."""
        log = self.label_strategy_log(dataset, rubric_id, limit=1)
        return log[0] if log else None

    def label_strategy_log(
        self, dataset: str, rubric_id: str, *, limit: int = 100
    ) -> list[dict[str, Any]]:
        """Every choice of strategy for ``dataset`` and ``rubric_id``, newest first."""
        t = label_strategies
        q = (
            select(*(t.c[c] for c in STRATEGY_COLUMNS))
            .where(t.c.dataset == dataset, t.c.rubric_id == rubric_id)
            .order_by(t.c.id.desc())
            .limit(limit)
        )
        with self.sql_engine.connect() as conn:
            return [dict(r) for r in conn.execute(q).mappings()]

    def set_label_strategy(
        self,
        dataset: str,
        rubric_id: str,
        strategy: str,
        *,
        name: str,
        started_with: str,
        budget: int | None = None,
        learn: int | None = None,
    ) -> dict[str, Any]:
        """Record that the lead ``name`` chose ``strategy`` (and for active, ``budget`` and
        ``learn``) for ``dataset`` and ``rubric_id``; returns the row written. ``previous`` is
        the strategy in force before: the newest row's, or ``started_with`` (the app's
        ``--strategy``) when this is the first choice.

        Raises :class:`NotLead` (nothing written) unless ``name`` is an enabled account with
        the role lead, as stored when the row is written."""
        t = label_strategies
        with self.sql_write_engine.begin() as conn:
            who = conn.execute(
                select(accounts.c.role, accounts.c.disabled).where(accounts.c.name == name)
            ).first()
            if who is None or who.disabled or who.role != "lead":
                raise NotLead(f"{name!r} is not an enabled lead: the strategy stays as it is")
            newest = conn.execute(
                select(t.c.strategy)
                .where(t.c.dataset == dataset, t.c.rubric_id == rubric_id)
                .order_by(t.c.id.desc())
                .limit(1)
            ).first()
            row = {
                "dataset": dataset,
                "rubric_id": rubric_id,
                "strategy": strategy,
                "budget": budget,
                "learn": learn,
                "previous": newest.strategy if newest is not None else started_with,
                "name": name,
                "at": now_iso(),
            }
            conn.execute(insert(t).values(**row))
        return {c: row[c] for c in STRATEGY_COLUMNS}
