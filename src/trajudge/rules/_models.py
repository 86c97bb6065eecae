"""The results of rule checks: one CheckResult per check, one RuleReport per trajectory.

They are slotted dataclasses rather than pydantic models: a dataset check builds about ten
of them per trajectory, and construction is on the hot path (see benchmarks/). They validate
their values in ``__post_init__`` and convert to and from JSON-able dicts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from trajudge.trajectories import Severity

SEVERITIES: frozenset[str] = frozenset(("gate", "diagnostic", "regression"))


@dataclass(slots=True)
class CheckResult:
    """The outcome of one check on one trajectory.

    ``score`` in [0, 1] says how much of the expectation was met; ``None`` means the check
    ran but has no meaningful degree (it is then left out of the weighted mean). A check that
    does not apply produces no CheckResult at all, which is not the same as a score of 0.
    """

    check: str
    passed: bool
    severity: Severity = "diagnostic"
    score: float | None = None
    detail: str = ""
    data: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.check:
            raise ValueError("CheckResult.check must be a non-empty name")
        if self.severity not in SEVERITIES:
            raise ValueError(f"CheckResult.severity must be one of {sorted(SEVERITIES)}")
        s = self.score
        if s is not None and (math.isnan(s) or not 0.0 <= s <= 1.0):
            raise ValueError(f"CheckResult.score must be in [0, 1] or None, got {s!r}")

    def to_dict(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "passed": self.passed,
            "severity": self.severity,
            "score": self.score,
            "detail": self.detail,
            "data": self.data,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CheckResult:
        return cls(**data)


@dataclass(slots=True)
class RuleReport:
    """All check results for one trajectory.

    ``score`` is the weighted mean of the results' scores (None when no result has one);
    ``passed`` is ``gates_passed and (score is None or score >= pass_threshold)``.
    """

    trajectory_id: str
    task_id: str
    results: list[CheckResult]
    gates_passed: bool
    score: float | None
    passed: bool
    spec_sha256: str = ""

    def result(self, check: str) -> CheckResult | None:
        """The result of the named check, or None when it did not run."""
        for r in self.results:
            if r.check == check:
                return r
        return None

    @property
    def failed_gates(self) -> list[str]:
        """Names of the gate checks that failed."""
        return [r.check for r in self.results if r.severity == "gate" and not r.passed]

    @property
    def regressions(self) -> list[str]:
        """Names of the regression checks that alerted."""
        return [r.check for r in self.results if r.severity == "regression" and not r.passed]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able dict (what the store keeps in ``rule_results.data``)."""
        return {
            "trajectory_id": self.trajectory_id,
            "task_id": self.task_id,
            "results": [r.to_dict() for r in self.results],
            "gates_passed": self.gates_passed,
            "score": self.score,
            "passed": self.passed,
            "spec_sha256": self.spec_sha256,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RuleReport:
        values = dict(data)
        values["results"] = [CheckResult.from_dict(r) for r in data["results"]]
        return cls(**values)


def result(
    check: str,
    passed: bool,
    score: float | None,
    detail: str = "",
    data: dict[str, Any] | None = None,
    severity: Severity = "diagnostic",
) -> CheckResult:
    """Build a CheckResult from values a built-in check computed (clamped to [0, 1])."""
    return CheckResult(
        check,
        passed,
        severity,
        None if score is None else min(1.0, max(0.0, float(score))),
        detail,
        data if data is not None else {},
    )
