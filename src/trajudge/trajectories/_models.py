"""The trajectory data model: Step, Usage, Trajectory.

These are the names every other part of trajudge speaks (see DESIGN.md). They are plain
pydantic models so that a record read from any importer is validated the same way.
"""

from __future__ import annotations

import hashlib
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from trajudge.core import canonical_json


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


Role = Literal["system", "user", "assistant", "tool"]


class Message(BaseModel):
    """One turn of the conversation.

    An assistant turn lists in ``steps`` the indexes (into :attr:`Trajectory.steps`) of the tool
    calls it made, in order. A tool turn names in ``step`` the call it answers; its text is that
    step's ``output`` / ``error``, so ``content`` is left None instead of storing it twice. A tool
    turn that answers no recorded call keeps its text in ``content``.
    """

    model_config = ConfigDict(extra="forbid")

    role: Role
    content: str | None = None
    name: str | None = None
    steps: list[int] = Field(default_factory=list)
    step: int | None = Field(default=None, ge=0)


class Trajectory(BaseModel):
    """One agent run: its conversation, the tool calls it made, its answer and how it ended.

    ``messages`` is the whole conversation (user, assistant and tool turns in order, each
    assistant turn linked to the steps it made); it is empty when the source has only the
    steps. ``input`` is the first user message. ``outcome`` is the ground truth when the
    environment gives one (for τ-bench, ``reward == 1``); ``None`` when unknown.
    """

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    task_id: str = Field(min_length=1)
    trial: int = Field(default=0, ge=0)
    input: str = ""
    messages: list[Message] = Field(default_factory=list)
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

    @model_validator(mode="after")
    def _check_links(self) -> Trajectory:
        linked: dict[int, int] = {}
        n = len(self.steps)
        for i, m in enumerate(self.messages):
            if m.steps and m.role != "assistant":
                raise ValueError(f"messages[{i}].steps: only an assistant turn makes tool calls")
            if m.step is not None and m.role != "tool":
                raise ValueError(f"messages[{i}].step: only a tool turn answers a tool call")
            for s in m.steps:
                if not 0 <= s < n:
                    raise ValueError(f"messages[{i}].steps: no step {s} (there are {n})")
                if s in linked:
                    raise ValueError(
                        f"messages[{i}].steps: step {s} is already made by messages[{linked[s]}]"
                    )
                linked[s] = i
            if m.step is not None and m.step >= n:
                raise ValueError(f"messages[{i}].step: no step {m.step} (there are {n})")
        return self

    @model_serializer(mode="wrap")
    def _omit_empty_messages(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # a trajectory without a conversation serialises as it did before ``messages``
        # existed, so stored hashes and files of step-only trajectories stay the same
        data: dict[str, Any] = handler(self)
        if not self.messages:
            data.pop("messages", None)
        return data

    @property
    def tools(self) -> list[str]:
        """The tool names in call order."""
        return [s.tool for s in self.steps]

    def user_turns(self) -> list[str]:
        """The text of every user message, in order."""
        return [m.content or "" for m in self.messages if m.role == "user"]

    def content_hash(self) -> str:
        """A SHA-256 of the canonical JSON of this trajectory."""
        return hashlib.sha256(canonical_json(self.model_dump(mode="json")).encode()).hexdigest()
