"""Aligned judges: each ``trajudge align`` result saved as a new version, never overwritten."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from sqlalchemy import Engine, func, insert, select

from trajudge.core import InputError, canonical_json, now_iso
from trajudge.store._schema import aligned_judges


class AlignedMixin:
    """Aligned-judge queries for :class:`trajudge.store.Store`.

    A record is a JSON-able mapping with at least ``name``, ``dataset`` and ``base_judge``
    (``config_sha256`` optional); the store adds ``version`` and ``created_at``.
    """

    sql_engine: Engine
    sql_write_engine: Engine

    def save_aligned_judge(self, record: Mapping[str, Any]) -> int:
        """Save an aligned judge and return its version (1, 2, ... per name).

        The same content as the name's latest version is not saved twice: that version is
        returned, so re-running an alignment that fits the same judge adds nothing.
        """

        name = str(record["name"])
        data = {k: v for k, v in record.items() if k not in ("version", "created_at")}
        text = canonical_json(data)
        sha = hashlib.sha256(text.encode()).hexdigest()
        with self.sql_write_engine.begin() as conn:
            last = conn.execute(
                select(aligned_judges.c.version, aligned_judges.c.sha256)
                .where(aligned_judges.c.name == name)
                .order_by(aligned_judges.c.version.desc())
                .limit(1)
            ).first()
            if last is not None and last.sha256 == sha:
                return int(last.version)
            version = 1 if last is None else int(last.version) + 1
            conn.execute(
                insert(aligned_judges).values(
                    name=name,
                    version=version,
                    created_at=now_iso(),
                    dataset=str(record["dataset"]),
                    base_judge=str(record["base_judge"]),
                    config_sha256=record.get("config_sha256"),
                    sha256=sha,
                    data=text,
                )
            )
        return version

    def aligned_judge(self, name: str, version: int | None = None) -> dict[str, Any] | None:
        """An aligned judge's record (its latest version by default); None when unknown."""
        q = select(aligned_judges).where(aligned_judges.c.name == name)
        if version is not None:
            q = q.where(aligned_judges.c.version == version)
        with self.sql_engine.connect() as conn:
            row = conn.execute(q.order_by(aligned_judges.c.version.desc()).limit(1)).first()
        return None if row is None else _record(row)

    def require_aligned_judge(self, name: str) -> dict[str, Any]:
        """:meth:`aligned_judge`, or an :class:`InputError` naming the known ones."""
        record = self.aligned_judge(name)
        if record is None:
            known = ", ".join(r["name"] for r in self.aligned_judges()) or "none"
            raise InputError(
                getattr(self, "url", "store"),
                field="judge",
                reason=f"no aligned judge {name!r} (known: {known}); run trajudge align first",
            )
        return record

    def aligned_judges(self, dataset: str | None = None) -> list[dict[str, Any]]:
        """The latest version of every aligned judge (fitted on ``dataset``, when given),
        by name."""
        latest = (
            select(aligned_judges.c.name, func.max(aligned_judges.c.version).label("v"))
            .group_by(aligned_judges.c.name)
            .subquery()
        )
        q = select(aligned_judges).join(
            latest,
            (aligned_judges.c.name == latest.c.name) & (aligned_judges.c.version == latest.c.v),
        )
        if dataset is not None:
            q = q.where(aligned_judges.c.dataset == dataset)
        with self.sql_engine.connect() as conn:
            rows = conn.execute(q.order_by(aligned_judges.c.name)).all()
        return [_record(r) for r in rows]


def _record(row: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(row.data)
    data.update(version=int(row.version), created_at=row.created_at)
    return data
