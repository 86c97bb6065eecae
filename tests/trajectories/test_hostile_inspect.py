"""An Inspect ``.eval`` zip bomb is refused in one line naming the member and the limit, before
inspect_ai decompresses it: a real ``trajudge import`` process capped at 1 GB of address space.
Before the check, 300 KB of deflated spaces padding a sample took 3.3 GB (under the cap, a
MemoryError reported as an unreadable log), and a zip that declares less than it holds was
expanded all the same.
"""

from __future__ import annotations

import struct
import zipfile
from pathlib import Path

import pytest

from _capped import run_capped
from trajudge.core import InputError
from trajudge.trajectories import read_trajectories

SCENARIO = Path(__file__).parents[1] / "fixtures" / "inspect" / "scenario.eval"
SAMPLE = "samples/cancel-ABC123_epoch_2.json"
MB = 1 << 20


def _padded_log(out: Path, pad_mb: int) -> None:
    """The scenario log with ``pad_mb`` MB of spaces after one sample's JSON (still valid
    JSON), deflated: about 1 KB on disk per MB."""
    pytest.importorskip("zipfile_zstd")  # inspect_ai's members are zstd; it patches zipfile
    with zipfile.ZipFile(SCENARIO) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for info in src.infolist():
            data = src.read(info)
            if info.filename != SAMPLE:
                z.writestr(info.filename, data)
                continue
            with z.open(SAMPLE, "w") as fh:
                fh.write(data)
                for _ in range(pad_mb):
                    fh.write(b" " * MB)


def _declare(path: Path, member: str, size: int) -> None:
    """Make the zip's local header and central directory both declare ``size`` bytes for
    ``member`` (CRC and data unchanged): a zip that lies about what it holds."""
    raw = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as z:
        info = z.getinfo(member)
    struct.pack_into("<I", raw, info.header_offset + 22, size)  # local header
    name = member.encode()
    entry = raw.find(b"PK\x01\x02")
    while entry >= 0:
        name_len = struct.unpack_from("<H", raw, entry + 28)[0]
        if raw[entry + 46 : entry + 46 + name_len] == name:
            struct.pack_into("<I", raw, entry + 24, size)  # central directory
            break
        entry = raw.find(b"PK\x01\x02", entry + 4)
    else:
        raise AssertionError(f"{member} not in the central directory")
    path.write_bytes(bytes(raw))


@pytest.mark.parametrize(
    ("case", "named"),
    [
        ("declared-300MB", "TRAJUDGE_MAX_ZIP_MEMBER_BYTES"),
        ("ratio-50MB", "TRAJUDGE_MAX_ZIP_RATIO"),
        ("declares-less", "decompresses to more than the 100,000 bytes it declares"),
    ],
)
def test_an_eval_zip_bomb_is_one_line_exit_2_within_bounds(
    case: str, named: str, tmp_path: Path
) -> None:
    log = tmp_path / "bomb.eval"
    _padded_log(log, 50 if case == "ratio-50MB" else 300)
    if case == "declares-less":
        _declare(log, SAMPLE, 100_000)
    assert log.stat().st_size < 2 * MB
    run = run_capped(["import", log.name, "--db", f"sqlite:///{tmp_path / 'x.db'}"], cwd=tmp_path)
    line = run.one_line_error()
    assert line.startswith(f"error: {log.name}: {SAMPLE}: ") and named in line, line
    assert run.max_rss_mb < 1024


def test_a_zstd_member_that_declares_less_is_refused(tmp_path: Path) -> None:
    log = tmp_path / "lying.eval"
    log.write_bytes(SCENARIO.read_bytes())
    _declare(log, SAMPLE, 1_000)  # the real sample, zstd, is 26,928 bytes
    with pytest.raises(InputError, match="decompresses to more than the 1,000 bytes"):
        read_trajectories(log)


def test_the_zip_limits_are_configurable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert len(read_trajectories(SCENARIO).trajectories) == 2
    monkeypatch.setenv("TRAJUDGE_MAX_ZIP_BYTES", "20000")  # the members hold 69,690 bytes
    with pytest.raises(InputError, match=r"over the limit of 20,000 .*TRAJUDGE_MAX_ZIP_BYTES"):
        read_trajectories(SCENARIO)
    monkeypatch.delenv("TRAJUDGE_MAX_ZIP_BYTES")
    monkeypatch.setenv("TRAJUDGE_MAX_ZIP_MEMBER_BYTES", "10000")
    with pytest.raises(InputError, match=r"samples/.*TRAJUDGE_MAX_ZIP_MEMBER_BYTES"):
        read_trajectories(SCENARIO)
