"""A real PostgreSQL server for the tests, started and stopped by the tests themselves.

Debian's ``postgresql`` package provides the binaries (``.ci/run`` installs it). One server per
test session: ``initdb`` in a fresh temporary directory, ``postgres`` on a free loopback port
(no Unix socket), run as the ``postgres`` system user when the tests run as root (PostgreSQL
refuses to run as root). Each test gets a database of its own, owned by an ordinary login role
(not a superuser), the way a team would set one up. Start-up waits on state (a connection that
answers from our data directory), never on a fixed delay.

The server is stopped at the end of the session; if the test process dies first, the kernel
sends the server SIGQUIT (``setpriv --pdeathsig``) and the next session removes the orphaned
directory. A module of its own (not conftest) so that other test packages can import it.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import pytest

REQUIRE_ENV = "TRAJUDGE_REQUIRE_POSTGRES"
ROLE = "trajudge"  # the owner of every test database: a login role without superuser rights
ROLE_PASSWORD = "pw-trajudge"  # loopback-only server in a temporary directory
_PREFIX = "trajudge-pg-"
_START_TIMEOUT_S = 300.0  # an upper bound for a loaded machine; start-up waits on state
_RUN_AS = "postgres"  # Debian's postgresql package creates this system user


def unavailable(reason: str) -> NoReturn:
    """Skip (a user's clone without PostgreSQL) or, with TRAJUDGE_REQUIRE_POSTGRES=1, fail."""
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"PostgreSQL is required ({REQUIRE_ENV}=1) but {reason}", pytrace=False)
    pytest.skip(f"PostgreSQL not available: {reason}")


def find_bindir() -> Path | None:
    """The directory holding ``initdb`` and ``postgres``: Debian's newest, else ``$PATH``."""

    def major(p: Path) -> tuple[int, ...]:
        return tuple(int(x) for x in re.findall(r"\d+", p.parent.parent.name)) or (0,)

    debian = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=major, reverse=True)
    for initdb in debian:
        if (initdb.parent / "postgres").is_file():
            return initdb.parent
    found = shutil.which("initdb")
    if found and shutil.which("postgres"):
        return Path(found).resolve().parent
    return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_orphans(tmp: Path) -> None:
    """Delete data directories left by sessions that were killed (their owner pid is gone)."""
    for d in tmp.glob(f"{_PREFIX}*"):
        try:
            owner = int((d / "owner.pid").read_text())
        except (OSError, ValueError):
            continue  # being created right now, or not ours
        if not _pid_alive(owner):
            shutil.rmtree(d, ignore_errors=True)


