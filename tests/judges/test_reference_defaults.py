"""A reference under a spec file's ``defaults:`` reaches ``reference`` judges, as it reaches
the rules."""

from __future__ import annotations

from fake_llm import FakeLLM

from trajudge.judges import Judge, JudgeSpec, score_dataset
from trajudge.rules import check_dataset
from trajudge.store import Store
from trajudge.trajectories import ExpectedCall, Step, TaskSpec, Trajectory


def _trial(task: str, i: int) -> Trajectory:
    # no trial passes, so the only reference a task can have is its spec's expected calls
    return Trajectory(
        id=f"{task}-{i}",
        task_id=task,
        trial=i,
        input=f"task {task}",
        steps=[Step(tool="book", args={"q": task}, output="ok")],
        final_answer="done",
        outcome=False,
    )


def test_a_defaults_reference_is_every_tasks_reference(fake_llm: FakeLLM, db_url: str) -> None:
    store = Store(db_url)
    # task a has a spec of its own without a reference, task b has no spec at all
    store.import_dataset(
        "ds",
        [_trial("a", 0), _trial("a", 1), _trial("b", 0)],
        {"a": TaskSpec(forbidden_tools=["wipe"])},
    )
    defaults = TaskSpec(reference=[ExpectedCall(tool="book")])
    spec = {
        "name": "ref",
        "model": "openai/fake",
        "api_base": fake_llm.api_base,
        "rubric": "trajectory_reasonableness_reference",
        "max_retries": 1,
        "retry_backoff_s": 0.01,
    }
    summary = score_dataset(
        store, "ds", [Judge(JudgeSpec.model_validate(spec))], spec_defaults=defaults
    )
    assert summary.no_reference == 0 and summary.errors == 0
    frame = store.judgments_frame("ds")
    assert set(zip(frame["trajectory_id"], frame["other_id"], strict=True)) == {
        ("a-0", "spec:a"),
        ("a-1", "spec:a"),
        ("b-0", "spec:b"),
    }
    # the rules see the same reference for both tasks
    reports = check_dataset(store.trajectories("ds"), store.task_specs("ds"), defaults)
    assert {r.trajectory_id for r in reports if r.result("reference_match")} == {
        "a-0",
        "a-1",
        "b-0",
    }
