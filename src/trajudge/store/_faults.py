"""Store faults: the database failing under a running command, told as one :class:`StoreError`.

A store can fail in ways that are not a user's bad input: its SQLite file deleted, replaced or
truncated while a run writes, the disk full, the file or its folder made read-only, the file
damaged, a PostgreSQL server gone or out of space. Left alone, SQLite keeps writing into a
deleted file's inode (the run ends with exit 0 and its work is gone), and the other faults
surface as long driver tracebacks. :func:`guard_engine` puts one mechanism on a SQL engine:

- before every transaction on a SQLite file, and before its commit, the file is checked to be
  the one the store opened (same device and inode, not shrunk into a damaged header), so a
  write never lands in a ghost and a label is never "saved" into a store that is gone;
- a new connection never re-creates a store file that has disappeared;
- the driver's fault errors (SQLite's FULL, READONLY, IOERR, CORRUPT, NOTADB, CANTOPEN;
  PostgreSQL's connection, resource, system and read-only classes) become :class:`StoreError`
  naming the store (its password hidden) and the fault, in one line.

The CLI prints a StoreError as one line with exit code 3 (the store failed, not the input);
the labeling app shows it as a plain message.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the CLI imports this module for --help: no SQLAlchemy then
    from sqlalchemy import Engine

#: Exit code of a command whose store failed (1: a gate or threshold failed; 2: bad input).
STORE_FAULT_EXIT = 3

_SQLITE_HEADER = b"SQLite format 3\x00"
# primary SQLite result codes that mean the store itself failed (sqlite3.h)
_SQLITE_FAULTS = {
    8: "the database is read-only",
    10: "a disk I/O error",
    11: "the database file is damaged",
    13: "the disk is full",
    14: "the database file cannot be opened",
    26: "the file is not a database",
}
# PostgreSQL SQLSTATE classes (and codes) that mean the server or its disk failed
_PG_FAULTS = {
    "08": "the connection to the database failed",
    "53": "the database server is out of resources (disk or memory full)",
    "57P": "the database server is shutting down",
    "58": "the database server had a system error",
    "XX": "the database server reported internal damage",
    "25006": "the database is read-only",
}


class StoreError(RuntimeError):
    """The store failed under a command (not bad input): names the store and the fault.

    >>> str(StoreError("sqlite:///x.db", "the store file was deleted"))
    'sqlite:///x.db: store fault: the store file was deleted; nothing after it was written'
    """

    def __init__(self, url: str, fault: str) -> None:
        self.url = url
        self.fault = " ".join(fault.split())  # always one line
        super().__init__(str(self))

    def __str__(self) -> str:
        return f"{self.url}: store fault: {self.fault}; nothing after it was written"


@dataclass
class _FileIdentity:
    """What the store's SQLite file was when first opened, and the largest it has been."""

    path: Path
    inode: tuple[int, int] | None = None
    largest: int = 0

    def note(self) -> None:
        """Remember the file as it is now (called once it exists and is connected)."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return
        if self.inode is None:
            self.inode = (st.st_dev, st.st_ino)
        self.largest = max(self.largest, st.st_size)

    def fault(self) -> str | None:
        """Why the file is no longer the store that was opened, or None when it still is."""
        if self.inode is None:
            return None
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return "the store file was deleted"
        except OSError as exc:
            return f"the store file cannot be read ({exc.strerror})"
        if (st.st_dev, st.st_ino) != self.inode:
            return "the store file was replaced by another file"
        if st.st_size < self.largest and _damaged(self.path, st.st_size):
            return f"the store file was truncated ({st.st_size} bytes)"
        self.largest = max(self.largest, st.st_size)
        return None


def _damaged(path: Path, size: int) -> bool:
    """Whether a SQLite file of ``size`` bytes that shrank lost pages its header counts.

    Only asked when the file got smaller than this process has seen it (SQLite itself
    shrinks a file only by VACUUM, which leaves a consistent header), so a concurrent
    writer's checkpoint, which grows the file, never looks like damage.
    """
    if size < 100:
        return True
    try:
        with open(path, "rb") as f:
            header = f.read(100)
    except OSError:
        return True
    if len(header) < 100 or not header.startswith(_SQLITE_HEADER):
        return True
    page_size = struct.unpack(">H", header[16:18])[0]
    page_size = 65536 if page_size == 1 else page_size
    change, pages = struct.unpack(">II", header[24:32])
    valid_for = struct.unpack(">I", header[92:96])[0]
    return bool(valid_for == change and size < pages * page_size)


def driver_fault(exc: BaseException) -> str | None:
    """The store fault a driver error stands for (None: an ordinary error, e.g. a lock wait
    or a constraint, which the caller handles)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        fault = _SQLITE_FAULTS.get(code & 0xFF)
        return None if fault is None else f"{fault} ({exc})"
    state = getattr(exc, "sqlstate", None) or getattr(exc, "pgcode", None)
    if isinstance(state, str):
        for prefix in sorted(_PG_FAULTS, key=len, reverse=True):
            if state.startswith(prefix):
                return f"{_PG_FAULTS[prefix]} ({' '.join(str(exc).split())})"
    if type(exc).__module__.startswith("psycopg") and type(exc).__name__ == "OperationalError":
        return f"the connection to the database failed ({' '.join(str(exc).split())})"
    return None


def guard_engine(
    sql_engine: Engine, url: str, sqlite_file: Path | None, *, write_option: str | None = None
) -> None:
    """Install the store-fault checks of the module docstring on ``sql_engine``; ``url`` is the
    store as shown in messages (password hidden). ``write_option``: the execution option that
    marks write transactions, so that a write sent down SQLite's ``query_only`` read path
    stays the programming error it is, not a read-only store."""
    from sqlalchemy import event

    @event.listens_for(sql_engine, "handle_error")
    def _fault(ctx: Any) -> None:
        exc = ctx.original_exception
        if isinstance(exc, StoreError):
            raise exc
        if write_option is not None and getattr(exc, "sqlite_errorcode", None) == 8:
            conn = ctx.connection
            if conn is not None and not conn.get_execution_options().get(write_option):
                return  # SQLITE_READONLY from PRAGMA query_only on a read transaction
        fault = driver_fault(exc)
        if fault is not None:
            raise StoreError(url, fault) from exc

    if sqlite_file is None:
        return
    identity = _FileIdentity(sqlite_file)

    @event.listens_for(sql_engine, "do_connect")
    def _no_ghost(*_args: Any) -> None:
        # sqlite3.connect would create an empty file where the store was
        fault = identity.fault()
        if fault is not None:
            raise StoreError(url, fault)

    @event.listens_for(sql_engine, "connect")
    def _opened(*_args: Any) -> None:
        identity.note()

    def _check(*_args: Any) -> None:
        if identity.inode is None:
            identity.note()  # a new store: its file exists from its first write on
            return
        fault = identity.fault()
        if fault is not None:
            raise StoreError(url, fault)

    # "begin" runs before the transaction's first statement and "commit" before the driver's
    # COMMIT: a transaction whose file vanished meanwhile is rolled back, not written.
    event.listen(sql_engine, "begin", _check)
    event.listen(sql_engine, "commit", _check)


def check_fault_exit(exc: BaseException) -> StoreError | None:
    """The StoreError behind ``exc`` (itself, or its cause or context), or None."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, StoreError):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


__all__ = ["STORE_FAULT_EXIT", "StoreError", "check_fault_exit", "driver_fault", "guard_engine"]
