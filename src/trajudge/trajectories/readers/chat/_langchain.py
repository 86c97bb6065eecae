"""Import LangChain message dumps, as ``langchain_core.messages.messages_to_dict`` writes them.

Each message is ``{"type": "human" | "ai" | "system" | "tool" | "function" | "chat" (or a
``...MessageChunk`` type), "data": {...}}`` (``--format langchain``; file shapes as in
:mod:`trajudge.trajectories.readers.chat._chatlog`, the record key being ``messages``):

* ``ai`` messages: ``data.tool_calls`` (``name``, ``args``, ``id``) become steps of that turn;
  ``data.invalid_tool_calls`` (arguments the model wrote that do not parse) become failed steps
  whose error names the problem and keeps the raw arguments; ``data.usage_metadata``
  (``input_tokens`` / ``output_tokens``) is summed into the usage;
* ``tool`` messages answer the earliest unanswered call with the same ``tool_call_id``;
  ``status: "error"`` makes the step failed with the content as its error;
* ``human`` / ``system`` / ``chat`` (by its ``role``) are user / system turns; content given as
  a list of blocks keeps its text blocks; ``tool_use`` blocks of an ``ai`` message are already in
  ``tool_calls``; other blocks are counted as ignored.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from trajudge.core import InputError
from trajudge.trajectories._io import Record, kind
from trajudge.trajectories._models import Trajectory
from trajudge.trajectories._options import Ignored, as_json_text
from trajudge.trajectories.readers._conversation import Conversation
from trajudge.trajectories.readers.chat._chatlog import ChatRecord, iter_chat_records
from trajudge.trajectories.readers.chat._openai import content_text

_TYPES = {
    "human": "user",
    "ai": "assistant",
    "system": "system",
    "tool": "tool",
    "function": "function",
    "chat": "chat",
}


def _kind(obj: Any) -> str | None:
    t = obj.get("type") if isinstance(obj, dict) else None
    if not isinstance(t, str):
        return None
    if t.endswith("MessageChunk"):
        t = t[: -len("MessageChunk")].lower()
    return _TYPES.get(t)


def is_langchain_message(obj: Any) -> bool:
    """A ``messages_to_dict`` entry: ``{"type": ..., "data": {...}}``."""
    return isinstance(obj, dict) and isinstance(obj.get("data"), dict) and _kind(obj) is not None


def _text(content: Any, ignored: Ignored, where: str) -> str | None:
    if isinstance(content, list):
        # tool_use blocks repeat the message's tool_calls; they are not lost
        content = [b for b in content if not (isinstance(b, dict) and b.get("type") == "tool_use")]
    return content_text(content, ignored, where)


def from_langchain(rec: ChatRecord, file: str, ignored: Ignored) -> Trajectory:
    conv = Conversation()
    totals: list[int | None] = [None, None]
    for i, msg in enumerate(rec.items):
        where = f"{rec.where}[{i}]"
        if not is_langchain_message(msg):
            raise InputError(
                file,
                record=rec.label,
                field=where,
                reason=f"expected a messages_to_dict entry {{type, data}}, got {kind(msg)}",
            )
        role = _kind(msg)
        data = msg["data"]
        text = _text(data.get("content"), ignored, f"{rec.label}: {where}.data.content")
        name = data.get("name") if isinstance(data.get("name"), str) else None
        if role == "chat":
            role = {
                "user": "user",
                "human": "user",
                "assistant": "assistant",
                "ai": "assistant",
            }.get(str(data.get("role")), "system" if data.get("role") == "system" else None)
            if role is None:
                ignored.add(
                    "chat message of an unknown role",
                    "chat messages of unknown roles",
                    f"{rec.label}: {where}",
                )
                continue
        if role in ("user", "system"):
            conv.say(role, text, name=name)  # type: ignore[arg-type]
        elif role == "assistant":
            conv.say("assistant", text or None, name=name)
            usage = data.get("usage_metadata") or {}
            for j, key in enumerate(("input_tokens", "output_tokens")):
                value = usage.get(key)
                if isinstance(value, int) and not isinstance(value, bool):
                    totals[j] = (totals[j] or 0) + value
            for j, call in enumerate(data.get("tool_calls") or []):
                if not isinstance(call, dict) or not isinstance(call.get("name"), str):
                    raise InputError(
                        file,
                        record=rec.label,
                        field=f"{where}.data.tool_calls[{j}].name",
                        reason="missing",
                    )
                args = call.get("args") or {}
                if not isinstance(args, dict):
                    raise InputError(
                        file,
                        record=rec.label,
                        field=f"{where}.data.tool_calls[{j}].args",
                        reason=f"expected an object, got {kind(args)}",
                    )
                conv.call(call["name"], args, call.get("id"))
            for call in data.get("invalid_tool_calls") or []:
                if not isinstance(call, dict):
                    continue
                reason = call.get("error") or "invalid tool call"
                conv.call(
                    str(call.get("name") or "(unnamed tool)"),
                    {},
                    call.get("id"),
                    ok=False,
                    error=f"{reason}; arguments as written: {as_json_text(call.get('args'))}",
                )
        else:  # tool / function results
            call_id = data.get("tool_call_id")
            n = (
                conv.pending(call_id=str(call_id))
                if call_id is not None
                else conv.pending(tool=name)
            )
            if n is None:
                ignored.add(
                    "tool message answering no call",
                    "tool messages answering no call",
                    f"{rec.label}: {where}",
                )
                conv.result(None, text, name=name)
                continue
            failed = data.get("status") == "error"
            conv.result(n, text or "", ok=not failed)
    return rec.trajectory(conv, totals, file)


def iter_langchain(
    path: Path, records: Iterable[Record], ignored: Ignored
) -> Iterator[tuple[str, Trajectory]]:
    """One trajectory per conversation, one at a time (ids not checked for repeats here)."""
    file = str(path)
    for rec in iter_chat_records(path, records, is_langchain_message, "messages"):
        yield rec.label, from_langchain(rec, file, ignored)
