"""The census of a Codex CLI rollout (see :mod:`trajudge.trajectories._census`): a walk of its
own over the raw lines, apart from the reader (:mod:`trajudge.trajectories.readers.agents._codex`).
"""

from __future__ import annotations

import re
from typing import Any

from trajudge.core import INPUT_JSON
from trajudge.trajectories._census import Held
from trajudge.trajectories._options import as_count, as_dict

# The census: a walk of its own over the raw lines (see trajudge.trajectories._census). Tool
# calls are ``*_call`` response items; failed calls are outputs whose text records a non-zero
# exit code, and hosted calls whose status is failed; user turns come from the UI events
# (``user_message`` before Codex 0.15x, ``item_completed`` of a ``UserMessage`` after), not
# from the response items the reader takes; tokens are the ``token_usage_record`` lines once
# per response id, else the growth of ``token_count``'s cumulative ``total_token_usage``. The
# little state this needs across lines is kept in the census's scratch (one per file).
# A rollout from before Codex 0.3x (a first line without ``payload`` or ``type``) holds bare
# items, no UI events and no token counts: its user turns are the user messages that are not
# one tagged block Codex wrote for the model, and its tokens stay None.

_CENSUS_EXIT = re.compile(r"(?:Exit code:|Process exited with code) (-?\d+)")
_CENSUS_KEY = "_codex_census"


class _CensusState:
    def __init__(self, held: Held) -> None:
        self.base_users = held.user_messages
        self.legacy_users = 0  # user_message events
        self.item_users = 0  # item_completed events of a UserMessage
        self.responses: set[str] = set()
        self.total = (0, 0)  # the last cumulative (input, output) of token_count
        self.bare: bool | None = None  # whether the lines are bare items (told by the first)


def _state(held: Held, label: str) -> _CensusState:
    state = held.scratch.get(_CENSUS_KEY)
    if not isinstance(state, _CensusState):
        state = held.scratch[_CENSUS_KEY] = _CensusState(held)
    return state


def _census_failed(output: Any) -> bool:
    if not isinstance(output, str):
        return False
    if output.startswith("{"):
        try:
            code = INPUT_JSON.decode(output)["metadata"]["exit_code"]
        except (ValueError, KeyError, TypeError, RecursionError):
            code = None
        if type(code) is int:
            return code != 0
    for line in output.splitlines():
        if line == "Output:":
            break
        m = _CENSUS_EXIT.fullmatch(line.strip())
        if m:
            return int(m.group(1)) != 0
    return False


_CENSUS_BLOCK = re.compile(r"<([A-Za-z_][\w-]*)(?:\s[^>]*)?>.*</\1>", re.DOTALL)


def _census_bare(value: Any, held: Held) -> None:
    """Count one line of a rollout before Codex 0.3x (see the comment above)."""
    if not isinstance(value, dict):
        return
    item = value.get("type")
    if not isinstance(item, str):
        return  # the meta and state lines
    if item.endswith("_call"):
        held.tool_calls += 1
        if item in ("web_search_call", "image_generation_call") and value.get("status") == "failed":
            held.failed_calls += 1
    elif item.endswith("_output") and _census_failed(value.get("output")):
        held.failed_calls += 1
    elif item == "message" and value.get("role") == "user":
        content = value.get("content")
        parts = [content] if isinstance(content, str) else content
        texts = [
            p if isinstance(p, str) else p.get("text")
            for p in (parts if isinstance(parts, list) else [])
            if isinstance(p, str | dict)
        ]
        written = [
            t.strip().startswith("# AGENTS.md instructions for ")
            or _CENSUS_BLOCK.fullmatch(t.strip()) is not None
            for t in texts
            if isinstance(t, str)
        ]
        if not any(written):  # no part is a block Codex wrote for the model
            held.user_messages += 1


def census(label: str, value: Any, held: Held) -> None:
    """Count what one rollout line holds (see the comment above)."""
    state = _state(held, label)
    if state.bare is None:
        state.bare = isinstance(value, dict) and not {"payload", "type"} & set(value)
    if state.bare:
        _census_bare(value, held)
        return
    if not isinstance(value, dict) or not isinstance(value.get("payload"), dict):
        return
    rtype, p = value.get("type"), value["payload"]
    item = p.get("type")
    if rtype == "response_item" and isinstance(item, str):
        if item.endswith("_call"):
            held.tool_calls += 1
            if item in ("web_search_call", "image_generation_call") and p.get("status") == "failed":
                held.failed_calls += 1
        elif item.endswith("_output") and _census_failed(p.get("output")):
            held.failed_calls += 1
    elif rtype == "event_msg" and item == "user_message":
        state.legacy_users += 1
    elif rtype == "event_msg" and item == "item_completed":
        if as_dict(p.get("item")).get("type") == "UserMessage":
            state.item_users += 1
    elif rtype == "token_usage_record":
        rid = str(p.get("response_id") or label)
        usage = as_dict(p.get("usage"))
        if usage and rid not in state.responses:
            state.responses.add(rid)
            held.add_tokens(*(as_count(usage.get(k)) for k in ("input_tokens", "output_tokens")))
    elif rtype == "event_msg" and item == "token_count" and not state.responses:
        total = as_dict(as_dict(p.get("info")).get("total_token_usage"))
        now = (total.get("input_tokens"), total.get("output_tokens"))
        if type(now[0]) is int and type(now[1]) is int and now != state.total:
            # a total that went down started again (a session resumed without its count)
            start = state.total if now[0] >= state.total[0] and now[1] >= state.total[1] else (0, 0)
            held.add_tokens(now[0] - start[0], now[1] - start[1])
            state.total = (now[0], now[1])
    held.user_messages = state.base_users + max(state.legacy_users, state.item_users)
