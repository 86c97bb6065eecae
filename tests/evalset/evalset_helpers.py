"""Hand-made trajectories and cases for the eval-set tests."""

from __future__ import annotations

from trajudge.evalset import EvalCase, make_case
from trajudge.trajectories import Step, Trajectory

STAMP = "2025-01-01T00:00:00.000000+00:00"


def traj(
    task: str,
    trial: int = 0,
    *,
    outcome: bool | None = False,
    intent: str | None = None,
    steps: list[Step] | None = None,
    **metadata: object,
) -> Trajectory:
    """A trajectory ``<task>-<trial>`` with one ordinary search step unless steps are given."""
    return Trajectory(
        id=f"{task}-{trial}",
        task_id=task,
        trial=trial,
        input=f"please do {task}",
        steps=steps if steps is not None else [Step(tool="search", output='{"hits": 3}')],
        outcome=outcome,
        intent=intent,
        metadata=dict(metadata),
    )


def case(
    task: str,
    trial: int = 0,
    *,
    stratum: str = "common",
    core: bool = False,
    outcome: bool | None = False,
    tags: tuple[str, ...] = (),
    dataset: str = "ds",
    intent: str | None = None,
) -> EvalCase:
    """A case made from :func:`traj` through the public builder."""
    return make_case(
        traj(task, trial, outcome=outcome, intent=intent),
        dataset=dataset,
        stratum=stratum,
        core=core,
        tags=tags,
        added_at=STAMP,
    )
