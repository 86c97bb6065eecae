"""Import OpenAI Codex CLI rollouts (``--format codex``): ``~/.codex/sessions/.../rollout-*.jsonl``.

Each line is ``{"timestamp", "type", "payload"}``; one file is one session, and a session
resumed with ``codex exec resume`` / ``codex resume`` goes on in the same file. What is read:

* ``session_meta``: the trajectory's ``id`` (= ``task_id``, the session id); ``cwd``,
  ``cli_version``, ``originator``, ``source``, ``model_provider`` into metadata; its
  ``base_instructions`` (the system prompt) and ``instructions`` become system turns so named;
  ``turn_context``: the ``model`` (every model, in order, when it changed: ``models``);
* ``response_item`` (Responses API items, what the model was given and gave):

  - ``message``: role ``user`` is a user turn, unless Codex wrote it for the model (the
    environment, AGENTS.md or skill instructions, an interrupted-turn marker...): those carry
    a ``provenance`` other than ``user`` (Codex 0.15x on), or, in older files, are one tagged
    block (``<environment_context>...</environment_context>``, ``# AGENTS.md instructions
    for ...``) and become system turns named ``context``; role ``developer`` / ``system`` is a
    system turn, ``assistant`` an assistant turn;
  - ``reasoning``: its summary text is an assistant turn named ``reasoning`` (an encrypted
    reasoning item without a summary is counted as ignored);
  - every ``*_call`` item is a step of the current assistant turn: ``function_call``
    (``arguments`` JSON text), ``custom_tool_call`` (``{"input": ...}``), ``local_shell_call``
    and ``web_search_call`` (their ``action``), any other (``{}``); ``*_call_output`` /
    ``*_output`` items answer the earliest unanswered call with the same ``call_id``;
* usage: ``token_usage_record`` lines (Codex 0.15x on; one per model response, keyed by
  ``response_id``), else ``event_msg`` ``token_count``: its ``last_token_usage`` counted once
  per change of the cumulative ``total_token_usage`` (Codex writes the same count again on
  UI and rate-limit refreshes). Prompt tokens are ``input_tokens`` (cached ones included,
  also kept as ``metadata.cached_tokens``), completion tokens ``output_tokens`` (reasoning
  included, also ``metadata.reasoning_tokens``).

A step FAILED when its output records a non-zero exit code: ``Exit code: N`` (the shell
tool), ``Process exited with code N`` (``exec_command``) in the header above ``Output:``, or
``metadata.exit_code`` of the JSON the shell tool wrote before Codex 0.4x. Codex marks no
other tool result as an error, so nothing else fails a step.

``event_msg`` lines repeat the response items for the UI (``user_message``, ``agent_message``,
``item_completed``, ``exec_command_end``...) or mark turns (``task_started``,
``task_complete``...): they are not read again; the census counts user turns from them.
Record and event kinds not listed here, ``compacted`` summaries and further ``session_meta``
lines are counted as ignored.

Rollouts of the Rust CLI before Codex 0.3x (npm ``0.1.2505291658`` to ``0.29.0``) are read too:
their first line is the session meta itself (``{"id", "timestamp", "instructions", "git"}``:
keys of that set only, a UUID ``id``, which is how such a file is told from a file of
Responses items) and each other line a bare Responses item, read as ``response_item`` payloads
are above, or a ``{"record_type": "state"}`` line (bookkeeping, skipped). They record no model
and no token usage, so both token totals are None; the AGENTS.md text is the meta's
``instructions`` (a system turn so named) and, from 0.2x, also a ``<user_instructions>`` user
message, which is a ``context`` system turn like ``<environment_context>``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from trajudge.core import InputError
from trajudge.trajectories._io import Record, kind
from trajudge.trajectories._models import Trajectory
from trajudge.trajectories._options import Ignored, as_dict
from trajudge.trajectories.readers._conversation import Conversation
from trajudge.trajectories.readers.agents._codex_items import read_item

# event_msg kinds that repeat response items or mark turns: not read again (see docstring)
_EVENT_COPIES = frozenset(
    {
        "user_message", "agent_message", "agent_reasoning", "agent_reasoning_raw_content",
        "item_completed", "exec_command_end", "patch_apply_end", "mcp_tool_call_end",
        "web_search_end", "image_generation_end", "task_started", "task_complete",
        "turn_started", "turn_complete", "turn_aborted", "thread_settings_applied",
        "context_compacted", "entered_review_mode", "exited_review_mode", "undo_completed",
        "thread_goal_updated", "thread_rolled_back", "sub_agent_activity", "token_count",
    }
)  # fmt: skip
_META_KEYS = ("cwd", "cli_version", "originator", "source", "model_provider", "timestamp")
_BOOKKEEPING = frozenset({"world_state", "turn_context", "inter_agent_communication"})


_LEGACY_META = frozenset({"id", "timestamp", "instructions", "git"})
_UUID = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")


def is_codex_rollout(obj: Any) -> bool:
    """The first line of a rollout: ``{"type": "session_meta", "payload": {...}}``, or before
    Codex 0.3x the session meta itself (see :func:`is_legacy_meta`)."""
    return (
        isinstance(obj, dict)
        and obj.get("type") == "session_meta"
        and isinstance(obj.get("payload"), dict)
    ) or is_legacy_meta(obj)


def is_legacy_meta(obj: Any) -> bool:
    """The first line of a rollout before Codex 0.3x: ``{"id", "timestamp", ...}``, keys of
    the session meta only (a Responses item has a ``type``, trajudge's records no
    ``timestamp``), with a UUID ``id``."""
    return (
        isinstance(obj, dict)
        and set(obj) <= _LEGACY_META
        and isinstance(obj.get("id"), str)
        and _UUID.fullmatch(obj["id"]) is not None
        and isinstance(obj.get("timestamp"), str)
    )


def _legacy_first(obj: Any) -> bool:
    """Whether a first line is read as the older shape: an object without Codex's
    ``{type, payload}`` wrapper (its meta is checked where it is read)."""
    return isinstance(obj, dict) and "payload" not in obj and "type" not in obj


class _Tokens:
    """Token counts once per model response (see the module docstring)."""

    def __init__(self) -> None:
        self.records: dict[str, dict[str, Any]] = {}  # response id -> usage
        self.counts: list[dict[str, Any]] = []  # last_token_usage of each new total
        self._total: Any = None

    def record(self, payload: dict[str, Any], where: str) -> None:
        usage = as_dict(payload.get("usage"))
        if usage:
            self.records.setdefault(str(payload.get("response_id") or where), usage)

    def count(self, payload: dict[str, Any]) -> None:
        info = as_dict(payload.get("info"))
        total, last = info.get("total_token_usage"), as_dict(info.get("last_token_usage"))
        if last and total is not None and total != self._total:
            self.counts.append(last)
            self._total = total

    def usage(self) -> tuple[list[int | None], dict[str, int]]:
        per_response = list(self.records.values()) if self.records else self.counts
        sums: dict[str, int | None] = {}
        for key in ("input_tokens", "output_tokens", "cached_input_tokens"):
            values = [u[key] for u in per_response if _count(u.get(key))]
            sums[key] = sum(values) if values else None
        reasoning = [u.get("reasoning_output_tokens") for u in per_response]
        extra = {"model_responses": len(per_response)} if per_response else {}
        if sums["cached_input_tokens"] is not None:
            extra["cached_tokens"] = sums["cached_input_tokens"]
        if reasoning and all(_count(r) for r in reasoning):
            extra["reasoning_tokens"] = sum(int(r or 0) for r in reasoning)
        return [sums["input_tokens"], sums["output_tokens"]], extra


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def codex_from_records(
    path: Path, records: list[Record], ignored: Ignored
) -> list[tuple[str, Trajectory]]:
    file = str(path)
    if records and _legacy_first(records[0][1]):
        return _legacy_from_records(file, records, ignored)
    conv = Conversation()
    tokens = _Tokens()
    meta: dict[str, Any] = {}
    models: list[str] = []
    session: str | None = None
    label = records[0][0] if records else "line 1"
    for where, rec in records:
        if not isinstance(rec, dict) or not isinstance(rec.get("type"), str):
            raise InputError(
                file,
                record=where,
                field="type",
                reason=f"expected a rollout line {{type, payload}}, got {kind(rec)}",
            )
        p = rec.get("payload")
        if not isinstance(p, dict):
            raise InputError(
                file, record=where, field="payload", reason=f"expected an object, got {kind(p)}"
            )
        rtype = rec["type"]
        if rtype == "session_meta":
            if session is not None:
                ignored.add("further session_meta line", "further session_meta lines", where)
                continue
            sid = p.get("id", p.get("session_id"))
            if not isinstance(sid, str) or not sid:
                raise InputError(
                    file, record=where, field="payload.id", reason="missing or empty session id"
                )
            session, label = sid, where
            # the system prompt Codex sent (``base_instructions``; ``instructions``: AGENTS.md)
            _system_prompt(conv, p, ("base_instructions", "instructions"))
            for key in _META_KEYS:
                if isinstance(p.get(key), str):
                    meta[key] = p[key]
        elif rtype == "turn_context":
            model = p.get("model")
            if isinstance(model, str) and model not in models:
                models.append(model)
        elif rtype == "token_usage_record":
            tokens.record(p, where)
        elif rtype == "event_msg":
            t = p.get("type")
            if t == "token_count":
                tokens.count(p)
            elif not isinstance(t, str) or t not in _EVENT_COPIES:
                ignored.add(
                    "event of a kind not read", "events of kinds not read", f"{where} ({t})"
                )
        elif rtype == "response_item":
            read_item(conv, p, file, where, ignored)
        elif rtype == "compacted":  # the summary that replaced the history before it
            ignored.add("compaction summary", "compaction summaries", where)
        elif rtype not in _BOOKKEEPING:
            ignored.add("line of a kind not read", "lines of kinds not read", f"{where} ({rtype})")
    if session is None:
        raise InputError(
            file,
            record=label,
            field="session_meta",
            reason="no session_meta line: not a Codex rollout",
        )
    totals, extra = tokens.usage()
    if models:
        meta["model"] = models[0]
        if len(models) > 1:
            meta["models"] = models
    meta.update(extra)
    t = conv.trajectory(totals, file=file, record=label, id=session, task_id=session, metadata=meta)
    return [(label, t)]


def _system_prompt(conv: Conversation, meta: dict[str, Any], keys: tuple[str, ...]) -> None:
    """The system prompt a session meta holds, as system turns named by their keys."""
    for key in keys:
        value = meta.get(key)
        text = as_dict(value).get("text") if isinstance(value, dict) else value
        if isinstance(text, str) and text:
            conv.say("system", text, name=key)


def _legacy_from_records(
    file: str, records: list[Record], ignored: Ignored
) -> list[tuple[str, Trajectory]]:
    """A rollout before Codex 0.3x (see the module docstring): the meta line, then items."""
    label, first = records[0]
    sid = first.get("id")
    if not isinstance(sid, str) or not sid:
        raise InputError(file, record=label, field="id", reason="missing or empty session id")
    conv = Conversation()
    _system_prompt(conv, first, ("instructions",))
    meta = {"timestamp": first["timestamp"]} if isinstance(first.get("timestamp"), str) else {}
    # These versions write each call's output right after the call, so the calls of one model
    # response interleave with their outputs; the outputs are read after the run of calls and
    # outputs they sit in (a state line or any other item ends it), so that those calls make
    # one assistant turn, as they do in later files.
    outputs: list[tuple[str, dict[str, Any]]] = []
    for where, rec in records[1:]:
        t = rec.get("type") if isinstance(rec, dict) else None
        if isinstance(t, str) and t.endswith("_output") and "call_id" in rec:
            outputs.append((where, rec))
            continue
        if not (isinstance(t, str) and t.endswith("_call")):
            for out in outputs:
                read_item(conv, out[1], file, out[0], ignored, at="")
            outputs.clear()
        if not isinstance(rec, dict):
            raise InputError(
                file,
                record=where,
                field="type",
                reason=f"expected a Responses item, got {kind(rec)}",
            )
        if "record_type" in rec:  # ``state``: the previous response id, for resuming
            if rec["record_type"] != "state":
                what = f"{where} ({rec['record_type']})"
                ignored.add("line of a kind not read", "lines of kinds not read", what)
        elif is_legacy_meta(rec):
            ignored.add("further session meta line", "further session meta lines", where)
        elif isinstance(t, str):
            read_item(conv, rec, file, where, ignored, at="")
        else:
            raise InputError(
                file,
                record=where,
                field="type",
                reason=f"expected a Responses item's type, got {kind(t)}",
            )
    for out in outputs:
        read_item(conv, out[1], file, out[0], ignored, at="")
    t = conv.trajectory([None, None], file=file, record=label, id=sid, task_id=sid, metadata=meta)
    return [(label, t)]
