"""Import OpenAI chat-completions conversations as trajectories.

Conversion (:func:`from_openai_messages`)
-----------------------------------------
* Every entry of an assistant message's ``tool_calls`` becomes a :class:`Step`, in order:
  ``tool`` = ``function.name``, ``args`` = ``function.arguments`` parsed as a JSON object
  (an empty string means no arguments), ``call_id`` = the call's ``id``; the assistant turn in
  ``messages`` lists the steps it made.
* A ``role: "tool"`` message is the result of the EARLIEST still-unanswered call with the same
  ``tool_call_id`` (ids are reused within one conversation in real data: τ-bench reuses
  ``call_...`` ids). A result is ``ok`` and stored in ``output``; a result whose text starts with
  ``"Error"`` (the τ-bench convention) gets ``ok=False`` and is stored in ``error``. A call that
  never gets a result gets ``ok=False, error="no tool result"``. A result that answers no pending
  call is an error: the OpenAI API rejects such conversations too.
* The deprecated single ``function_call`` on an assistant message and its ``role: "function"``
  result (paired by function name, earliest unanswered first) are read the same way.
* ``messages`` keeps every system, user, assistant and tool turn in order (``developer`` is
  read as ``system``); ``input`` = the text of the first user message; ``final_answer`` = the
  text of the last assistant message (None when that message only calls tools);
  ``usage.turns`` = the number of user messages; ``usage.prompt_tokens`` /
  ``completion_tokens`` are summed over the messages that carry a ``usage`` object. An entry
  that is a whole response object (``{"object": "chat.completion", "choices": [...],
  "usage": ...}``, as ``litellm`` and the ``openai`` client dump them) is read as its first
  choice's message with the response's usage. Text content given as a list of parts is joined
  from its text parts; other parts (images, audio, files) are counted as ignored.

The file format ``--format openai`` is read by :mod:`._openai_file`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from trajudge.core import InputError
from trajudge.trajectories._io import kind, validation_error
from trajudge.trajectories._json import load_json
from trajudge.trajectories._models import Trajectory, Usage
from trajudge.trajectories._options import Ignored
from trajudge.trajectories.readers._conversation import Conversation

_ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant"}
_TEXT_PARTS = ("text", "input_text", "output_text")


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
    refusal: str | None = None

    @field_validator("content")
    @classmethod
    def _content(cls, value: Any) -> Any:
        return _one_of(value, (str, list), "a string, a list of parts or null")


_MESSAGES = TypeAdapter(list[_Message])


def content_text(
    content: Any, ignored: Ignored | None = None, where: str = "content"
) -> str | None:
    """The text of a message's content: a string, or the text parts of a list joined.

    Parts that are not text (images, audio, files) are counted in ``ignored``.
    """
    if content is None or isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    texts = []
    for i, part in enumerate(content):
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and part.get("type") in _TEXT_PARTS:
            if isinstance(part.get("text"), str):
                texts.append(part["text"])
        elif isinstance(part, dict) and part.get("type") == "refusal":
            texts.append(str(part.get("refusal") or ""))
        elif ignored is not None:
            what = part.get("type", "?") if isinstance(part, dict) else kind(part)
            ignored.add("non-text message part", "non-text message parts", f"{where}[{i}] ({what})")
    return "\n".join(texts) if texts else None


def parse_args(
    arguments: str | dict[str, Any] | None, file: str, record: str | None, field: str
) -> dict[str, Any]:
    """Tool-call arguments as an object: a JSON object as text, an object, or empty."""
    if arguments is None:
        return {}
    if isinstance(arguments, dict):
        return arguments
    if not arguments.strip():
        return {}
    try:
        value = load_json(arguments, file, record, field)
    except json.JSONDecodeError as exc:
        raise InputError(
            file,
            record=record,
            field=field,
            reason=f"arguments are not valid JSON: {exc.msg} (column {exc.colno})",
        ) from None
    if not isinstance(value, dict):
        raise InputError(
            file,
            record=record,
            field=field,
            reason=f"arguments must be a JSON object, got {kind(value)}",
        )
    return value


def _unwrap_response(m: Any) -> Any:
    # a whole chat.completion response object in the list: its first choice's message
    if isinstance(m, dict) and "choices" in m and "role" not in m:
        choices = m.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            msg = dict(choices[0].get("message") or {})
            if isinstance(m.get("usage"), dict):
                msg["usage"] = m["usage"]
            return msg
    return m


def _add_usage(
    totals: list[int | None], usage: dict[str, Any], file: str, record: str | None, where: str
) -> None:
    pairs = (("prompt_tokens", "input_tokens"), ("completion_tokens", "output_tokens"))
    for i, keys in enumerate(pairs):
        for key in keys:
            value = usage.get(key)
            if value is None:
                continue
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise InputError(
                    file,
                    record=record,
                    field=f"{where}.usage.{key}",
                    reason="expected a non-negative integer",
                )
            totals[i] = (totals[i] or 0) + value
            break


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
    ignored: Ignored | None = None,
) -> Trajectory:
    """Build a :class:`Trajectory` from OpenAI chat messages (see the module docstring).

    ``usage`` fields that are set override the values derived from the messages. ``file``,
    ``record`` and ``field`` only name the place in errors: a bad message raises
    :class:`InputError` such as ``runs.jsonl: line 4: messages[7].tool_calls[0].function.arguments:
    arguments are not valid JSON: ...``. Messages of unknown roles and non-text content parts
    are counted in ``ignored``.

    >>> t = from_openai_messages(
    ...     [{"role": "user", "content": "hi"},
    ...      {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
    ...        "function": {"name": "lookup", "arguments": '{"q": 1}'}}]},
    ...      {"role": "tool", "tool_call_id": "c1", "content": "found"},
    ...      {"role": "assistant", "content": "done"}],
    ...     id="a-0", task_id="a")
    >>> [(s.tool, s.args, s.ok, s.output) for s in t.steps], t.final_answer, t.usage.turns
    ([('lookup', {'q': 1}, True, 'found')], 'done', 1)
    >>> [(m.role, m.steps, m.step) for m in t.messages]
    [('user', [], None), ('assistant', [0], None), ('tool', [], 0), ('assistant', [], None)]
    """
    if not isinstance(messages, list):
        raise InputError(
            file,
            record=record,
            field=field,
            reason=f"expected a list of messages, got {kind(messages)}",
        )
    try:
        msgs = _MESSAGES.validate_python([_unwrap_response(m) for m in messages], strict=True)
    except ValidationError as exc:
        raise validation_error(file, record, exc, field) from None

    conv = Conversation()
    totals: list[int | None] = [None, None]
    for i, m in enumerate(msgs):
        where = f"{field}[{i}]"
        if m.usage:
            _add_usage(totals, m.usage, file, record, where)
        text = content_text(m.content, ignored, f"{where}.content")
        if m.role in _ROLES:
            role = _ROLES[m.role]
            if role == "assistant" and text is None and m.refusal:
                text = m.refusal
            conv.say(role, text, name=m.name)  # type: ignore[arg-type]
            if role != "assistant":
                continue
            for j, c in enumerate(m.tool_calls or []):
                args = parse_args(
                    c.function.arguments,
                    file,
                    record,
                    f"{where}.tool_calls[{j}].function.arguments",
                )
                conv.call(c.function.name, args, c.id)
            if m.function_call is not None:
                fc = m.function_call
                args = parse_args(fc.arguments, file, record, f"{where}.function_call.arguments")
                conv.call(fc.name, args, None)
        elif m.role in ("tool", "function"):
            if m.role == "tool":
                if m.tool_call_id is None:
                    raise InputError(
                        file,
                        record=record,
                        field=f"{where}.tool_call_id",
                        reason="missing on a tool message",
                    )
                n = conv.pending(call_id=m.tool_call_id)
                key, what, at = m.tool_call_id, "id", f"{where}.tool_call_id"
            else:
                if m.name is None:
                    raise InputError(
                        file,
                        record=record,
                        field=f"{where}.name",
                        reason="missing on a function message",
                    )
                n = conv.pending(tool=m.name)
                key, what, at = m.name, "name", f"{where}.name"
            if n is None:
                raise InputError(
                    file,
                    record=record,
                    field=at,
                    reason=f"no earlier unanswered tool call with {what} {key!r}",
                )
            body = text or ""
            conv.result(n, body, ok=not body.startswith("Error"))
        elif ignored is not None:
            ignored.add(
                "message of an unknown role",
                "messages of unknown roles",
                f"{record}: {where} ({m.role})",
            )
    return conv.trajectory(
        totals,
        file=file,
        record=record,
        id=id,
        task_id=task_id,
        trial=trial,
        outcome=outcome,
        intent=intent,
        metadata=metadata,
        usage=usage,
    )
