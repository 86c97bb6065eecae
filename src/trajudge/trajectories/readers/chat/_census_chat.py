"""The censuses of the chat-log formats: what an OpenAI, Responses or LangChain file holds.

Each walks the raw records on its own, apart from the reader that builds trajectories from
them (see :mod:`trajudge.trajectories._census`), and never raises: a record it cannot make
sense of holds nothing it can count, and the reader names what is wrong with it.

A conversation is a record's list of entries (``messages`` / ``items``, or the record itself
when it is a list), or, when the file's entries are its records, the whole file. A call counts
as failed when the format marks its result as an error, or when no result answers it.
"""

from __future__ import annotations

from typing import Any

from trajudge.trajectories._census import Held
from trajudge.trajectories._options import as_count

_AGENTS_FAILURE = "An error occurred while running the tool"


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") if isinstance(p, dict) else p for p in content]
        return "".join(p for p in parts if isinstance(p, str))
    return ""


class _Open:
    """Calls made and answers given in the current conversation, by id."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}  # call id -> calls not yet answered
        self.anonymous = 0

    def made(self, call_id: Any) -> None:
        if isinstance(call_id, str):
            self.calls[call_id] = self.calls.get(call_id, 0) + 1
        else:
            self.anonymous += 1

    def answered(self, call_id: Any) -> bool:
        """Whether an open call takes this answer."""
        if isinstance(call_id, str) and self.calls.get(call_id):
            self.calls[call_id] -= 1
            return True
        if self.anonymous:
            self.anonymous -= 1
            return True
        return False

    def unanswered(self) -> int:
        return sum(self.calls.values()) + self.anonymous


def _record_usage(record: Any) -> tuple[int | None, int | None] | None:
    """The tokens a record's own ``usage`` sets (they replace the summed ones), if any."""
    usage = record.get("usage") if isinstance(record, dict) else None
    if not isinstance(usage, dict):
        return None
    prompt, completion = (
        as_count(usage.get("prompt_tokens")),
        as_count(usage.get("completion_tokens")),
    )
    return None if prompt is None and completion is None else (prompt, completion)


def _conversations(value: Any, key: str, is_entry: Any, held: Held) -> list[list[Any]] | None:
    """The conversations a record holds, or None when the record is an entry of the
    conversation that is the whole file (kept open in ``held.scratch``)."""
    if isinstance(value, list):
        return [value]
    if isinstance(value, dict) and isinstance(value.get(key), list):
        return [value[key]]
    if is_entry(value):
        return None
    return []


class _Tally:
    """One conversation's counts, added to the census when the conversation ends."""

    def __init__(self) -> None:
        self.open = _Open()
        self.held = Held()

    def close_all(self, held: Held) -> None:
        """Close a conversation that is the whole file (it has no record of its own)."""
        self.close(held, None)

    def close(self, held: Held, override: tuple[int | None, int | None] | None) -> None:
        held.tool_calls += self.held.tool_calls
        held.failed_calls += self.held.failed_calls + self.open.unanswered()
        held.user_messages += self.held.user_messages
        prompt, completion = self.held.prompt_tokens, self.held.completion_tokens
        if override is not None:
            prompt = override[0] if override[0] is not None else prompt
            completion = override[1] if override[1] is not None else completion
        held.add_tokens(prompt, completion)


def _walk(label: str, value: Any, held: Held, key: str, is_entry: Any, entry: Any) -> None:
    convs = _conversations(value, key, is_entry, held)
    if convs is None:
        # one conversation is the whole file: its tally closes when the census ends
        whole: _Tally | None = held.scratch.get("file")
        if whole is None:
            whole = held.scratch["file"] = _Tally()
            held.finish.append(whole.close_all)
        entry(value, whole)
        return
    for conv in convs:
        tally = _Tally()
        for e in conv:
            if isinstance(e, dict):
                entry(e, tally)
        tally.close(held, _record_usage(value))


def _openai_entry(m: dict[str, Any], tally: _Tally) -> None:
    if "choices" in m and "role" not in m:  # a whole response object
        choices = m.get("choices")
        first = choices[0] if isinstance(choices, list) and choices else None
        message = first.get("message") if isinstance(first, dict) else None
        usage = m.get("usage")
        m = dict(message) if isinstance(message, dict) else {}
        if isinstance(usage, dict):
            m["usage"] = usage
    usage = m.get("usage")
    if isinstance(usage, dict):
        tally.held.add_tokens(
            as_count(usage.get("prompt_tokens", usage.get("input_tokens"))),
            as_count(usage.get("completion_tokens", usage.get("output_tokens"))),
        )
    role = m.get("role")
    if role == "user":
        tally.held.user_messages += 1
    elif role == "assistant":
        for call in m.get("tool_calls") or []:
            tally.held.tool_calls += 1
            tally.open.made(call.get("id") if isinstance(call, dict) else None)
        if isinstance(m.get("function_call"), dict):
            tally.held.tool_calls += 1
            tally.open.made(None)
    elif role in ("tool", "function"):
        tally.open.answered(m.get("tool_call_id") if role == "tool" else None)
        if _text(m.get("content")).startswith("Error"):
            tally.held.failed_calls += 1


