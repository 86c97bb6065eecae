"""A small synthetic dataset in a store, so the report (and its notebook) run standalone.

Nothing here pretends to be real data: tasks have a true success probability, trajectories
a true 1..5 quality, and two judges read that quality with dials of noise and position bias.
"""

from __future__ import annotations

import numpy as np

from trajudge.store import Store
from trajudge.trajectories import Step, Trajectory, Usage

DEMO_RUBRIC = "trajectory_reasonableness"  # ordinal 1..5, pass at 4


def write_demo_dataset(
    store: Store,
    dataset: str = "demo",
    *,
    n_tasks: int = 12,
    trials: int = 4,
    seed: int = 0,
    labeled_share: float = 0.6,
) -> int:
    """Write synthetic trajectories, rule results, two judges' judgments and human labels.

    * each task has a success probability; a trajectory's true quality is 4-5 on success,
      1-3 on failure; its outcome is the success; one in ten fails a rule gate;
    * judge ``careful`` (pointwise, two samples) reads the quality with a little noise; judge
      ``hasty`` (reference mode, both orders) with much noise and a pull towards the
      first-shown side;
    * annotators ``ann1`` and ``ann2`` label ``labeled_share`` of the trajectories, off by
      one point now and then.

    Returns the number of trajectories written.
    """
    rng = np.random.default_rng(seed)
    p_task = rng.beta(3.0, 1.0, size=n_tasks)
    trajs: list[Trajectory] = []
    quality: dict[str, int] = {}
    for task in range(n_tasks):
        for trial in range(trials):
            ok = bool(rng.random() < p_task[task])
            q = int(rng.integers(4, 6) if ok else rng.integers(1, 4))
            tid = f"task{task:02d}-trial{trial}"
            n_steps = int(rng.integers(1, 6))
            steps = [
                Step(tool="lookup" if i % 2 == 0 else "update", args={"n": i}, output="x" * q * 20)
                for i in range(n_steps)
            ]
            trajs.append(
                Trajectory(
                    id=tid,
                    task_id=f"task{task:02d}",
                    trial=trial,
                    input=f"synthetic task {task}",
                    steps=steps,
                    final_answer="done" if ok else "gave up",
                    outcome=ok,
                    usage=Usage(
                        prompt_tokens=int(rng.integers(800, 1600)),
                        completion_tokens=int(rng.integers(100, 300)),
                        cost_usd=round(float(rng.uniform(0.005, 0.02)), 5),
                        turns=n_steps + 1,
                    ),
                    metadata={"model": "gpt-4o"},
                )
            )
            quality[tid] = q
    store.import_dataset(dataset, trajs, source="synthetic demo")
    store.save_rule_results(
        dataset,
        [
            {
                "trajectory_id": t.id,
                "spec_sha256": "demo",
                "gates_passed": bool(rng.random() >= 0.1),
                "score": None,
                "data": {"results": []},
            }
            for t in trajs
        ],
    )
    judges = {"careful": (0.4, 0.0, "claude-3-5-haiku"), "hasty": (1.4, 0.3, "gpt-4o-mini")}
    for name, (noise, position, model) in judges.items():
        # careful: pointwise, two samples; hasty: reference mode, both presentation orders
        calls = [("ab", 0), ("ab", 1)] if name == "careful" else [("ab", 0), ("ba", 0)]
        for t in trajs:
            for order, sample in calls:
                score = float(np.clip(np.round(quality[t.id] + rng.normal(0, noise)), 1, 5))
                if rng.random() < position:
                    score = 5.0 if order == "ab" else 2.0
                store.add_judgment(
                    dataset,
                    {
                        "trajectory_id": t.id,
                        "other_id": "reference" if name == "hasty" else None,
                        "judge": name,
                        "rubric_id": DEMO_RUBRIC,
                        "rubric_version": "demo",
                        "model": model,
                        "mode": "reference" if name == "hasty" else "pointwise",
                        "order": order,
                        "sample": sample,
                        "score": score,
                        "verdict": "pass" if score >= 4 else "fail",
                        "cost_usd": 0.0004 if name == "careful" else 0.0001,
                        "latency_s": round(float(rng.uniform(0.5, 2.5)), 3),
                    },
                )
    for t in trajs:
        if rng.random() >= labeled_share:
            continue
        for annotator in ("ann1", "ann2"):
            off = int(rng.choice([-1, 0, 0, 0, 0, 1]))
            value = float(np.clip(quality[t.id] + off, 1, 5))
            store.save_label(dataset, t.id, DEMO_RUBRIC, annotator, value)
    return len(trajs)
