"""Budgets: absolute limits (a gate by default) and regression against a baseline.

The figures are the number of steps, ``usage.total_tokens``, ``usage.cost_usd``,
``usage.latency_s`` and ``usage.turns``. A limit whose figure was not recorded fails and is
named as unknown: a budget that cannot be verified is not reported as met.
"""

from __future__ import annotations

from typing import Any

from trajudge.rules._compile import Checked, CompiledSpec, Prepared
from trajudge.rules._models import CheckResult, result

_METRICS = ("steps", "tokens", "cost_usd", "latency_s", "turns")


def _figures(t: Checked) -> dict[str, float | None]:
    u = t.usage
    return {
        "steps": float(len(t.steps)),
        "tokens": None if u.total_tokens is None else float(u.total_tokens),
        "cost_usd": u.cost_usd,
        "latency_s": u.latency_s,
        "turns": None if u.turns is None else float(u.turns),
    }


def check_budget_limits(p: Prepared, c: CompiledSpec) -> CheckResult | None:
    """``max_steps``, ``max_tokens``, ``max_cost_usd``, ``max_latency_s``, ``max_turns``;
    score = share met."""
    b = c.spec.budgets
    if b is None:
        return None
    given: dict[str, float | None] = {
        "steps": b.max_steps,
        "tokens": b.max_tokens,
        "cost_usd": b.max_cost_usd,
        "latency_s": b.max_latency_s,
        "turns": b.max_turns,
    }
    limits = {k: float(v) for k, v in given.items() if v is not None}
    if not limits:
        return None
    fig = _figures(p.trajectory)
    problems: list[str] = []
    rows: dict[str, Any] = {}
    for name, limit in limits.items():
        value = fig[name]
        rows[name] = {"value": value, "limit": limit}
        if value is None:
            problems.append(f"{name} unknown (limit {limit:g})")
        elif value > limit:
            problems.append(f"{name} {value:g} > limit {limit:g}")
    met = len(limits) - len(problems)
    return result(
        "budget_limits",
        not problems,
        met / len(limits),
        "; ".join(problems),
        rows,
        c.severity("budget_limits"),
    )


def check_budget_regression(p: Prepared, c: CompiledSpec) -> CheckResult | None:
    """Alert when a figure exceeds ``tolerance`` x its baseline; score = share within."""
    b = c.spec.budgets
    if b is None or b.baseline is None:
        return None
    base = {k: getattr(b.baseline, k) for k in _METRICS if getattr(b.baseline, k) is not None}
    if not base:
        return None
    fig = _figures(p.trajectory)
    problems: list[str] = []
    rows: dict[str, Any] = {}
    for name, ref in base.items():
        value = fig[name]
        ratio = None if value is None else (value / ref if ref else (0.0 if value == 0 else None))
        rows[name] = {"value": value, "baseline": ref, "ratio": ratio}
        if value is None:
            problems.append(f"{name} unknown (baseline {ref:g})")
        elif value > b.tolerance * ref:
            shown = "inf" if ratio is None else f"{ratio:.2f}"
            problems.append(f"{name} {value:g} is {shown}x baseline {ref:g} (> {b.tolerance:g}x)")
    ok = len(base) - len(problems)
    return result(
        "budget_regression",
        not problems,
        ok / len(base),
        "; ".join(problems),
        rows,
        c.severity("budget_regression"),
    )
