"""Claude Code session transcripts (``--format claude-code``), written by the real CLI.

``tests/fixtures/claude_code/generate.py`` ran ``claude -p`` (1.0.128 into ``v1/``, 2.1.332 into
``v2/``, and into ``v2-background/`` with the sub-agent in the background) twice against a
scripted loopback API and recorded in each ``manifest.json`` what the model did and what the CLI
sent back as each tool's result: the expected values below come from there, never from the
reader's output.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from trajudge.core import InputError
from trajudge.trajectories import Trajectory, detect_format, read_trajectories
from trajudge.trajectories._census import Held, built
from trajudge.trajectories._stream import iter_json_records
from trajudge.trajectories.readers.agents._claude_code import census, is_claude_code_record

FIXTURES = Path(__file__).parents[1] / "fixtures"
HERE = FIXTURES / "claude_code"
VERSIONS = ("v1", "v2", "v2-background")
MANIFESTS = {v: json.loads((HERE / v / "manifest.json").read_text()) for v in VERSIONS}


def _session(version: str) -> Path:
    return HERE / version / f"{MANIFESTS[version]['session_id']}.jsonl"


def _census(path: Path) -> Held:
    held = Held()
    for label, value in iter_json_records(path):
        census(label, value, held)
    return held


def _check_calls(t: Trajectory, steps: list[int], calls: list[dict[str, Any]]) -> None:
    assert len(steps) == len(calls)
    for n, want in zip(steps, calls, strict=True):
        step = t.steps[n]
        assert (step.tool, step.args, step.ok, step.call_id) == (
            want["tool"],
            want["args"],
            want["ok"],
            want["call_id"],
        )
        if "output" in want:
            assert step.output == want["output"]
        if "error" in want:
            assert step.error == want["error"]
        if want["ok"]:
            assert step.error is None


def _tokens(*parts: dict[str, int]) -> tuple[int, int]:
    read = sum(p[k] for p in parts for k in ("input_tokens", "cache_creation_input_tokens"))
    read += sum(p["cache_read_input_tokens"] for p in parts)
    return read, sum(p["output_tokens"] for p in parts)


@pytest.mark.parametrize("version", VERSIONS)
def test_a_session_imports_whole(version: str) -> None:
    m = MANIFESTS[version]
    result = read_trajectories(_session(version))
    assert result.fmt == "claude-code"  # auto-detected
    (t,) = result.trajectories
    assert t.id == t.task_id == m["session_id"]
    assert t.user_turns() == m["user_turns"]
    assert t.input == m["user_turns"][0]
    assert t.usage.turns == 2
    main = m["main"]["calls"]
    side = m["subagent"]["calls"]
    # 1.x writes the sub-agent's records into the session: its calls follow the one that
    # started it; 2.x writes them to a file of their own
    inline = version == "v1"
    _check_calls(t, list(range(len(t.steps))), main + side if inline else main)
    # the two Bash calls and the Read came in one response: one assistant turn makes them
    assistant_steps = [m_.steps for m_ in t.messages if m_.role == "assistant" and m_.steps]
    assert assistant_steps[0] == [0, 1, 2]
    assert [s.tool for s in t.steps[:2]] == ["Bash", "Bash"]
    made = sorted(n for m_ in t.messages if m_.role == "assistant" for n in m_.steps)
    assert made == list(range(len(t.steps)))
    answered = sorted(m_.step for m_ in t.messages if m_.role == "tool" and m_.step is not None)
    assert answered == list(range(len(t.steps)))
    texts = [m_.content for m_ in t.messages if m_.role == "assistant" and m_.name is None]
    assert [x for x in texts if x] == m["main"]["assistant_texts"]
    assert t.final_answer == m["main"]["final_answer"] == m["cli_result"]
    # the second user turn comes after the first answer and before the sub-agent call
    second = next(i for i, m_ in enumerate(t.messages) if m_.content == m["user_turns"][1])
    agent = next(i for i, m_ in enumerate(t.messages) if 3 in m_.steps)
    assert t.messages[second - 1].content == m["main"]["assistant_texts"][1] and agent > second
    # tokens once per response, though each response is several records repeating its usage
    parts = [m["main"]["tokens"]] + ([m["subagent"]["tokens"]] if inline else [])
    assert (t.usage.prompt_tokens, t.usage.completion_tokens) == _tokens(*parts)
    assert t.metadata["tokens"] == {k: sum(p[k] for p in parts) for k in m["main"]["tokens"]}
    assert t.metadata["responses"] == len(m["main"]["message_ids"]) + (
        len(m["subagent"]["message_ids"]) if inline else 0
    )
    assert t.metadata["model"] == m["model"]
    assert t.metadata["cwd"] == m["cwd"]
    assert t.metadata["version"] == m["tool"].rsplit("@", 1)[1]
    assert _census(_session(version)) == built([t])


def test_1x_sidechain_calls_are_marked_and_its_prompt_counted() -> None:
    m = MANIFESTS["v1"]
    result = read_trajectories(_session("v1"))
    (t,) = result.trajectories
    assert t.metadata["sidechain_steps"] == [4]
    named = [x for x in t.messages if x.name == "sidechain"]
    assert [x.steps for x in named] == [[4], []]
    assert named[-1].content == m["subagent"]["final_answer"]
    # the sub-agent's prompt is the Task call's argument, not a user turn
    assert t.steps[3].args["prompt"] == m["subagent"]["prompt"]
    assert result.ignored.lines() == ["1 sub-agent prompt (the call's prompt) was ignored"]
    assert "cost_usd" not in t.usage.model_fields_set or t.usage.cost_usd is None


def test_a_background_sub_agent_reports_in_a_system_turn() -> None:
    m = MANIFESTS["v2-background"]
    (t,) = read_trajectories(_session("v2-background")).trajectories
    # the CLI writes the report as a user record: it is no user turn (checked above), and the
    # model's answer to it is the final answer
    (note,) = [x for x in t.messages if x.role == "system"]
    assert note.name == "notification"
    assert note.content is not None and m["subagent"]["final_answer"] in note.content
    last = max(i for i, x in enumerate(t.messages) if x.role == "assistant")
    assert t.messages.index(note) == last - 1
    assert t.final_answer == m["main"]["final_answer"] != MANIFESTS["v2"]["main"]["final_answer"]


@pytest.mark.parametrize("version", ["v2", "v2-background"])
def test_2x_subagent_file_is_its_own_trajectory(version: str) -> None:
    m = MANIFESTS[version]
    (rel,) = [f for f in m["files"] if "/subagents/" in f]
    agent = Path(rel).stem.removeprefix("agent-")
    (main,) = read_trajectories(_session(version)).trajectories
    assert main.metadata["subagents"] == [
        {"call_id": "toolu_04_agent", "agent_id": agent, "agent_type": "general-purpose"}
    ]
    assert main.usage.cost_usd is not None and main.usage.cost_usd > 0
    result = read_trajectories(HERE / version / rel)
    assert result.fmt == "claude-code"
    (t,) = result.trajectories
    assert t.id == f"{m['session_id']}:agent-{agent}"
    assert t.metadata["agent_id"] == agent
    assert t.user_turns() == [m["subagent"]["prompt"]]
    _check_calls(t, [0], m["subagent"]["calls"])
    assert t.final_answer == m["subagent"]["final_answer"]
    assert (t.usage.prompt_tokens, t.usage.completion_tokens) == _tokens(m["subagent"]["tokens"])
    assert _census(HERE / version / rel) == built([t])
    # what was not read is the bookkeeping records, each named with its type
    raw = [json.loads(line) for line in (HERE / version / rel).read_text().splitlines()]
    others = [r["type"] for r in raw if r["type"] not in ("user", "assistant")]
    assert result.ignored.lines() == [f"{len(others)} records that are no messages were ignored"]
    assert [d.split("(")[1].split(")")[0].split(":")[0] for d in result.ignored.details()] == others


def test_a_file_of_titles_only_is_refused_in_one_line() -> None:
    (rel,) = [
        p
        for p in (HERE / "v1").glob("*.jsonl")
        if p.name != f"{MANIFESTS['v1']['session_id']}.jsonl"
    ]
    with pytest.raises(InputError) as info:
        read_trajectories(rel)
    assert "no conversation (summaries)" in str(info.value)
    assert "\n" not in str(info.value)


def test_detection_takes_claude_code_records_only() -> None:
    for version in VERSIONS:
        for f in (HERE / version).rglob("*.jsonl"):
            assert detect_format(f) == "claude-code", f
    # records of other tools' logs that share some of the names
    gemini_log = {"sessionId": "s", "messageId": 0, "type": "user", "message": "hi",
                  "timestamp": "2025-01-01T00:00:00Z"}  # fmt: skip
    codex = {"timestamp": "2025-01-01T00:00:00Z", "type": "session_meta", "payload": {}}
    chat = {"role": "user", "content": "hi"}
    for obj in (gemini_log, codex, chat, {"type": "summary"}, [], "x"):
        assert not is_claude_code_record(obj)
    others = [
        f
        for f in FIXTURES.rglob("*")
        if f.is_file() and f.suffix in (".json", ".jsonl", ".traj") and HERE not in f.parents
    ]
    assert others
    for f in others:
        assert detect_format(f) != "claude-code", f
