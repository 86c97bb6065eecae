"""One Responses item of a Codex rollout read into the conversation: a message (a user turn,
or a block Codex wrote for the model), a reasoning summary, a tool call or its output, and the
exit code that fails a step (the rules are in :mod:`._codex`'s docstring).

Apart from :mod:`._codex` (the rollout's lines: session meta, models, token counts, and the
rollouts before Codex 0.3x), which reads every item, in both shapes, through :func:`read_item`.
"""

from __future__ import annotations

import re
from typing import Any

from trajudge.core import INPUT_JSON, InputError
from trajudge.trajectories._io import kind
from trajudge.trajectories._options import Ignored, as_dict, as_json_text
from trajudge.trajectories.readers._conversation import REASONING, Conversation
from trajudge.trajectories.readers.chat._openai import content_text, parse_args

CONTEXT = "context"  # the name of a system turn Codex wrote as a user message
_SYSTEM_ROLES = {"developer", "system"}
_TAGGED = re.compile(r"<([A-Za-z_][\w-]*)[\s>]")
_EXIT = re.compile(r"^(?:Exit code:|Process exited with code) (-?\d+)\s*$", re.MULTILINE)


def _is_context(text: str) -> bool:
    """Whether one text part is a block Codex writes for the model (a tagged block or the
    AGENTS.md instructions), as Codex itself tells them apart in files without provenance."""
    text = text.strip()
    if text.startswith("# AGENTS.md instructions for "):
        return True
    m = _TAGGED.match(text)
    return m is not None and text.endswith(f"</{m.group(1)}>")


def _from_user(payload: dict[str, Any]) -> bool:
    meta = as_dict(payload.get("internal_chat_message_metadata_passthrough"))
    parts = meta.get("content_item_metadata")
    said = (
        [as_dict(as_dict(p).get("provenance")).get("type") for p in parts or []]
        if isinstance(parts, list)
        else []
    )
    if any(s is not None for s in said):
        return "user" in said
    content = payload.get("content")
    texts = [
        p["text"]
        for p in (content if isinstance(content, list) else [])
        if isinstance(p, dict) and isinstance(p.get("text"), str)
    ]
    if isinstance(content, str):
        texts = [content]
    return not any(_is_context(t) for t in texts)


def exit_code(text: str) -> int | None:
    """The exit code an output records (see :mod:`._codex`'s docstring), or None."""
    if text.startswith("{"):
        try:
            value = INPUT_JSON.decode(text)
        except (ValueError, RecursionError):  # not JSON after all, or nested past Python's limit
            value = None
        code = as_dict(as_dict(value).get("metadata")).get("exit_code")
        if isinstance(code, int) and not isinstance(code, bool):
            return code
    head = text.split("\nOutput:", 1)[0] if "\nOutput:" in text else text.split("\n", 1)[0]
    m = _EXIT.search(head)
    return int(m.group(1)) if m else None


def _output_text(output: Any) -> str | None:
    if output is None or isinstance(output, str):
        return output
    if isinstance(output, list):  # content items (text and images)
        text = content_text(output)
        return text if text is not None else as_json_text(output)
    return as_json_text(output)


_HOSTED = ("web_search_call", "image_generation_call")  # calls that are their own result


def _call(conv: Conversation, p: dict[str, Any], t: str, file: str, where: str, at: str) -> None:
    call_id = p.get("call_id") or p.get("id")
    call_id = None if call_id is None else str(call_id)
    name: Any = t.removesuffix("_call")
    if t == "function_call":
        name, arguments = p.get("name"), p.get("arguments")
        if arguments is not None and not isinstance(arguments, str | dict):
            raise InputError(
                file,
                record=where,
                field=f"{at}arguments",
                reason=f"expected JSON text, got {kind(arguments)}",
            )
        args = parse_args(arguments, file, where, f"{at}arguments")
    elif t == "custom_tool_call":
        name, args = p.get("name"), {"input": p.get("input")}
    else:  # local_shell_call, web_search_call and calls of kinds not known here
        args = as_dict(p.get("action"))
    if not isinstance(name, str) or not name:
        raise InputError(file, record=where, field=f"{at}name", reason="missing or empty")
    fields: dict[str, Any] = {}
    if t in _HOSTED:
        fields = {"output": None}
        if p.get("status") == "failed":
            fields.update(ok=False, error="status failed")
    conv.call(name, args, call_id, **fields)


def read_item(
    conv: Conversation,
    p: dict[str, Any],
    file: str,
    where: str,
    ignored: Ignored,
    at: str = "payload.",
) -> None:
    """Read one Responses item (``at``: where it sits in the line, for errors)."""
    t = p.get("type")
    if t == "message":
        role = p.get("role")
        text = content_text(p.get("content"), ignored, f"{where}: {at}content")
        if role == "user":
            if _from_user(p):
                conv.say("user", text)
            else:
                conv.say("system", text, name=CONTEXT)
        elif role == "assistant":
            conv.say("assistant", text)
        elif isinstance(role, str) and role in _SYSTEM_ROLES:
            conv.say("system", text)
        else:
            ignored.add("message of an unknown role", "messages of unknown roles", where)
    elif t == "reasoning":
        summary = p.get("summary")
        texts = [
            str(s["text"])
            for s in (summary if isinstance(summary, list) else [])
            if isinstance(s, dict) and isinstance(s.get("text"), str)
        ]
        if texts:
            conv.say("assistant", "\n".join(texts), name=REASONING)
        else:
            ignored.add(
                "reasoning item without a summary", "reasoning items without a summary", where
            )
    elif isinstance(t, str) and t.endswith("_call"):
        _call(conv, p, t, file, where, at)
    elif isinstance(t, str) and t.endswith("_output") and "call_id" in p:
        n = conv.pending(call_id=str(p["call_id"]))
        text = _output_text(p.get("output"))
        if n is None:
            ignored.add("tool output answering no call", "tool outputs answering no call", where)
            conv.result(None, text)
            return
        raw = p.get("output")  # an exit code is told by text only, never by a list or object
        code = exit_code(raw) if isinstance(raw, str) else None
        if code:
            conv.result(n, text, ok=False, error=f"exit code {code}")
        else:
            conv.result(n, text)
    else:
        ignored.add("item of a kind not read", "items of kinds not read", f"{where} ({t})")
