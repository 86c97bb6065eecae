"""read_trajectories: format dispatch, auto-detection and file-level errors."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from trajudge.core import InputError
from trajudge.trajectories import FORMATS, Trajectory, read_trajectories, write_jsonl, write_parquet

OTEL_FIXTURE = Path(__file__).parents[1] / "fixtures" / "traces" / "pydantic_ai_v6.jsonl"
ITEMS = [Trajectory(id="a-0", task_id="a"), Trajectory(id="a-1", task_id="a", trial=1)]


def test_formats_listed() -> None:
    assert FORMATS == (
        "auto",
        "jsonl",
        "parquet",
        "openai",
        "responses",
        "langchain",
        "otel",
        "tau-bench",
        "tau2-bench",
        "inspect",
        "swe-agent",
        "openhands",
        "codex",
        "claude-code",
        "gemini-cli",
        "smolagents",
        "autogen",
        "crewai",
    )


def test_auto_detects_each_format(tmp_path: Path) -> None:
    native = tmp_path / "native.jsonl"
    write_jsonl(native, ITEMS)
    parquet = tmp_path / "native.bin"  # detected by its magic bytes, not its name
    write_parquet(parquet, ITEMS)
    openai = tmp_path / "chats.jsonl"
    openai.write_text(json.dumps({"task_id": "a", "messages": []}) + "\n", encoding="utf-8")
    tau = tmp_path / "tau.json"
    tau.write_text(
        json.dumps(
            [
                {
                    "task_id": 0,
                    "trial": 0,
                    "reward": 0.0,
                    "info": {"task": {"actions": []}},
                    "traj": [],
                }
            ]
        ),
        encoding="utf-8",
    )
    otel = tmp_path / "otel.jsonl"
    shutil.copy(OTEL_FIXTURE, otel)
    found = {p.name: read_trajectories(p) for p in (native, parquet, openai, tau, otel)}
    assert {name: r.fmt for name, r in found.items()} == {
        "native.jsonl": "jsonl",
        "native.bin": "parquet",
        "chats.jsonl": "openai",
        "tau.json": "tau-bench",
        "otel.jsonl": "otel",
    }
    assert found["native.jsonl"].trajectories == ITEMS
    assert found["native.bin"].trajectories == ITEMS
    assert list(found["tau.json"].specs) == ["0"]
    assert found["otel.jsonl"].sha256 == hashlib.sha256(OTEL_FIXTURE.read_bytes()).hexdigest()


def test_explicit_format_overrides_detection(tmp_path: Path) -> None:
    path = tmp_path / "chats.jsonl"
    path.write_text(json.dumps({"task_id": "a", "messages": []}) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_trajectories(path, fmt="jsonl")
    # the explicit format is read, and the error says what the file looks like
    assert str(info.value) == (
        f"{path}: line 1: id: Field required; "
        "the file looks like OpenAI chat messages: use --format openai"
    )


def test_unknown_format(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    write_jsonl(path, ITEMS)
    with pytest.raises(InputError) as info:
        read_trajectories(path, fmt="csv")
    assert str(info.value) == (
        f"{path}: format: unknown format 'csv' "
        "(choose from auto, jsonl, parquet, openai, responses, langchain, otel, tau-bench, "
        "tau2-bench, inspect, swe-agent, openhands, codex, claude-code, gemini-cli, smolagents, "
        "autogen, crewai)"
    )


def test_missing_path_and_directory(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        read_trajectories(tmp_path / "nope.jsonl")
    assert str(info.value) == f"{tmp_path / 'nope.jsonl'}: no such file"
    with pytest.raises(InputError) as info:
        read_trajectories(tmp_path)
    assert str(info.value) == f"{tmp_path}: is a directory, expected a file"


@pytest.mark.parametrize("content", [b"", b"\n  \n", b"[]"])
def test_empty_files(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "empty.json"
    path.write_bytes(content)
    with pytest.raises(InputError) as info:
        read_trajectories(path)
    assert str(info.value) in (f"{path}: the file is empty", f"{path}: the JSON list is empty")


def test_non_utf8(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b'{"id": "\xff"}\n')
    with pytest.raises(InputError) as info:
        read_trajectories(path)
    assert str(info.value) == f"{path}: line 1: not valid UTF-8 (byte 0xff at offset 8)"


def test_broken_json_list_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('[\n  {"id": "a", "task_id": "a"},\n  {"id": "b",\n]\n', encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_trajectories(path)
    assert str(info.value).startswith(f"{path}: line 4: invalid JSON:")
