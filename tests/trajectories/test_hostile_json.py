"""JSON nested past the limit (``TRAJUDGE_MAX_NESTING``, 200) is refused in one line naming
the file and the record, by ``trajudge import`` and ``trajudge labels import``, each a real
process capped at 1 GB of address space. Before the limit, 5,000 levels were a RecursionError
traceback and 300 levels a PydanticSerializationError traceback when the record was stored (or,
in a label's criteria cell, stored as it was).
"""

from __future__ import annotations

import csv
import json
import os
import random
from pathlib import Path
from typing import Any

import pytest

from _capped import GB, run_capped
from trajudge.core import InputError
from trajudge.store import Store
from trajudge.trajectories import Trajectory, json_deeper_than, read_trajectories


def _nest(depth: int) -> str:
    return "[" * depth + "]" * depth


def _native(depth: int) -> str:
    return json.dumps({"id": "a-0", "task_id": "a", "trial": 0, "steps": []})[:-1] + (
        f', "metadata": {{"x": {_nest(depth)}}}}}'
    )


def _openai(depth: int) -> str:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": ""}}
    call["function"]["arguments"] = '{"q": ' + _nest(depth) + "}"
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
    ]
    return json.dumps({"id": "a-0", "task_id": "a", "messages": messages})


IMPORTS = {
    "jsonl-5000": ("runs.jsonl", _native(5000) + "\n", "line 1"),
    "jsonl-300": ("runs.jsonl", _native(300) + "\n", "line 1"),
    "list-5000": ("runs.json", "[" + _native(5000) + "]", "record 0"),
    "openai-arguments": ("chat.jsonl", _openai(5000) + "\n", "line 1"),
}


@pytest.mark.parametrize("case", sorted(IMPORTS))
def test_import_refuses_deep_json_in_one_line(case: str, tmp_path: Path) -> None:
    name, text, record = IMPORTS[case]
    (tmp_path / name).write_text(text, encoding="utf-8")
    run = run_capped(["import", name, "--db", f"sqlite:///{tmp_path / 'x.db'}"], cwd=tmp_path)
    line = run.one_line_error()
    assert line.startswith(f"error: {name}: {record}: "), line
    assert "TRAJUDGE_MAX_NESTING" in line and "200" in line, line
    assert run.max_rss_mb < 1024


def _labels_csv(path: Path, criteria: str) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        out = csv.writer(fh)
        out.writerow(["trajectory_id", "rubric_id", "annotator", "value", "criteria"])
        out.writerow(["a-0", "r", "ann", "1", criteria])


@pytest.mark.parametrize("kind", ["jsonl-5000", "csv-criteria-300"])
def test_labels_import_refuses_deep_json_in_one_line(kind: str, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'x.db'}"
    store = Store(url)
    store.import_dataset("ds", [Trajectory(id="a-0", task_id="a", input="x")])
    store.close()
    if kind == "jsonl-5000":
        name, record = "labels.jsonl", "line 1"
        row = {"trajectory_id": "a-0", "rubric_id": "r", "annotator": "ann", "value": 1}
        (tmp_path / name).write_text(json.dumps(row)[:-1] + f', "note": {_nest(5000)}}}\n')
    else:
        name, record = "labels.csv", "line 2: criteria"
        _labels_csv(tmp_path / name, '{"c": ' + _nest(300) + "}")
    run = run_capped(["labels", "import", name, "--dataset", "ds", "--db", url], cwd=tmp_path)
    line = run.one_line_error()
    assert line.startswith(f"error: {name}: {record}: "), line
    assert "TRAJUDGE_MAX_NESTING" in line, line


def _depth(value: Any) -> int:
    """Nesting depth of parsed JSON, walked: the independent measure."""
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


def _random_json(rng: random.Random, depth: int) -> Any:
    # strings full of brackets, quotes and backslashes: the scan must skip them all
    tricky = ["[", "]", "{", "}", '"', "\\", '\\"', '\\\\"', "]]", "[{", "é"]
    if depth == 0 or rng.random() < 0.25:
        return rng.choice([1, None, True, "".join(rng.choices(tricky, k=rng.randint(0, 6)))])
    if rng.random() < 0.5:
        return [_random_json(rng, depth - 1) for _ in range(rng.randint(0, 3))]
    return {
        "".join(rng.choices(tricky, k=3)) + str(i): _random_json(rng, depth - 1)
        for i in range(rng.randint(0, 3))
    }