def census_openai(label: str, value: Any, held: Held) -> None:
    """Census of ``--format openai``."""

    def is_entry(v: Any) -> bool:
        return isinstance(v, dict) and ("role" in v or "choices" in v)

    _walk(label, value, held, "messages", is_entry, _openai_entry)


# Responses items that are calls answered by a later ``*_output`` item, and those that carry
# their own result
_ANSWERED_LATER = {
    "function_call",
    "custom_tool_call",
    "computer_call",
    "local_shell_call",
    "shell_call",
    "apply_patch_call",
}
_SELF_ANSWERED = {
    "web_search_call",
    "file_search_call",
    "code_interpreter_call",
    "image_generation_call",
    "mcp_call",
}


def _responses_entry(item: dict[str, Any], tally: _Tally) -> None:
    if item.get("object") == "response":
        usage = item.get("usage")
        if isinstance(usage, dict):
            tally.held.add_tokens(
                as_count(usage.get("input_tokens")), as_count(usage.get("output_tokens"))
            )
        for sub in item.get("output") or []:
            if isinstance(sub, dict):
                _responses_entry(sub, tally)
        return
    t = item.get("type")
    failed_status = item.get("status") in ("failed", "incomplete")
    if t in (None, "message") and item.get("role") == "user":
        tally.held.user_messages += 1
    elif t in _ANSWERED_LATER:
        tally.held.tool_calls += 1
        if t in ("function_call", "custom_tool_call"):
            call_id = item.get("call_id")
        else:
            call_id = item.get("call_id") or item.get("id")
        if failed_status and t not in ("function_call", "custom_tool_call"):
            tally.held.failed_calls += 1
        else:
            tally.open.made(None if call_id is None else str(call_id))
    elif t in _SELF_ANSWERED:
        tally.held.tool_calls += 1
        if item.get("error") if t == "mcp_call" else failed_status:
            tally.held.failed_calls += 1
    elif isinstance(t, str) and t.endswith("_call_output"):
        call_id = item.get("call_id")
        answers = call_id is not None and tally.open.answered(str(call_id))
        output = item.get("output")
        text = output if isinstance(output, str) else ""
        if answers and (text.startswith((_AGENTS_FAILURE, "Error")) or failed_status):
            tally.held.failed_calls += 1


def census_responses(label: str, value: Any, held: Held) -> None:
    """Census of ``--format responses``."""

    def is_entry(v: Any) -> bool:
        return isinstance(v, dict) and ("type" in v or "role" in v or v.get("object") == "response")

    _walk(label, value, held, "items", is_entry, _responses_entry)


def _langchain_entry(m: dict[str, Any], tally: _Tally) -> None:
    t = m.get("type")
    raw = m.get("data")
    data: dict[str, Any] = raw if isinstance(raw, dict) else {}
    base = t.removesuffix("MessageChunk").lower() if isinstance(t, str) else None
    if base in ("human", "chat") and (base == "human" or data.get("role") == "user"):
        tally.held.user_messages += 1
    elif base == "ai":
        usage = data.get("usage_metadata")
        if isinstance(usage, dict):
            tally.held.add_tokens(
                as_count(usage.get("input_tokens")), as_count(usage.get("output_tokens"))
            )
        for call in data.get("tool_calls") or []:
            tally.held.tool_calls += 1
            tally.open.made(call.get("id") if isinstance(call, dict) else None)
        invalid = data.get("invalid_tool_calls") or []
        tally.held.tool_calls += len(invalid)
        tally.held.failed_calls += len(invalid)
    elif base == "tool":
        tally.open.answered(data.get("tool_call_id"))
        if data.get("status") == "error":
            tally.held.failed_calls += 1


def census_langchain(label: str, value: Any, held: Held) -> None:
    """Census of ``--format langchain``."""

    def is_entry(v: Any) -> bool:
        return isinstance(v, dict) and "type" in v and "data" in v

    _walk(label, value, held, "messages", is_entry, _langchain_entry)
