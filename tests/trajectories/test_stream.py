"""Streaming JSON records: the same records and errors as parsing the whole text, in bounded memory.

The expected values come from ``load_json_records`` on the whole decoded text, i.e. from
``json.loads`` (an independent parser of the same documents); every document is read with many
chunk sizes, so elements, numbers, escapes and multi-byte characters fall across chunk edges.
"""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from trajudge.core import InputError
from trajudge.trajectories._io import decode_utf8, load_json_records
from trajudge.trajectories._stream import iter_json_records

CHUNKS = [1, 2, 3, 5, 7, 11, 64, 100, 4096]

RECORDS = [
    {"id": "a", "n": 12345678901234567890, "x": 1.5e-300, "neg": -0.0, "t": True, "z": None},
    {"id": "é", "text": 'naïve ☃ 𝄞 \u2028 and "quotes" \\ and \\u escapes \u00e9', "l": []},
    {"id": "c", "nested": {"deep": [[], {}, [1, [2, [3]]]], "s": "x" * 300}},
    123456,
    "a bare string",
    [1, 2.25, "three"],
]

GOOD = {
    "list_pretty": json.dumps(RECORDS, indent=2, ensure_ascii=False),
    "list_one_line": json.dumps(RECORDS, ensure_ascii=False),
    "list_bom": "\ufeff" + json.dumps(RECORDS),
    "list_spaces": "\n\n  [  " + " ,\n ".join(json.dumps(r) for r in RECORDS) + "  ]  \n\n",
    "numbers_only": "[1, 22, 333, 4444, 55555, 666666, 7.5, -8e3, 1e-7]",
    "jsonl": "\n".join(json.dumps(r, ensure_ascii=False) for r in RECORDS[:3]) + "\n",
    "jsonl_blank_lines_crlf": "\r\n\r\n".join(json.dumps(r) for r in RECORDS[:3]) + "\r\n",
    "jsonl_no_final_newline": "\n".join(json.dumps(r) for r in RECORDS[:3]),
    "jsonl_of_lists": "\n".join(json.dumps([r, r]) for r in RECORDS[:3]) + "\n",
    "one_pretty_object": json.dumps(RECORDS[0], indent=2),
    "concatenated_objects": "\n".join(json.dumps(r, indent=1) for r in RECORDS[:3]),
    "one_list_one_line_then_blank": json.dumps(RECORDS) + "\n\n   \n",
}

BAD = {
    "truncated_list": json.dumps(RECORDS, indent=2)[:-40],
    "missing_comma": '[\n  {"id": "a"}\n  {"id": "b"}\n]',
    "trailing_comma": '[{"id": "a"},\n]',
    "extra_data": '[{"id": "a"}]  x',
    "broken_member": '[\n  {"id": "a", "task_id": "a"},\n  {"id": "b",\n]\n',
    "unterminated_string": '[{"id": "abc',
    "bad_escape": '[{"id": "a\\x"}]',
    "control_char_in_string": '[{"id": "a\tb"}]',
    "bad_line": '{"id": "a"}\n{"id": "b", \n{"id": "c"}\n',
    "empty": "  \n \n",
    "empty_list": " [ ] ",
    "not_json": "id,task_id\na,b\n",
    "unclosed_list": "[1, 2",
    "open_bracket": "[",
}


def expected(path: Path) -> object:
    try:
        return load_json_records(path, decode_utf8(path, path.read_bytes()))
    except InputError as exc:
        return str(exc)


def streamed(path: Path, chunk: int) -> object:
    try:
        return list(iter_json_records(path, chunk=chunk))
    except InputError as exc:
        return str(exc)


