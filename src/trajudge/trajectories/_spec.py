"""TaskSpec: the expectations for one task, checked by the rule engine (``trajudge.rules``).

Every field is validated when the spec is built, so that a bad regex, a malformed JSON schema,
an unknown match mode or a path that cannot be parsed fails when the spec file is loaded, not
half-way through a run.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

MatchMode = Literal["exact", "in_order", "any_order", "subset", "superset", "prefix"]
ArgOp = Literal["equals", "regex", "approx", "any", "absent"]
Severity = Literal["gate", "diagnostic", "regression"]

_PATH_TOKEN = re.compile(r"\[(\d+)\]|\.?([^.\[\]]+)")


def parse_path(path: str) -> tuple[str | int, ...]:
    """Split a nested argument path into keys and list indexes.

    >>> parse_path("passengers[0].dob")
    ('passengers', 0, 'dob')
    >>> parse_path("flights[1].flight_number")
    ('flights', 1, 'flight_number')

    Raises ValueError for a path that cannot be parsed (``a..b``, ``a[x]``, ``[0`` ...).
    """
    parts: list[str | int] = []
    pos = 0
    while pos < len(path):
        m = _PATH_TOKEN.match(path, pos)
        key_without_dot = (
            m is not None and m.group(2) is not None and (path[pos] == ".") == (pos == 0)
        )
        if m is None or key_without_dot:
            raise ValueError(f"cannot parse path {path!r} at character {pos}")
        if m.group(1) is not None:
            parts.append(int(m.group(1)))
        else:
            parts.append(m.group(2))
        pos = m.end()
    if not parts or isinstance(parts[0], int):
        raise ValueError(f"path {path!r} must start with a key name")
    return tuple(parts)


class ExpectedCall(BaseModel):
    """One expected tool call; ``args=None`` means any arguments."""

    model_config = ConfigDict(extra="forbid")

    tool: str = Field(min_length=1)
    args: dict[str, Any] | None = None


class ArgCheck(BaseModel):
    """A field-by-field check on the arguments of a call to ``tool``.

    ``path`` is a nested path such as ``passengers[0].dob``. ``op`` is one of ``equals``
    (canonical equality, 250 == 250.0), ``regex`` (``value`` is a pattern that must match the
    whole text), ``approx`` (numeric, ``|actual - value| <= tolerance``, default 1e-9),
    ``any`` (present with any value) and ``absent`` (must not be present).

    Checks that share ``tool`` and ``call`` form one expectation that a single actual call must
    satisfy; distinct expectations are satisfied by distinct calls. ``call`` is a free label
    (e.g. ``outbound``); checks without one on the same tool form one expectation.
    """

    model_config = ConfigDict(extra="forbid")

    tool: str = Field(min_length=1)
    path: str = Field(min_length=1)
    op: ArgOp = "equals"
    value: Any = None
    tolerance: float | None = Field(default=None, ge=0)
    call: str | None = None

    @field_validator("call", mode="before")
    @classmethod
    def _coerce_call(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    @field_validator("path")
    @classmethod
    def _check_path(cls, value: str) -> str:
        parse_path(value)
        return value

    @field_validator("value")
    @classmethod
    def _check_value(cls, value: Any, info: ValidationInfo) -> Any:
        op = info.data.get("op")
        if op == "regex":
            if not isinstance(value, str):
                raise ValueError("op regex needs a string pattern in value")
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"bad regex {value!r}: {exc}") from None
        elif op == "approx" and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise ValueError("op approx needs a number in value")
        return value


class Baseline(BaseModel):
    """Per-run figures of a known-good baseline."""

    model_config = ConfigDict(extra="forbid")

    steps: float | None = Field(default=None, ge=0)
    tokens: float | None = Field(default=None, ge=0)
    cost_usd: float | None = Field(default=None, ge=0)
    latency_s: float | None = Field(default=None, ge=0)
    turns: float | None = Field(default=None, ge=0)


class Budgets(BaseModel):
    """Absolute limits, and a baseline with a tolerance ratio (alert above ``tolerance`` ×)."""

    model_config = ConfigDict(extra="forbid")

    max_steps: int | None = Field(default=None, ge=0)
    max_tokens: int | None = Field(default=None, ge=0)
    max_cost_usd: float | None = Field(default=None, ge=0)
    max_latency_s: float | None = Field(default=None, ge=0)
    max_turns: int | None = Field(default=None, ge=0)
    baseline: Baseline | None = None
    tolerance: float = Field(default=1.5, gt=0)


class CustomCheckRef(BaseModel):
    """A registered custom check used from YAML, with its parameters."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    params: dict[str, Any] = Field(default_factory=dict)
    severity: Severity = "diagnostic"


class TaskSpec(BaseModel):
    """The expectations for one task (DESIGN.md).

    A field left at ``None`` (or empty) means the matching check does not apply and produces
    no result. ``allowed_file_changes=[]`` is not empty in that sense: it means "no file may
    change" (``None`` turns the check off).

    ``weights`` and ``severities`` are keyed by check name (``reference_match``,
    ``side_effects``, ... or a custom check's name) and override the rule engine's defaults.
    ``max_step_ratio`` bounds ``len(steps) / len(reference)``; ``max_failure_rate`` bounds the
    share of tool calls that returned ``ok=False``. A tool in ``required_tools`` counts as
    used only once a call of it succeeded (``ok=True``): failed calls alone leave it missing.
    """

    model_config = ConfigDict(extra="forbid")

    task_id: str | None = None
    required_tools: list[str] = Field(default_factory=list)
    forbidden_tools: list[str] = Field(default_factory=list)
    reference: list[ExpectedCall] | None = None
    match_mode: MatchMode = "in_order"
    arg_checks: list[ArgCheck] = Field(default_factory=list)
    loop_threshold: int = Field(default=2, ge=1)
    high_risk_tools: list[str] = Field(default_factory=list)
    approval_tools: list[str] = Field(default_factory=list)
    allowed_file_changes: list[str] | None = None
    output_schema: dict[str, Any] | None = None
    budgets: Budgets | None = None
    checks: list[CustomCheckRef] = Field(default_factory=list)
    weights: dict[str, float] = Field(default_factory=dict)
    severities: dict[str, Severity] = Field(default_factory=dict)
    pass_threshold: float = Field(default=0.0, ge=0, le=1)
    max_step_ratio: float = Field(default=2.0, gt=0)
    max_failure_rate: float = Field(default=0.0, ge=0, le=1)

    @field_validator("task_id", mode="before")
    @classmethod
    def _coerce_task_id(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    @field_validator("weights")
    @classmethod
    def _check_weights(cls, value: dict[str, float]) -> dict[str, float]:
        for name, w in value.items():
            if w < 0:
                raise ValueError(f"weight of {name!r} must be >= 0, got {w}")
        return value

    @field_validator("output_schema")
    @classmethod
    def _check_schema(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is None:
            return value
        import jsonschema
        import jsonschema.exceptions

        try:
            jsonschema.validators.validator_for(value).check_schema(value)
        except jsonschema.exceptions.SchemaError as exc:
            where = "/".join(str(p) for p in exc.absolute_path) or "(root)"
            raise ValueError(f"malformed JSON schema at {where}: {exc.message}") from None
        return value
