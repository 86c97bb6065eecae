"""The one form every convention's messages are read into, and the helpers they share.

:class:`Msg` is a message with OpenAI-like roles; the helpers turn what a span stored (JSON
text, Python literals, content parts or blocks) into its text, tool calls and arguments.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from typing import Any

from trajudge.core import INPUT_JSON
from trajudge.trajectories._json import json_deeper_than
from trajudge.trajectories._limits import NESTING
from trajudge.trajectories._options import as_dict


@dataclass
class Msg:
    """A message in one normal form: OpenAI-like roles, text, calls, the call it answers."""

    role: str
    text: str | None = None
    calls: list[tuple[str | None, str, dict[str, Any]]] = field(default_factory=list)
    call_id: str | None = None
    name: str | None = None
    failed: bool = False

    def key(self) -> tuple[Any, ...]:
        return (self.role, self.text, [(c[1], c[0]) for c in self.calls], self.call_id)


_ROLES = {
    "user": "user",
    "human": "user",
    "system": "system",
    "developer": "system",
    "assistant": "assistant",
    "model": "assistant",
    "ai": "assistant",
    "tool": "tool",
    "function": "tool",
    "ipython": "tool",
}


def as_text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def parse_json(value: Any) -> Any:
    """JSON text parsed; text that is not JSON, or nests too deep to store, stays text."""
    if not isinstance(value, str):
        return value
    try:
        parsed = INPUT_JSON.decode(value)
    except (json.JSONDecodeError, RecursionError):
        return value
    return value if json_deeper_than(value, NESTING.value) else parsed


def args_of(value: Any) -> dict[str, Any]:
    """Tool arguments as an object: JSON text, a Python dict literal (LangChain), or kept whole."""
    if value is None or value == "":
        return {}
    parsed = parse_json(value)
    if isinstance(parsed, str):
        try:
            parsed = ast.literal_eval(parsed)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return {"input": value}
    if isinstance(parsed, dict):
        return parsed
    return {"input": parsed}


def role_of(value: Any) -> str | None:
    return _ROLES.get(str(value).lower()) if value is not None else None


def content_text(content: Any) -> str | None:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict):
                text = part.get("text", part.get("content"))
                if isinstance(text, str) and part.get("type", "text") in (
                    "text",
                    "input_text",
                    "output_text",
                ):
                    texts.append(text)
        return "\n".join(texts) if texts else None
    return as_text(content)


def openai_calls(calls: Any) -> list[tuple[str | None, str, dict[str, Any]]]:
    out = []
    for c in calls or []:
        if not isinstance(c, dict):
            continue
        fn = as_dict(c.get("function")) or c
        name = fn.get("name")
        if isinstance(name, str) and name:
            out.append((c.get("id"), name, args_of(fn.get("arguments", fn.get("args")))))
    return out


def block_text(content: Any) -> str | None:
    """The text of a tool result's blocks (``text``, or ``json`` as JSON text); a value that is
    not a list of blocks is kept as it is (as text)."""
    value = parse_json(content)
    parts = [
        b["text"] if isinstance(b.get("text"), str) else as_text(b["json"])
        for b in (value if isinstance(value, list) else [])
        if isinstance(b, dict) and ("text" in b or "json" in b)
    ]
    if not parts:
        return as_text(content)
    return "\n".join(p for p in parts if p is not None)
