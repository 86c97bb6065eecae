"""The trajectory data model: Step, Usage, Trajectory.

These are the names every other part of trajudge speaks (see DESIGN.md). They are plain
pydantic models so that a record read from any importer is validated the same way.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator


def canonical_json(value: Any) -> str:
    """Serialise ``value`` to a canonical JSON string (sorted keys, no spaces).

    Two argument dicts that differ only in key order give the same string, which is what
    loop detection and caching need.

    >>> canonical_json({"b": 1, "a": [1, 2]})
    '{"a":[1,2],"b":1}'
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


class Step(BaseModel):
    """One tool call made by the agent, with its result."""

    model_config = ConfigDict(extra="forbid")

    tool: str = Field(min_length=1)
    args: dict[str, Any] = Field(default_factory=dict)
    ok: bool = True
    output: str | None = None
    error: str | None = None
    approved: bool | None = None
    tokens: int | None = Field(default=None, ge=0)
    latency_ms: float | None = Field(default=None, ge=0)
    call_id: str | None = None

    def canonical_args(self) -> str:
        """The arguments as canonical JSON (key order does not matter)."""
        return canonical_json(self.args)


class Usage(BaseModel):
    """What a run cost: tokens, money, wall time and conversation turns."""

    model_config = ConfigDict(extra="forbid")

    prompt_tokens: int | None = Field(default=None, ge=0)
    completion_tokens: int | None = Field(default=None, ge=0)
    cost_usd: float | None = Field(default=None, ge=0)
    latency_s: float | None = Field(default=None, ge=0)
    turns: int | None = Field(default=None, ge=0)

    @property
    def total_tokens(self) -> int | None:
        """Prompt plus completion tokens, or None when neither is known."""
        if self.prompt_tokens is None and self.completion_tokens is None:
            return None
        return (self.prompt_tokens or 0) + (self.completion_tokens or 0)


class Trajectory(BaseModel):
    """One agent run: its input, the tool calls it made, its answer and how it ended.

    ``outcome`` is the ground truth when the environment gives one (for τ-bench,
    ``reward == 1``); ``None`` when unknown.
    """

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    task_id: str = Field(min_length=1)
    trial: int = Field(default=0, ge=0)
    input: str = ""
    steps: list[Step] = Field(default_factory=list)
    final_answer: str | None = None
    outcome: bool | None = None
    usage: Usage = Field(default_factory=Usage)
    intent: str | None = None
    files_before: dict[str, str] | None = None
    files_after: dict[str, str] | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("task_id", "id", mode="before")
    @classmethod
    def _coerce_id(cls, value: Any) -> Any:
        # task ids are often integers in the wild (τ-bench); keep them as text
        if isinstance(value, bool):
            return value
        if isinstance(value, int):
            return str(value)
        return value

    @property
    def tools(self) -> list[str]:
        """The tool names in call order."""
        return [s.tool for s in self.steps]

    def content_hash(self) -> str:
        """A SHA-256 of the canonical JSON of this trajectory."""
        return hashlib.sha256(canonical_json(self.model_dump(mode="json")).encode()).hexdigest()
