"""Import OpenAI chat-completions conversations as trajectories.

Conversion (:func:`from_openai_messages`)
-----------------------------------------
* Every entry of an assistant message's ``tool_calls`` becomes a :class:`Step`, in order:
  ``tool`` = ``function.name``, ``args`` = ``function.arguments`` parsed as a JSON object
  (an empty string means no arguments), ``call_id`` = the call's ``id``.
* A ``role: "tool"`` message is the result of the EARLIEST still-unanswered call with the same
  ``tool_call_id``. Ids are reused within one conversation in real data (τ-bench reuses
  ``call_...`` ids), so matching the latest call, or a dict keyed by id, pairs results wrongly.
  A result is ``ok`` and stored in ``output``; a result whose text starts with ``"Error"``
  (the τ-bench convention) gets ``ok=False`` and is stored in ``error``. A call that never gets a
  result gets ``ok=False, error="no tool result"``. A result that answers no pending call is an
  error: the OpenAI API rejects such conversations too.
* The deprecated single ``function_call`` on an assistant message and its ``role: "function"``
  result (paired by function name, earliest unanswered first) are read the same way.
* ``input`` = the text of the first user message; ``final_answer`` = the text of the last
  assistant message (None when that message only calls tools); ``usage.turns`` = the number of
  user messages; ``usage.prompt_tokens`` / ``completion_tokens`` are summed over the messages
  that carry a ``usage`` object. Text content given as a list of parts is joined from its
  ``text`` parts.

File format (``--format openai``)
---------------------------------
JSON Lines, or one JSON list, of records::

    {"id": "t1-0",            # optional; default f"{task_id}-{trial}"
     "task_id": "t1",         # required (an integer is kept as text)
     "trial": 0,              # optional, default 0
     "messages": [...],       # required: the chat messages, system/user/assistant/tool
     "outcome": true,         # optional ground truth
     "intent": "refund",      # optional label
     "metadata": {...},       # optional object
     "usage": {"cost_usd": 0.01, "latency_s": 3.2}}   # optional; overrides summed values

Unknown keys are errors, so a typo is never silently dropped.
"""

from __future__ import annotations

import json
import os
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from trajudge.trajectories._errors import InputError
from trajudge.trajectories._io import (
    Record,
    check_file,
    check_unique,
    decode_utf8,
    kind,
    load_json_records,
    validate,
    validation_error,
)
from trajudge.trajectories._models import Step, Trajectory, Usage

NO_RESULT = "no tool result"


def _one_of(value: Any, types: tuple[type, ...], what: str) -> Any:
    # a plain check instead of a Union: pydantic reports a union failure once per member
    if value is not None and not isinstance(value, types):
        raise ValueError(f"expected {what}, got {kind(value)}")
    return value


class _Function(BaseModel):
    model_config = ConfigDict(extra="allow")

    name: str = Field(min_length=1)
    arguments: Any = None

    @field_validator("arguments")
    @classmethod
    def _arguments(cls, value: Any) -> Any:
        return _one_of(value, (str, dict), "a JSON string, an object or null")


