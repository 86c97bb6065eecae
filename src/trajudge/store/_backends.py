"""What the store remembers about tracing backends: where a pull stopped, what an export sent.

A pull's cursor is written by :meth:`~trajudge.store.Store.import_dataset` in the same
transaction as the trajectories it covers (``cursor=``), so a pull that fails midway leaves
the store at its last complete page and the next pull resumes there. Export marks record, per
target and item, the hash of what was sent to a target that cannot be read back.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from sqlalchemy import Engine, delete, insert, select, update
from sqlalchemy.engine import Connection

from trajudge.core import now_iso
from trajudge.store._schema import export_marks, pull_cursors


def save_cursor(conn: Connection, dataset: str, source: str, cursor: str) -> None:
    """Insert or move the cursor of ``source`` for ``dataset`` (inside the caller's
    transaction)."""
    values = {"cursor": cursor, "updated_at": now_iso()}
    where = (pull_cursors.c.dataset == dataset) & (pull_cursors.c.source == source)
    if conn.execute(update(pull_cursors).where(where).values(**values)).rowcount == 0:
        conn.execute(insert(pull_cursors).values(dataset=dataset, source=source, **values))


class BackendsMixin:
    """Pull cursors and export marks (tables of schema version 9)."""

    sql_engine: Engine
    sql_write_engine: Engine

    def pull_cursor(self, dataset: str, source: str) -> str | None:
        """Where the last pull of ``source`` into ``dataset`` stopped (None: never pulled)."""
        with self.sql_engine.connect() as conn:
            row = conn.execute(
                select(pull_cursors.c.cursor).where(
                    pull_cursors.c.dataset == dataset, pull_cursors.c.source == source
                )
            ).first()
        return None if row is None else str(row[0])

    def export_marks(self, target: str, dataset: str) -> dict[str, str]:
        """Item -> the hash of what was last sent to ``target`` for ``dataset``."""
        with self.sql_engine.connect() as conn:
            rows = conn.execute(
                select(export_marks.c.item, export_marks.c.sha256).where(
                    export_marks.c.target == target, export_marks.c.dataset == dataset
                )
            )
            return {str(r[0]): str(r[1]) for r in rows}

    def mark_exported(self, target: str, dataset: str, items: Mapping[str, str]) -> None:
        """Record that ``items`` (item -> hash) reached ``target``: called after each batch
        the target accepted, so an interrupted export resends only what it had not."""
        if not items:
            return
        with self.sql_write_engine.begin() as conn:
            keys: Iterable[str] = list(items)
            conn.execute(
                delete(export_marks).where(
                    export_marks.c.target == target,
                    export_marks.c.dataset == dataset,
                    export_marks.c.item.in_(keys),
                )
            )
            at = now_iso()
            conn.execute(
                insert(export_marks),
                [
                    {
                        "target": target,
                        "dataset": dataset,
                        "item": k,
                        "sha256": v,
                        "exported_at": at,
                    }
                    for k, v in items.items()
                ],
            )
