"""The agent fingerprint from metadata or config, and the changes it reports."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from evalset_helpers import traj

from trajudge.core import InputError
from trajudge.evalset import (
    Fingerprint,
    diff_fingerprints,
    fingerprint,
    read_fingerprint,
    tools_hash,
    write_fingerprint,
)
from trajudge.trajectories import Step


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def run(task: str, tools: list[str], **meta: object):  # type: ignore[no-untyped-def]
    return traj(task, steps=[Step(tool=t) for t in tools], **meta)


def test_fields_come_from_metadata() -> None:
    runs = [
        run(
            "a",
            ["search", "book"],
            system_prompt_sha256=sha("be nice"),
            model="gpt-4o",
            model_version="2024-08-06",
        ),
        run("b", ["search"], system_prompt="be nice", model="gpt-4o", model_version="2024-08-06"),
    ]
    fp = fingerprint(runs)
    assert fp.system_prompt_sha256 == sha("be nice")  # the text is hashed to the same value
    assert fp.model == "gpt-4o" and fp.model_version == "2024-08-06"
    assert fp.tools_sha256 == sha('{"tools_called":["book","search"]}')


def test_tool_hash_ignores_order_and_repeats_and_prefers_definitions() -> None:
    assert tools_hash(["b", "a", "b"]) == tools_hash(["a", "b"])
    assert tools_hash(["a"]) != tools_hash(["a", "b"])
    assert tools_hash([]) is None
    defs = [{"type": "function", "function": {"name": "a", "parameters": {}}}]
    changed = [{"type": "function", "function": {"name": "a", "parameters": {"x": 1}}}]
    # with definitions, a changed schema moves the hash though the names are the same
    assert tools_hash(["a"], defs) != tools_hash(["a"], changed)
    # and a declared tool that was not called does not
    assert tools_hash([], defs) == tools_hash(["a"], defs)
    # a tool called but never declared does
    assert tools_hash(["a", "z"], defs) != tools_hash(["a"], defs)
    fp = fingerprint([run("a", ["a"], tool_definitions=defs)])
    assert fp.tools_sha256 == tools_hash(["a"], defs)


def test_config_wins_over_metadata() -> None:
    runs = [run("a", ["search"], model="gpt-4o", system_prompt_sha256="0" * 64)]
    fp = fingerprint(
        runs,
        config={"model": "gpt-4.1", "system_prompt": "new prompt", "tools": ["search", "book"]},
    )
    assert fp.model == "gpt-4.1"
    assert fp.system_prompt_sha256 == sha("new prompt")
    assert fp.tools_sha256 == tools_hash(["search"], ["search", "book"])
    assert fingerprint(runs, config={"tools_sha256": "abc"}).tools_sha256 == "abc"
    with pytest.raises(ValueError, match="unknown fingerprint config keys: temperature"):
        fingerprint(runs, config={"temperature": 0})


def test_disagreeing_runs_are_marked_mixed() -> None:
    runs = [
        run("a", ["s"], model="gpt-4o", system_prompt="p1"),
        run("b", ["s"], model="gpt-4o-mini", system_prompt="p2"),
    ]
    fp = fingerprint(runs)
    assert fp.model == "mixed: gpt-4o, gpt-4o-mini"
    assert fp.system_prompt_sha256 == "mixed:" + sha("\n".join(sorted([sha("p1"), sha("p2")])))
    assert fingerprint([]) == Fingerprint()


def test_diff_names_each_change() -> None:
    base = Fingerprint(system_prompt_sha256="a1b2" * 16, tools_sha256="1" * 64, model="gpt-4o")
    assert diff_fingerprints(base, base) == []
    cur = Fingerprint(
        system_prompt_sha256="c3d4" * 16,
        tools_sha256="1" * 64,
        model="gpt-4.1",
        model_version="2025-04-14",
    )
    assert diff_fingerprints(base, cur) == [
        "system prompt changed (a1b2a1b2… → c3d4c3d4…): a full re-run is due",
        "model changed (gpt-4o → gpt-4.1): a full re-run is due",
        "model version changed (unknown → 2025-04-14): a full re-run is due",
    ]
    tools = Fingerprint(system_prompt_sha256="a1b2" * 16, tools_sha256="2" * 64, model="gpt-4o")
    assert diff_fingerprints(base, tools) == [
        "tool set changed (11111111… → 22222222…): a full re-run is due"
    ]


def test_saved_fingerprint_round_trips_and_bad_files_are_input_errors(tmp_path: Path) -> None:
    fp = Fingerprint(system_prompt_sha256=sha("x"), model="gpt-4o")
    path = tmp_path / "fp.json"
    write_fingerprint(path, fp)
    assert read_fingerprint(path) == fp
    path.write_text(json.dumps({"model": 4}), encoding="utf-8")
    with pytest.raises(InputError, match="model: expected text or null"):
        read_fingerprint(path)
    path.write_text(json.dumps({"colour": "red"}), encoding="utf-8")
    with pytest.raises(InputError, match="unknown fingerprint keys: colour"):
        read_fingerprint(path)
    path.write_text("{", encoding="utf-8")
    with pytest.raises(InputError, match="invalid JSON"):
        read_fingerprint(path)
