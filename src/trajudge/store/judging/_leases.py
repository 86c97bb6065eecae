"""Leases: one run at a time judges a dataset with a given judge configuration.

Two runs of the same judges on the same dataset would both plan every missing call (each
reads "not stored" before the other writes) and pay for each twice. A run therefore holds a
lease per (dataset, judge configuration hash) in the store while it judges, renewed by a
heartbeat. A second run finds it held and says by whom, or waits for it; a lease whose holder
is gone (its pid no longer runs on the holder's host, or its expiry passed without a
heartbeat) is taken over.

Taking a lease is one conditional write: an INSERT that the primary key refuses when another
run inserted first, or an UPDATE of the stale holder's row guarded by that holder's token, so
of two runs taking over the same stale lease exactly one changes the row. That holds on
SQLite and PostgreSQL alike.
"""

from __future__ import annotations

import os
import secrets
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace

from sqlalchemy import Engine, delete, insert, select, update
from sqlalchemy.exc import IntegrityError

from trajudge.core import InputError, now_iso
from trajudge.store._schema import leases

#: Seconds a lease lasts without a heartbeat; the heartbeat renews it every third of that.
LEASE_TTL_S = 60.0
#: Seconds between two looks at a held lease while waiting for it (``wait=True``).
LEASE_POLL_S = 0.5


@dataclass(frozen=True)
class Lease:
    """A lease as stored: the run holding it (host, pid, token) and since when."""

    dataset: str
    config_sha256: str
    judge: str
    host: str
    pid: int
    token: str
    acquired_at: str
    expires_at: float

    def holder(self) -> str:
        """Who holds it, for messages: ``pid 123 on host-a since 2026-12-02T11:00:00``."""
        return f"pid {self.pid} on {self.host} since {self.acquired_at}"


class LeaseHeldError(InputError):
    """Another run holds the lease of a dataset and judge configuration."""

    def __init__(self, store: str, lease: Lease) -> None:
        super().__init__(
            store,
            f"dataset {lease.dataset}",
            f"judge {lease.judge}",
            f"already being judged with this configuration by {lease.holder()} (lease until "
            f"{time.strftime('%H:%M:%S', time.gmtime(lease.expires_at))} UTC unless renewed); "
            "run again with --wait to wait for it",
        )
        self.lease = lease


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: it exists
        return True
    return True


def _in_memory(sql_engine: Engine) -> bool:
    return sql_engine.dialect.name == "sqlite" and sql_engine.url.database in (None, "", ":memory:")


def _stale(lease: Lease, now: float, host: str) -> bool:
    """Whether the lease's holder is gone: expired, or its pid is dead on this host."""
    if lease.expires_at <= now:
        return True
    return lease.host == host and lease.pid != os.getpid() and not _pid_alive(lease.pid)


class LeasesMixin:
    """Lease queries for :class:`trajudge.store.Store`."""

    sql_engine: Engine
    sql_write_engine: Engine
    url: str

    def lease(self, dataset: str, config_sha256: str) -> Lease | None:
        """The stored lease of a dataset and judge configuration, if any (stale or not)."""
        q = select(leases).where(
            leases.c.dataset == dataset, leases.c.config_sha256 == config_sha256
        )
        with self.sql_engine.connect() as conn:
            row = conn.execute(q).mappings().first()
        return None if row is None else Lease(**row)

    def try_lease(
        self, dataset: str, config_sha256: str, judge: str, *, ttl_s: float = LEASE_TTL_S
    ) -> tuple[bool, Lease]:
        """Take the lease, or take over a stale one; ``(True, mine)`` or ``(False, holder)``."""

        host = socket.gethostname()
        mine = Lease(
            dataset, config_sha256, judge, host, os.getpid(), secrets.token_hex(16), now_iso(), 0.0
        )
        key = (leases.c.dataset == dataset, leases.c.config_sha256 == config_sha256)
        while True:
            now = time.time()
            mine = replace(mine, expires_at=now + ttl_s)
            held = self.lease(dataset, config_sha256)
            try:
                with self.sql_write_engine.begin() as conn:
                    if held is None:
                        conn.execute(insert(leases).values(**asdict(mine)))
                        return True, mine
                    if not _stale(held, now, host):
                        return False, held
                    taken = conn.execute(
                        update(leases)
                        .where(*key, leases.c.token == held.token)
                        .values(**asdict(mine))
                    )
                    if taken.rowcount == 1:
                        return True, mine
            except IntegrityError:  # another run inserted first: look again
                continue

    def renew_lease(self, lease: Lease, *, ttl_s: float = LEASE_TTL_S) -> bool:
        """Move the lease's expiry on; False when it is no longer this holder's."""
        with self.sql_write_engine.begin() as conn:
            done = conn.execute(
                update(leases)
                .where(
                    leases.c.dataset == lease.dataset,
                    leases.c.config_sha256 == lease.config_sha256,
                    leases.c.token == lease.token,
                )
                .values(expires_at=time.time() + ttl_s)
            )
        return done.rowcount == 1

    def release_lease(self, lease: Lease) -> None:
        """Give the lease up (only this holder's: a lease taken over stays the new holder's)."""
        with self.sql_write_engine.begin() as conn:
            conn.execute(
                delete(leases).where(
                    leases.c.dataset == lease.dataset,
                    leases.c.config_sha256 == lease.config_sha256,
                    leases.c.token == lease.token,
                )
            )

    @contextmanager
    def holding_leases(
        self,
        dataset: str,
        judges: Sequence[tuple[str, str]],
        *,
        wait: bool = False,
        notify: Callable[[str], None] | None = None,
        ttl_s: float = LEASE_TTL_S,
        poll_s: float = LEASE_POLL_S,
    ) -> Iterator[list[Lease]]:
        """Hold the leases of ``judges`` ((name, config hash) pairs) on ``dataset`` while the
        block runs, renewed by a heartbeat thread, released however the block ends.

        A lease held by a live run raises :class:`LeaseHeldError` naming the holder; with
        ``wait`` the call instead looks again every ``poll_s`` seconds until it is free
        (``notify`` hears once whom it waits for). Leases are taken in configuration order,
        so two runs sharing several judges cannot each hold a part while waiting.
        """
        wanted = sorted({c: n for n, c in judges}.items())
        held: list[Lease] = []
        stop = threading.Event()
        beat: threading.Thread | None = None
        try:
            for config, name in wanted:
                told = False
                while True:
                    ok, lease = self.try_lease(dataset, config, name, ttl_s=ttl_s)
                    if ok:
                        held.append(lease)
                        break
                    if not wait:
                        raise LeaseHeldError(self.url, lease)
                    if notify is not None and not told:
                        notify(f"waiting for judge {name} on {dataset}: held by {lease.holder()}")
                        told = True
                    time.sleep(poll_s)
            if not _in_memory(self.sql_engine):  # one shared connection, seen by no other run
                beat = threading.Thread(target=self._heartbeat, args=(held, stop, ttl_s))
                beat.start()
            yield held
        finally:
            stop.set()
            if beat is not None:
                beat.join()
            for lease in held:
                self.release_lease(lease)

    def _heartbeat(self, held: list[Lease], stop: threading.Event, ttl_s: float) -> None:
        while not stop.wait(ttl_s / 3):
            for lease in held:
                try:
                    self.renew_lease(lease, ttl_s=ttl_s)
                except Exception:  # a store fault: the run's own writes report it
                    return
