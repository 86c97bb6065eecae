"""The file shapes shared by the chat-log readers (Responses API items, LangChain dumps).

A file holds either

* one conversation: a JSON list (or JSON Lines) of the reader's items, read as one trajectory
  with ``id`` = ``task_id`` = the file name without suffix;
* one conversation per line: JSON Lines whose every line is a list of items; ``id`` =
  ``task_id`` = ``f"{file stem}-{n}"`` for the n-th line (from 0);
* records: JSON Lines (or a JSON list) of objects holding the items under ``key`` and, optional,
  ``id``, ``task_id``, ``trial``, ``outcome``, ``intent``, ``metadata`` and ``usage`` as in the
  ``openai`` format. Unknown record keys are errors.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from trajudge.core import InputError
from trajudge.trajectories._io import Record, kind, validate
from trajudge.trajectories._models import Trajectory, Usage
from trajudge.trajectories.readers._conversation import Conversation


@dataclass
class ChatRecord:
    """One conversation found in a file, with what the file says about it."""

    label: str
    where: str  # where the items are, for errors: "items" or "messages"
    items: list[Any]
    id: str
    task_id: str
    trial: int = 0
    outcome: bool | None = None
    intent: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    usage: Usage | None = None

    def trajectory(self, conv: Conversation, totals: list[int | None], file: str) -> Trajectory:
        """The finished ``conv`` as this record's trajectory (see
        :meth:`Conversation.trajectory`)."""
        return conv.trajectory(
            totals,
            file=file,
            record=self.label,
            id=self.id,
            task_id=self.task_id,
            trial=self.trial,
            outcome=self.outcome,
            intent=self.intent,
            metadata=self.metadata,
            usage=self.usage,
        )


class _Meta(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str | None = Field(default=None, min_length=1)
    task_id: str | None = Field(default=None, min_length=1)
    trial: int = Field(default=0, ge=0)
    outcome: bool | None = None
    intent: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    usage: Usage | None = None

    @field_validator("task_id", mode="before")
    @classmethod
    def _int_task_id(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


def chat_records(
    path: Path, records: Iterable[Record], is_item: Callable[[Any], bool], key: str
) -> list[ChatRecord]:
    """Split a file's records into conversations (see the module docstring)."""
    return list(iter_chat_records(path, records, is_item, key))


def iter_chat_records(
    path: Path, records: Iterable[Record], is_item: Callable[[Any], bool], key: str
) -> Iterator[ChatRecord]:
    """:func:`chat_records` one conversation at a time: a file whose first record is an item
    is one conversation (read whole); otherwise each record is one."""
    file = str(path)
    rest = iter(records)
    first = next(rest, None)
    if first is None:
        raise InputError(file, reason="no trajectories found")
    if is_item(first[1]):
        whole = [first, *rest]
        if all(is_item(obj) for _, obj in whole):
            yield ChatRecord(first[0], key, [obj for _, obj in whole], path.stem, path.stem)
            return
        rest = iter(whole[1:])
    yield _conversation(path, 0, *first, key)
    for n, (label, obj) in enumerate(rest, start=1):
        yield _conversation(path, n, label, obj, key)


def _conversation(path: Path, n: int, label: str, obj: Any, key: str) -> ChatRecord:
    file = str(path)
    default = f"{path.stem}-{n}"
    if isinstance(obj, list):
        return ChatRecord(label, key, obj, default, default)
    if not isinstance(obj, dict) or key not in obj:
        raise InputError(
            file,
            record=label,
            field=key,
            reason=f"missing: expected a list of items or an object with {key!r}, got {kind(obj)}",
        )
    items = obj[key]
    if not isinstance(items, list):
        raise InputError(
            file, record=label, field=key, reason=f"expected a list, got {kind(items)}"
        )
    meta = validate(_Meta, {k: v for k, v in obj.items() if k != key}, file, label)
    tid = meta.id or (f"{meta.task_id}-{meta.trial}" if meta.task_id else default)
    return ChatRecord(
        label,
        key,
        items,
        tid,
        meta.task_id or tid,
        meta.trial,
        meta.outcome,
        meta.intent,
        dict(meta.metadata),
        meta.usage,
    )