class PostgresServer:
    """One throw-away PostgreSQL cluster on 127.0.0.1; see the module docstring."""

    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.port = 0
        self.root: Path | None = None
        self.proc: subprocess.Popen[bytes] | None = None
        self._names = itertools.count()
        self._as_user: list[str] = []
        out = subprocess.run(
            [str(bindir / "postgres"), "--version"], capture_output=True, text=True, check=True
        ).stdout  # "postgres (PostgreSQL) 15.8 (Debian 15.8-0+deb12u1)"
        found = re.search(r"\) (\d+)", out)
        self.major = int(found.group(1)) if found else 0

    # -- life cycle ---------------------------------------------------------------------------
    def start(self) -> PostgresServer:
        tmp = Path(tempfile.gettempdir())
        remove_orphans(tmp)
        self.root = Path(tempfile.mkdtemp(prefix=_PREFIX, dir=tmp))
        (self.root / "owner.pid").write_text(str(os.getpid()))
        self._as_user = self._command_prefix()
        try:
            self._initdb()
            for _attempt in range(5):
                if self._launch(free_port()):
                    break
            else:
                raise RuntimeError(f"postgres could not bind a loopback port:\n{self._log()}")
            self.admin(f"CREATE ROLE {ROLE} LOGIN PASSWORD '{ROLE_PASSWORD}'")
        except BaseException:
            self.stop()
            raise
        return self

    def _command_prefix(self) -> list[str]:
        """What runs before initdb and postgres: drop root to the postgres user, and tie the
        server's life to ours (SIGQUIT, PostgreSQL's immediate shutdown, when we die)."""
        setpriv = shutil.which("setpriv")
        if os.geteuid() != 0:
            return [setpriv, "--pdeathsig", "SIGQUIT", "--"] if setpriv else []
        if not setpriv:
            unavailable("running as root needs setpriv (util-linux) to drop to a normal user")
        import pwd

        try:
            pw = pwd.getpwnam(_RUN_AS)
        except KeyError:
            unavailable(f"running as root needs the {_RUN_AS!r} system user")
        assert self.root is not None
        os.chown(self.root, pw.pw_uid, pw.pw_gid)
        return [setpriv, "--pdeathsig", "SIGQUIT", "--reuid", str(pw.pw_uid),
                "--regid", str(pw.pw_gid), "--clear-groups", "--"]  # fmt: skip

    def _run(self, args: list[str]) -> None:
        subprocess.run([*self._as_user, *args], check=True, capture_output=True)

    def _initdb(self) -> None:
        assert self.root is not None
        try:
            self._run(
                [
                    str(self.bindir / "initdb"),
                    "--pgdata", str(self.root / "data"),
                    "--username", "postgres",
                    "--auth-local", "trust",
                    "--auth-host", "scram-sha-256",
                    "--pwfile", str(self._pwfile()),
                    "--encoding", "UTF8",
                    "--locale", "C.UTF-8",
                    # ICU en-US collation, as on a typical team server (not SQLite's byte order)
                    *(["--locale-provider", "icu", "--icu-locale", "en-US"]
                      if self.major >= 15 else []),
                    "--no-sync",
                    "--no-instructions",
                ]
            )  # fmt: skip
        except subprocess.CalledProcessError as exc:
            raise RuntimeError(f"initdb failed:\n{exc.stderr.decode(errors='replace')}") from None

    def _pwfile(self) -> Path:
        assert self.root is not None
        path = self.root / "superuser.pw"
        path.write_text("pw-postgres\n")
        if os.geteuid() == 0:
            shutil.chown(path, _RUN_AS, _RUN_AS)
        path.chmod(0o600)
        return path

    def _launch(self, port: int) -> bool:
        """Start postgres on ``port``; True once it answers, False when the port was taken."""
        assert self.root is not None
        self.port = port
        log = open(self.root / "server.log", "wb")  # noqa: SIM115 - closed with the server
        self.proc = subprocess.Popen(
            [
                *self._as_user,
                str(self.bindir / "postgres"),
                "-D", str(self.root / "data"),
                "-p", str(port),
                "-c", "listen_addresses=127.0.0.1",
                "-c", "unix_socket_directories=",
                # a throw-away cluster: durability buys nothing here
                "-c", "fsync=off",
                "-c", "synchronous_commit=off",
                "-c", "full_page_writes=off",
                "-c", "max_connections=200",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # Ctrl-C reaches pytest, whose teardown stops the server
        )  # fmt: skip
        log.close()
        deadline = time.monotonic() + _START_TIMEOUT_S
        while True:
            if self.proc.poll() is not None:
                if "could not bind" in self._log() or "could not create any TCP" in self._log():
                    return False
                raise RuntimeError(f"postgres exited with {self.proc.returncode}:\n{self._log()}")
            ready = self._answers()
            if ready:
                return True
            if time.monotonic() > deadline:
                raise RuntimeError(f"postgres did not accept connections:\n{self._log()}")
            time.sleep(0.05)  # polling the server's state, not waiting for a fixed time

    def _answers(self) -> bool:
        """Whether our server (its data directory, not another one on the port) accepts us."""
        import psycopg

        assert self.root is not None
        try:
            with psycopg.connect(self.admin_dsn, connect_timeout=10) as conn:
                row = conn.execute("SHOW data_directory").fetchone()
        except psycopg.OperationalError:
            return False
        # another server on this port: ours fails to bind and exits, and _launch moves on
        return row is not None and Path(row[0]).resolve() == (self.root / "data").resolve()

    def _log(self) -> str:
        assert self.root is not None
        try:
            return (self.root / "server.log").read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    def stop(self) -> None:
        """Fast shutdown (SIGINT: disconnect clients, stop), then remove the data directory."""
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(120)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)  # its backends too
                self.proc.wait(30)
        self.proc = None
        if self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)
            self.root = None

    # -- databases ----------------------------------------------------------------------------
    @property
    def admin_dsn(self) -> str:
        return f"host=127.0.0.1 port={self.port} user=postgres password=pw-postgres dbname=postgres"

    def admin(self, sql: str, dbname: str = "postgres") -> None:
        """Run ``sql`` as the superuser (autocommit) in ``dbname``."""
        import psycopg

        dsn = self.admin_dsn.replace("dbname=postgres", f"dbname={dbname}")
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(sql)  # type: ignore[arg-type]

    def url(self, dbname: str) -> str:
        """The SQLAlchemy URL a user would write for ``dbname`` (password in the URL)."""
        return f"postgresql+psycopg://{ROLE}:{ROLE_PASSWORD}@127.0.0.1:{self.port}/{dbname}"

    def create_database(self) -> str:
        """A new empty database owned by the ordinary role; returns its name."""
        name = f"t{os.getpid()}_{next(self._names)}"
        strategy = " STRATEGY FILE_COPY" if self.major >= 15 else ""  # faster with fsync off
        self.admin(f"CREATE DATABASE {name} OWNER {ROLE}{strategy}")
        return name

    def drop_database(self, name: str) -> None:
        """Drop ``name``, ending any connection a test left open (pools, app caches)."""
        if self.proc is not None and self.proc.poll() is None:
            self.admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    @contextlib.contextmanager
    def database(self) -> Iterator[str]:
        """A fresh database for one test; yields its URL and drops it afterwards."""
        name = self.create_database()
        try:
            yield self.url(name)
        finally:
            self.drop_database(name)


def start_server() -> PostgresServer:
    """Start a server, or skip/fail (see :func:`unavailable`) when PostgreSQL is missing."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        unavailable("psycopg is not installed (pip install 'trajudge[postgres]')")
    bindir = find_bindir()
    if bindir is None:
        unavailable("no initdb/postgres binaries (Debian: apt-get install postgresql)")
    server = PostgresServer(bindir)
    if server.major < 13:  # DROP DATABASE ... WITH (FORCE)
        unavailable(f"PostgreSQL 13 or later is needed, found {server.major}")
    return server.start()
