"""Summaries of many reports: per check and overall."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from trajudge.rules._models import RuleReport


@dataclass
class CheckSummary:
    """Per-check counts over a set of reports, and the overall figures."""

    trajectories: int = 0
    passed: int = 0
    gate_failures: int = 0
    regressions: int = 0
    mean_score: float | None = None
    checks: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def summarize_reports(reports: Iterable[RuleReport]) -> CheckSummary:
    """Per check: runs, passed, failed, mean score (over results with a score) and severity.

    ``gate_failures`` counts trajectories with at least one failed gate; ``mean_score`` is the
    mean of the reports' scores (None when no report has one).
    """
    out = CheckSummary()
    score_sum, score_n = 0.0, 0
    acc: dict[str, dict[str, Any]] = {}
    for rep in reports:
        out.trajectories += 1
        out.passed += rep.passed
        out.gate_failures += not rep.gates_passed
        out.regressions += any(r.severity == "regression" and not r.passed for r in rep.results)
        if rep.score is not None:
            score_sum += rep.score
            score_n += 1
        for r in rep.results:
            a = acc.setdefault(
                r.check, {"runs": 0, "passed": 0, "failed": 0, "_s": 0.0, "_n": 0, "_sev": set()}
            )
            a["runs"] += 1
            a["passed" if r.passed else "failed"] += 1
            a["_sev"].add(r.severity)
            if r.score is not None and not math.isnan(r.score):
                a["_s"] += r.score
                a["_n"] += 1
    out.mean_score = score_sum / score_n if score_n else None
    for name in sorted(acc):
        a = acc[name]
        out.checks[name] = {
            "runs": a["runs"],
            "passed": a["passed"],
            "failed": a["failed"],
            "mean_score": a["_s"] / a["_n"] if a["_n"] else None,
            "severity": "/".join(sorted(a["_sev"])),
        }
    return out
