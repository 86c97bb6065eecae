"""Format detection reads at most ``TRAJUDGE_MAX_SNIFF_BYTES`` (16 MiB) of a file: a 1 GiB file
whose format those bytes do not tell is refused in one line naming the file and the limit, by
a real ``trajudge import`` process capped at 1 GB of address space, within 60 s.

Before the limit, ``--format auto`` read a file's first record whole (a 1 GiB line: 2.2 GB
resident, a MemoryError traceback under the cap), a pretty-printed object of 1 GiB was read
whole with ``read_bytes``, and a JSON list or JSON Lines file whose first record tells no
format was held whole, every record, to test them all together (MemoryError).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from _capped import run_capped
from trajudge.core import InputError
from trajudge.trajectories import detect_format, read_trajectories
from trajudge.trajectories._stream import Cut, iter_json_records

GiB = 1 << 30
MiB = 1 << 20
LIMIT = 16 * MiB  # the default, as the README states it


def _repeat(path: Path, head: bytes, unit: bytes, tail: bytes) -> None:
    """``head``, then ``unit`` as many times as fit in 1 GiB with ``tail``, then ``tail``."""
    n = (GiB - len(head) - len(tail)) // len(unit)
    per_block = MiB // len(unit)
    with path.open("wb") as fh:
        fh.write(head)
        blocks, rest = divmod(n, per_block)
        block = unit * per_block
        for _ in range(blocks):
            fh.write(block)
        fh.write(unit * rest + tail)


TYPED = b'{"type": "x"}, '  # 15 bytes: a typed item that is no Responses item
FILES = {
    # one JSON object holding a 1 GiB string, on one line
    "string": (b'{"x": "', b"a", b'"}'),
    # 1 GiB of text with no newline
    "text": (b"", b"a", b""),
    # a 1 GiB JSON list of numbers
    "ints": (b"[", b"1, ", b"1]"),
    # a 1 GiB JSON list of typed objects (which Responses items would be, were one of them)
    "typed": (b"[", TYPED, b'{"type": "x"}]'),
    # one pretty-printed object of 1 GiB
    "pretty": (b'{\n  "x": [\n', b"    1,\n", b"    1\n  ]\n}\n"),
    # 1 GiB of JSON Lines of objects in no format
    "objects": (b"", b'{"a": 1}\n', b""),
}
NOT_DETECTED = "format not detected: bytes read to detect the format over the limit of 16,777,216"
EXPECTED = {
    "string": f"{NOT_DETECTED} (the first record is longer); raise TRAJUDGE_MAX_SNIFF_BYTES",
    "text": "unrecognised format: not JSON objects or lists",
    "zeros": "unrecognised format: not JSON objects or lists",
    "ints": "unrecognised format: JSON values of type int",
    # the records that end within the limit: "[" then 15 bytes each, the last without ", "
    "typed": f"{NOT_DETECTED} (the {(LIMIT + 1) // len(TYPED):,} records within it tell no format)",
    "pretty": f"{NOT_DETECTED} (the first record is longer)",
    "objects": "unrecognised format: at least 1,000 JSON objects with keys a",
}


@pytest.fixture
def hostile(tmp_path: Path) -> Iterator[Path]:
    """A folder whose files are deleted after the test (they are 1 GiB each)."""
    yield tmp_path
    for f in tmp_path.glob("*.json"):
        f.unlink()


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_a_1_gib_file_is_refused_in_one_line_within_bounds(case: str, hostile: Path) -> None:
    path = hostile / f"{case}.json"
    if case == "zeros":
        with path.open("wb") as fh:
            fh.truncate(GiB)  # 1 GiB of NUL bytes: valid UTF-8, one line, not JSON
    else:
        _repeat(path, *FILES[case])
    assert path.stat().st_size > GiB - 16
    run = run_capped(["import", path.name, "--db", f"sqlite:///{hostile / 'x.db'}"], cwd=hostile)
    line = run.one_line_error()
    assert line.startswith(f"error: {path.name}: {EXPECTED[case]}"), line
    if EXPECTED[case].startswith("format not detected"):
        assert "or pass --format (one of jsonl, parquet" in line, line
    assert run.max_rss_mb < 1024, run.max_rss_mb


def test_the_limit_is_set_by_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"x": "a" * 2000}) + "\n", encoding="utf-8")  # 2,011 bytes
    monkeypatch.setenv("TRAJUDGE_MAX_SNIFF_BYTES", "1000")
    with pytest.raises(InputError, match=r"over the limit of 1,000 \(the first record is longer"):
        read_trajectories(path)
    assert detect_format(path) is None
    monkeypatch.setenv("TRAJUDGE_MAX_SNIFF_BYTES", "3000")
    with pytest.raises(InputError, match=r"unrecognised format: a JSON object with keys x \("):
        read_trajectories(path)
    run = run_capped(
        ["import", path.name, "--db", f"sqlite:///{tmp_path / 'x.db'}"],
        cwd=tmp_path,
        env={"TRAJUDGE_MAX_SNIFF_BYTES": "1000"},
    )
    assert "over the limit of 1,000" in run.one_line_error()


def test_the_limit_counts_the_bytes_of_the_file(tmp_path: Path) -> None:
    lines = tmp_path / "runs.jsonl"
    lines.write_bytes(b'{"id": "a", "task_id": "t"}\n')  # 28 bytes
    assert [label for label, _ in iter_json_records(lines, limit=28)] == ["line 1"]
    with pytest.raises(Cut):
        list(iter_json_records(lines, limit=27))  # the newline is the 28th byte
    items = tmp_path / "items.json"
    items.write_bytes(b'[{"a": 1}, {"a": 2}]')  # 20 bytes; the first element ends at byte 9
    assert len(list(iter_json_records(items, limit=20))) == 2
    records = iter_json_records(items, limit=9)
    assert next(records) == ("record 0", {"a": 1})
    with pytest.raises(Cut):
        next(records)


def _native(i: int, pad: int = 0) -> str:
    record = {"id": f"t-{i}", "task_id": f"t{i}", "steps": [], "metadata": {"p": "x" * pad}}
    return json.dumps(record)


def test_files_longer_than_the_limit_still_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRAJUDGE_MAX_SNIFF_BYTES", "4096")
    # JSON Lines: the first record tells the format; the other 2,999 stream after it
    runs = tmp_path / "runs.jsonl"
    runs.write_text("".join(_native(i, 100) + "\n" for i in range(3000)), encoding="utf-8")
    assert runs.stat().st_size > 100 * 4096
    result = read_trajectories(runs)
    assert (result.fmt, len(result.trajectories)) == ("jsonl", 3000)
    # one conversation, a JSON list of chat messages: the messages within the limit tell it
    messages = [{"role": "user" if i % 2 else "assistant", "content": f"m{i}"} for i in range(900)]
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps([{"role": "system", "content": "s"}, *messages]), encoding="utf-8")
    assert chat.stat().st_size > 5 * 4096
    result = read_trajectories(chat)
    assert result.fmt == "openai" and len(result.trajectories) == 1
    assert len(result.trajectories[0].messages or []) >= 900
    # a first record longer than the limit is read when --format names the format
    big = tmp_path / "big.jsonl"
    big.write_text(_native(0, 10_000) + "\n" + _native(1) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="the first record is longer"):
        read_trajectories(big)
    assert [t.id for t in read_trajectories(big, fmt="jsonl").trajectories] == ["t-0", "t-1"]


def test_objects_one_after_another_are_detected_from_those_within_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    console = Path(__file__).parents[1] / "fixtures" / "traces" / "pydantic_ai_console.txt"
    whole = read_trajectories(console)  # 41,881 bytes of pretty-printed spans, one after another
    assert whole.fmt == "otel"
    monkeypatch.setenv("TRAJUDGE_MAX_SNIFF_BYTES", "8192")  # the first span is 4,651 bytes
    cut = read_trajectories(console)
    assert (cut.fmt, cut.trajectories) == ("otel", whole.trajectories)
    # JSON broken before the limit is the first line's error, as for a file read whole
    broken = tmp_path / "broken.jsonl"
    broken.write_text("{oops\n" + (_native(1) + "\n") * 100, encoding="utf-8")
    with pytest.raises(InputError, match=r"broken.jsonl: line 1: invalid JSON: Expecting prop"):
        read_trajectories(broken)


def test_a_file_dense_with_small_values_runs_out_of_memory_in_one_line(tmp_path: Path) -> None:
    """One record whose ``metadata`` holds 64 MiB of ``[[],[],...]`` (22 million empty lists)
    takes more than 1 GB once parsed into Python lists: read as JSONL under the cap that is
    a MemoryError, reported in one line
    (exit 2, no traceback) naming the cap (a traceback before); auto-detection refuses it, in
    one line too."""
    path = tmp_path / "dense.json"
    n = 4 * LIMIT // 3
    path.write_bytes(
        b'{"id": "a", "task_id": "t", "metadata": {"x": [' + b"[]," * (n - 1) + b"[]]}}"
    )
    db = ["--db", f"sqlite:///{tmp_path / 'x.db'}"]
    line = run_capped(
        ["import", path.name, "--format", "jsonl", *db], cwd=tmp_path
    ).one_line_error()
    assert "ran out of memory" in line and "address space capped at" in line, line
    line = run_capped(["import", path.name, *db], cwd=tmp_path).one_line_error()
    assert "TRAJUDGE_MAX_SNIFF_BYTES" in line or "unrecognised format" in line, line
