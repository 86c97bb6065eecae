"""A store that fails under ``trajudge judge``: one line naming the store and the fault, exit
code 3, nothing reported as success; what was written before stays intact, and a re-run once
the fault is gone makes only the missing calls.

Real ``trajudge judge`` processes against the fake OpenAI-compatible server: the first calls
answer, the rest wait (``block``) until the test has broken the store, so each fault lands
mid-run whatever the machine's speed (the test waits on the stored rows, not on time). Disk
full is a real full filesystem: a tmpfs of 8 MB mounted by the test and filled to its last
byte, where the machine allows mounting (root here and in CI); else the kernel's file-size
limit (RLIMIT_FSIZE, set on the running process), which makes every write that would grow a
file fail with EFBIG, as a full disk does. Read-only is the real permission check of
an unprivileged user: the run is started as ``nobody`` (setpriv) and the file and its folder
made read-only under it.
"""

from __future__ import annotations

import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_judge import _load_fake

from trajudge.store import Store
from trajudge.trajectories import Step, Trajectory

pytestmark = pytest.mark.timeout(300)
JUDGE = "f=openai/fake:trajectory_reasonableness"
ITEMS = 6
BEFORE = 2  # calls answered before the fault


@pytest.fixture
def fake() -> Iterator[Any]:
    server = _load_fake().FakeLLM().start()
    yield server
    server.release()
    server.stop()


def _store(path: Path, items: int = ITEMS) -> str:
    """A SQLite store at ``path`` with dataset ``ds``: ``items`` one-trial tasks."""
    url = f"sqlite:///{path}"
    trajectories = [
        Trajectory(id=f"t-{i}", task_id=f"t-{i}", input="help", steps=[Step(tool="search")])
        for i in range(items)
    ]
    store = Store(url)
    store.import_dataset("ds", trajectories)
    store.close()
    return url


def _judge(fake: Any, db: str, *, user: str | None = None) -> subprocess.Popen[str]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONUNBUFFERED": "1"}
    code = "from trajudge.cli import main; main()"
    cmd = [sys.executable, "-c", code, "judge", "ds", "--judge", JUDGE, "--api-base",
           fake.api_base, "--no-cache", "--max-retries", "0", "--concurrency", "1",
           "--db", db]  # fmt: skip
    if user is not None:
        cmd = ["setpriv", f"--reuid={user}", "--regid=nogroup", "--clear-groups", *cmd]
        env["HOME"] = "/tmp"
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _count(path: Path) -> int:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as con:
        return int(con.execute("SELECT count(*) FROM judgments").fetchone()[0])


def _started(fake: Any, db: Path, proc: subprocess.Popen[str]) -> None:
    """Wait until ``proc`` has stored the first answers and waits on a blocked call."""
    while not (fake.in_flight and _count(db) >= BEFORE):
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)


def _finish(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=240)
    return proc.returncode, " ".join(out.split()), err


def _one_line(err: str, url: str, fault: str) -> None:
    assert len(err.splitlines()) == 1, err
    assert "Traceback" not in err
    assert f"error: {url}: store fault: {fault}" in " ".join(err.split()), err


def _mid_run(fake: Any, path: Path, *, user: str | None = None) -> tuple[str, Any]:
    """A store at ``path`` and a judge run on it that has stored ``BEFORE`` answers and
    waits on its next call (the fake server blocks it): the moment to break the store."""
    url = _store(path)
    if user is not None:  # the store is the run's own: it may write it until made read-only
        for item in (path.parent, *path.parent.iterdir()):
            shutil.chown(item, user, "nogroup")
    fake.script = ["ok"] * BEFORE
    fake.default = "block"
    run = _judge(fake, url, user=user)
    _started(fake, path, run)
    return url, run


def test_a_store_deleted_mid_run_fails_the_run_and_is_not_recreated(
    fake: Any, tmp_path: Path
) -> None:
    path = tmp_path / "trajudge.db"
    url, run = _mid_run(fake, path)
    for name in ("trajudge.db", "trajudge.db-wal", "trajudge.db-shm"):
        (tmp_path / name).unlink(missing_ok=True)
    fake.release()
    code, out, err = _finish(run)
    assert code == 3, (out, err)
    _one_line(err, url, "the store file was deleted")
    assert "calls this run" not in out  # no summary of a run that did not finish
    assert not path.exists()  # no empty store made where the old one was


