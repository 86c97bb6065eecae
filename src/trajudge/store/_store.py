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

import pickle
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from sqlalchemy import (
    Engine,
    func,
    insert,
    inspect,
    select,
    update,
)
from sqlalchemy.engine import Connection
from sqlalchemy.exc import ArgumentError, OperationalError, ProgrammingError

from trajudge.core import InputError, canonical_json, now_iso
from trajudge.store._aligned import AlignedMixin
from trajudge.store._backends import BackendsMixin, save_cursor
from trajudge.store._engine import (
    _lock_schema,
    hide_password,
    make_sql_engine,
    sql_write_engine,
    sqlite_path,
)
from trajudge.store._faults import StoreError
from trajudge.store._import import check_length, spool_rows, write_rows
from trajudge.store._migrations import UPGRADES
from trajudge.store._names import DEFAULT_URL
from trajudge.store._rules import RulesMixin
from trajudge.store._schema import (
    MIGRATIONS,
    datasets,
    metadata,
    schema_migrations,
    task_specs,
    trajectories,
)
from trajudge.store.app._accounts import AccountsMixin
from trajudge.store.app._draws import DrawsMixin
from trajudge.store.judging._batches import ProviderBatchesMixin
from trajudge.store.judging._judgments import JudgmentsMixin
from trajudge.store.judging._leases import LeasesMixin
from trajudge.store.labels._labels import LabelsMixin
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


class Store(
    RulesMixin,
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
