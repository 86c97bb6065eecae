"""Running every check on a trajectory, and over a dataset with spec resolution."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import replace
from typing import Any

from trajudge.rules._approval import check_approval
from trajudge.rules._args import check_args
from trajudge.rules._budgets import check_budget_limits, check_budget_regression
from trajudge.rules._compile import Checked, CompiledSpec, Prepared, compile_spec
from trajudge.rules._failures import check_failed_calls
from trajudge.rules._loops import check_loops
from trajudge.rules._models import CheckResult, RuleReport
from trajudge.rules._output import check_output_schema
from trajudge.rules._reference import (
    check_reference,
    check_step_accuracy,
    check_step_count,
    check_tool_f1,
)
from trajudge.rules._side_effects import check_side_effects
from trajudge.rules._tools import check_forbidden_tools, check_required_tools
from trajudge.trajectories import TaskSpec, Trajectory

BUILTIN: tuple[Callable[[Prepared, CompiledSpec], CheckResult | None], ...] = (
    check_required_tools,
    check_forbidden_tools,
    check_reference,
    check_tool_f1,
    check_step_accuracy,
    check_step_count,
    check_args,
    check_loops,
    check_approval,
    check_side_effects,
    check_output_schema,
    check_failed_calls,
    check_budget_limits,
    check_budget_regression,
)

_NO_MERGE = frozenset({"output_schema"})  # a schema is one value: a task's schema replaces


def merge_dicts(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``over`` on top of ``base``: dicts merge recursively, everything else (lists too)
    replaces, except ``output_schema`` which always replaces as a whole.

    >>> merge_dicts({"budgets": {"max_steps": 9, "tolerance": 2}, "required_tools": ["a"]},
    ...             {"budgets": {"max_steps": 5}, "required_tools": ["b"]})
    {'budgets': {'max_steps': 5, 'tolerance': 2}, 'required_tools': ['b']}
    """
    out = dict(base)
    for key, value in over.items():
        prev = out.get(key)
        if isinstance(prev, dict) and isinstance(value, dict) and key not in _NO_MERGE:
            out[key] = merge_dicts(prev, value)
        else:
            out[key] = value
    return out


def merge_specs(base: TaskSpec, over: TaskSpec) -> TaskSpec:
    """The spec ``over`` merged on top of ``base``: only the fields ``over`` sets explicitly
    count (``model_fields_set``, recursively), lists replace and dicts merge.
    """
    merged = merge_dicts(
        base.model_dump(mode="python", exclude_unset=True),
        over.model_dump(mode="python", exclude_unset=True),
    )
    return TaskSpec.model_validate(merged)


def _run(p: Prepared, c: CompiledSpec) -> RuleReport:
    t = p.trajectory
    results: list[CheckResult] = []
    for check in BUILTIN:
        r = check(p, c)
        if r is not None:
            results.append(r)
    if c.custom and not isinstance(t, Trajectory):  # check_parquet reads models for these
        raise TypeError(f"custom checks need a Trajectory, got {type(t).__name__}")
    for ref, func in c.custom:
        r = func(t, c.spec, **ref.params)
        if not isinstance(r, CheckResult):
            raise TypeError(
                f"custom check {ref.name!r} returned {type(r).__name__}, not CheckResult"
            )
        sev = c.spec.severities.get(ref.name, ref.severity)
        results.append(replace(r, check=ref.name, severity=sev))
    gates = True
    num = den = 0.0
    for r in results:
        if r.severity == "gate" and not r.passed:
            gates = False
        if r.score is not None:
            w = c.weight(r.check)
            num += w * r.score
            den += w
    score = num / den if den > 0 else None
    passed = gates and (score is None or score >= c.spec.pass_threshold)
    return RuleReport(t.id, t.task_id, results, gates, score, passed, c.sha256)


def run_checks(trajectory: Trajectory, spec: TaskSpec) -> RuleReport:
    """Run every applicable check of ``spec`` on one trajectory.

    ``score`` is the weighted mean of the results' scores (weights: ``spec.weights`` over
    :data:`DEFAULT_WEIGHTS`, 1 for custom checks; weight 0 keeps a check out of the score);
    ``passed = gates_passed and score >= spec.pass_threshold`` (a report with no scored check
    passes on its gates alone).
    """
    return _run(Prepared(trajectory), compile_spec(spec))


def iter_check_dataset(
    trajectories: Iterable[Checked],
    specs: Mapping[str, TaskSpec],
    defaults: TaskSpec | None = None,
) -> Iterator[RuleReport]:
    """Lazily yield :func:`check_dataset`'s reports (for progress bars and big datasets).

    Besides models, takes the :class:`~trajudge.trajectories.LeanTrajectory` rows of
    :func:`~trajudge.trajectories.iter_lean_block` when no spec has a custom check.
    """
    base = defaults if defaults is not None else TaskSpec()
    compiled: dict[str, CompiledSpec] = {}
    for t in trajectories:
        c = compiled.get(t.task_id)
        if c is None:
            entry = specs.get(t.task_id)
            spec = base if entry is None else merge_specs(base, entry)
            c = compiled[t.task_id] = compile_spec(spec)
        yield _run(Prepared(t), c)


def check_dataset(
    trajectories: Iterable[Trajectory],
    specs: Mapping[str, TaskSpec],
    defaults: TaskSpec | None = None,
) -> list[RuleReport]:
    """Run the checks on every trajectory with its task's spec.

    A task's spec is its entry in ``specs`` merged over ``defaults`` (:func:`merge_specs`:
    fields the entry sets win, lists replace, dicts merge); a task without an entry gets
    ``defaults``. Each task's spec is compiled once.
    """
    return list(iter_check_dataset(trajectories, specs, defaults))