class _ToolCall(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str | None = None
    function: _Function


class _Message(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: str = Field(min_length=1)
    content: Any = None
    tool_calls: list[_ToolCall] | None = None
    function_call: _Function | None = None
    tool_call_id: str | None = None
    name: str | None = None
    usage: dict[str, Any] | None = None

    @field_validator("content")
    @classmethod
    def _content(cls, value: Any) -> Any:
        return _one_of(value, (str, list), "a string, a list of parts or null")


_MESSAGES = TypeAdapter(list[_Message])


class OpenAIRecord(BaseModel):
    """One record of the ``--format openai`` file (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")

    id: str | None = Field(default=None, min_length=1)
    task_id: str = Field(min_length=1)
    trial: int = Field(default=0, ge=0)
    messages: list[Any]
    outcome: bool | None = None
    intent: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    usage: Usage | None = None

    @field_validator("task_id", mode="before")
    @classmethod
    def _int_task_id(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


def content_text(content: Any) -> str | None:
    """The text of a message's content: a string, or the ``text`` parts of a list joined."""
    if content is None or isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    texts = [
        part["text"]
        for part in content
        if isinstance(part, dict)
        and part.get("type") == "text"
        and isinstance(part.get("text"), str)
    ]
    return "\n".join(texts) if texts else None


def _parse_args(
    arguments: str | dict[str, Any] | None, file: str, record: str | None, field: str
) -> dict[str, Any]:
    if arguments is None:
        return {}
    if isinstance(arguments, dict):
        return arguments
    if not arguments.strip():
        return {}
    try:
        value = json.loads(arguments)
    except json.JSONDecodeError as exc:
        raise InputError(
            file, record, field, f"arguments are not valid JSON: {exc.msg} (column {exc.colno})"
        ) from None
    if not isinstance(value, dict):
        raise InputError(file, record, field, f"arguments must be a JSON object, got {kind(value)}")
    return value


def _sum_usage(messages: Sequence[_Message], file: str, record: str | None, field: str) -> Usage:
    prompt = completion = None
    for i, m in enumerate(messages):
        if not m.usage:
            continue
        for key in ("prompt_tokens", "completion_tokens"):
            value = m.usage.get(key)
            if value is None:
                continue
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise InputError(
                    file, record, f"{field}[{i}].usage.{key}", "expected a non-negative integer"
                )
            if key == "prompt_tokens":
                prompt = (prompt or 0) + value
            else:
                completion = (completion or 0) + value
    turns = sum(1 for m in messages if m.role == "user")
    return Usage(prompt_tokens=prompt, completion_tokens=completion, turns=turns)


def from_openai_messages(
    messages: Sequence[Any],
    *,
    id: str,
    task_id: str,
    trial: int = 0,
    outcome: bool | None = None,
    intent: str | None = None,
    metadata: dict[str, Any] | None = None,
    usage: Usage | None = None,
    file: str = "<messages>",
    record: str | None = None,
    field: str = "messages",
) -> Trajectory:
    """Build a :class:`Trajectory` from OpenAI chat messages (see the module docstring).

    ``usage`` fields that are set override the values derived from the messages. ``file``,
    ``record`` and ``field`` only name the place in errors: a bad message raises
    :class:`InputError` such as ``runs.jsonl: line 4: messages[7].tool_calls[0].function.arguments:
    arguments are not valid JSON: ...``.

    >>> t = from_openai_messages(
    ...     [{"role": "user", "content": "hi"},
    ...      {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
    ...        "function": {"name": "lookup", "arguments": '{"q": 1}'}}]},
    ...      {"role": "tool", "tool_call_id": "c1", "content": "found"},
    ...      {"role": "assistant", "content": "done"}],
    ...     id="a-0", task_id="a")
    >>> [(s.tool, s.args, s.ok, s.output) for s in t.steps], t.final_answer, t.usage.turns
    ([('lookup', {'q': 1}, True, 'found')], 'done', 1)
    """
    if not isinstance(messages, list):
        raise InputError(file, record, field, f"expected a list of messages, got {kind(messages)}")
    try:
        msgs = _MESSAGES.validate_python(messages, strict=True)
    except ValidationError as exc:
        raise validation_error(file, record, exc, field) from None

    steps: list[Step] = []
    answered: list[bool] = []
    pending: dict[str, deque[int]] = {}
    pending_legacy: dict[str, deque[int]] = {}
    first_user: str | None = None
    last_assistant: _Message | None = None
    for i, m in enumerate(msgs):
        where = f"{field}[{i}]"
        if m.role == "user" and first_user is None:
            first_user = content_text(m.content) or ""
        elif m.role == "assistant":
            last_assistant = m
            calls = [
                (f"{where}.tool_calls[{j}].function.arguments", c.id, c.function, pending)
                for j, c in enumerate(m.tool_calls or [])
            ]
            if m.function_call is not None:
                fc = m.function_call
                calls.append((f"{where}.function_call.arguments", None, fc, pending_legacy))
            for args_field, call_id, fn, queues in calls:
                args = _parse_args(fn.arguments, file, record, args_field)
                steps.append(Step(tool=fn.name, args=args, call_id=call_id))
                answered.append(False)
                key = fn.name if queues is pending_legacy else call_id
                if key is not None:
                    queues.setdefault(key, deque()).append(len(steps) - 1)
        elif m.role in ("tool", "function"):
            if m.role == "tool":
                if m.tool_call_id is None:
                    raise InputError(
                        file, record, f"{where}.tool_call_id", "missing on a tool message"
                    )
                key, queue, what = m.tool_call_id, pending.get(m.tool_call_id), "id"
            else:
                if m.name is None:
                    raise InputError(file, record, f"{where}.name", "missing on a function message")
                key, queue, what = m.name, pending_legacy.get(m.name), "name"
            if not queue:
                raise InputError(
                    file,
                    record,
                    f"{where}.tool_call_id" if m.role == "tool" else f"{where}.name",
                    f"no earlier unanswered tool call with {what} {key!r}",
                )
            n = queue.popleft()
            text = content_text(m.content) or ""
            if text.startswith("Error"):
                steps[n] = steps[n].model_copy(update={"ok": False, "error": text})
            else:
                steps[n] = steps[n].model_copy(update={"output": text})
            answered[n] = True
    for n, done in enumerate(answered):
        if not done:
            steps[n] = steps[n].model_copy(update={"ok": False, "error": NO_RESULT})

    derived = _sum_usage(msgs, file, record, field)
    if usage is not None:
        derived = derived.model_copy(update=usage.model_dump(exclude_none=True))
    try:
        return Trajectory(
            id=id,
            task_id=task_id,
            trial=trial,
            input=first_user or "",
            steps=steps,
            final_answer=None if last_assistant is None else content_text(last_assistant.content),
            outcome=outcome,
            usage=derived,
            intent=intent,
            metadata=dict(metadata or {}),
        )
    except ValidationError as exc:
        raise validation_error(file, record, exc) from None


def read_openai(path: str | os.PathLike[str]) -> list[Trajectory]:
    """Read a ``--format openai`` file (JSON Lines or a JSON list; see the module docstring)."""
    p = check_file(path)
    records = load_json_records(p, decode_utf8(p, p.read_bytes()))
    return [t for _, t in openai_from_records(p, records)]


def openai_from_records(path: Path, records: list[Record]) -> list[tuple[str, Trajectory]]:
    items: list[tuple[str, Trajectory]] = []
    for label, obj in records:
        rec = validate(OpenAIRecord, obj, str(path), label)
        t = from_openai_messages(
            rec.messages,
            id=rec.id or f"{rec.task_id}-{rec.trial}",
            task_id=rec.task_id,
            trial=rec.trial,
            outcome=rec.outcome,
            intent=rec.intent,
            metadata=rec.metadata,
            usage=rec.usage,
            file=str(path),
            record=label,
        )
        items.append((label, t))
    if not items:
        raise InputError(str(path), None, None, "no trajectories found")
    check_unique(str(path), items)
    return items
