"""Deterministic rule checks on trajectories: gates, diagnostics and regressions.

>>> from trajudge.rules import run_checks
>>> from trajudge.trajectories import Step, TaskSpec, Trajectory
>>> t = Trajectory(id="r1", task_id="t1", steps=[Step(tool="search"), Step(tool="book")])
>>> report = run_checks(t, TaskSpec(forbidden_tools=["delete"], required_tools=["book"]))
>>> report.gates_passed, report.score
(True, 1.0)
"""

from trajudge.rules._blocks import RULE_ENGINES, check_parquet
from trajudge.rules._compile import (
    BUILTIN_CHECKS,
    DEFAULT_SEVERITIES,
    DEFAULT_WEIGHTS,
    spec_sha256,
)
from trajudge.rules._engine import (
    check_dataset,
    iter_check_dataset,
    merge_specs,
    run_checks,
)
from trajudge.rules._models import CheckResult, RuleReport
from trajudge.rules._registry import (
    get_check,
    register_check,
    registered_checks,
    unregister_check,
)
from trajudge.rules._run import DatasetCheck, check_stored_dataset
from trajudge.rules._specs import SpecSet, load_specs, resolve_specs
from trajudge.rules._summary import CheckSummary, SummaryParts, summarize_reports
from trajudge.rules._values import call_key, diff_values, values_equal

__all__ = [
    "BUILTIN_CHECKS",
    "DEFAULT_SEVERITIES",
    "DEFAULT_WEIGHTS",
    "RULE_ENGINES",
    "CheckResult",
    "CheckSummary",
    "DatasetCheck",
    "RuleReport",
    "SpecSet",
    "SummaryParts",
    "call_key",
    "check_dataset",
    "check_parquet",
    "check_stored_dataset",
    "diff_values",
    "get_check",
    "iter_check_dataset",
    "load_specs",
    "merge_specs",
    "register_check",
    "registered_checks",
    "resolve_specs",
    "run_checks",
    "spec_sha256",
    "summarize_reports",
    "unregister_check",
    "values_equal",
]
