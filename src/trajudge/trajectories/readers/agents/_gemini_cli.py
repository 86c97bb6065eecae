"""Import Gemini CLI chat sessions (``--format gemini-cli``): ``~/.gemini/tmp/<project>/chats/``.

Two layouts, both read:

* JSON Lines (``session-*.jsonl``, Gemini CLI 0.3x-0.4x on): a metadata record (``sessionId``,
  ``projectHash``, ``startTime``, ``kind``...), then appended records: a message (``id``,
  ``type``, ``content``...; a later record of the same id replaces it in place, so a message is
  written again each time it grows), ``{"$set": {...}}`` (metadata; ``messages`` replaces the
  whole list) and ``{"$rewindTo": id}`` (drops that message and those after it). They are
  replayed as the CLI's ``loadConversationRecord`` replays them, with one difference: a message
  in a ``$set`` list keeps the fields of its earlier record that the list's copy lacks
  (``toolCalls``, ``tokens``, ``thoughts``, ``model``; the CLI drops them when it rewrites the
  list on ``--resume``). A message dropped and never put back is counted as ignored;
* one JSON document (``session-*.json``, older releases): the metadata with ``messages``.

A ``user`` message is a user turn, unless its text is the CLI's ``<session_context>`` /
``<hook_context>`` (a system turn) or it only carries ``functionResponse`` parts (tool results:
each answers the call of its id; a repeat of a result already read is skipped). A ``gemini``
message is an assistant turn: its thoughts (``thought`` parts, else ``thoughts`` as ``**subject**
description``) are turns named ``reasoning``; its calls are its ``functionCall`` parts and its
``toolCalls`` records (one step per id), a record's ``status`` (``success`` or not) and
``result`` answering the call at once. ``info`` / ``warning`` / ``error`` messages are counted as
ignored. Usage sums each gemini message's ``tokens`` once: prompt = ``input`` + ``tool``,
completion = ``output`` + ``thoughts`` (Gemini counts thinking apart from the candidates);
``cached`` / ``thoughts`` / ``tool`` totals are kept in metadata. ``id`` = ``task_id`` = the
``sessionId``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trajudge.core import InputError
from trajudge.trajectories._io import Record, kind
from trajudge.trajectories._models import Trajectory
from trajudge.trajectories._options import Ignored, as_json_text
from trajudge.trajectories.readers._conversation import REASONING, Conversation

#: The texts the CLI puts in user messages itself (its ``isIgnoredUserContent``).
CONTEXT_MARKS = ("<session_context>", "<hook_context>")
_TOKEN_KEYS = ("input", "output", "cached", "thoughts", "tool")


def _bad(file: str, where: str, field: str | None, expected: str, value: Any) -> InputError:
    return InputError(
        file, record=where, field=field, reason=f"expected {expected}, got {kind(value)}"
    )


def is_gemini_session(obj: Any) -> bool:
    """The first record of a session file: its metadata (JSON Lines) or the whole document."""
    return (
        isinstance(obj, dict)
        and isinstance(obj.get("sessionId"), str)
        and isinstance(obj.get("projectHash"), str)
    )


class _Replay:
    """The session's messages as the CLI would load them (see the module docstring)."""

    def __init__(self, file: str, ignored: Ignored) -> None:
        self.file = file
        self.ignored = ignored
        self.meta: dict[str, Any] = {}
        self.messages: dict[str, tuple[str, dict[str, Any]]] = {}  # id -> (where, message)
        self.known: dict[str, tuple[str, dict[str, Any]]] = {}  # every message ever recorded

    def add(self, label: str, rec: Any) -> None:
        if not isinstance(rec, dict):
            raise _bad(self.file, label, None, "an object", rec)
        if "$rewindTo" in rec:
            target = rec["$rewindTo"]
            if not isinstance(target, str):
                raise _bad(self.file, label, "$rewindTo", "a message id", target)
            ids = list(self.messages)
            for gone in ids[ids.index(target) if target in ids else 0 :]:
                del self.messages[gone]
        elif "id" in rec:
            self._message(label, label, rec)
        elif "$set" in rec:
            update = rec["$set"]
            if not isinstance(update, dict):
                raise _bad(self.file, label, "$set", "an object", update)
            self._metadata(label, update, replace=True)
        elif "sessionId" in rec:
            self._metadata(label, rec, replace=False)
        else:
            self.ignored.add("record of an unknown kind", "records of unknown kinds", label)

    def _metadata(self, label: str, update: dict[str, Any], *, replace: bool) -> None:
        # a resumed session writes its metadata again: the first start time stays
        start = self.meta.get("startTime")
        self.meta.update({k: v for k, v in update.items() if k != "messages"})
        if start is not None:
            self.meta["startTime"] = start
        msgs = update.get("messages")
        if msgs is None:
            return
        field = "$set.messages" if replace else "messages"
        if not isinstance(msgs, list):
            raise _bad(self.file, label, field, "a list", msgs)
        if replace:
            self.messages = {}
        for i, m in enumerate(msgs):
            self._message(label, f"{field}[{i}]", m)

    def _message(self, label: str, where: str, m: Any) -> None:
        prefix = "" if where == label else f"{where}."
        if not isinstance(m, dict):
            raise _bad(self.file, label, where, "a message object", m)
        mid = m.get("id")
        if not isinstance(mid, str) or not mid:
            raise _bad(self.file, label, f"{prefix}id", "a message id", mid)
        earlier = self.known.get(mid, ("", {}))[1]
        merged = {**earlier, **m}
        place = label if where == label else f"{label}: {where}"
        self.known[mid] = (place, merged)
        self.messages[mid] = (place, merged)

    def dropped(self) -> None:
        for mid, (where, _) in self.known.items():
            if mid not in self.messages:
                self.ignored.add(
                    "message the CLI dropped (rewound or rolled back)",
                    "messages the CLI dropped (rewound or rolled back)",
                    where,
                )


