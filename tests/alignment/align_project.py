"""A small project for the alignment tests: trajectories, a fake judge's calls, labels.

Each trajectory is GOOD (labelled 5), BAD (labelled 1) or TRICKY (looks good, labelled 2: a
fail). The fake judge (:func:`fake_judge`) reads the marker of the trajectory it is shown,
never the examples: GOOD 5, BAD 1, TRICKY 5 (a false pass), except that a TRICKY trajectory
scores 1 when the prompt's examples hold a TRICKY trajectory labelled fail: a judge that
learns from its examples. Every figure the tests check is recomputed from these markers.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

from fake_llm import FakeLLM

from trajudge.judges import Judge, JudgeSpec, score_dataset
from trajudge.store import Store
from trajudge.trajectories import Step, Trajectory

RUBRIC = "trajectory_reasonableness"  # 1..5, pass at 4
DATASET = "proj"
LABEL = {"GOOD": 5.0, "BAD": 1.0, "TRICKY": 2.0}
SHOWN = re.compile(r'<trajectory label="candidate">(.*?)</trajectory>', re.S)
EXAMPLE = re.compile(r"<example>(.*?)</example>", re.S)


def marker(task: int, trial: int) -> str:
    """GOOD, BAD or TRICKY, fixed by (task, trial): every task mixes kinds."""
    return ("GOOD", "TRICKY", "BAD", "GOOD")[(task + trial) % 4]


def trajectories(n_tasks: int = 24, trials: int = 3) -> list[Trajectory]:
    out = []
    for task in range(n_tasks):
        for trial in range(trials):
            tid, m = f"t{task:02d}-{trial}", marker(task, trial)
            out.append(
                Trajectory(
                    id=tid,
                    task_id=f"t{task:02d}",
                    trial=trial,
                    input=f"please help with {tid} [{m}-RUN]",
                    steps=[Step(tool="search", args={"q": m}, output=f"{m} output")],
                    final_answer=f"done {m}",
                    outcome=m == "GOOD",
                )
            )
    return out


def kind(text: str) -> str:
    return next(k for k in ("TRICKY", "GOOD", "BAD") if f"[{k}-RUN]" in text)


def fake_judge(user: str, verdict: dict[str, Any]) -> dict[str, Any]:
    shown = SHOWN.search(user)
    assert shown is not None, "the candidate block is always delimited"
    k = kind(shown.group(1))
    learnt = any("[TRICKY-RUN]" in ex for ex in EXAMPLE.findall(user))
    score = {"GOOD": 5, "BAD": 1, "TRICKY": 1 if learnt else 5}[k]
    return {**verdict, "score": score}


def spec(fake: FakeLLM, name: str = "fake") -> JudgeSpec:
    return JudgeSpec(name=name, model="openai/fake", api_base=fake.api_base, rubric=RUBRIC,
                     max_retries=0)  # fmt: skip


def build(
    store: Store,
    fake: FakeLLM,
    *,
    n_tasks: int = 24,
    notes: bool = False,
    unlabelled: Collection[str] = (),
) -> list[Trajectory]:
    """Import the trajectories, judge them with the fake judge, label every one (but those
    of the tasks in ``unlabelled``)."""
    trajs = trajectories(n_tasks)
    store.import_dataset(DATASET, trajs)
    fake.decide = fake_judge
    summary = score_dataset(store, DATASET, [Judge(spec(fake))])
    assert summary.errors == 0 and summary.judged == len(trajs)
    for t in trajs:
        if t.task_id in unlabelled:
            continue
        m = kind(t.input or "")
        note = f"looks fine but {t.id} is wrong" if notes and m == "TRICKY" else None
        store.save_label(DATASET, t.id, RUBRIC, "ann", LABEL[m], note=note)
    return trajs
