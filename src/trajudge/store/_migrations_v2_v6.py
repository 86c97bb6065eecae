"""The frozen DDL of schema versions 2 to 6, apart from the later ones in :mod:`._migrations`.

These are the upgrades that rebuild or re-key the judgments table (its configuration hash in
the key, version 2; expected scores, 5; a key unique whatever its NULLs, 6) and the tables
added meanwhile (category labels, 3; provider batches, 4; aligned judges, 5). Like every
upgrade they are never edited: each spells out the tables as they were at its version.
:data:`EARLY_UPGRADES` is the head of ``_migrations.UPGRADES``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import (
    Boolean,
    Column,
    Float,
    ForeignKeyConstraint,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    func,
    literal_column,
)
from sqlalchemy.engine import Connection
from sqlalchemy.schema import AddConstraint

_V1_JUDGMENT_COLUMNS = [
    "id", "dataset", "trajectory_id", "other_id", "judge", "rubric_id", "rubric_version",
    "model", "mode", "order", "sample", "score", "verdict", "reasoning", "criteria", "raw",
    "prompt_tokens", "completion_tokens", "cost_usd", "latency_s", "cache_hit", "error",
    "request_sha256", "created_at",
]  # fmt: skip
_V2_KEY = (
    "dataset",
    "trajectory_id",
    "other_id",
    "judge",
    "config_sha256",
    "rubric_version",
    "order",
    "sample",
)


def _judgment_columns_v2() -> list[Column[Any]]:
    """The columns of the judgments table as of version 2 (frozen)."""
    return [
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("dataset", String(200), nullable=False),
        Column("trajectory_id", String(400), nullable=False),
        Column("other_id", String(400), nullable=True),
        Column("judge", String(200), nullable=False),
        Column("rubric_id", String(200), nullable=False),
        Column("rubric_version", String(64), nullable=False),
        Column("model", String(300), nullable=False),
        Column("mode", String(20), nullable=False),
        Column("order", String(2), nullable=False),
        Column("sample", Integer, nullable=False),
        Column("score", Float, nullable=True),
        Column("verdict", String(40), nullable=True),
        Column("reasoning", Text, nullable=True),
        Column("criteria", Text, nullable=True),
        Column("raw", Text, nullable=True),
        Column("prompt_tokens", Integer, nullable=True),
        Column("completion_tokens", Integer, nullable=True),
        Column("cost_usd", Float, nullable=True),
        Column("latency_s", Float, nullable=True),
        Column("cache_hit", Boolean, nullable=False, default=False),
        Column("error", Text, nullable=True),
        Column("request_sha256", String(64), nullable=True),
        Column("created_at", String(40), nullable=False),
        Column("config_sha256", String(64), nullable=True),
        Column("judge_config", Text, nullable=True),
    ]


def _judgments_v2(md: MetaData, name: str = "judgments") -> Table:
    """The judgments table as of version 2 (frozen)."""
    table = Table(
        name,
        md,
        *_judgment_columns_v2(),
        ForeignKeyConstraint(["dataset"], ["datasets.name"], ondelete="CASCADE"),
        UniqueConstraint(*_V2_KEY, name="uq_judgment"),
    )
    Index("ix_judgments_dataset_judge", table.c.dataset, table.c.judge)
    return table


def _v2_judge_config(conn: Connection) -> None:
    """Judgments carry their judge configuration, and it is part of the judgment's key.

    Two columns are added, ``config_sha256`` (SHA-256 of the configuration) and
    ``judge_config`` (its JSON: model, api_base, request parameters, never a key), and the
    unique key ``uq_judgment`` gains ``config_sha256``. Rows judged before stay with NULL in
    both: their configuration was never recorded, so no new run reuses them.
    """
    md = MetaData()
    Table("datasets", md, Column("name", String(200), primary_key=True))
    if conn.dialect.name == "sqlite":
        # SQLite cannot drop a table constraint: rebuild the table, keeping ids and rows.
        conn.exec_driver_sql("DROP INDEX IF EXISTS ix_judgments_dataset_judge")
        conn.exec_driver_sql("ALTER TABLE judgments RENAME TO judgments_v1")
        _judgments_v2(md).create(conn)
        cols = ", ".join(f'"{c}"' for c in _V1_JUDGMENT_COLUMNS)
        conn.exec_driver_sql(f"INSERT INTO judgments ({cols}) SELECT {cols} FROM judgments_v1")
        conn.exec_driver_sql("DROP TABLE judgments_v1")
        return
    table = _judgments_v2(md)
    conn.exec_driver_sql("ALTER TABLE judgments ADD COLUMN config_sha256 VARCHAR(64)")
    conn.exec_driver_sql("ALTER TABLE judgments ADD COLUMN judge_config TEXT")
    conn.exec_driver_sql("ALTER TABLE judgments DROP CONSTRAINT uq_judgment")
    unique = next(c for c in table.constraints if isinstance(c, UniqueConstraint))
    conn.execute(AddConstraint(unique))


def _v3_verdict_kinds(conn: Connection) -> None:
    """Labels carry a category (nominal rubrics): ``labels.category`` and
    ``label_history.category`` are added, NULL on existing rows (their labels are numbers).
    The new tables ``pair_labels`` and ``pair_label_history`` are created with the rest of
    the schema (``metadata.create_all``)."""
    for table in ("labels", "label_history"):
        conn.exec_driver_sql(f"ALTER TABLE {table} ADD COLUMN category VARCHAR(200)")


def _v4_provider_batches(conn: Connection) -> None:
    """Two new tables for ``--engine batch``: the batches submitted to a provider and the
    requests in each (independent of every other table but ``datasets``)."""
    md = MetaData()
    Table("datasets", md, Column("name", String(200), primary_key=True))
    batches = Table(
        "provider_batches",
        md,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("dataset", String(200), nullable=False),
        Column("batch_id", String(200), nullable=False),
        Column("provider", String(40), nullable=False),
        Column("api_base", Text, nullable=True),
        Column("model", String(300), nullable=False),
        Column("input_file_id", String(200), nullable=False),
        Column("status", String(40), nullable=False),
        Column("output_file_id", String(200), nullable=True),
        Column("error_file_id", String(200), nullable=True),
        Column("requests", Integer, nullable=False),
        Column("detail", Text, nullable=True),
        Column("created_at", String(40), nullable=False),
        Column("updated_at", String(40), nullable=False),
        ForeignKeyConstraint(["dataset"], ["datasets.name"], ondelete="CASCADE"),
    )
    Index("ix_provider_batches_dataset", batches.c.dataset)
    Table(
        "provider_batch_items",
        md,
        Column("batch", Integer, primary_key=True),
        Column("custom_id", String(40), primary_key=True),
        Column("request_sha256", String(64), nullable=False),
        Column("trajectory_id", String(400), nullable=False),
        Column("other_id", String(400), nullable=True),
        Column("judge", String(200), nullable=False),
        Column("config_sha256", String(64), nullable=True),
        Column("rubric_version", String(64), nullable=False),
        Column("order", String(2), nullable=False),
        Column("sample", Integer, nullable=False),
        Column("failed", Boolean, nullable=False, default=False),
        ForeignKeyConstraint(["batch"], ["provider_batches.id"], ondelete="CASCADE"),
    )
    md.create_all(conn, tables=[md.tables["provider_batches"], md.tables["provider_batch_items"]])


def _aligned_judges_v5(md: MetaData) -> Table:
    """The aligned_judges table as of version 5 (frozen)."""
    table = Table(
        "aligned_judges",
        md,
        Column("name", String(200), primary_key=True),
        Column("version", Integer, primary_key=True),
        Column("created_at", String(40), nullable=False),
        Column("dataset", String(200), nullable=False),
        Column("base_judge", String(200), nullable=False),
        Column("config_sha256", String(64), nullable=True),
        Column("sha256", String(64), nullable=False),
        Column("data", Text, nullable=False),
    )
    Index("ix_aligned_judges_dataset", table.c.dataset)
    return table


def _v5_alignment(conn: Connection) -> None:
    """Aligned judges get a table; judgments get the expected score from token probabilities.

    Two nullable columns are appended to ``judgments`` (``expected_score``, ``score_probs``):
    older rows keep NULL, which says "no token probabilities" (they were never recorded).
    """
    conn.exec_driver_sql("ALTER TABLE judgments ADD COLUMN expected_score FLOAT")
    conn.exec_driver_sql("ALTER TABLE judgments ADD COLUMN score_probs TEXT")
    _aligned_judges_v5(MetaData()).create(conn, checkfirst=True)


def _judgment_key_v6(table: Table) -> Index:
    """The unique index of version 6 over ``table``'s judgment key (frozen)."""
    c = table.c
    blank = literal_column("''", String())
    return Index(
        "uq_judgment_key",
        c.dataset, c.trajectory_id, func.coalesce(c.other_id, blank), c.judge,
        func.coalesce(c.config_sha256, blank), c.rubric_version, c.order, c.sample,
        unique=True,
    )  # fmt: skip


