"""The census of a Claude Code transcript (see :mod:`trajudge.trajectories._census`): what its
raw records hold, counted by a walk of its own that shares nothing with the reader
(:mod:`trajudge.trajectories.readers.agents._claude_code`, which names it as its census)
that decides what a call or a turn is.
"""

from __future__ import annotations

from typing import Any

from trajudge.trajectories._census import Held

_TOKENS = (
    "input_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "output_tokens",
)
_LOCAL_OUTPUT = ("<local-command-stdout>", "<local-command-stderr>", "<local-command-caveat>")


def census(label: str, value: Any, held: Held) -> None:
    """Count what one record of a Claude Code transcript holds."""
    if not isinstance(value, dict) or value.get("type") not in ("user", "assistant"):
        return
    message = value.get("message")
    if not isinstance(message, dict):
        return
    # the walk's memory, in the census's scratch (one per file)
    state = held.scratch.setdefault(
        "_claude_code", {"file_is_sidechain": None, "usage": {}, "unanswered": {}}
    )
    if state["file_is_sidechain"] is None:
        state["file_is_sidechain"] = value.get("isSidechain") is True
    content = message.get("content")
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
    unanswered: dict[str, int] = state["unanswered"]
    if value["type"] == "assistant":
        for b in blocks:
            if b.get("type") in ("tool_use", "server_tool_use"):
                held.tool_calls += 1
                held.failed_calls += 1  # until a result says otherwise: no result is a failure
                unanswered[str(b.get("id"))] = unanswered.get(str(b.get("id")), 0) + 1
            elif str(b.get("type")).endswith("_tool_result"):
                inner = b.get("content")
                error = isinstance(inner, dict) and str(inner.get("type")).endswith("_error")
                _census_result(unanswered, held, str(b.get("tool_use_id")), error)
        _census_usage(state["usage"], label, message, held)
        return
    results = [b for b in blocks if b.get("type") == "tool_result"]
    for b in results:
        _census_result(unanswered, held, str(b.get("tool_use_id")), b.get("is_error") is True)
    if results:
        return
    text = "".join(str(b.get("text") or "") for b in blocks if b.get("type") == "text")
    not_typed = (
        value.get("isMeta") is True
        or value.get("isCompactSummary") is True
        or value.get("promptSource") == "system"
        or text.startswith("<task-notification>")
        or text.startswith("[Request interrupted by user")
        or text.lstrip().startswith(_LOCAL_OUTPUT)
        # a sub-agent's prompt inside the session file is the model's, not the user's
        or (value.get("isSidechain") is True and not state["file_is_sidechain"])
    )
    if not not_typed:
        held.user_messages += 1


def _census_result(unanswered: dict[str, int], held: Held, call_id: str, error: bool) -> None:
    if unanswered.get(call_id, 0) > 0:
        unanswered[call_id] -= 1
        if not error:
            held.failed_calls -= 1


def _census_usage(
    seen: dict[str, list[int]], label: str, message: dict[str, Any], held: Held
) -> None:
    usage = message.get("usage")
    if not isinstance(usage, dict):
        return
    key = message.get("id") if isinstance(message.get("id"), str) else f"record {label}"
    # every record of one response repeats its usage: add only what grows the largest seen
    best = seen.setdefault(str(key), [-1, -1, -1, -1])
    grow: list[int | None] = []
    for k, name in enumerate(_TOKENS):
        n = usage.get(name)
        if isinstance(n, int) and not isinstance(n, bool) and n > best[k]:
            grow.append(n - max(best[k], 0))
            best[k] = n
        else:
            grow.append(None)
    reads = [g for g in grow[:3] if g is not None]
    held.add_tokens(sum(reads) if reads else None, grow[3])
