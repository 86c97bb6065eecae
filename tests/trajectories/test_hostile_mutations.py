"""Real files with one value swapped for a hostile one: every reader answers with one line.

Each case takes a file a real tool wrote (``tests/fixtures``), replaces one value anywhere in
it (chosen by a seeded generator) by a null, a number (one of 5,000 digits too), a string, an
empty or nested list or object, and reads it. The file may still read (the value was optional)
or be refused; what must never happen is a traceback: any exception but :class:`InputError`,
or an error of more than one line.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from trajudge.core import InputError
from trajudge.trajectories import read_trajectories

FIXTURES = Path(__file__).parents[1] / "fixtures"
FILES = [
    "traces/openinference_smolagents_parallel.jsonl",
    "traces/strands_genai_events.jsonl",
    "traces/adk_genai_span_and_event.jsonl",
    "traces/pydantic_ai_v6.jsonl",
    "traces/jaeger_ui.json",
    "traces/tempo_v1.json",
    "traces/litellm_chat.json",
    "traces/responses_openai_agents.json",
    "traces/langchain_messages.json",
    "tau2/results.json",
    "swe_agent/demo__calc-1.traj",
    "openhands/public/basic_gui_mode.json",
    "codex/rollout.jsonl",
    "codex_legacy/rollout-0.1.2505291658.jsonl",
    "codex_legacy/rollout-0.8.0.jsonl",
    "codex_legacy/rollout-0.28.0.jsonl",
    "codex_legacy/rollout-0.29.0.jsonl",
    "gemini_cli/session-2026-12-06T00-17-6af12b75.jsonl",
    "smolagents_memory/memory_steps.json",
    "crewai/crew_output.json",
]
# HUGE stands for a number of 5,000 digits (json.dumps cannot write one: Python refuses to
# turn more than 4,300 digits into text, and json.loads to read them, with a bare ValueError)
HUGE = "\u0000huge"
HOSTILE: list[Any] = [None, 0, -1, 1.5, "", "x", [], {}, [None], {"a": None}, True, [[[[]]]], HUGE]
PER_FILE = 40


def _paths(value: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield at
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*at, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, (*at, i))


def _records(text: str) -> tuple[list[Any], bool]:
    try:
        return [json.loads(text)], False  # one document (pretty-printed or not)
    except json.JSONDecodeError:
        lines = [line for line in text.splitlines() if line.strip()]
        return [json.loads(line) for line in lines], True


def _mutants(name: str) -> Iterator[tuple[str, str]]:
    path = FIXTURES / name
    records, lines = _records(path.read_text(encoding="utf-8"))
    places = [(i, p) for i, r in enumerate(records) for p in _paths(r) if p]
    rng = random.Random(name)  # the same mutants on every run
    for n in range(PER_FILE):
        i, place = rng.choice(places)
        value = rng.choice(HOSTILE)
        copy = json.loads(json.dumps(records))
        target = copy[i]
        for key in place[:-1]:
            target = target[key]
        target[place[-1]] = value
        text = "\n".join(json.dumps(r) for r in copy) if lines else json.dumps(copy[0])
        yield f"{n}: {place} = {value!r}", text.replace(json.dumps(HUGE), "9" * 5000)


@pytest.mark.parametrize("name", FILES)
def test_one_hostile_value_is_read_or_refused_in_one_line(tmp_path: Path, name: str) -> None:
    assert (FIXTURES / name).exists()
    refused = 0
    for what, text in _mutants(name):
        path = tmp_path / Path(name).name
        path.write_text(text, encoding="utf-8")
        try:
            read_trajectories(path)
        except InputError as exc:
            refused += 1
            assert "\n" not in str(exc), what
            assert str(exc).startswith(str(path)), what
        except Exception as exc:
            pytest.fail(f"{name}: {what}: {type(exc).__name__}: {exc}")
    assert refused > 0  # the mutations reach places a reader checks
