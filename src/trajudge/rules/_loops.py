"""Loops: the same tool called with the same (canonical) arguments too many times."""

from __future__ import annotations

from collections import Counter

from trajudge.rules._compile import CompiledSpec, Prepared
from trajudge.rules._models import CheckResult, result


def _short(text: str, limit: int = 50) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def check_loops(p: Prepared, c: CompiledSpec) -> CheckResult | None:
    """Fails when a (tool, arguments) pair occurs more than ``loop_threshold`` times.

    Score = 1 - (calls beyond the threshold) / (all calls); 1.0 for a run without calls.
    """
    n = len(p.tools)
    limit = c.spec.loop_threshold
    sev = c.severity("loops")
    if n <= limit:  # no pair can exceed the threshold
        return result("loops", True, 1.0, "", {"loops": []}, sev)
    per_tool = Counter(p.tools)
    suspects = {t for t, k in per_tool.items() if k > limit}
    counts = Counter((t, p.key(j)) for j, t in enumerate(p.tools) if t in suspects)
    loops = [(tool, key, k) for (tool, key), k in counts.items() if k > limit]
    if not loops:
        return result("loops", True, 1.0, "", {"loops": []}, sev)
    loops.sort(key=lambda x: (-x[2], x[0], x[1]))
    excess = sum(k - limit for _, _, k in loops)
    detail = "; ".join(f"{tool} x{k} with args {_short(key)}" for tool, key, k in loops[:3])
    data = {"loops": [{"tool": t, "args": key, "count": k} for t, key, k in loops]}
    return result("loops", False, 1.0 - excess / n, f"repeated calls: {detail}", data, sev)
