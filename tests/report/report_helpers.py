"""A small hand-made store for report tests, with the facts the tests check against.

Six tasks of four trials. Every number the tests expect is recomputed from the tables below
with independent code (sklearn, math.comb), never read back from trajudge.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from trajudge.store import Store
from trajudge.trajectories import Step, Trajectory, Usage

RUBRIC = "answer_faithfulness"  # a shipped binary rubric: labels and scores are 0/1
OUTCOMES = {
    "T0": [1, 1, 1, 1],
    "T1": [1, 1, 1, 0],
    "T2": [1, 0, 1, 0],
    "T3": [0, 0, 0, 0],
    "T4": [1, 1, 0, 1],
    "T5": [1, 1, 1, 1],
}
GATE_FAILED = {"T0-2", "T5-3"}
# judge alpha: the outcome, except these trajectories where it says the opposite
ALPHA_WRONG = {"T1-3", "T3-0", "T4-0"}
# judge beta: always "pass", except errors on these trajectories (no verdict)
BETA_ERRORS = {"T2-0", "T3-3"}
# human labels: h1 and h2 label trials 0 and 1 of every task with the outcome; h2 disagrees
# on T2-1 (a tie, so no consensus there); h1 alone labels T3-2 as well
HUMAN_DISAGREE = {"T2-1"}
EXTRA_H1 = {"T3-2"}


def tid(task: str, trial: int) -> str:
    return f"{task}-{trial}"


def outcome(t: str) -> int:
    task, trial = t.split("-")
    return OUTCOMES[task][int(trial)]


def all_ids() -> list[str]:
    return [tid(task, i) for task, runs in OUTCOMES.items() for i in range(len(runs))]


def alpha_verdict(t: str) -> int:
    return 1 - outcome(t) if t in ALPHA_WRONG else outcome(t)


def human_labels() -> list[tuple[str, str, int]]:
    rows = []
    for task in OUTCOMES:
        for trial in (0, 1):
            t = tid(task, trial)
            rows.append((t, "h1", outcome(t)))
            rows.append((t, "h2", 1 - outcome(t) if t in HUMAN_DISAGREE else outcome(t)))
    rows += [(t, "h1", outcome(t)) for t in sorted(EXTRA_H1)]
    return rows


def consensus() -> dict[str, int]:
    """Majority label per item; ties left out (written independently of trajudge)."""
    votes: dict[str, list[int]] = {}
    for item, _, value in human_labels():
        votes.setdefault(item, []).append(value)
    out = {}
    for item, vs in votes.items():
        ones = sum(vs)
        if ones * 2 != len(vs):
            out[item] = int(ones * 2 > len(vs))
    return out


def pass_hat(success: dict[str, int | None], k: int, at: bool = False) -> float:
    """Mean over tasks with >= k known trials of C(c,k)/C(n,k) (or 1 - C(n-c,k)/C(n,k))."""
    values = []
    for task, runs in OUTCOMES.items():
        known = [success.get(tid(task, i)) for i in range(len(runs))]
        known = [v for v in known if v is not None]
        n, c = len(known), sum(known)
        if n < k:
            continue
        if at:
            values.append(1 - math.comb(n - c, k) / math.comb(n, k))
        else:
            values.append(math.comb(c, k) / math.comb(n, k))
    return sum(values) / len(values) if values else math.nan


def make_store(
    url: str,
    dataset: str = "ds",
    *,
    judge_names: Sequence[str] = ("alpha", "beta"),
    label_source: str = "human",
    cost: float = 0.01,
    rules: bool = True,
) -> Store:
    store = Store(url)
    trajs = []
    for task, runs in OUTCOMES.items():
        for i, ok in enumerate(runs):
            trajs.append(
                Trajectory(
                    id=tid(task, i),
                    task_id=task,
                    trial=i,
                    input=f"task {task}",
                    steps=[Step(tool="search", args={"q": task}, output="found")],
                    outcome=bool(ok),
                    usage=Usage(prompt_tokens=100, completion_tokens=20, cost_usd=cost, turns=2),
                    metadata={"model": "gpt-4o"},
                )
            )
    store.import_dataset(dataset, trajs)
    if rules:
        store.save_rule_results(
            dataset,
            [
                {
                    "trajectory_id": t.id,
                    "spec_sha256": "x",
                    "gates_passed": t.id not in GATE_FAILED,
                    "score": None,
                    "data": {},
                }
                for t in trajs
            ],
        )
    alpha, beta = judge_names
    for t in all_ids():
        for name, verdict, error in (
            (alpha, alpha_verdict(t), None),
            (beta, 1, "timeout" if t in BETA_ERRORS else None),
        ):
            store.add_judgment(
                dataset,
                {
                    "trajectory_id": t,
                    "judge": name,
                    "rubric_id": RUBRIC,
                    "rubric_version": "v1",
                    "model": "claude-3-haiku" if name == alpha else "gpt-4o-mini",
                    "mode": "pointwise",
                    "order": "ab",
                    "sample": 0,
                    "score": None if error else float(verdict),
                    "verdict": None if error else ("pass" if verdict else "fail"),
                    "error": error,
                    "cost_usd": None if error else 0.002,
                    "latency_s": 1.0,
                },
            )
    for item, annotator, value in human_labels():
        store.save_label(dataset, item, RUBRIC, annotator, float(value), source=label_source)
    return store
