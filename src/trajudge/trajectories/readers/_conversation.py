"""Build a conversation and its tool steps together, as every chat-shaped reader needs.

:class:`Conversation` collects turns (user, assistant, tool, system) and tool calls in the
order a source gives them, links each call to the assistant turn that made it and pairs each
result with the EARLIEST still-unanswered call of the same id: ids are reused within one
conversation in real data (τ-bench reuses ``call_...`` ids), so the latest call, or a dict keyed
by id, would pair results wrongly. A call that never gets a result ends ``ok=False`` with
``error="no tool result"``.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from trajudge.trajectories._io import validation_error
from trajudge.trajectories._models import Message, Role, Step, Trajectory, Usage

NO_RESULT = "no tool result"
REASONING = "reasoning"  # the name of a turn that holds a reasoning summary


@dataclass
class Conversation:
    """Turns and steps in order; see the module docstring."""

    messages: list[Message] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    _answered: list[bool] = field(default_factory=list)
    _pending: dict[str, deque[int]] = field(default_factory=dict)
    _by_name: dict[str, deque[int]] = field(default_factory=dict)

    def say(self, role: Role, text: str | None, *, name: str | None = None) -> None:
        """Add a turn with text (a system, user or assistant message)."""
        self.messages.append(Message(role=role, content=text, name=name))

    def call(
        self,
        tool: str,
        args: dict[str, Any],
        call_id: str | None = None,
        *,
        name: str | None = None,
        **fields: Any,
    ) -> int:
        """Add a tool call made by the current assistant turn (opened when there is none).

        ``fields`` are further :class:`Step` fields (``tokens``, ``latency_ms``, ``ok``,
        ``output``, ``error`` for a call whose result comes with it). Returns the step index.
        """
        last = self.messages[-1] if self.messages else None
        if last is None or last.role != "assistant":
            last = Message(role="assistant", name=name)
            self.messages.append(last)
        n = len(self.steps)
        self.steps.append(Step(tool=tool, args=args, call_id=call_id, **fields))
        done = "output" in fields or "error" in fields
        self._answered.append(done)
        last.steps.append(n)
        if not done:
            if call_id is not None:
                self._pending.setdefault(call_id, deque()).append(n)
            self._by_name.setdefault(tool, deque()).append(n)
        return n

    def pending(self, call_id: str | None = None, tool: str | None = None) -> int | None:
        """The earliest unanswered call with this id (or, without an id, this tool name)."""
        if call_id is not None:
            queue = self._pending.get(call_id)
        elif tool is not None:
            queue = self._by_name.get(tool)
        else:
            return None
        while queue:
            if not self._answered[queue[0]]:
                return queue[0]
            queue.popleft()
        return None

    def result(
        self,
        n: int | None,
        text: str | None,
        *,
        ok: bool = True,
        error: str | None = None,
        name: str | None = None,
    ) -> None:
        """Record the result of step ``n`` as a tool turn (``n=None``: a result of no call).

        ``ok=False`` stores ``error`` (default: the text) as the step's error and keeps a
        different ``text`` as its output.
        """
        if n is None:
            self.messages.append(Message(role="tool", content=text, name=name))
            return
        step = self.steps[n]
        if ok:
            update: dict[str, Any] = {"output": text, "ok": True, "error": None}
        else:
            err = error if error is not None else (text or "error")
            update = {"ok": False, "error": err, "output": text if text != err else None}
        self.steps[n] = step.model_copy(update=update)
        self._answered[n] = True
        self.messages.append(Message(role="tool", step=n, name=name or step.tool))

    def answered(self, n: int) -> bool:
        return self._answered[n]

    def complete(self, n: int, **fields: Any) -> None:
        """Update step ``n`` in place (e.g. from a tool span); ``output``/``error`` answer it."""
        self.steps[n] = self.steps[n].model_copy(update=fields)
        if "output" in fields or "error" in fields:
            self._answered[n] = True

    def finish(self) -> None:
        """Mark every call still without a result as failed (``error="no tool result"``)."""
        for n, done in enumerate(self._answered):
            if not done:
                self.steps[n] = self.steps[n].model_copy(update={"ok": False, "error": NO_RESULT})
                self._answered[n] = True

    @property
    def first_user(self) -> str:
        """The text of the first user turn ("" when there is none)."""
        return next((m.content or "" for m in self.messages if m.role == "user"), "")

    @property
    def final_answer(self) -> str | None:
        """The text of the last assistant turn (None when it only calls tools).

        Turns named ``reasoning`` (a model's reasoning summary) are not answers.
        """
        return next(
            (
                m.content
                for m in reversed(self.messages)
                if m.role == "assistant" and m.name != REASONING
            ),
            None,
        )

    @property
    def user_turns(self) -> int:
        return sum(1 for m in self.messages if m.role == "user")

    def trajectory(
        self,
        totals: list[int | None],
        *,
        file: str,
        record: str | None,
        id: str,
        task_id: str,
        trial: int = 0,
        outcome: bool | None = None,
        intent: str | None = None,
        metadata: dict[str, Any] | None = None,
        usage: Usage | None = None,
    ) -> Trajectory:
        """Finish the conversation and build its :class:`Trajectory`.

        ``totals`` are the prompt / completion tokens summed from the turns (None where no turn
        said); fields of ``usage`` (what the record says about the whole run) that are set win
        over those sums. A trajectory the model refuses is an :class:`InputError` naming
        ``file`` and ``record``.
        """
        self.finish()
        derived = Usage(prompt_tokens=totals[0], completion_tokens=totals[1], turns=self.user_turns)
        if usage is not None:
            derived = derived.model_copy(update=usage.model_dump(exclude_none=True))
        try:
            return Trajectory(
                id=id,
                task_id=task_id,
                trial=trial,
                input=self.first_user,
                messages=self.messages,
                steps=self.steps,
                final_answer=self.final_answer,
                outcome=outcome,
                usage=derived,
                intent=intent,
                metadata=dict(metadata or {}),
            )
        except ValidationError as exc:
            raise validation_error(file, record, exc) from None
