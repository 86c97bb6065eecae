"""The peak RSS that tests/_capped.py reports is the measured process's alone.

A child forked from pytest inherits pytest's high-water mark when it execs (Linux folds the
old memory map's mark into the new process's peak), so with the previous helper a ``trajudge
--help`` run from a pytest process holding 300 MB reported over 300 MB, and inside the whole
suite every capped run reported about 1,600 MB. The figures here come from what each side
touches: 300 MB written in pytest, 200 MB written in the child, ``--help`` far less than 300.
"""

from __future__ import annotations

import sys
from pathlib import Path

from _capped import run_capped, run_capped_command

MB = 1 << 20


def _touched(size: int) -> bytearray:
    """``size`` bytes, every page written, so they are resident."""
    block = bytearray(size)
    block[::4096] = b"\x01" * len(range(0, size, 4096))
    return block


def test_the_pytest_process_s_own_memory_is_not_counted(tmp_path: Path) -> None:
    held = _touched(300 * MB)
    run = run_capped(["--help"], cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "import" in run.stdout
    assert run.max_rss_mb < 200, run.max_rss_mb
    assert held[4096] == 1


def test_memory_the_measured_process_touches_is_counted(tmp_path: Path) -> None:
    code = "b = bytearray(200 << 20); b[::4096] = b'\\x01' * len(range(0, len(b), 4096))"
    run = run_capped_command([sys.executable, "-c", code], cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.max_rss_mb >= 200, run.max_rss_mb


def test_the_address_space_cap_applies_to_the_measured_process(tmp_path: Path) -> None:
    code = "bytearray(400 << 20)"
    run = run_capped_command([sys.executable, "-c", code], cwd=tmp_path, address_space=300 * MB)
    assert run.returncode == 1 and "MemoryError" in run.stderr, (run.returncode, run.stderr)
