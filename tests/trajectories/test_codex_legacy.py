"""OpenAI Codex CLI rollouts of the shape before Codex 0.3x (``--format codex``): a meta line,
then bare Responses items, apart from the current shape in ``test_codex.py``.

The rollouts in ``tests/fixtures/codex_legacy`` were written by real Codex releases
0.1.2505291658 to 0.29.0 (``tests/fixtures/codex_legacy/generate.py``); every expected value
comes from the manifest that generator wrote, never from the reader's own output; small
edits of those lines test hostile input.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from trajudge.core import InputError
from trajudge.trajectories import read_trajectories, write_jsonl
from trajudge.trajectories._census import Held, built
from trajudge.trajectories._stream import iter_json_records
from trajudge.trajectories.readers.agents._codex import is_legacy_meta
from trajudge.trajectories.readers.agents._codex_census import census
from trajudge.trajectories.reading._detect import first_record_format, records_format

LEGACY = Path(__file__).parents[1] / "fixtures" / "codex_legacy"
LEGACY_ENTRIES: dict[str, Any] = json.loads((LEGACY / "manifest.json").read_text())


def _lines(path: Path) -> list[Any]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def census_of(path: Path) -> Held:
    held = Held()
    for label, value in iter_json_records(path):
        census(label, value, held)
    return held


def write(tmp_path: Path, lines: list[Any], name: str = "rollout.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


# --- rollouts before Codex 0.3x, written by the real old releases ----------------------------


@pytest.mark.parametrize("name", sorted(LEGACY_ENTRIES))
def test_an_older_rollout_imports_call_by_call_as_the_script_played_it(name: str) -> None:
    entry = LEGACY_ENTRIES[name]
    expected = entry["expected"]
    result = read_trajectories(LEGACY / name)
    assert result.fmt == "codex"  # auto-detected from the meta line
    assert not result.ignored, result.ignored.lines()
    (t,) = result.trajectories
    assert t.id == t.task_id == entry["session_id"]
    assert t.user_turns() == expected["user_turns"]
    assert len(t.steps) == len(expected["steps"])
    for step, want, call_id in zip(t.steps, expected["steps"], entry["call_ids"], strict=True):
        assert (step.tool, step.args, step.ok, step.call_id) == (
            want["tool"],
            want["args"],
            want["ok"],
            call_id,
        )
        # the shell tool of these versions answers with JSON: the output and its exit code
        assert step.output is not None
        answer = json.loads(step.output)
        assert want["output_has"] in answer["output"]
        assert answer["metadata"]["exit_code"] == want["exit_code"]
        assert step.error == (None if want["ok"] else f"exit code {want['exit_code']}")
    assert t.final_answer == expected["final_answer"]
    # these versions write no token counts: none are made up
    assert (t.usage.prompt_tokens, t.usage.completion_tokens) == (None, None)
    assert "prompt_tokens" not in expected
    assert t.usage.turns == len(expected["user_turns"])
    # the calls of one model response are one assistant turn, though each output follows its call
    assert [m.steps for m in t.messages if m.steps] == entry["assistant_steps"]
    assert sorted(m.step for m in t.messages if m.role == "tool") == list(range(len(t.steps)))
    reasoning = [m.content for m in t.messages if m.name == "reasoning"]
    assert reasoning == entry["reasoning"]
    said = [m.content for m in t.messages if m.role == "assistant" and m.content]
    assert [x for x in said if x not in reasoning] == entry["assistant_texts"]
    # AGENTS.md: the meta's instructions; a block Codex wrote as a user message is a system turn
    assert (t.messages[0].role, t.messages[0].name) == ("system", "instructions")
    assert t.messages[0].content == entry["instructions"]
    context = [m.content or "" for m in t.messages if m.name == "context"]
    assert all(c.startswith(("<user_instructions>", "<environment_context>")) for c in context)
    if entry["tools"] == ["@openai/codex==0.28.0"]:  # both blocks, again with each turn
        assert len(context) == 2 * len(expected["user_turns"])
    held = census_of(LEGACY / name)
    failed = sum(1 for s in expected["steps"] if not s["ok"])
    assert held == Held(len(expected["steps"]), failed, len(expected["user_turns"]), None, None)
    assert built([t]) == held == result.held


def test_an_older_rollout_is_told_by_its_meta_line_and_steals_no_other_file(
    tmp_path: Path,
) -> None:
    for name in LEGACY_ENTRIES:
        first = _lines(LEGACY / name)[0]
        assert is_legacy_meta(first) and first_record_format(first) == "codex", name
    lines = _lines(LEGACY / "rollout-0.28.0.jsonl")
    meta = lines[0]
    # its other lines are Responses items: without the meta line they are a Responses file
    items = [line for line in lines[1:] if "record_type" not in line]
    assert first_record_format(items[0]) != "codex"
    assert records_format([(f"line {n}", i) for n, i in enumerate(items, 1)]) == "responses"
    # the trajectory written as trajudge's own JSON Lines is read as that, not as a rollout
    native = tmp_path / "native.jsonl"
    write_jsonl(native, read_trajectories(LEGACY / "rollout-0.28.0.jsonl").trajectories)
    assert read_trajectories(native).fmt == "jsonl"
    # a meta line is keys of the session meta only, with a UUID id and a timestamp
    for other in (
        {**meta, "type": "message"},
        {**meta, "task_id": "t"},
        {**meta, "id": "not-a-uuid"},
        {**meta, "id": 7},
        {"id": meta["id"]},
        {"id": meta["id"], "timestamp": None},
        [meta],
    ):
        assert first_record_format(other) != "codex", other


def test_older_lines_of_kinds_not_read_are_counted(tmp_path: Path) -> None:
    lines = _lines(LEGACY / "rollout-0.8.0.jsonl")
    lines[3:3] = [
        {"record_type": "snapshot", "x": 1},
        {**lines[0], "id": "00000000-0000-4000-8000-000000000000"},
        {"type": "ghost_snapshot"},
    ]
    path = write(tmp_path, lines)
    result = read_trajectories(path)
    assert result.fmt == "codex"
    assert len(result.ignored.details()) == 3, result.ignored.details()
    (t,) = result.trajectories
    assert t.id == lines[0]["id"]
    assert len(t.steps) == len(LEGACY_ENTRIES["rollout-0.8.0.jsonl"]["expected"]["steps"])


@pytest.mark.parametrize(
    ("replace", "where"),
    [
        ({0: {"id": 7, "timestamp": "t"}}, "line 1: id: missing or empty session id"),
        ({0: {"timestamp": "t"}}, "line 1: id: missing or empty session id"),
        ({2: "not an object"}, "line 3: type: expected a Responses item, got"),
        ({2: {"role": "user", "content": "hi"}}, "line 3: type: expected a Responses item's type"),
        (
            {2: {"type": "function_call", "name": "shell", "arguments": "{bad", "call_id": "c"}},
            "line 3: arguments: arguments are not valid JSON",
        ),
        (
            {2: {"type": "function_call", "name": None, "arguments": "{}", "call_id": "c"}},
            "line 3: name: missing or empty",
        ),
        (
            {2: {"type": "function_call", "name": "f", "arguments": 5, "call_id": "c"}},
            "line 3: arguments: expected JSON text, got",
        ),
    ],
)
def test_bad_older_lines_are_one_line_errors_naming_the_line(
    tmp_path: Path, replace: dict[int, Any], where: str
) -> None:
    lines = _lines(LEGACY / "rollout-0.8.0.jsonl")
    for n, value in replace.items():
        lines[n] = value
    path = write(tmp_path, lines)
    with pytest.raises(InputError) as info:
        read_trajectories(path, fmt="codex")
    message = str(info.value)
    assert message.startswith(f"{path}: {where}"), message
    assert "\n" not in message
    census_of(path)  # the census takes any shape without raising


def test_the_census_of_older_lines_tells_user_turns_apart_on_its_own(tmp_path: Path) -> None:
    lines = _lines(LEGACY / "rollout-0.1.2505291658.jsonl")
    agents = "# AGENTS.md instructions for /repo\n\n<INSTRUCTIONS>\nbe brief\n</INSTRUCTIONS>"
    image = [{"type": "input_image", "image_url": "data:"}]
    lines[1:1] = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": agents}]},
        {"type": "message", "role": "user", "content": "<user_instructions>x</user_instructions>"},
        {"type": "message", "role": "user", "content": "<b>bold</b> is not a block alone"},
        {"type": "message", "role": "user", "content": image},  # a turn with no text
    ]
    path = write(tmp_path, lines)
    result = read_trajectories(path)
    (t,) = result.trajectories
    assert len(t.user_turns()) == 3
    assert sum(1 for m in t.messages if m.name == "context") == 2
    assert census_of(path) == built([t])