def _judgments_v6(md: MetaData) -> Table:
    """The judgments table as of version 6 (frozen): version 5's columns, the key an index."""
    table = Table(
        "judgments",
        md,
        *_judgment_columns_v2(),
        Column("expected_score", Float, nullable=True),
        Column("score_probs", Text, nullable=True),
        ForeignKeyConstraint(["dataset"], ["datasets.name"], ondelete="CASCADE"),
    )
    Index("ix_judgments_dataset_judge", table.c.dataset, table.c.judge)
    _judgment_key_v6(table)
    return table


# Of the rows that share a judgment key (NULL taken as ''), all but one: the earliest without
# an error, else the latest error. That is the row ``add_judgments`` keeps when it is given the
# same rows in id order (a result is never replaced; an error is, by a later row).
_V6_DUPLICATES = """
SELECT id FROM (
    SELECT id, ROW_NUMBER() OVER (
        PARTITION BY dataset, trajectory_id, COALESCE(other_id, ''), judge,
            COALESCE(config_sha256, ''), rubric_version, "order", sample
        ORDER BY CASE WHEN error IS NULL THEN 0 ELSE 1 END,
            CASE WHEN error IS NULL THEN id ELSE -id END
    ) AS n FROM judgments
) AS ranked WHERE n > 1
"""