def test_the_depth_scan_agrees_with_a_walk_of_the_parsed_value() -> None:
    rng = random.Random(7)
    for _ in range(2000):
        value = _random_json(rng, rng.randint(0, 12))
        text = json.dumps(value, ensure_ascii=rng.random() < 0.5)
        true = _depth(value)
        for limit in (max(true - 1, 0), true, true + 1):
            assert json_deeper_than(text, limit) == (true > limit), (text, limit)


def test_the_limit_is_configurable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_text(_native(5) + "\n", encoding="utf-8")  # 7 levels: the record, metadata, 5
    assert len(read_trajectories(path).trajectories) == 1
    monkeypatch.setenv("TRAJUDGE_MAX_NESTING", "6")
    with pytest.raises(InputError, match=r"line 1: nesting depth over the limit of 6"):
        read_trajectories(path)


def _long(n: int) -> str:
    return json.dumps({"id": "a-0", "task_id": "a", "steps": [], "metadata": {"x": "y" * n}})


LONG = {
    "jsonl": ("runs.jsonl", "jsonl", _long(5000) + "\n", "line 1"),
    "jsonl-second-line": ("runs.jsonl", "jsonl", _long(10) + "\n" + _long(5000) + "\n", "line 2"),
    "list": ("runs.json", "jsonl", "[" + _long(10) + ", " + _long(5000) + "]", "record 1"),
    # pretty-printed objects one after another (as OpenTelemetry's console exporter writes)
    "pretty-objects": (
        "runs.json",
        "jsonl",
        "\n".join(json.dumps(json.loads(_long(n)), indent=2) for n in (10, 5000)),
        "record 1",
    ),
    "openai": (
        "chat.jsonl",
        "openai",
        _openai(2).replace('"hi"', '"' + "h" * 5000 + '"'),
        "line 1",
    ),
}


@pytest.mark.parametrize("case", sorted(LONG))
def test_a_record_over_the_length_limit_is_refused_in_one_line(case: str, tmp_path: Path) -> None:
    """A JSON Lines line, a list element or a pretty-printed object is held whole while it is
    parsed (about 3.5 times its size): one longer than TRAJUDGE_MAX_RECORD_BYTES (here lowered
    to 4,000) is refused with the record named, not read whole as one document."""
    name, fmt, text, record = LONG[case]
    (tmp_path / name).write_text(text, encoding="utf-8")
    run = run_capped(
        ["import", name, "--format", fmt, "--db", f"sqlite:///{tmp_path / 'x.db'}"],
        cwd=tmp_path,
        env={**os.environ, "TRAJUDGE_MAX_RECORD_BYTES": "4000"},
    )
    line = run.one_line_error()
    assert line == (
        f"error: {name}: {record}: characters in one record over the limit of 4,000; "
        "raise TRAJUDGE_MAX_RECORD_BYTES to allow it"
    ), line
    assert (
        not (tmp_path / "x.db").exists() or Store(f"sqlite:///{tmp_path / 'x.db'}").datasets() == []
    )


def test_a_line_of_300_megabytes_is_refused_at_the_default_limit(tmp_path: Path) -> None:
    """At the default limit (256 MiB) a 300 MB line is refused within 1.5 GB of address
    space: reading stops within about twice the limit instead of holding the line whole."""
    path = tmp_path / "big.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        fh.write('{"id": "a", "task_id": "a", "x": "')
        for _ in range(300):
            fh.write("y" * (1 << 20))
        fh.write('"}\n')
    run = run_capped(
        ["import", "big.jsonl", "--format", "jsonl", "--db", f"sqlite:///{tmp_path / 'x.db'}"],
        cwd=tmp_path,
        address_space=3 * GB // 2,
        timeout=300,
    )
    line = run.one_line_error()
    assert line.startswith(
        "error: big.jsonl: line 1: characters in one record over the limit of"
    ), line
    assert "268,435,456" in line and run.max_rss_mb < 1024, (line, run.max_rss_mb)
