"""The Store: one small interface over the database (SQLite by default, any SQLAlchemy URL).

Every write is one transaction; importing the same file twice changes nothing the second time.

Reads and writes take different paths. ``Store.sql_engine`` is for reads: on SQLite each of its
transactions is a plain (deferred) ``BEGIN`` on a ``query_only`` connection, so under WAL a
long streaming read holds no lock that a writer waits for, and a write sent down the read path
by mistake fails at once instead of taking the lock. ``Store.sql_write_engine`` is for writes: its
transactions start with ``BEGIN IMMEDIATE``, so concurrent writers queue on the busy timeout
instead of failing with "database is locked" when a read transaction tries to upgrade.
"""

from __future__ import annotations

import json
import pickle
import sqlite3
import tempfile
import time
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import (
    Engine,
    create_engine,
    delete,
    event,
    func,
    insert,
    inspect,
    make_url,
    select,
    update,
)
from sqlalchemy.engine import Connection
from sqlalchemy.exc import ArgumentError, OperationalError, ProgrammingError
from sqlalchemy.pool import QueuePool, StaticPool

from trajudge.core import InputError, canonical_json, now_iso
from trajudge.store._aligned import AlignedMixin
from trajudge.store._backends import BackendsMixin, save_cursor
from trajudge.store._faults import StoreError, guard_engine
from trajudge.store._import import check_length, spool_rows, write_rows
from trajudge.store._migrations import UPGRADES
from trajudge.store._names import DEFAULT_URL
from trajudge.store._redact import redact
from trajudge.store._schema import (
    MIGRATIONS,
    datasets,
    metadata,
    rule_results,
    schema_migrations,
    task_specs,
    trajectories,
)
from trajudge.store.app._accounts import AccountsMixin
from trajudge.store.app._draws import DrawsMixin
from trajudge.store.judging._batches import ProviderBatchesMixin
from trajudge.store.judging._judgments import JudgmentsMixin
from trajudge.store.judging._leases import LeasesMixin
from trajudge.store.labels._labels import _IN_CHUNK, LabelsMixin
from trajudge.store.labels._pair_labels import PairLabelsMixin
from trajudge.trajectories import TaskSpec, Trajectory


@dataclass(frozen=True)
class ImportSummary:
    """What an import did: rows added, updated (content changed) and already present."""

    dataset: str
    added: int
    updated: int
    unchanged: int
    specs: int

    @property
    def total(self) -> int:
        return self.added + self.updated + self.unchanged


def sqlite_path(url: str) -> Path | None:
    """The file behind a ``sqlite:///`` URL (None for other databases and memory)."""
    if not url.startswith("sqlite:///"):
        return None
    rest = url.removeprefix("sqlite:///").split("?", 1)[0]
    if not rest or rest == ":memory:" or rest.startswith("file:"):
        return None
    return Path(rest)


WRITE_OPTION = "trajudge_write"
"""Execution option that marks a SQL engine's transactions as writes (:func:`make_sql_engine`)."""


def sql_write_engine(sql_engine: Engine) -> Engine:
    """The SQL engine for writes: ``sql_engine`` with :data:`WRITE_OPTION` set (same pool)."""
    return sql_engine.execution_options(**{WRITE_OPTION: True})


