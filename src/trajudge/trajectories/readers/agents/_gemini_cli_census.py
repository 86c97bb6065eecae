"""The census of a Gemini CLI session file (see :mod:`trajudge.trajectories._census`), written
apart from the reader (:mod:`._gemini_cli`) so that the two can disagree.

A message is written again each time it grows and ``$set`` / ``$rewindTo`` change the list, so
the census keeps the live messages (on the Held it fills, as it is given one record at a time)
and counts them again whenever they change: tool calls (one per call id per gemini message,
from ``functionCall`` parts and ``toolCalls``), failed ones (a ``status`` other than
``success``; without one, an error response or none), user turns (text that is not the CLI's
own context) and each gemini message's ``tokens`` once.
"""

from __future__ import annotations

from typing import Any

from trajudge.trajectories._census import Held

#: The texts the CLI puts in user messages itself (its ``isIgnoredUserContent``).
_CONTEXT = ("<session_context>", "<hook_context>")


def _has_error(result: Any) -> bool:
    parts = result if isinstance(result, list) else [result]
    for p in parts:
        if isinstance(p, dict) and isinstance(p.get("functionResponse"), dict):
            response = p["functionResponse"].get("response")
            if isinstance(response, dict) and response.get("error") is not None:
                return True
    return False


class _Live:
    def __init__(self, held: Held) -> None:
        self.base = (
            held.tool_calls,
            held.failed_calls,
            held.user_messages,
            held.prompt_tokens,
            held.completion_tokens,
        )
        self.alive: dict[str, dict[str, Any]] = {}
        self.seen: dict[str, dict[str, Any]] = {}

    def put(self, m: Any) -> None:
        if isinstance(m, dict) and isinstance(m.get("id"), str):
            m = {**self.seen.get(m["id"], {}), **m}
            self.seen[m["id"]] = self.alive[m["id"]] = m

    def write(self, held: Held) -> None:
        calls: dict[tuple[str, str], Any] = {}  # (message, call id) -> status (None: none)
        errors: set[Any] = set()  # call ids answered with an error
        answered: set[Any] = set()
        users = 0
        prompt = completion = 0
        with_tokens = False
        for mid, m in self.alive.items():
            content = m.get("content")
            parts = content if isinstance(content, list) else [content]
            if m.get("type") == "user":
                text = ""
                for p in parts:
                    if isinstance(p, str):
                        text += p
                    elif isinstance(p, dict) and isinstance(p.get("functionResponse"), dict):
                        answered.add(p["functionResponse"].get("id"))
                        response = p["functionResponse"].get("response")
                        if isinstance(response, dict) and response.get("error") is not None:
                            errors.add(p["functionResponse"].get("id"))
                    elif isinstance(p, dict) and isinstance(p.get("text"), str):
                        text += p["text"]
                if text.strip() and not text.lstrip().startswith(_CONTEXT):
                    users += 1
            elif m.get("type") == "gemini":
                for n, p in enumerate(parts):
                    if isinstance(p, dict) and isinstance(p.get("functionCall"), dict):
                        cid = p["functionCall"].get("id")
                        calls.setdefault((mid, cid if isinstance(cid, str) else f"part {n}"), None)
                for tc in m.get("toolCalls") or []:
                    if isinstance(tc, dict):
                        done = tc.get("status") is not None or tc.get("result") is not None
                        status = tc.get("status") if done else None
                        if done and status is None:
                            status = "error" if _has_error(tc.get("result")) else "success"
                        calls[(mid, str(tc.get("id")))] = status
                tokens = m.get("tokens")
                if isinstance(tokens, dict):
                    with_tokens = True
                    prompt += (tokens.get("input") or 0) + (tokens.get("tool") or 0)
                    completion += (tokens.get("output") or 0) + (tokens.get("thoughts") or 0)
        failed = 0
        for (_, cid), status in calls.items():
            if status is None:
                failed += cid in errors or cid not in answered
            else:
                failed += status != "success"
        b_calls, b_failed, b_users, b_prompt, b_completion = self.base
        held.tool_calls = b_calls + len(calls)
        held.failed_calls = b_failed + failed
        held.user_messages = b_users + users
        held.prompt_tokens, held.completion_tokens = b_prompt, b_completion
        if with_tokens:
            held.add_tokens(prompt, completion)


def census(label: str, value: Any, held: Held) -> None:
    """Count what one record of a session file adds (see :mod:`trajudge.trajectories._census`)."""
    state = held.scratch  # given one record at a time: what it keeps rides in the scratch
    if "_gemini_cli" not in state:
        state["_gemini_cli"] = _Live(held)
    live: _Live = state["_gemini_cli"]
    if not isinstance(value, dict):
        return
    if isinstance(value.get("$rewindTo"), str):
        ids = list(live.alive)
        keep = ids[: ids.index(value["$rewindTo"])] if value["$rewindTo"] in ids else []
        live.alive = {i: live.alive[i] for i in keep}
    elif "id" in value:
        live.put(value)
    else:
        update: dict[str, Any] = value["$set"] if isinstance(value.get("$set"), dict) else value
        if not isinstance(update.get("messages"), list):
            return
        if update is not value:
            live.alive = {}
        for m in update["messages"]:
            live.put(m)
    live.write(held)