@pytest.mark.parametrize("name", sorted(GOOD))
def test_same_records_as_parsing_the_whole_text(tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{name}.json"
    path.write_text(GOOD[name], encoding="utf-8")
    want = expected(path)
    assert isinstance(want, list) and want  # the document is valid
    for chunk in CHUNKS:
        assert streamed(path, chunk) == want, chunk


@pytest.mark.parametrize("name", sorted(BAD))
def test_same_error_as_parsing_the_whole_text(tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{name}.json"
    path.write_text(BAD[name], encoding="utf-8")
    want = expected(path)
    assert isinstance(want, str)  # the document is invalid
    for chunk in CHUNKS:
        assert streamed(path, chunk) == want, chunk


@pytest.mark.parametrize("chunk", [1, 5, 4096])
def test_a_broken_list_names_the_line_and_column(tmp_path: Path, chunk: int) -> None:
    path = tmp_path / "broken.json"
    path.write_text(BAD["broken_member"], encoding="utf-8")
    # by hand: the "]" on line 4, column 1, stands where a member name was expected
    assert streamed(path, chunk) == (
        f"{path}: line 4: invalid JSON: Expecting property name enclosed in double quotes "
        "(column 1)"
    )


def test_a_second_line_after_a_one_line_list_makes_json_lines(tmp_path: Path) -> None:
    path = tmp_path / "lines.json"
    path.write_text('[{"id": "a"}]\n  x', encoding="utf-8")
    # line 1 is a complete list, so the file is JSON Lines of lists, and line 2 is not JSON
    assert streamed(path, 3) == f"{path}: line 2: invalid JSON: Expecting value (column 3)"


def test_columns_count_from_the_start_of_a_long_line(tmp_path: Path) -> None:
    path = tmp_path / "one_line.json"
    # by hand: 1,000 elements "[1,1,...": the bad "x" is character 2 + 2 * 1000 of line 1
    path.write_text("[" + "1," * 1000 + "x]", encoding="utf-8")
    assert streamed(path, 7) == f"{path}: line 1: invalid JSON: Expecting value (column 2002)"


@pytest.mark.parametrize("chunk", [1, 2, 3, 4096])
def test_bad_utf8_is_named_with_line_and_offset(tmp_path: Path, chunk: int) -> None:
    path = tmp_path / "bad.jsonl"
    # line 3 holds the bad byte; "é" (2 bytes) before it moves the offset past the characters
    data = b'{"id": "\xc3\xa9"}\n{"id": "b"}\n{"id": "\xff"}\n'
    path.write_bytes(data)
    offset = data.index(b"\xff")
    want = f"{path}: line 3: not valid UTF-8 (byte 0xff at offset {offset})"
    assert expected(path) == want
    assert streamed(path, chunk) == want


def test_a_character_cut_at_the_end_of_the_file_is_bad_utf8(tmp_path: Path) -> None:
    path = tmp_path / "cut.jsonl"
    path.write_bytes(b'{"id": "a"}\n\xe2\x82')
    assert (
        streamed(path, 1)
        == expected(path)
        == (f"{path}: line 2: not valid UTF-8 (byte 0xe2 at offset 12)")
    )


def test_a_big_list_is_read_one_element_at_a_time(tmp_path: Path) -> None:
    """20,000 records of 1 KB (20 MB of JSON) on ONE line: the first record comes before the
    file is read, and the whole iteration holds a few chunks, not the file."""
    path = tmp_path / "big.json"
    record = {"id": "", "text": "y" * 1000}
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("[")
        fh.write(",".join(json.dumps({**record, "id": str(i)}) for i in range(20_000)))
        fh.write("]")
    size = path.stat().st_size
    records = iter_json_records(path, chunk=1 << 16)
    label, first = next(records)
    assert (label, first["id"]) == ("record 0", "0")
    tracemalloc.start()
    try:
        n = 1 + sum(1 for _ in records)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert n == 20_000
    # a one-line file is looked at up to PEEK characters for JSON Lines of lists first; past
    # that, one chunk and one record at a time
    assert peak < size / 10


@pytest.mark.parametrize("chunk", [1, 3, 4096])
def test_a_broken_pretty_object_names_its_line_and_column(tmp_path: Path, chunk: int) -> None:
    path = tmp_path / "objects.json"
    path.write_text('{\n  "id": "a"\n}\n{\n  "id":\n}\n', encoding="utf-8")
    # by hand: the second object's "id" has no value; the "}" on line 6, column 1, stands there
    want = f"{path}: line 6: invalid JSON: Expecting value (column 1)"
    assert streamed(path, chunk) == expected(path) == want


def test_pretty_objects_one_after_another_are_read_one_at_a_time(tmp_path: Path) -> None:
    """5,000 pretty-printed objects of 2 KB written one after another (OpenTelemetry's console
    exporter writes spans so): the whole iteration holds a few chunks, not the file."""
    path = tmp_path / "spans.json"
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(5_000):
            fh.write(json.dumps({"id": str(i), "attributes": {"text": "y" * 2000}}, indent=4))
            fh.write("\n")
    size = path.stat().st_size
    records = iter_json_records(path, chunk=1 << 16)
    tracemalloc.start()
    try:
        ids = [value["id"] for _, value in records]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert ids == [str(i) for i in range(5_000)]
    assert peak < size / 10
