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

File format (``--format openai``)
---------------------------------
Any of:

* a JSON list (or JSON Lines) of chat messages: one conversation, one trajectory, ``id`` =
  ``task_id`` = the file name without suffix;
* OpenAI fine-tuning JSONL: one ``{"messages": [...], "tools": [...]}`` per line; ``id`` =
  ``task_id`` = ``f"{file stem}-{n}"`` for the n-th line (from 0); likewise JSON Lines whose
  every line is a bare list of messages;
* JSON Lines, or one JSON list, of records::

    {"id": "t1-0",            # optional; default f"{task_id}-{trial}"
     "task_id": "t1",         # optional (an integer is kept as text)
     "trial": 0,              # optional, default 0
     "messages": [...],       # required: the chat messages, system/user/assistant/tool
     "tools": [...],          # optional tool definitions (their names go to metadata.tools)
     "outcome": true,         # optional ground truth
     "intent": "refund",      # optional label
     "metadata": {...},       # optional object
     "usage": {"cost_usd": 0.01, "latency_s": 3.2}}   # optional; overrides summed values

Unknown record keys are errors, so a typo is never silently dropped. ``task_id``, ``trial`` and
``outcome`` missing from the file can be given on the command line or by a mapping.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from trajudge.core import InputError
from trajudge.trajectories._io import (
    Record,
    check_file,
    check_unique,
    kind,
    validate,
    validation_error,
)
from trajudge.trajectories._json import load_json
from trajudge.trajectories._models import Trajectory, Usage
from trajudge.trajectories._options import Ignored
from trajudge.trajectories._stream import iter_json_records
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


class OpenAIRecord(BaseModel):
    """One record of the ``--format openai`` file (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")

    id: str | None = Field(default=None, min_length=1)
    task_id: str | None = Field(default=None, min_length=1)
    trial: int = Field(default=0, ge=0)
    messages: list[Any]
    tools: list[Any] | None = None
    parallel_tool_calls: bool | None = None
    outcome: bool | None = None
    intent: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    usage: Usage | None = None

    @field_validator("task_id", mode="before")
    @classmethod
    def _int_task_id(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


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


def read_openai(path: str | os.PathLike[str]) -> list[Trajectory]:
    """Read a ``--format openai`` file (JSON Lines or a JSON list; see the module docstring)."""
    p = check_file(path)
    return [t for _, t in openai_from_records(p, iter_json_records(p), Ignored())]


def is_chat_message(obj: Any) -> bool:
    """A chat-completions message (or a whole response object) as found in a message list."""
    if not isinstance(obj, dict):
        return False
    if "choices" in obj and obj.get("object") in ("chat.completion", None):
        return isinstance(obj.get("choices"), list)
    return isinstance(obj.get("role"), str) and "type" not in obj and "data" not in obj


def _tool_names(tools: list[Any] | None) -> list[str] | None:
    if not tools:
        return None
    names = []
    for t in tools:
        fn = t.get("function") if isinstance(t, dict) else None
        name = (fn or t).get("name") if isinstance(fn or t, dict) else None
        if isinstance(name, str):
            names.append(name)
    return names


def openai_from_records(
    path: Path, records: Iterable[Record], ignored: Ignored
) -> list[tuple[str, Trajectory]]:
    items = list(iter_openai(path, records, ignored))
    check_unique(str(path), items)
    return items


def iter_openai(
    path: Path, records: Iterable[Record], ignored: Ignored
) -> Iterator[tuple[str, Trajectory]]:
    """Yield the trajectories of a file's records one at a time.

    A file whose first record is a chat message is one conversation: its records are read
    whole (they are one trajectory). Otherwise each record is a conversation of its own.
    Ids are not checked for repeats here (see ``unique_items``).
    """
    file = str(path)
    rest = iter(records)
    first = next(rest, None)
    if first is None:
        raise InputError(file, reason="no trajectories found")
    if is_chat_message(first[1]):
        whole = [first, *rest]
        if all(is_chat_message(obj) for _, obj in whole):
            # the whole file is one conversation: a JSON list (or lines) of chat messages
            yield (
                first[0],
                from_openai_messages(
                    [obj for _, obj in whole],
                    id=path.stem,
                    task_id=path.stem,
                    file=file,
                    record=None,
                    field="messages",
                    ignored=ignored,
                ),
            )
            return
        rest = iter(whole[1:])
    yield first[0], _record(path, 0, *first, ignored)
    for n, (label, obj) in enumerate(rest, start=1):
        yield label, _record(path, n, label, obj, ignored)


def _record(path: Path, n: int, label: str, obj: Any, ignored: Ignored) -> Trajectory:
    """The trajectory of the n-th record: a message list, or an object with ``messages``."""
    file = str(path)
    if isinstance(obj, list):  # JSON Lines of conversations: one message list per line
        default = f"{path.stem}-{n}"
        return from_openai_messages(
            obj, id=default, task_id=default, file=file, record=label, ignored=ignored
        )
    rec = validate(OpenAIRecord, obj, file, label)
    default_id = f"{rec.task_id}-{rec.trial}" if rec.task_id else f"{path.stem}-{n}"
    metadata = dict(rec.metadata)
    names = _tool_names(rec.tools)
    if names is not None:
        metadata.setdefault("tools", names)
    return from_openai_messages(
        rec.messages,
        id=rec.id or default_id,
        task_id=rec.task_id or rec.id or default_id,
        trial=rec.trial,
        outcome=rec.outcome,
        intent=rec.intent,
        metadata=metadata,
        usage=rec.usage,
        file=file,
        record=label,
        ignored=ignored,
    )
