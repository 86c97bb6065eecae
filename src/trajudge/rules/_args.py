"""Argument checks: field by field, with an optimal assignment of calls to expectations.

The spec's ``arg_checks`` are grouped into expectations (same ``tool`` and ``call`` label).
Each expectation is satisfied by one actual call of its tool and two expectations never share
a call. Which call serves which expectation is decided by
:func:`scipy.optimize.linear_sum_assignment` on a cost matrix of failed fields, so the
assignment is optimal: the order in which expectations are written never changes the result
(a greedy first-come assignment can give a call to the wrong expectation and fail one that
could pass). An expectation left without a call fails all its fields.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from trajudge.rules._compile import ArgExpectation, CompiledSpec, FieldCheck, Prepared
from trajudge.rules._models import CheckResult, result
from trajudge.rules._values import MISSING, get_path, show, values_equal


def field_failure(fc: FieldCheck, args: dict[str, Any]) -> str | None:
    """Why the field check fails on ``args``, or None when it passes."""
    actual = get_path(args, fc.parts)
    op = fc.op
    if op == "absent":
        return None if actual is MISSING else f"{fc.path}: expected absent, got {show(actual)}"
    if actual is MISSING:
        want = "present" if op == "any" else show(fc.value)
        return f"{fc.path}: expected {want}, got <absent>"
    if op == "any":
        return None
    if op == "equals":
        if values_equal(fc.value, actual):
            return None
        return f"{fc.path}: expected {show(fc.value)}, got {show(actual)}"
    if op == "regex":
        assert fc.pattern is not None
        if isinstance(actual, str) and fc.pattern.fullmatch(actual):
            return None
        return f"{fc.path}: expected to match /{fc.pattern.pattern}/, got {show(actual)}"
    # approx
    if (
        isinstance(actual, int | float)
        and not isinstance(actual, bool)
        and math.isfinite(actual)
        and abs(actual - fc.value) <= fc.tolerance
    ):
        return None
    return f"{fc.path}: expected {show(fc.value)} ± {fc.tolerance:g}, got {show(actual)}"


def _assign(
    expectations: list[ArgExpectation], calls: list[int], p: Prepared
) -> list[tuple[ArgExpectation, int | None, list[str]]]:
    """Optimal assignment of the calls of one tool to its expectations."""
    steps = p.steps
    fails = [
        [[field_failure(fc, steps[j].args) for fc in e.fields] for j in calls] for e in expectations
    ]
    n_e, n_c = len(expectations), len(calls)
    # columns: the real calls, then one "no call" column per expectation
    cost = np.empty((n_e, n_c + n_e))
    for r, e in enumerate(expectations):
        for col in range(n_c):
            cost[r, col] = sum(1 for f in fails[r][col] if f is not None)
        cost[r, n_c:] = len(e.fields) + 0.5  # worse than any real call, even one failing all
    from scipy.optimize import linear_sum_assignment

    rows, cols = linear_sum_assignment(cost)
    out: list[tuple[ArgExpectation, int | None, list[str]]] = []
    for r, col in zip(rows.tolist(), cols.tolist(), strict=True):
        e = expectations[r]
        if col < n_c:
            out.append((e, calls[col], [f for f in fails[r][col] if f is not None]))
        else:
            out.append((e, None, [f"{fc.path}: no call of {e.tool} left" for fc in e.fields]))
    return out


def check_args(p: Prepared, c: CompiledSpec) -> CheckResult | None:
    """Field-by-field argument checks; score = share of field checks that pass."""
    if not c.arg_expectations:
        return None
    by_tool: dict[str, list[ArgExpectation]] = {}
    for e in c.arg_expectations:
        by_tool.setdefault(e.tool, []).append(e)
    assigned: list[tuple[ArgExpectation, int | None, list[str]]] = []
    for tool, exps in by_tool.items():
        calls = [j for j, t in enumerate(p.tools) if t == tool]
        assigned.extend(_assign(exps, calls, p))
    total = sum(len(e.fields) for e, _, _ in assigned)
    failed = sum(len(f) for _, _, f in assigned)
    problems = [
        f"{e.tool}{'[' + e.call + ']' if e.call else ''}"
        f"{'' if j is None else f' (step {j})'}: {msg}"
        for e, j, fs in assigned
        for msg in fs
    ]
    data = {
        "fields": total,
        "failed": failed,
        "assignment": [
            {"tool": e.tool, "call": e.call, "step": j, "failures": fs} for e, j, fs in assigned
        ],
    }
    detail = "; ".join(problems[:4]) + (
        f" (+{len(problems) - 4} more)" if len(problems) > 4 else ""
    )
    return result(
        "arg_checks", failed == 0, (total - failed) / total, detail, data, c.severity("arg_checks")
    )
