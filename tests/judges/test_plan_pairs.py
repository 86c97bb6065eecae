"""Which pairs a pairwise judge compares: every pair of trials of a task, or a capped sample
that is the same on every run (so a killed batch resumes the same pairs)."""

from __future__ import annotations

import itertools

from trajudge.judges import Judge, JudgeSpec, plan_items, task_pairs
from trajudge.trajectories import Step, Trajectory

TRAJS = [
    Trajectory(id=f"{task}-{trial}", task_id=task, trial=trial, input=f"task {task}",
               steps=[Step(tool="search", args={"q": task}, output="ok")])
    for task, n in (("t1", 4), ("t2", 3))
    for trial in range(n)
]  # fmt: skip


def _judge(**kw: object) -> Judge:
    spec = {"name": "pair", "model": "openai/fake", "api_base": "http://127.0.0.1:9/v1"}
    return Judge(JudgeSpec.model_validate({**spec, "rubric": "trajectory_preference", **kw}))


def _pairs(judge: Judge) -> list[tuple[str, str | None, str]]:
    items, _ = plan_items([judge], TRAJS, {}, gated=set())
    return [(i.trajectory.id, None if i.other is None else i.other.id, i.order) for i in items]


def test_every_pair_of_a_task_in_both_orders() -> None:
    got = _pairs(_judge())
    # t1: C(4, 2) = 6 pairs, t2: C(3, 2) = 3, each judged in both orders, lower trial first
    want = {
        (f"{t}-{a}", f"{t}-{b}", o)
        for t, n in (("t1", 4), ("t2", 3))
        for a, b in itertools.combinations(range(n), 2)
        for o in ("ab", "ba")
    }
    assert len(got) == 18 and set(got) == want


def test_a_cap_samples_pairs_per_task_the_same_way_every_run() -> None:
    every = {(a, b) for a, b, _ in _pairs(_judge())}
    got = _pairs(_judge(max_pairs=2, seed=5))
    pairs = {(a, b) for a, b, _ in got}
    assert pairs <= every
    assert sum(a.startswith("t1") for a, _ in pairs) == 2
    assert sum(a.startswith("t2") for a, _ in pairs) == 2
    assert {(a, b, o) for a, b in pairs for o in ("ab", "ba")} == set(got)  # both orders
    assert _pairs(_judge(max_pairs=2, seed=5)) == got  # a new judge, the same pairs
    # the sample depends on the seed (over a few seeds at least two samples differ)
    t1 = [t for t in TRAJS if t.task_id == "t1"]
    samples = {
        tuple((a.id, b.id) for a, b in task_pairs(t1, "t1", cap=2, seed=s)) for s in range(6)
    }
    assert len(samples) > 1
    # a cap at or above the number of pairs keeps them all
    assert len(task_pairs(t1, "t1", cap=6)) == 6