def hide_password(url: str) -> str:
    """``url`` with its password (if any) replaced by ``***`` and key-carrying query values
    redacted, for messages and logs (:func:`~trajudge.store.redact`, the one mechanism)."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        return redact(url)
    shown = url if parsed.password is None else parsed.render_as_string(hide_password=True)
    return redact(shown)


def driver_url(url: str) -> str:
    """Pin bare ``postgresql://`` and ``postgres://`` URLs (as libpq writes them) to psycopg 3,
    the driver of ``trajudge[postgres]``; SQLAlchemy 2.0 would look for psycopg2."""
    for scheme in ("postgresql://", "postgres://"):
        if url.startswith(scheme):
            return "postgresql+psycopg://" + url.removeprefix(scheme)
    return url


def make_sql_engine(url: str) -> Engine:
    """Create a SQLAlchemy engine; SQLite gets WAL mode, foreign keys and a busy timeout.

    On SQLite a transaction is a read unless the SQL engine carries :data:`WRITE_OPTION`
    (:func:`sql_write_engine`): reads begin with a deferred ``BEGIN`` on a ``query_only``
    connection, writes with ``BEGIN IMMEDIATE``.
    """
    if url.startswith("sqlite"):
        in_memory = url in ("sqlite://", "sqlite:///:memory:")
        sql_engine = create_engine(
            url,
            connect_args={"timeout": 30, "check_same_thread": False},
            **_sqlite_pool(in_memory),
        )

        @event.listens_for(sql_engine, "connect")
        def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:  # pragma: no cover - trivial
            # Let SQLAlchemy's transaction handling own BEGIN; see the "begin" hook below.
            dbapi_conn.isolation_level = None
            cur = dbapi_conn.cursor()
            _set_wal(cur)
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA busy_timeout=30000")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.close()

        @event.listens_for(sql_engine, "begin")
        def _sqlite_begin(conn: Connection) -> None:  # pragma: no cover - trivial
            if conn.get_execution_options().get(WRITE_OPTION):
                # BEGIN IMMEDIATE takes the write lock up front, so two writers queue on the
                # busy timeout instead of failing with "database is locked" mid-transaction.
                conn.exec_driver_sql("PRAGMA query_only=OFF")
                conn.exec_driver_sql("BEGIN IMMEDIATE")
            else:
                # a read: under WAL it sees a snapshot and blocks no writer; query_only makes
                # a write sent down this path fail at once instead of upgrading the lock
                conn.exec_driver_sql("PRAGMA query_only=ON")
                conn.exec_driver_sql("BEGIN")

        path = None if in_memory else sqlite_path(url)
        guard_engine(sql_engine, hide_password(url), path, write_option=WRITE_OPTION)
        return sql_engine
    sql_engine = create_engine(driver_url(url), pool_pre_ping=True)
    guard_engine(sql_engine, hide_password(url), None)
    return sql_engine


#: The name of :func:`make_sql_engine` before "engine" was kept for judging engines; code
#: written against ``trajudge.store.make_engine`` keeps working.
make_engine = make_sql_engine


def _sqlite_pool(in_memory: bool) -> dict[str, Any]:
    """The pool of a SQLite SQL engine.

    An in-memory database lives as long as its one connection (``StaticPool``). A file keeps
    ONE idle connection open until :meth:`Store.close` (a ``QueuePool`` of one, with as many
    more as threads ask for at once, each closed when given back): opening a connection
    costs its PRAGMAs, and SQLite checkpoints the write-ahead log into the file, with an
    fsync, whenever the last connection to it closes, which one connection per transaction
    did after every read and write. An idle connection holds no lock and no snapshot.
    """
    if in_memory:
        return {"poolclass": StaticPool}
    return {"poolclass": QueuePool, "pool_size": 1, "max_overflow": -1}


def _set_wal(cur: Any, wait_s: float = 30.0) -> None:
    """``PRAGMA journal_mode=WAL``, waiting while another connection holds the lock it needs.

    SQLite answers this pragma with "database is locked" at once, without its busy handler,
    when several connections open a new database together (annotators opening the app on an
    empty store): retry until the mode is set or ``wait_s`` has passed, like the busy timeout.
    """
    deadline = time.monotonic() + wait_s
    while True:
        try:
            cur.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.005)


_SCHEMA_LOCK = 0x7472616A7564  # "trajud": the key of PostgreSQL's advisory lock for migrations


def _lock_schema(conn: Connection) -> None:
    """Make stores opened at the same moment migrate one after another (until commit).

    Otherwise two first opens of a new PostgreSQL database both create the tables and one
    fails. SQLite needs nothing: its BEGIN IMMEDIATE already serialises them.
    """
    if conn.dialect.name == "postgresql":
        conn.execute(select(func.pg_advisory_xact_lock(_SCHEMA_LOCK)))


class Store(
    BackendsMixin,
    JudgmentsMixin,
    LabelsMixin,
    DrawsMixin,
    PairLabelsMixin,
    ProviderBatchesMixin,
    AlignedMixin,
    LeasesMixin,
    AccountsMixin,
):
    """Datasets, trajectories, task specs, rule results, judgments and labels.

    >>> store = Store("sqlite://")  # in memory
    >>> store.datasets()
    []
    """

    def __init__(self, url: str | None = None) -> None:
        url = url or DEFAULT_URL
        #: the URL as shown in messages: any password in it is replaced by ``***``
        self.url = hide_password(url)
        sqlite_file = sqlite_path(url)
        if sqlite_file is not None:
            try:
                sqlite_file.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise InputError(
                    self.url, field="db", reason=f"cannot open the store: {exc.strerror}"
                ) from None
        try:
            self.sql_engine = make_sql_engine(url)
        except (ArgumentError, ImportError) as exc:  # a malformed URL, or its driver is missing
            hint = " (PostgreSQL: pip install 'trajudge[postgres]')" if "postgres" in url else ""
            raise InputError(
                self.url, field="db", reason=f"cannot open the store: {exc}{hint}"
            ) from None
        self.sql_write_engine = sql_write_engine(self.sql_engine)
        try:
            self.migrate()
        except StoreError as exc:  # unreachable, not a database, a read-only new file
            self.sql_engine.dispose()
            raise InputError(
                self.url, field="db", reason=f"cannot open the store: {exc.fault}"
            ) from None
        except (OperationalError, ProgrammingError) as exc:  # no privilege
            self.sql_engine.dispose()
            reason = str(exc.orig) if exc.orig is not None else str(exc)
            reason = " ".join(reason.split())  # one line
            raise InputError(
                self.url, field="db", reason=f"cannot open the store: {reason}"
            ) from None

    # -- schema -------------------------------------------------------------------------------
    def migrate(self) -> None:
        """Bring the schema up to date and record the migrations, in order.

        Looks first with a read, so opening an up-to-date store takes no write lock. A new
        database gets the current tables from ``metadata`` (nothing to upgrade); an existing
        one first runs, in order, the upgrades (``_migrations.UPGRADES``) of the versions it
        has not recorded. Tables new to this version are created either way.
        """
        with self.sql_engine.connect() as conn:
            tables = set(inspect(conn).get_table_names())
            if schema_migrations.name in tables:
                recorded = {r[0] for r in conn.execute(select(schema_migrations.c.version))}
                if set(metadata.tables) <= tables and {v for v, _ in MIGRATIONS} <= recorded:
                    return
        with self.sql_write_engine.begin() as conn:
            _lock_schema(conn)
            existing = inspect(conn).has_table(schema_migrations.name)
            done: set[int] = set()
            if existing:
                done = {r[0] for r in conn.execute(select(schema_migrations.c.version))}
            for version, _ in MIGRATIONS:
                if existing and version not in done and version in UPGRADES:
                    UPGRADES[version](conn)
            metadata.create_all(conn)
            for version, name in MIGRATIONS:
                if version not in done:
                    conn.execute(
                        insert(schema_migrations).values(
                            version=version, name=name, applied_at=now_iso()
                        )
                    )

    @property
    def engine(self) -> Engine:
        """The name of :attr:`sql_engine` before "engine" was kept for judging engines."""
        return self.sql_engine

    @property
    def write_engine(self) -> Engine:
        """The name of :attr:`sql_write_engine` before "engine" was kept for judging engines."""
        return self.sql_write_engine

    def close(self) -> None:
        self.sql_engine.dispose()

    # -- datasets -----------------------------------------------------------------------------
    def datasets(self) -> list[str]:
        with self.sql_engine.connect() as conn:
            return [r[0] for r in conn.execute(select(datasets.c.name).order_by(datasets.c.name))]

    def has_dataset(self, name: str) -> bool:
        with self.sql_engine.connect() as conn:
            row = conn.execute(select(datasets.c.name).where(datasets.c.name == name)).first()
        return row is not None

    def require_dataset(self, name: str) -> None:
        """Raise :class:`InputError` naming the known datasets when ``name`` is missing."""
        if not self.has_dataset(name):
            known = ", ".join(self.datasets()) or "none"
            raise InputError(
                self.url, field="dataset", reason=f"no dataset {name!r} (known: {known})"
            )

    def import_dataset(
        self,
        name: str,
        items: Iterable[Trajectory],
        specs: Mapping[str, TaskSpec] | None = None,
        *,
        source: str | None = None,
        source_sha256: str | None = None,
        fmt: str | None = None,
        cursor: tuple[str, str] | None = None,
    ) -> ImportSummary:
        """Write trajectories (and task specs) in one transaction.

        ``items`` is any iterable, read once: a list, or a
        :class:`~trajudge.trajectories.TrajectoryStream` that reads a big file one trajectory
        at a time. Each trajectory is checked and serialised into a temporary file first, so a
        bad record (or an error raised by the stream) writes nothing and the store is not
        locked while the file is read; then the rows are written in one transaction, a
        batch per statement. ``specs`` is read after ``items``, so a stream's specs (filled
        while it reads) are whole.

        A trajectory whose id is already stored with the same content is left alone; one with
        changed content is updated. Ids must be unique, and so must (task_id, trial).

        ``cursor`` = (source, position): an incremental pull's position after these
        trajectories, saved in the same transaction (see :mod:`trajudge.store._backends`).
        """
        where = source or name
        check_length(where, None, "dataset", name, datasets.c.name)
        with tempfile.TemporaryFile(prefix="trajudge-import-") as spool:
            batches = spool_rows(items, spool, where)
            spool.seek(0)
            with self.sql_write_engine.begin() as conn:
                if conn.execute(select(datasets.c.name).where(datasets.c.name == name)).first():
                    conn.execute(
                        update(datasets)
                        .where(datasets.c.name == name)
                        .values(source=source, source_sha256=source_sha256, fmt=fmt)
                    )
                else:
                    conn.execute(
                        insert(datasets).values(
                            name=name,
                            created_at=now_iso(),
                            source=source,
                            source_sha256=source_sha256,
                            fmt=fmt,
                        )
                    )
                rows = (pickle.load(spool) for _ in range(batches))
                summary = write_rows(conn, name, rows, where)
                n_specs = self._write_specs(conn, name, specs or {})
                if cursor is not None:
                    save_cursor(conn, name, *cursor)
        return ImportSummary(name, *summary, n_specs)

    # -- trajectories -------------------------------------------------------------------------
    def count_trajectories(self, dataset: str) -> int:
        with self.sql_engine.connect() as conn:
            return int(
                conn.execute(
                    select(func.count())
                    .select_from(trajectories)
                    .where(trajectories.c.dataset == dataset)
                ).scalar()
                or 0
            )

    def task_ids(self, dataset: str) -> set[str]:
        """The distinct task ids of a dataset's trajectories."""
        q = select(trajectories.c.task_id).where(trajectories.c.dataset == dataset).distinct()
        with self.sql_engine.connect() as conn:
            return {r[0] for r in conn.execute(q)}

    def trajectory_heads(self, dataset: str) -> list[tuple[str, str, int, bool | None]]:
        """(id, task_id, trial, outcome) of the dataset's trajectories in import order, read
        from their columns (no trajectory is parsed): what a plan needs to name them."""
        q = (
            select(
                trajectories.c.id,
                trajectories.c.task_id,
                trajectories.c.trial,
                trajectories.c.outcome,
            )
            .where(trajectories.c.dataset == dataset)
            .order_by(trajectories.c.seq)
        )
        with self.sql_engine.connect() as conn:
            return [(r[0], r[1], r[2], r[3]) for r in conn.execute(q)]

    def iter_trajectories(
        self, dataset: str, *, ids: Iterable[str] | None = None, batch: int = 1000
    ) -> Iterator[Trajectory]:
        """Yield the dataset's trajectories in import order."""
        for t, _ in self.iter_hashed_trajectories(dataset, ids=ids, batch=batch):
            yield t

    def iter_hashed_trajectories(
        self, dataset: str, *, ids: Iterable[str] | None = None, batch: int = 1000
    ) -> Iterator[tuple[Trajectory, str]]:
        """Yield the dataset's trajectories in import order, each with its content hash
        (SHA-256 of the stored canonical JSON) read from the same row."""
        query = select(trajectories.c.data, trajectories.c.sha256).where(
            trajectories.c.dataset == dataset
        )
        if ids is not None:
            query = query.where(trajectories.c.id.in_(list(ids)))
        query = query.order_by(trajectories.c.seq)
        with self.sql_engine.connect() as conn:
            result = conn.execution_options(yield_per=batch).execute(query)
            for row in result:
                yield Trajectory.model_validate_json(row[0]), row[1]

    def trajectory_sha256s(self, dataset: str) -> dict[str, str]:
        """Trajectory id -> content hash (SHA-256 of the stored canonical JSON), no parsing."""
        q = select(trajectories.c.id, trajectories.c.sha256).where(
            trajectories.c.dataset == dataset
        )
        with self.sql_engine.connect() as conn:
            return {r[0]: r[1] for r in conn.execute(q)}

    def trajectories(self, dataset: str, *, ids: Iterable[str] | None = None) -> list[Trajectory]:
        return list(self.iter_trajectories(dataset, ids=ids))

    def trajectory(self, dataset: str, trajectory_id: str) -> Trajectory | None:
        with self.sql_engine.connect() as conn:
            row = conn.execute(
                select(trajectories.c.data).where(
                    trajectories.c.dataset == dataset, trajectories.c.id == trajectory_id
                )
            ).first()
        return None if row is None else Trajectory.model_validate_json(row[0])

    # -- task specs ---------------------------------------------------------------------------
    def _write_specs(self, conn: Connection, dataset: str, specs: Mapping[str, TaskSpec]) -> int:
        for task_id, spec in specs.items():
            check_length(dataset, "task spec", "task_id", task_id)
            data = canonical_json(spec.model_dump(mode="json", exclude_defaults=True))
            row = conn.execute(
                select(task_specs.c.data).where(
                    task_specs.c.dataset == dataset, task_specs.c.task_id == task_id
                )
            ).first()
            if row is None:
                conn.execute(insert(task_specs).values(dataset=dataset, task_id=task_id, data=data))
            elif row[0] != data:
                conn.execute(
                    update(task_specs)
                    .where(task_specs.c.dataset == dataset, task_specs.c.task_id == task_id)
                    .values(data=data)
                )
        return len(specs)

    def save_task_specs(self, dataset: str, specs: Mapping[str, TaskSpec]) -> int:
        self.require_dataset(dataset)
        with self.sql_write_engine.begin() as conn:
            return self._write_specs(conn, dataset, specs)

    def task_specs(self, dataset: str) -> dict[str, TaskSpec]:
        with self.sql_engine.connect() as conn:
            rows = conn.execute(
                select(task_specs.c.task_id, task_specs.c.data).where(
                    task_specs.c.dataset == dataset
                )
            ).all()
        return {r[0]: TaskSpec.model_validate_json(r[1]) for r in rows}

    # -- rule results -------------------------------------------------------------------------
    def save_rule_results(self, dataset: str, rows: Iterable[Mapping[str, Any]]) -> int:
        """Replace the stored rule results for the given trajectories, in one transaction.

        Each row has ``trajectory_id``, ``spec_sha256``, ``gates_passed``, ``score`` and
        ``data`` (the report as a JSON-able dict).
        """
        values = {
            str(row["trajectory_id"]): {
                "dataset": dataset,
                "trajectory_id": str(row["trajectory_id"]),
                "spec_sha256": row["spec_sha256"],
                "gates_passed": bool(row["gates_passed"]),
                "score": row.get("score"),
                "data": canonical_json(row["data"]),
            }
            for row in rows
        }  # a trajectory given twice keeps its last row, as one update after another would
        ids = list(values)
        with self.sql_write_engine.begin() as conn:
            for start in range(0, len(ids), _IN_CHUNK):
                chunk = ids[start : start + _IN_CHUNK]
                conn.execute(
                    delete(rule_results).where(
                        rule_results.c.dataset == dataset, rule_results.c.trajectory_id.in_(chunk)
                    )
                )
                conn.execute(insert(rule_results), [values[i] for i in chunk])
        return len(ids)

    def gate_results(self, dataset: str, gates: Collection[str] = ("gate",)) -> dict[str, bool]:
        """Whether every gate passed, by trajectory id, for the trajectories with a stored rule
        result. ``gates``: the severities that gate (``trajudge.yaml``'s ``gates``, what skips
        the judges); the default is the stored ``gates_passed`` (severity ``gate``), read
        without the reports; any other list is read from the stored checks' severities."""
        if set(gates) == {"gate"}:
            query = select(rule_results.c.trajectory_id, rule_results.c.gates_passed).where(
                rule_results.c.dataset == dataset
            )
            with self.sql_engine.connect() as conn:
                return {r.trajectory_id: bool(r.gates_passed) for r in conn.execute(query)}
        wanted = set(gates)
        query = select(rule_results.c.trajectory_id, rule_results.c.data).where(
            rule_results.c.dataset == dataset
        )
        out: dict[str, bool] = {}
        with self.sql_engine.connect() as conn:
            for r in conn.execute(query):
                checks = json.loads(r.data)["results"]
                out[r.trajectory_id] = not any(
                    c["severity"] in wanted and not c["passed"] for c in checks
                )
        return out

    def rule_results(self, dataset: str) -> dict[str, dict[str, Any]]:
        """Stored rule results by trajectory id (each: gates_passed, score, spec_sha256, data)."""
        with self.sql_engine.connect() as conn:
            rows = conn.execute(select(rule_results).where(rule_results.c.dataset == dataset))
            return {
                r.trajectory_id: {
                    "gates_passed": r.gates_passed,
                    "score": r.score,
                    "spec_sha256": r.spec_sha256,
                    "data": json.loads(r.data),
                }
                for r in rows
            }
