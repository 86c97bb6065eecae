"""OpenHands files whose token usage is per model response (no ``llm_metrics``) keep it.

The four files are OpenHands' own saved trajectories (``tests/runtime/trajs`` of its repository,
copied byte for byte: ``tests/fixtures/openhands/public/SOURCE.md``). Their tokens were stored as
None. Several events carry one response's usage (the actions of one response, and each
observation repeats its action's metadata): it counts once.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajudge.trajectories import read_trajectories

PUBLIC = Path(__file__).parents[1] / "fixtures" / "openhands" / "public"
FILES = ["basic.json", "basic_gui_mode.json", "basic_interactions.json", "wrong_initial_state.json"]


def _per_response(path: Path) -> tuple[int, int]:
    """Prompt and completion tokens summed over the file's distinct model responses."""
    seen: dict[str, tuple[int, int]] = {}
    for e in json.loads(path.read_text()):
        response = (e.get("tool_call_metadata") or {}).get("model_response") or {}
        if response.get("usage"):
            u = response["usage"]
            seen.setdefault(response["id"], (u["prompt_tokens"], u["completion_tokens"]))
    return sum(p for p, _ in seen.values()), sum(c for _, c in seen.values())


@pytest.mark.parametrize("name", FILES)
def test_usage_is_summed_once_per_model_response(name: str) -> None:
    path = PUBLIC / name
    assert all("llm_metrics" not in e for e in json.loads(path.read_text()))
    (t,) = read_trajectories(path).trajectories
    assert (t.usage.prompt_tokens, t.usage.completion_tokens) == _per_response(path)


def test_the_figures_read_by_hand() -> None:
    # basic.json: responses chatcmpl-6814... (3486 / 1135, on events 3 and 4) and
    # chatcmpl-27cc... (4646 / 177); wrong_initial_state.json: four responses
    (basic,) = read_trajectories(PUBLIC / "basic.json").trajectories
    assert (basic.usage.prompt_tokens, basic.usage.completion_tokens) == (8132, 1312)
    (wrong,) = read_trajectories(PUBLIC / "wrong_initial_state.json").trajectories
    assert (wrong.usage.prompt_tokens, wrong.usage.completion_tokens) == (
        3475 + 3616 + 3804 + 3933,
        95 + 111 + 85 + 67,
    )
