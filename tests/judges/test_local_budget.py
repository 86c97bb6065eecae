"""A local judge's prompt fits its server's slot, two long τ-bench trials included.

The pairwise run of the airline example once failed on task 0: the server refused the prompt of
trials 0-0 and 0-1 (8,657 tokens > the 8,192 of a slot) although the estimate (characters / 3)
was under the budget, because gemma-3 reads that JSON-heavy text at 2.74 characters per token.
The real size is bounded here with the densest rate measured for that tokenizer on τ-bench
(2.7 characters per token), independently of the project's own estimate.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import pytest

from trajudge.judges import Judge, JudgeSpec, build_prompt
from trajudge.judges.calls._local import DEFAULT_N_CTX, DEFAULT_N_PARALLEL
from trajudge.judges.prompts._prompt import Shown
from trajudge.trajectories import from_tau_bench

DENSEST = 2.7  # characters per gemma-3 token on τ-bench trajectories (measured 2.7-2.9)
TEMPLATE = 128  # the chat template's turn markers, generously


def _real_tokens_at_most(messages: list[dict[str, str]]) -> int:
    return math.ceil(sum(len(m["content"]) for m in messages) / DENSEST) + TEMPLATE


@pytest.mark.parametrize("budget", [None, 12000])
def test_the_longest_trial_pairs_fit_the_local_slot(
    tau_bench_file: Path, budget: int | None
) -> None:
    trajectories, _ = from_tau_bench(tau_bench_file)
    by_task: dict[str, list] = {}
    for t in trajectories:
        by_task.setdefault(t.task_id, []).append(t)
    spec = JudgeSpec(
        name="g", model="local/gemma-3-270m", rubric="trajectory_preference", prompt_budget=budget
    )
    judge = Judge(spec)  # no call is made: the server is not started
    slot = DEFAULT_N_CTX // DEFAULT_N_PARALLEL
    worst = 0
    for task in ("0", "2", "9", "26"):  # the pairs with the longest prompts of the 50 tasks
        for a, b in itertools.combinations(by_task[task], 2):
            for shown in ([Shown(a), Shown(b)], [Shown(b), Shown(a)]):
                prompt = build_prompt(
                    judge.rubric, shown, budget_tokens=judge.config["prompt_budget"]
                )
                assert prompt.est_tokens <= judge.config["prompt_budget"]
                worst = max(worst, _real_tokens_at_most(prompt.messages))
    # the whole request: both trials, the rubric, and room for the verdict
    assert worst + spec.max_tokens <= slot
    # ...and the pair that overflowed is still judged whole where it can be: its user turns
    first = build_prompt(
        judge.rubric,
        [Shown(by_task["0"][0]), Shown(by_task["0"][1])],
        budget_tokens=judge.config["prompt_budget"],
    )
    text = first.messages[1]["content"]
    for t in by_task["0"][:2]:
        for u in t.user_turns()[1:]:
            if u.strip():
                assert f"user: {u}" in text


def test_a_hosted_judge_keeps_its_budget() -> None:
    spec = JudgeSpec(name="h", model="openai/gpt-4o-mini", rubric="trajectory_preference")
    assert Judge(spec).config["prompt_budget"] == 12000
    spec = JudgeSpec(
        name="h", model="openai/gpt-4o-mini", rubric="trajectory_preference", prompt_budget=30000
    )
    assert Judge(spec).config["prompt_budget"] == 30000