def _parts(file: str, where: str, content: Any) -> list[dict[str, Any]]:
    """A message's ``content`` (a PartListUnion) as a list of part objects."""
    if content is None:
        return []
    if isinstance(content, str):
        return [{"text": content}]
    if isinstance(content, dict):
        return [content]
    if isinstance(content, list):
        out = []
        for i, p in enumerate(content):
            if isinstance(p, str):
                out.append({"text": p})
            elif isinstance(p, dict):
                out.append(p)
            else:
                raise _bad(file, where, f"content[{i}]", "a part", p)
        return out
    raise _bad(file, where, "content", "text or parts", content)


def _response_text(response: Any) -> tuple[str | None, str | None]:
    """(output, error) of a ``functionResponse.response``."""
    if not isinstance(response, dict):
        return (None if response is None else as_json_text(response)), None
    error = response.get("error")
    if "output" in response:
        output = response["output"]
        return (None if output is None else as_json_text(output)), (
            None if error is None else as_json_text(error)
        )
    if error is not None:
        return None, as_json_text(error)
    return as_json_text(response), None


def _result(result: Any) -> tuple[str | None, str | None]:
    """(output, error) of a ``toolCalls[].result``: parts, a string or null."""
    if result is None or isinstance(result, str):
        return result, None
    outputs: list[str] = []
    errors: list[str] = []
    for part in result if isinstance(result, list) else [result]:
        if isinstance(part, dict) and isinstance(part.get("functionResponse"), dict):
            out, err = _response_text(part["functionResponse"].get("response"))
            outputs += [out] if out is not None else []
            errors += [err] if err is not None else []
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            outputs.append(part["text"])
        else:
            outputs.append(as_json_text(part))
    return ("\n".join(outputs) if outputs else None), ("\n".join(errors) if errors else None)


