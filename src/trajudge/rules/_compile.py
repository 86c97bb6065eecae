"""A spec compiled once per task, and a trajectory prepared once per run.

Everything a check would otherwise recompute per trajectory (regexes, parsed paths, canonical
keys of the expected calls, the JSON-schema validator, the glob matcher) is built here once.
"""

from __future__ import annotations

import fnmatch
import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from trajudge.core import canonical_json
from trajudge.rules._models import CheckResult
from trajudge.rules._registry import get_check
from trajudge.rules._values import call_key, normalize
from trajudge.trajectories import (
    CustomCheckRef,
    LeanStep,
    LeanTrajectory,
    Severity,
    Step,
    TaskSpec,
    Trajectory,
    parse_path,
)

DEFAULT_WEIGHTS: dict[str, float] = {
    "side_effects": 3.0,
    "approval": 3.0,
    "forbidden_tools": 2.0,
    "reference_match": 2.0,
    "arg_checks": 2.0,
    "output_schema": 2.0,
    "required_tools": 1.0,
    "tool_f1": 1.0,
    "loops": 1.0,
    "budget_limits": 1.0,
    "failed_calls": 0.5,
    "step_count": 0.5,
    "step_accuracy": 0.5,
    "budget_regression": 0.5,
}
"""Weights of the built-in checks in a report's score; a custom check weighs 1 by default."""

DEFAULT_SEVERITIES: dict[str, Severity] = {
    "side_effects": "gate",
    "approval": "gate",
    "forbidden_tools": "gate",
    "output_schema": "gate",
    "budget_limits": "gate",
    "budget_regression": "regression",
}
"""Severities of the built-in checks; every other built-in check is a diagnostic."""

BUILTIN_CHECKS = frozenset(
    [*DEFAULT_WEIGHTS, "required_tools", "loops", "failed_calls", "step_count"]
)


@dataclass(frozen=True, slots=True)
class FieldCheck:
    """One compiled argument-field check."""

    path: str
    parts: tuple[str | int, ...]
    op: str
    value: Any
    tolerance: float
    pattern: re.Pattern[str] | None


@dataclass(frozen=True, slots=True)
class ArgExpectation:
    """Field checks that one actual call of ``tool`` must satisfy together."""

    tool: str
    call: str | None
    fields: tuple[FieldCheck, ...]


@dataclass(slots=True)
class CompiledSpec:
    """A TaskSpec with everything precomputed for fast checks."""

    spec: TaskSpec
    sha256: str
    ref_tools: list[str] = field(default_factory=list)
    ref_tool_set: frozenset[str] = frozenset()
    ref_keys: list[str | None] = field(default_factory=list)
    ref_args: list[dict[str, Any] | None] = field(default_factory=list)
    arg_expectations: list[ArgExpectation] = field(default_factory=list)
    file_matcher: re.Pattern[str] | None = None
    schema_validator: Any = None
    custom: list[tuple[CustomCheckRef, Callable[..., CheckResult]]] = field(default_factory=list)

    def weight(self, check: str) -> float:
        return self.spec.weights.get(check, DEFAULT_WEIGHTS.get(check, 1.0))

    def severity(self, check: str) -> Severity:
        return self.spec.severities.get(check, DEFAULT_SEVERITIES.get(check, "diagnostic"))


def spec_sha256(spec: TaskSpec) -> str:
    """SHA-256 of the spec's canonical JSON (what a stored rule result was computed with)."""
    return hashlib.sha256(canonical_json(spec.model_dump(mode="json")).encode()).hexdigest()


def compile_spec(spec: TaskSpec) -> CompiledSpec:
    """Precompute the spec's keys, regexes, paths, schema validator and custom checks."""
    out = CompiledSpec(spec=spec, sha256=spec_sha256(spec))
    for call in spec.reference or []:
        out.ref_tools.append(call.tool)
        out.ref_keys.append(None if call.args is None else call_key(call.args))
        out.ref_args.append(None if call.args is None else normalize(call.args))
    out.ref_tool_set = frozenset(out.ref_tools)
    groups: dict[tuple[str, str], list[FieldCheck]] = {}
    for ac in spec.arg_checks:
        pattern = re.compile(ac.value) if ac.op == "regex" else None
        tol = 1e-9 if ac.tolerance is None else ac.tolerance
        fc = FieldCheck(ac.path, parse_path(ac.path), ac.op, normalize(ac.value), tol, pattern)
        groups.setdefault((ac.tool, ac.call or ""), []).append(fc)
    # canonical order: the order in which the spec lists its checks never changes a result
    for (tool, label), fcs in sorted(groups.items()):
        fcs.sort(key=lambda f: (f.path, f.op, call_key(f.value), f.tolerance))
        out.arg_expectations.append(ArgExpectation(tool, label or None, tuple(fcs)))
    if spec.allowed_file_changes is not None:
        globs = [fnmatch.translate(g) for g in spec.allowed_file_changes]
        out.file_matcher = re.compile("|".join(globs)) if globs else None
    if spec.output_schema is not None:
        import jsonschema

        cls = jsonschema.validators.validator_for(spec.output_schema)
        out.schema_validator = cls(spec.output_schema)
    out.custom = [(ref, get_check(ref.name)) for ref in spec.checks]
    return out


Checked = Trajectory | LeanTrajectory
"""What the built-in checks read: a model, or the lean rows of ``iter_lean_block`` (the same
attributes, without pydantic); custom checks get models only."""


class Prepared:
    """A trajectory with the canonical keys of its calls computed lazily, once each."""

    __slots__ = ("_keys", "memo", "steps", "tools", "trajectory")

    def __init__(self, trajectory: Checked) -> None:
        self.trajectory = trajectory
        self.steps: Sequence[Step | LeanStep] = trajectory.steps
        self.tools = [s.tool for s in self.steps]
        self._keys: list[str | None] = [None] * len(self.steps)
        self.memo: dict[str, Any] = {}

    def key(self, j: int) -> str:
        """Canonical key of call ``j``'s arguments (numbers normalised)."""
        k = self._keys[j]
        if k is None:
            args = self.steps[j].args
            k = self._keys[j] = call_key(args) if args else "{}"
        return k
