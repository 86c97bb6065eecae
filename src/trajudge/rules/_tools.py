"""Required and forbidden tools."""

from __future__ import annotations

from collections import Counter

from trajudge.rules._compile import CompiledSpec, Prepared
from trajudge.rules._models import CheckResult, result


def check_required_tools(p: Prepared, c: CompiledSpec) -> CheckResult | None:
    """Every tool in ``required_tools`` is called at least once; score = share called."""
    required = c.spec.required_tools
    if not required:
        return None
    called = set(p.tools)
    missing = [t for t in dict.fromkeys(required) if t not in called]
    n = len(dict.fromkeys(required))
    return result(
        "required_tools",
        not missing,
        (n - len(missing)) / n,
        f"missing: {', '.join(missing)}" if missing else "",
        {"missing": missing},
        c.severity("required_tools"),
    )


def check_forbidden_tools(p: Prepared, c: CompiledSpec) -> CheckResult | None:
    """No tool in ``forbidden_tools`` is called; detail lists each with its count."""
    forbidden = set(c.spec.forbidden_tools)
    if not forbidden:
        return None
    hits = Counter(t for t in p.tools if t in forbidden)
    n = len(p.tools)
    return result(
        "forbidden_tools",
        not hits,
        1.0 if n == 0 else 1.0 - sum(hits.values()) / n,
        ", ".join(f"{t} called {k}x" for t, k in sorted(hits.items())),
        {"called": dict(sorted(hits.items()))},
        c.severity("forbidden_tools"),
    )
