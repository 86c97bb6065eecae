"""Importing trajectories in bounded memory: check and serialise first, then write.

:func:`spool_rows` reads the trajectories once, checks them and writes their rows to a
temporary file in pickled batches (the store is not touched); :func:`write_rows` then writes
those batches inside the caller's transaction. Memory holds one batch, whatever the size of
the dataset.
"""

from __future__ import annotations

import hashlib
import pickle
from collections.abc import Iterable
from typing import IO, Any

from sqlalchemy import func, insert, select, update
from sqlalchemy.engine import Connection

from trajudge.core import InputError, canonical_json
from trajudge.store._schema import trajectories
from trajudge.trajectories import Trajectory

WRITE_BATCH = 500
"""Trajectories per INSERT statement (and per batch of the temporary file) when importing."""


def check_length(
    source: str, where: str | None, field: str, value: str | None, column: Any = None
) -> None:
    """Refuse text longer than its column (a server database would fail mid-write; SQLite
    would store it, so the same file would import on one backend and not on the other)."""
    limit = getattr((column if column is not None else trajectories.c[field]).type, "length", None)
    if value is not None and limit is not None and len(value) > limit:
        raise InputError(
            source, record=where, field=field, reason=f"longer than {limit} characters"
        )


# (id, task_id, trial, intent, outcome, n_steps, sha256, data): one stored trajectory
_Row = tuple[str, str, int, str | None, bool | None, int, str, str]


def spool_rows(items: Iterable[Trajectory], spool: IO[bytes], where: str) -> int:
    """Check ``items`` (column lengths, unique ids and (task_id, trial)) and write their rows
    to ``spool`` in pickled batches of :data:`WRITE_BATCH`; returns the number of batches."""
    seen_ids: set[str] = set()
    seen_pairs: set[tuple[str, int]] = set()
    batch: list[_Row] = []
    batches = 0
    for i, t in enumerate(items):
        for field in ("id", "task_id", "intent"):
            check_length(where, f"record {i}", field, getattr(t, field))
        if t.id in seen_ids:
            raise InputError(
                where, record=f"record {i}", field="id", reason=f"duplicate id {t.id!r}"
            )
        if (t.task_id, t.trial) in seen_pairs:
            raise InputError(
                where,
                record=f"record {i}",
                field="task_id/trial",
                reason=f"duplicate (task_id, trial) = ({t.task_id!r}, {t.trial})",
            )
        seen_ids.add(t.id)
        seen_pairs.add((t.task_id, t.trial))
        data = canonical_json(t.model_dump(mode="json"))
        batch.append(
            (
                t.id,
                t.task_id,
                t.trial,
                t.intent,
                t.outcome,
                len(t.steps),
                hashlib.sha256(data.encode()).hexdigest(),
                data,
            )
        )
        if len(batch) >= WRITE_BATCH:
            pickle.dump(batch, spool, protocol=pickle.HIGHEST_PROTOCOL)
            batches += 1
            batch = []
    if batch:
        pickle.dump(batch, spool, protocol=pickle.HIGHEST_PROTOCOL)
        batches += 1
    return batches


def write_rows(
    conn: Connection, name: str, batches: Iterable[list[_Row]], where: str
) -> tuple[int, int, int]:
    """Insert new rows, update changed ones: (added, updated, unchanged)."""
    existing = {
        r.id: (r.sha256, r.task_id, r.trial)
        for r in conn.execute(
            select(
                trajectories.c.id,
                trajectories.c.sha256,
                trajectories.c.task_id,
                trajectories.c.trial,
            ).where(trajectories.c.dataset == name)
        )
    }
    taken = {(tid, trial): i for i, (_, tid, trial) in existing.items()}
    next_seq = (
        conn.execute(
            select(func.max(trajectories.c.seq)).where(trajectories.c.dataset == name)
        ).scalar()
        or 0
    ) + 1
    added = updated = unchanged = 0
    i = 0
    for batch in batches:
        new_rows: list[dict[str, Any]] = []
        for tid, task_id, trial, intent, outcome, n_steps, sha, data in batch:
            owner = taken.get((task_id, trial))
            if owner is not None and owner != tid:
                raise InputError(
                    where,
                    record=f"record {i}",
                    field="task_id/trial",
                    reason=f"({task_id!r}, {trial}) is already stored as trajectory {owner!r}",
                )
            i += 1
            values = {
                "task_id": task_id,
                "trial": trial,
                "intent": intent,
                "outcome": outcome,
                "n_steps": n_steps,
                "sha256": sha,
                "data": data,
            }
            if tid in existing:
                if existing[tid][0] == sha:
                    unchanged += 1
                    continue
                conn.execute(
                    update(trajectories)
                    .where(trajectories.c.dataset == name, trajectories.c.id == tid)
                    .values(**values)
                )
                updated += 1
                continue
            new_rows.append({"dataset": name, "id": tid, "seq": next_seq, **values})
            next_seq += 1
            added += 1
        if new_rows:
            conn.execute(insert(trajectories), new_rows)
    return added, updated, unchanged