def _v6_judgment_key(conn: Connection) -> None:
    """The judgment key becomes unique whatever its NULLs: duplicates stored under the old
    constraint (pointwise judgments, rows from before version 2) are removed, keeping one of
    each (``_V6_DUPLICATES``), and the constraint gives way to the index ``uq_judgment_key``.
    """
    conn.exec_driver_sql(f"DELETE FROM judgments WHERE id IN ({_V6_DUPLICATES})")
    md = MetaData()
    Table("datasets", md, Column("name", String(200), primary_key=True))
    if conn.dialect.name == "sqlite":
        # SQLite cannot drop a table constraint: rebuild the table, keeping ids and rows.
        conn.exec_driver_sql("DROP INDEX IF EXISTS ix_judgments_dataset_judge")
        conn.exec_driver_sql("ALTER TABLE judgments RENAME TO judgments_v5")
        table = _judgments_v6(md)
        table.create(conn)
        cols = ", ".join(f'"{c.name}"' for c in table.columns)
        conn.exec_driver_sql(f"INSERT INTO judgments ({cols}) SELECT {cols} FROM judgments_v5")
        conn.exec_driver_sql("DROP TABLE judgments_v5")
        return
    conn.exec_driver_sql("ALTER TABLE judgments DROP CONSTRAINT uq_judgment")
    _judgment_key_v6(_judgments_v6(md)).create(conn)


#: Versions 2 to 6 -> their upgrades (see ``_migrations.UPGRADES``).
EARLY_UPGRADES: dict[int, Callable[[Connection], None]] = {
    2: _v2_judge_config,
    3: _v3_verdict_kinds,
    4: _v4_provider_batches,
    5: _v5_alignment,
    6: _v6_judgment_key,
}
