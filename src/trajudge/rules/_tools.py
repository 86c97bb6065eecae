"""Required and forbidden tools."""

from __future__ import annotations

from collections import Counter

from trajudge.rules._compile import CompiledSpec, Prepared
from trajudge.rules._models import CheckResult, result


def check_required_tools(p: Prepared, c: CompiledSpec) -> CheckResult | None:
    """Every tool in ``required_tools`` has at least one successful call (``ok`` true): a
    call that failed did not do the tool's work. Score = share of required tools that
    succeeded; ``data`` lists the ``missing`` ones and, of those, the ``failed`` ones (called,
    never successfully) with their call counts."""
    required = list(dict.fromkeys(c.spec.required_tools))
    if not required:
        return None
    succeeded = {s.tool for s in p.steps if s.ok}
    attempts = Counter(t for t in p.tools if t not in succeeded)
    missing = [t for t in required if t not in succeeded]
    failed = {t: attempts[t] for t in missing if attempts[t]}
    why = [
        f"{t} was called {k} time{'s' * (k != 1)} but never succeeded" for t, k in failed.items()
    ]
    detail = f"missing: {', '.join(missing)}" if missing else ""
    if why:
        detail += f" ({'; '.join(why)})"
    return result(
        "required_tools",
        not missing,
        (len(required) - len(missing)) / len(required),
        detail,
        {"missing": missing, "failed": failed},
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
