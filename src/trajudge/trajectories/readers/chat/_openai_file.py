"""Read ``--format openai`` files: which records they hold and how each becomes a trajectory.

Apart from :mod:`._openai` (one conversation's messages made into a trajectory, which the
other readers share through ``content_text`` and ``parse_args``): this module is the file's
shapes, its record model and detection's test of a chat message.

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

import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from trajudge.core import InputError
from trajudge.trajectories._io import Record, check_file, check_unique, validate
from trajudge.trajectories._models import Trajectory, Usage
from trajudge.trajectories._options import Ignored
from trajudge.trajectories._stream import iter_json_records
from trajudge.trajectories.readers.chat._openai import from_openai_messages


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
