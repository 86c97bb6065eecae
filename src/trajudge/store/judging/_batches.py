"""Batches submitted to a provider's batch API (``trajudge judge --engine batch``).

A batch is recorded as soon as the provider has accepted it, with the requests in it (their
``custom_id``, the judgment each fills and the request's cache key), so that a second run
collects it instead of submitting (and paying for) the same requests again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import Engine, insert, select, update

from trajudge.core import now_iso
from trajudge.store._schema import provider_batch_items, provider_batches

#: Item columns that make up the judgment's key (as ``Store.judgment_keys``).
ITEM_KEY = (
    "trajectory_id",
    "other_id",
    "judge",
    "config_sha256",
    "rubric_version",
    "order",
    "sample",
)
_IN_CHUNK = 500


class ProviderBatchesMixin:
    """Provider batch queries for :class:`trajudge.store.Store`."""

    sql_engine: Engine
    sql_write_engine: Engine

    def add_provider_batch(
        self, dataset: str, batch: Mapping[str, Any], items: Sequence[Mapping[str, Any]]
    ) -> int:
        """Record a submitted batch and its requests in one transaction; returns its row id.

        ``batch`` holds ``batch_id``, ``provider``, ``api_base``, ``model``, ``input_file_id``
        and ``status``; each item ``custom_id``, ``request_sha256`` and the judgment key
        (:data:`ITEM_KEY`).
        """

        now = now_iso()
        with self.sql_write_engine.begin() as conn:
            inserted = conn.execute(
                insert(provider_batches).values(
                    dataset=dataset,
                    requests=len(items),
                    created_at=now,
                    updated_at=now,
                    **{
                        k: batch.get(k)
                        for k in (
                            "batch_id",
                            "provider",
                            "api_base",
                            "model",
                            "input_file_id",
                            "status",
                        )
                    },
                )
            ).inserted_primary_key
            assert inserted is not None
            pk = inserted[0]
            rows = [
                {
                    "batch": pk,
                    "custom_id": it["custom_id"],
                    "request_sha256": it["request_sha256"],
                    "failed": False,
                    **{k: it[k] for k in ITEM_KEY},
                }
                for it in items
            ]
            if rows:
                conn.execute(insert(provider_batch_items), rows)
        return int(pk)

    def update_provider_batch(self, pk: int, **values: Any) -> None:
        """Set the provider's ``status``, ``output_file_id``, ``error_file_id`` or ``detail``."""

        allowed = {"status", "output_file_id", "error_file_id", "detail"}
        unknown = set(values) - allowed
        if unknown:
            raise ValueError(f"not a provider batch field: {sorted(unknown)}")
        with self.sql_write_engine.begin() as conn:
            conn.execute(
                update(provider_batches)
                .where(provider_batches.c.id == pk)
                .values(updated_at=now_iso(), **values)
            )

    def mark_batch_items_failed(self, pk: int, custom_ids: Iterable[str]) -> None:
        """Mark requests the provider answered with an error: a later run submits them again."""
        ids = sorted(set(custom_ids))
        if not ids:
            return
        with self.sql_write_engine.begin() as conn:
            for start in range(0, len(ids), _IN_CHUNK):
                conn.execute(
                    update(provider_batch_items)
                    .where(
                        provider_batch_items.c.batch == pk,
                        provider_batch_items.c.custom_id.in_(ids[start : start + _IN_CHUNK]),
                    )
                    .values(failed=True)
                )

    def provider_batches(self, dataset: str) -> list[dict[str, Any]]:
        """Every recorded batch of ``dataset``, oldest first."""
        q = (
            select(provider_batches)
            .where(provider_batches.c.dataset == dataset)
            .order_by(provider_batches.c.id)
        )
        with self.sql_engine.connect() as conn:
            return [dict(r) for r in conn.execute(q).mappings()]

    def provider_batch_items(self, dataset: str) -> list[dict[str, Any]]:
        """The requests of ``dataset``'s batches that did not fail, each with its batch's
        row id (``batch``) and ``custom_id``: what a resumed run collects."""
        q = (
            select(provider_batch_items)
            .join(provider_batches, provider_batches.c.id == provider_batch_items.c.batch)
            .where(provider_batches.c.dataset == dataset, provider_batch_items.c.failed.is_(False))
            .order_by(provider_batch_items.c.batch, provider_batch_items.c.custom_id)
        )
        with self.sql_engine.connect() as conn:
            return [dict(r) for r in conn.execute(q).mappings()]