class _Builder:
    def __init__(self, file: str, ignored: Ignored) -> None:
        self.file = file
        self.ignored = ignored
        self.conv = Conversation()
        self.answered: set[str] = set()  # call ids with a result
        self.tokens: dict[str, int] = dict.fromkeys(_TOKEN_KEYS, 0)
        self.counted = False  # whether any message recorded tokens
        self.models: list[str] = []

    def user(self, where: str, m: dict[str, Any]) -> None:
        texts: list[str] = []
        for i, part in enumerate(_parts(self.file, where, m.get("content"))):
            response = part.get("functionResponse")
            if isinstance(response, dict):
                self._answer(where, i, response)
            elif isinstance(part.get("text"), str):
                texts.append(part["text"])
            else:
                self.ignored.add(
                    "user part that is not text",
                    "user parts that are not text",
                    f"{where}: content[{i}]",
                )
        text = "".join(texts)
        if not text.strip():
            return
        if text.lstrip().startswith(CONTEXT_MARKS):
            self.conv.say("system", text)
        else:
            self.conv.say("user", text)

    def _answer(self, where: str, i: int, response: dict[str, Any]) -> None:
        call_id = response.get("id")
        n = self.conv.pending(call_id=call_id) if isinstance(call_id, str) else None
        if n is not None:
            out, err = _response_text(response.get("response"))
            self._settle(n, out, err, ok=err is None)
        elif not isinstance(call_id, str) or call_id not in self.answered:
            self.ignored.add(
                "tool result answering no call",
                "tool results answering no call",
                f"{where}: content[{i}]",
            )

    def _settle(
        self, n: int, out: str | None, err: str | None, *, ok: bool, status: Any = None
    ) -> None:
        if ok:
            self.conv.result(n, out)
        else:
            error = err or (f"status {status}" if status is not None else "error")
            self.conv.result(n, out, ok=False, error=error)
        call_id = self.conv.steps[n].call_id
        if call_id is not None:
            self.answered.add(call_id)

    def gemini(self, where: str, m: dict[str, Any]) -> None:
        parts = _parts(self.file, where, m.get("content"))
        thoughts = [p["text"] for p in parts if p.get("thought") and isinstance(p.get("text"), str)]
        if not thoughts:
            thoughts = self._thoughts(where, m.get("thoughts"))
        for t in thoughts:
            self.conv.say("assistant", t, name=REASONING)
        text = "".join(
            p["text"] for p in parts if isinstance(p.get("text"), str) and not p.get("thought")
        )
        calls = self._calls(where, parts, m.get("toolCalls"))
        for i, part in enumerate(parts):
            if not isinstance(part.get("text"), str) and not isinstance(
                part.get("functionCall"), dict
            ):
                self.ignored.add(
                    "model part that is not text",
                    "model parts that are not text",
                    f"{where}: content[{i}]",
                )
        if text or calls:
            self.conv.say("assistant", text or None)
        made = []
        for field, call, record in calls:
            name = call.get("name")
            if not isinstance(name, str) or not name:
                raise _bad(self.file, where, f"{field}.name", "a tool name", name)
            args = call.get("args")
            if args is not None and not isinstance(args, dict):
                raise _bad(self.file, where, f"{field}.args", "an object", args)
            call_id = call.get("id") if isinstance(call.get("id"), str) else None
            made.append((self.conv.call(name, dict(args or {}), call_id), record))
        # the results after all the calls: one assistant turn makes them all
        for n, record in made:
            if record is not None and (
                record.get("status") is not None or record.get("result") is not None
            ):
                out, err = _result(record.get("result"))
                status = record.get("status")
                ok = status == "success" or (status is None and err is None)
                self._settle(n, out, err, ok=ok, status=status)
        self._count(where, m)

    def _thoughts(self, where: str, thoughts: Any) -> list[str]:
        if thoughts is None:
            return []
        if not isinstance(thoughts, list):
            raise _bad(self.file, where, "thoughts", "a list", thoughts)
        out = []
        for t in thoughts:
            if isinstance(t, dict):
                subject, description = t.get("subject"), t.get("description") or ""
                out.append(f"**{subject}** {description}" if subject else str(description))
        return [t for t in out if t]

    def _calls(
        self, where: str, parts: list[dict[str, Any]], tool_calls: Any
    ) -> list[tuple[str, dict[str, Any], dict[str, Any] | None]]:
        """(field, call, its toolCalls record) for each call of the message, in order."""
        if tool_calls is not None and not isinstance(tool_calls, list):
            raise _bad(self.file, where, "toolCalls", "a list", tool_calls)
        records: dict[str, tuple[int, dict[str, Any]]] = {}
        for i, tc in enumerate(tool_calls or []):
            if not isinstance(tc, dict):
                raise _bad(self.file, where, f"toolCalls[{i}]", "an object", tc)
            records.setdefault(str(tc.get("id")), (i, tc))
        out: list[tuple[str, dict[str, Any], dict[str, Any] | None]] = []
        used: set[int] = set()
        for i, part in enumerate(parts):
            call = part.get("functionCall")
            if isinstance(call, dict):
                found = records.get(str(call.get("id"))) if "id" in call else None
                if found is not None:
                    used.add(found[0])
                out.append((f"content[{i}].functionCall", call, found[1] if found else None))
        for i, tc in enumerate(tool_calls or []):
            if i not in used:
                out.append((f"toolCalls[{i}]", tc, tc))
        return out

    def _count(self, where: str, m: dict[str, Any]) -> None:
        if isinstance(m.get("model"), str) and m["model"] not in self.models:
            self.models.append(m["model"])
        tokens = m.get("tokens")
        if tokens is None:
            return
        if not isinstance(tokens, dict):
            raise _bad(self.file, where, "tokens", "an object", tokens)
        for key in _TOKEN_KEYS:
            value = tokens.get(key)
            if value is None:
                continue
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise _bad(self.file, where, f"tokens.{key}", "a count", value)
            self.tokens[key] += value
        self.counted = True


