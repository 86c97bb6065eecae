"""The table of readers (``trajectories/_readers.py``) is the one place a format is named: the
``--format`` names, detection and dispatch all come from it."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import json
import subprocess
import sys
import textwrap
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import get_args

import pytest

import trajudge.trajectories.reading._read as read_module
from trajudge.trajectories import FORMATS, read_trajectories
from trajudge.trajectories._formats import Format
from trajudge.trajectories._readers import BY_NAME, READERS, ReaderName, Rule, resolve
from trajudge.trajectories.reading._detect import EveryRecord, first_record_format

NAMES = [f for f in FORMATS if f != "auto"]


def test_every_format_has_exactly_one_entry() -> None:
    counts = Counter(r.name for r in READERS)
    assert {name: counts[name] for name in NAMES} == dict.fromkeys(NAMES, 1)
    assert set(counts) == set(NAMES)
    # the Literal the type checker sees names the same formats, in the same order
    assert get_args(Format) == FORMATS == ("auto", *get_args(ReaderName))


def _imports_of(func: Callable[..., object]) -> list[tuple[str, str]]:
    """The (module, name) pairs a function imports inside its body."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    return [
        (node.module or "", alias.name)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    ]


@pytest.mark.parametrize("name", NAMES)
def test_each_entry_resolves(name: str) -> None:
    reader = BY_NAME[name]
    assert reader.description
    # the read function imports its reader when called: each name it imports is there
    imports = _imports_of(reader.read)
    assert imports, f"{name}: the read function imports no reader"
    for module, attr in imports:
        assert callable(getattr(importlib.import_module(module), attr)), (module, attr)
    refs = [reader.magic] + [t.test for t in (reader.first, reader.every) if t is not None]
    assert any(refs) or reader.suffixes, f"{name}: nothing tells this format"
    for ref in refs:
        if ref is not None:
            assert callable(resolve(ref)), ref
    assert all(s.startswith(".") and s == s.lower() for s in reader.suffixes)


def test_ranks_give_one_order() -> None:
    for kind in ("first", "every"):
        ranks = [getattr(r, kind).rank for r in READERS if getattr(r, kind) is not None]
        assert len(ranks) == len(set(ranks)), f"two {kind}-record tests share a rank"


def _dispatched_names(source: str) -> list[tuple[int, str]]:
    """The format names that ``source`` dispatches on: strings compared (==, !=, in, not in,
    a match case) or used as the keys of a dict."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        operands: list[ast.expr | None] = []
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
        elif isinstance(node, ast.MatchValue):
            operands = [node.value]
        elif isinstance(node, ast.Dict):
            operands = list(node.keys)
        for op in operands:
            for sub in ast.walk(op) if op is not None else ():
                if isinstance(sub, ast.Constant) and sub.value in NAMES:
                    found.append((sub.lineno, sub.value))
    return sorted(found)


def test_dispatch_names_no_format() -> None:
    # no if/elif chain on format names nor a dict keyed by them: _read.py takes every
    # format from the table
    source = Path(read_module.__file__).read_text(encoding="utf-8")
    assert _dispatched_names(source) == []
    # the check sees both kinds
    planted = 'if fmt in ("x", "openhands"):\n    pass\nreaders = {"jsonl": 1}\n'
    assert _dispatched_names(planted) == [(1, "openhands"), (3, "jsonl")]


def test_detection_follows_the_ranks() -> None:
    # bare messages are chat messages and untyped Responses items at once: the chat test of
    # every record ranks first, and an untyped item tells nothing alone
    every = EveryRecord()
    every.add({"role": "user", "content": "hi"})
    assert every.format() == "openai"
    # a typed item is no chat message and tells Responses
    every.add({"type": "message", "role": "assistant", "content": "hello"})
    assert every.format() == "responses"
    # messages that are Responses items and no chat messages: the Responses test of the
    # first record ranks before the chat test, which takes any list of messages
    typed = [{"type": "message", "role": "user", "content": "hi"}]
    assert first_record_format({"messages": typed}) == "responses"
    assert first_record_format({"messages": [{"role": "user", "content": "hi"}]}) == "openai"
    # trajudge's own field names, but a list of messages: a conversation, not native JSONL
    assert first_record_format({"id": "a", "messages": []}) == "openai"
    assert first_record_format({"id": "a", "messages": "x"}) == "jsonl"


def test_an_added_entry_is_detected_and_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # an entry alone makes a format: here the native reader under another name, with a
    # first-record test that ranks before every other
    from trajudge.trajectories.reading import _detect, _read

    copy = dataclasses.replace(
        BY_NAME["jsonl"], name="copy", first=Rule(0, f"{_detect.__name__}:is_native_record")
    )
    table = (*READERS, copy)
    for module in (_detect, _read):
        monkeypatch.setattr(module, "READERS", table)
    monkeypatch.setitem(BY_NAME, "copy", copy)
    monkeypatch.setattr(_read, "FORMATS", (*FORMATS, "copy"))
    _detect._first_tests.cache_clear()
    try:
        path = tmp_path / "runs.jsonl"
        path.write_text(json.dumps({"id": "a", "task_id": "t"}) + "\n", encoding="utf-8")
        result = read_trajectories(path)
        assert (result.fmt, [t.id for t in result.trajectories]) == ("copy", ["a"])
        assert read_trajectories(path, fmt="jsonl").fmt == "jsonl"
        assert read_trajectories(path, fmt="copy").fmt == "copy"
    finally:
        monkeypatch.undo()
        _detect._first_tests.cache_clear()
    assert read_trajectories(path).fmt == "jsonl"


def test_the_table_loads_no_reader() -> None:
    # the CLI imports the names for --help: the table must not bring pydantic or a reader
    code = (
        "import sys, json\n"
        "import trajudge.trajectories._formats\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('pydantic', "
        "'trajudge.trajectories.')))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    assert json.loads(out) == [
        "trajudge.trajectories._formats",
        "trajudge.trajectories._read_functions",  # the table's read functions: stdlib only
        "trajudge.trajectories._readers",
    ]
