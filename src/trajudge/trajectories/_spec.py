"""TaskSpec: the expectations for one task, checked by the rule engine."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

MatchMode = Literal["exact", "in_order", "any_order", "subset", "superset", "prefix"]
ArgOp = Literal["equals", "regex", "approx", "any", "absent"]


class ExpectedCall(BaseModel):
    """One expected tool call; ``args=None`` means any arguments."""

    model_config = ConfigDict(extra="forbid")

    tool: str = Field(min_length=1)
    args: dict[str, Any] | None = None


class ArgCheck(BaseModel):
    """A field-by-field check on the arguments of calls to ``tool``.

    ``path`` is a nested path such as ``passengers[0].dob``.
    """

    model_config = ConfigDict(extra="forbid")

    tool: str = Field(min_length=1)
    path: str = Field(min_length=1)
    op: ArgOp = "equals"
    value: Any = None
    tolerance: float | None = Field(default=None, ge=0)


class Baseline(BaseModel):
    """Per-run figures of a known-good baseline."""

    model_config = ConfigDict(extra="forbid")

    steps: float | None = Field(default=None, ge=0)
    tokens: float | None = Field(default=None, ge=0)
    cost_usd: float | None = Field(default=None, ge=0)
    latency_s: float | None = Field(default=None, ge=0)


class Budgets(BaseModel):
    """Absolute limits, and a baseline with a tolerance ratio (alert above ``tolerance`` ×)."""

    model_config = ConfigDict(extra="forbid")

    max_steps: int | None = Field(default=None, ge=0)
    max_tokens: int | None = Field(default=None, ge=0)
    max_cost_usd: float | None = Field(default=None, ge=0)
    max_latency_s: float | None = Field(default=None, ge=0)
    baseline: Baseline | None = None
    tolerance: float = Field(default=1.5, gt=0)


class CustomCheckRef(BaseModel):
    """A registered custom check used from YAML, with its parameters."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    params: dict[str, Any] = Field(default_factory=dict)
    severity: Literal["gate", "diagnostic", "regression"] = "diagnostic"


class TaskSpec(BaseModel):
    """The expectations for one task (DESIGN.md).

    A field left at ``None`` (or empty) means the matching check does not apply.
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
    pass_threshold: float = Field(default=0.0, ge=0, le=1)
