"""The DDL of each schema migration after version 1, applied in order to existing databases.

A new database gets the current schema from ``metadata.create_all`` and every version is
recorded as applied; an existing one runs the upgrades it has not recorded. Each upgrade is
frozen: it spells out the tables as they are at its version, so that a later change to
``_schema.py`` cannot change what an older upgrade does.

Versions 2 to 6 are in :mod:`._migrations_v2_v6`; a new version is added here, at the end
of :data:`UPGRADES`.
"""

from __future__ import annotations

import hashlib
import json
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
    select,
    update,
)
from sqlalchemy.engine import Connection

from trajudge.store._migrations_v2_v6 import EARLY_UPGRADES


def _v7_leases(conn: Connection) -> None:
    """A new table, ``leases``: which run judges a dataset with a judge configuration now."""
    Table(
        "leases",
        MetaData(),
        Column("dataset", String(200), primary_key=True),
        Column("config_sha256", String(64), primary_key=True),
        Column("judge", String(200), nullable=False),
        Column("host", String(255), nullable=False),
        Column("pid", Integer, nullable=False),
        Column("token", String(64), nullable=False),
        Column("acquired_at", String(40), nullable=False),
        Column("expires_at", Float, nullable=False),
    ).create(conn, checkfirst=True)


def _v8_record_threshold(data: dict[str, Any]) -> dict[str, Any]:
    """An aligned judge's record with version 8's words: its verdict rule's ``cut`` is its
    ``threshold``, and so is the trust-or-escalate ``cut`` (whose own ``cut`` is its
    ``value``). A record already in those words comes back unchanged."""
    rule = data.get("rule")
    if isinstance(rule, dict) and "cut" in rule:
        data["rule"] = {("threshold" if k == "cut" else k): v for k, v in rule.items()}
    trust = data.get("trust")
    if isinstance(trust, dict) and "cut" in trust:
        inner = trust["cut"]
        if isinstance(inner, dict) and "cut" in inner:
            inner = {("value" if k == "cut" else k): v for k, v in inner.items()}
        data["trust"] = {
            ("threshold" if k == "cut" else k): (inner if k == "cut" else v)
            for k, v in trust.items()
        }
    return data


def _v8_threshold_word(conn: Connection) -> None:
    """Aligned judges saved before version 8 called their thresholds ``cut``: each record is
    rewritten in version 8's words (:func:`_v8_record_threshold`) with its hash, so that a
    record saved again after the upgrade is still recognised as the same version."""
    table = Table(
        "aligned_judges",
        MetaData(),
        Column("name", String(200), primary_key=True),
        Column("version", Integer, primary_key=True),
        Column("sha256", String(64), nullable=False),
        Column("data", Text, nullable=False),
    )
    rows = conn.execute(select(table.c.name, table.c.version, table.c.data)).all()
    for name, version, text in rows:
        data = _v8_record_threshold(json.loads(text))
        # canonical JSON as the store writes it (frozen here: sorted keys, no spaces)
        new = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        if new == text:
            continue
        conn.execute(
            update(table)
            .where((table.c.name == name) & (table.c.version == version))
            .values(data=new, sha256=hashlib.sha256(new.encode()).hexdigest())
        )


def _v9_label_draws(conn: Connection) -> None:
    """A new table, ``label_draws``: the active labelling design of a dataset and rubric."""
    md = MetaData()
    Table("datasets", md, Column("name", String(200), primary_key=True))
    Table(
        "label_draws",
        md,
        Column("dataset", String(200), primary_key=True),
        Column("rubric_id", String(200), primary_key=True),
        Column("trajectory_id", String(400), primary_key=True),
        Column("position", Integer, nullable=False),
        Column("probability", Float, nullable=False),
        Column("drawn", Boolean, nullable=False),
        Column("design", Text, nullable=False),
        Column("created_at", String(40), nullable=False),
        ForeignKeyConstraint(["dataset"], ["datasets.name"], ondelete="CASCADE"),
    ).create(conn, checkfirst=True)


