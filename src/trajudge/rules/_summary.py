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


@dataclass
class SummaryParts:
    """The running sums behind a :class:`CheckSummary`: :meth:`add` reports one at a time,
    :meth:`merge` the parts of another block (blocks merged in order give the same sums as
    their reports added in order, floats included), :meth:`summary` the figures."""

    trajectories: int = 0
    passed: int = 0
    gate_failures: int = 0
    regressions: int = 0
    score_sum: float = 0.0
    score_n: int = 0
    checks: dict[str, dict[str, Any]] = field(default_factory=dict)

    def add(self, rep: RuleReport) -> None:
        self.trajectories += 1
        self.passed += rep.passed
        self.gate_failures += not rep.gates_passed
        self.regressions += any(r.severity == "regression" and not r.passed for r in rep.results)
        if rep.score is not None:
            self.score_sum += rep.score
            self.score_n += 1
        for r in rep.results:
            a = self.checks.get(r.check)
            if a is None:
                a = self.checks[r.check] = _check_sums()
            a["runs"] += 1
            a["passed" if r.passed else "failed"] += 1
            a["_sev"].add(r.severity)
            if r.score is not None and not math.isnan(r.score):
                a["_s"] += r.score
                a["_n"] += 1

    def merge(self, other: SummaryParts) -> None:
        self.trajectories += other.trajectories
        self.passed += other.passed
        self.gate_failures += other.gate_failures
        self.regressions += other.regressions
        self.score_sum += other.score_sum
        self.score_n += other.score_n
        for name, b in other.checks.items():
            a = self.checks.setdefault(name, _check_sums())
            for k in ("runs", "passed", "failed", "_s", "_n"):
                a[k] += b[k]
            a["_sev"] |= b["_sev"]

    def summary(self) -> CheckSummary:
        out = CheckSummary(self.trajectories, self.passed, self.gate_failures, self.regressions)
        out.mean_score = self.score_sum / self.score_n if self.score_n else None
        for name in sorted(self.checks):
            a = self.checks[name]
            out.checks[name] = {
                "runs": a["runs"],
                "passed": a["passed"],
                "failed": a["failed"],
                "mean_score": a["_s"] / a["_n"] if a["_n"] else None,
                "severity": "/".join(sorted(a["_sev"])),
            }
        return out


def _check_sums() -> dict[str, Any]:
    return {"runs": 0, "passed": 0, "failed": 0, "_s": 0.0, "_n": 0, "_sev": set()}


def summarize_reports(reports: Iterable[RuleReport]) -> CheckSummary:
    """Per check: runs, passed, failed, mean score (over results with a score) and severity.

    ``gate_failures`` counts trajectories with at least one failed gate; ``mean_score`` is the
    mean of the reports' scores (None when no report has one).
    """
    parts = SummaryParts()
    for rep in reports:
        parts.add(rep)
    return parts.summary()