def test_a_store_truncated_mid_run_fails_the_run_and_later_commands_say_so(
    fake: Any, tmp_path: Path
) -> None:
    path = tmp_path / "trajudge.db"
    url, run = _mid_run(fake, path)
    with open(path, "r+b") as f:
        f.truncate(0)
    fake.release()
    code, out, err = _finish(run)
    assert code == 3, (out, err)
    _one_line(err, url, "the store file was truncated (0 bytes)")
    (tmp_path / "trajudge.db-wal").unlink(missing_ok=True)  # what a restart would not replay
    (tmp_path / "trajudge.db-shm").unlink(missing_ok=True)
    path.write_bytes(b"\0" * 4096)  # now a damaged file
    cli = [sys.executable, "-c", "from trajudge.cli import main; main()"]
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    report = subprocess.run(
        [*cli, "report", "ds", "--db", url], capture_output=True, text=True, env=env, timeout=120
    )
    assert report.returncode in (2, 3), report.stderr
    assert len(report.stderr.splitlines()) == 1 and "Traceback" not in report.stderr
    assert "not a database" in report.stderr or "damaged" in report.stderr, report.stderr


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A folder on a filesystem that can be filled: an 8 MB tmpfs where mounting is allowed,
    else a plain folder whose writer gets a file-size limit (``fsize``) instead."""
    mount = tmp_path / "disk"
    mount.mkdir()
    mounted = (
        not os.environ.get("TRAJUDGE_TEST_NO_MOUNT")
        and shutil.which("mount") is not None
        and subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mount)], capture_output=True
        ).returncode
        == 0
    )
    yield mount, "tmpfs" if mounted else "fsize"
    if mounted:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(disk: Path, kind: str, run: subprocess.Popen[str]) -> None:
    """Make every further write of ``run`` to the store fail as on a full disk."""
    if kind == "fsize":
        # no regular file may hold a byte more: every write gets EFBIG (Python ignores
        # SIGXFSZ, so the process is not killed by it); pipes (its output) are not files
        resource.prlimit(run.pid, resource.RLIMIT_FSIZE, (0, 0))
        return
    filler = disk / "filler"
    try:
        with open(filler, "wb") as f:  # to the last block, then to the last byte
            for size in (65536, 1):
                while True:
                    f.write(b"\0" * size)
                    f.flush()
    except OSError:
        pass


def test_disk_full_mid_run_keeps_what_was_written_and_a_rerun_makes_only_the_rest(
    fake: Any, small_disk: tuple[Path, str]
) -> None:
    disk, kind = small_disk
    path = disk / "trajudge.db"
    url, run = _mid_run(fake, path)
    _fill(disk, kind, run)
    fake.release()
    code, out, err = _finish(run)
    assert code == 3, (out, err)
    _one_line(err, url, "the disk is full" if kind == "tmpfs" else "")
    assert kind == "tmpfs" or "disk I/O error" in err or "disk is full" in err, err
    (disk / "filler").unlink(missing_ok=True)
    with sqlite3.connect(path) as con:
        assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert con.execute("SELECT count(*) FROM judgments").fetchone()[0] >= BEFORE
    fake.script = []
    fake.default = "ok"
    calls = fake.calls
    code, out, err = _finish(_judge(fake, url))
    assert code == 0, (out, err)
    with sqlite3.connect(path) as con:
        rows = con.execute("SELECT trajectory_id, count(*) FROM judgments GROUP BY 1").fetchall()
    assert sorted(rows) == [(f"t-{i}", 1) for i in range(ITEMS)]  # each once, none twice
    assert fake.calls - calls == ITEMS - _stored_before(out)


def _stored_before(out: str) -> int:
    """The 'N already stored' figure of a judge run's summary."""
    words = out.split()
    return int(words[words.index("already") - 1]) if "already" in words else 0


@pytest.fixture
def open_folder() -> Iterator[Path]:
    """A folder that another user can reach (pytest's own tmp folders are private)."""
    folder = Path(tempfile.mkdtemp(prefix="trajudge-ro-"))
    os.chmod(folder, 0o755)
    yield folder
    os.chmod(folder, 0o755)
    shutil.rmtree(folder, ignore_errors=True)


def test_a_store_made_read_only_fails_a_run_in_one_line_and_keeps_what_it_had(
    fake: Any, open_folder: Path
) -> None:
    """A run that opened the store before it was made read-only keeps writing through the
    file it holds open (the kernel checks permissions at open, and the rows are really in
    the file); the next run, which must open it, fails in one line and calls nothing."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root to start the run as another user")
    folder = open_folder
    path = folder / "trajudge.db"
    url, run = _mid_run(fake, path, user="nobody")
    for file in folder.iterdir():
        os.chmod(file, 0o444)
    os.chmod(folder, 0o555)
    fake.release()
    code, out, err = _finish(run)
    assert code == 0, (out, err)
    assert _count(path) == ITEMS
    calls = fake.calls
    code, out, err = _finish(_judge(fake, url, user="nobody"))
    assert code == 3, (out, err)
    _one_line(err, url, "the database is read-only")
    assert fake.calls == calls