def _v10_backends(conn: Connection) -> None:
    """Two new tables: ``pull_cursors`` (where an incremental pull stopped) and
    ``export_marks`` (what an export sent to a target that cannot be read back)."""
    md = MetaData()
    Table(
        "pull_cursors",
        md,
        Column("dataset", String(200), primary_key=True),
        Column("source", String(1000), primary_key=True),
        Column("cursor", Text, nullable=False),
        Column("updated_at", String(40), nullable=False),
    )
    Table(
        "export_marks",
        md,
        Column("target", String(1000), primary_key=True),
        Column("dataset", String(200), primary_key=True),
        Column("item", String(400), primary_key=True),
        Column("sha256", String(64), nullable=False),
        Column("exported_at", String(40), nullable=False),
    )
    md.create_all(conn, checkfirst=True)


def _v11_accounts(conn: Connection) -> None:
    """The labeling app's accounts, sign-in throttle, sign-in log and reservations (frozen as
    of version 11)."""
    md = MetaData()
    Table(
        "accounts",
        md,
        Column("name", String(100), primary_key=True),
        Column("role", String(20), nullable=False),
        Column("email", String(320), nullable=True),
        Column("disabled", Boolean, nullable=False, default=False),
        Column("secret", String(300), nullable=True),
        Column("secret_kind", String(20), nullable=True),
        Column("secret_expires_at", Float, nullable=True),
        Column("epoch", Integer, nullable=False, default=0),
        Column("created_at", String(40), nullable=False),
        Column("updated_at", String(40), nullable=False),
        UniqueConstraint("email", name="uq_account_email"),
    )
    Table(
        "sign_in_throttle",
        md,
        Column("key", String(200), primary_key=True),
        Column("failures", Integer, nullable=False),
        Column("last_failure_at", Float, nullable=False),
        Column("not_before", Float, nullable=False),
    )
    events = Table(
        "sign_in_events",
        md,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("at", String(40), nullable=False),
        Column("name", String(100), nullable=False),
        Column("client", String(100), nullable=False),
        Column("event", String(40), nullable=False),
        Column("detail", Text, nullable=True),
    )
    Index("ix_sign_in_events_at", events.c.at)
    Table(
        "reservations",
        md,
        Column("dataset", String(200), primary_key=True),
        Column("rubric_id", String(200), primary_key=True),
        Column("item", String(900), primary_key=True),
        Column("annotator", String(100), nullable=False),
        Column("expires_at", Float, nullable=False),
    )
    md.create_all(conn, checkfirst=True)


def _v12_label_strategies(conn: Connection) -> None:
    """``label_draws.phase`` (NULL on the rows of a design frozen whole) and a new table,
    ``label_strategies`` (the queue strategy the lead chose, with who and when)."""
    conn.exec_driver_sql("ALTER TABLE label_draws ADD COLUMN phase INTEGER")
    md = MetaData()
    table = Table(
        "label_strategies",
        md,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("dataset", String(200), nullable=False),
        Column("rubric_id", String(200), nullable=False),
        Column("strategy", String(40), nullable=False),
        Column("budget", Integer, nullable=True),
        Column("learn", Integer, nullable=True),
        Column("previous", String(40), nullable=True),
        Column("name", String(100), nullable=False),
        Column("at", String(40), nullable=False),
    )
    Index("ix_label_strategies_key", table.c.dataset, table.c.rubric_id)
    md.create_all(conn, checkfirst=True)


#: Version -> its upgrade for a database that was created at an earlier version.
UPGRADES: dict[int, Callable[[Connection], None]] = {
    **EARLY_UPGRADES,
    7: _v7_leases,
    8: _v8_threshold_word,
    9: _v9_label_draws,
    10: _v10_backends,
    11: _v11_accounts,
    12: _v12_label_strategies,
}
