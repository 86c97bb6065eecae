"""Failed tool calls (``ok=False``): count and rate."""

from __future__ import annotations

from trajudge.rules._compile import CompiledSpec, Prepared
from trajudge.rules._models import CheckResult, result


def check_failed_calls(p: Prepared, c: CompiledSpec) -> CheckResult | None:
    """Share of calls with ``ok=False``; passes when at most ``max_failure_rate``.

    Does not apply to a run without tool calls (a rate of 0/0 is not a score of 1).
    Score = 1 - rate.
    """
    steps = p.steps
    if not steps:
        return None
    failed = [j for j, s in enumerate(steps) if not s.ok]
    rate = len(failed) / len(steps)
    detail = f"{len(failed)} of {len(steps)} calls failed (rate {rate:.3f})" if failed else ""
    return result(
        "failed_calls",
        rate <= c.spec.max_failure_rate,
        1.0 - rate,
        detail,
        {"failed": len(failed), "rate": rate, "steps": failed},
        c.severity("failed_calls"),
    )
