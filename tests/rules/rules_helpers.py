"""Small builders shared by the rule tests."""

from __future__ import annotations

import os
from typing import Any

from trajudge.rules import CheckResult, RuleReport, register_check, run_checks
from trajudge.trajectories import Step, TaskSpec, Trajectory


def traj(*calls: tuple[str, dict[str, Any]] | str, **fields: Any) -> Trajectory:
    """A trajectory whose steps are ``"tool"`` or ``("tool", {args})``."""
    steps = []
    for c in calls:
        if isinstance(c, str):
            steps.append(Step(tool=c))
        else:
            steps.append(Step(tool=c[0], args=c[1]))
    fields.setdefault("id", "t-0")
    fields.setdefault("task_id", "t")
    return Trajectory(steps=steps, **fields)


def check(t: Trajectory, name: str, **spec: Any) -> CheckResult | None:
    """Run a spec built from keywords and return the named check's result."""
    return run_checks(t, TaskSpec(**spec)).result(name)


def report(t: Trajectory, **spec: Any) -> RuleReport:
    return run_checks(t, TaskSpec(**spec))


def ref(*calls: tuple[str, dict[str, Any] | None] | str) -> list[dict[str, Any]]:
    """A reference list: ``"tool"`` (any args) or ``("tool", {args})``."""
    out: list[dict[str, Any]] = []
    for c in calls:
        if isinstance(c, str):
            out.append({"tool": c})
        else:
            out.append({"tool": c[0], "args": c[1]})
    return out


@register_check("answer_mentions_task")
def answer_mentions_task(trajectory: Trajectory, spec: TaskSpec, *, word: str) -> CheckResult:
    """A custom check registered by a test module (not on import of trajudge): the worker
    processes of ``check_parquet`` must get it from the parent. ``data`` names the process
    that ran it."""
    found = word in (trajectory.final_answer or "")
    data = {"pid": os.getpid()}
    return CheckResult(check="answer_mentions_task", passed=found, score=float(found), data=data)
