"""Checks shared by the tests of the Python agent framework readers (smolagents, AutoGen):
a trajectory against what its generator recorded in ``manifest.json``
(``tests/fixtures/traces/pyagents_scenario.py``), never against the reader's own output."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trajudge.trajectories import Trajectory
from trajudge.trajectories._census import Held, built
from trajudge.trajectories._readers import BY_NAME, resolve
from trajudge.trajectories._stream import iter_json_records


def assert_manifest(t: Trajectory, entry: dict[str, Any]) -> None:
    """Every user turn, call (in the model's order), argument, output, error, link and token."""
    expected = entry["expected"]
    assert t.user_turns() == expected["user_turns"]
    assert t.input == expected["user_turns"][0]
    assert t.usage.turns == len(expected["user_turns"])
    assert [s.call_id for s in t.steps] == entry["call_ids"]
    assert len(t.steps) == len(expected["steps"])
    for step, want in zip(t.steps, expected["steps"], strict=True):
        assert (step.tool, step.args, step.ok) == (want["tool"], want["args"], want["ok"])
        if "output" in want:
            assert step.output == want["output"]
        if "error_contains" in want:
            assert step.error is not None and want["error_contains"] in step.error
        if want["ok"]:
            assert step.error is None
    # the calls of one model turn are one assistant turn; each call is answered once
    made = [m.steps for m in t.messages if m.role == "assistant" and m.steps]
    assert made == expected["assistant_steps"]
    assert sorted(m.step for m in t.messages if m.role == "tool") == list(range(len(t.steps)))
    assert t.final_answer == expected["final_answer"]
    assert (t.usage.prompt_tokens, t.usage.completion_tokens) == (
        expected["prompt_tokens"],
        expected["completion_tokens"],
    )
    if len(expected["user_turns"]) > 1:
        # the "yes" comes after the assistant asked, and before any cancel
        texts = [(m.role, m.content) for m in t.messages if m.role != "tool" and m.content]
        yes = texts.index(("user", expected["user_turns"][1]))
        assert texts[yes - 1][0] == "assistant"
        at = next(n for n, m in enumerate(t.messages) if (m.role, m.content) == texts[yes])
        before = {n for m in t.messages[:at] for n in m.steps}
        assert not any(t.steps[n].tool == "cancel_reservation" for n in before)


def census_of(fmt: str, path: Path) -> Held:
    """The format's census over every raw record of ``path``."""
    census = resolve(BY_NAME[fmt].census)
    held = Held()
    for label, value in iter_json_records(path):
        census(label, value, held)
    return held


def assert_census_matches(fmt: str, path: Path, trajectories: list[Trajectory]) -> Held:
    held = census_of(fmt, path)
    assert built(trajectories) == held
    return held