def gemini_cli_from_records(
    path: Path, records: list[Record], ignored: Ignored
) -> list[tuple[str, Trajectory]]:
    file = str(path)
    replay = _Replay(file, ignored)
    for label, value in records:
        replay.add(label, value)
    replay.dropped()
    label = records[0][0] if records else "record 0"
    sid = replay.meta.get("sessionId")
    if not isinstance(sid, str) or not sid:
        raise _bad(file, label, "sessionId", "the session id", sid)
    b = _Builder(file, ignored)
    for where, m in replay.messages.values():
        t = m.get("type")
        if t == "user":
            b.user(where, m)
        elif t == "gemini":
            b.gemini(where, m)
        elif t in ("info", "warning", "error"):
            ignored.add(
                "info, warning or error message",
                "info, warning or error messages",
                f"{where} ({t})",
            )
        else:
            ignored.add(
                "message of an unknown type", "messages of unknown types", f"{where} ({t!r})"
            )
    meta: dict[str, Any] = {
        "session_id": sid,
        **{
            out: replay.meta[key]
            for key, out in (
                ("projectHash", "project_hash"),
                ("startTime", "start_time"),
                ("lastUpdated", "last_updated"),
                ("kind", "kind"),
                ("summary", "summary"),
                ("directories", "directories"),
            )
            if replay.meta.get(key) is not None
        },
    }
    if b.models:
        meta["model"] = b.models[-1]
        if len(b.models) > 1:
            meta["models"] = b.models
    tk = b.tokens
    if b.counted:
        meta.update(
            cached_tokens=tk["cached"], thoughts_tokens=tk["thoughts"], tool_tokens=tk["tool"]
        )
    totals: list[int | None] = (
        [tk["input"] + tk["tool"], tk["output"] + tk["thoughts"]] if b.counted else [None, None]
    )
    return [
        (
            label,
            b.conv.trajectory(totals, file=file, record=label, id=sid, task_id=sid, metadata=meta),
        )
    ]
