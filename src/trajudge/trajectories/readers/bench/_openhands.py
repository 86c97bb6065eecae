"""Import OpenHands trajectories (``--format openhands``): a JSON list of events.

Both generations of OpenHands are read:

* OpenHands (``openhands-ai``, the saved trajectory / ``save_trajectory_path``): events with
  ``source`` (user · agent · environment) and either ``action`` (``message``, ``run``,
  ``read``, ``edit``, ``browse``, ``finish``, ``think``, ``system``, ...) with ``args``, or
  ``observation`` with ``content`` and ``cause`` (the id of the action it answers). A user
  ``message`` is a user turn; an agent ``message`` / ``think`` an assistant turn; ``system`` the
  system prompt; every other agent action is a step (``tool`` = ``tool_call_metadata.
  function_name``, else the action name; ``args`` = ``args`` without ``thought``, which becomes
  the assistant turn's text); an observation answers its ``cause`` (or ``tool_call_id``), and
  an ``error`` observation makes the step failed; ``finish`` gives the final answer. Usage is
  the last ``llm_metrics.accumulated_token_usage`` and ``accumulated_cost``; a file without
  ``llm_metrics`` sums ``tool_call_metadata.model_response.usage`` once per model response
  (several actions of one response, and their observations, repeat it);
* OpenHands software-agent SDK (``openhands-sdk``, the events of a persisted conversation):
  ``kind`` ``SystemPromptEvent``, ``MessageEvent`` (``llm_message``), ``ActionEvent``
  (``tool_name``, ``tool_call_id``, ``action``, ``thought``), ``ObservationEvent`` (answers
  ``tool_call_id``; ``observation.is_error`` fails it), ``AgentErrorEvent`` and
  ``UserRejectObservation`` (fail the call they name).

Events of other kinds (state changes, condensations, ...) are counted as ignored. One file (or
one SDK ``events`` folder of ``event-*.json`` files) is one trajectory, ``id`` = ``task_id`` = the
file name without suffix (for a folder: the conversation folder's name).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from trajudge.core import InputError
from trajudge.trajectories._io import Record, kind, validation_error
from trajudge.trajectories._models import Trajectory, Usage
from trajudge.trajectories._options import Ignored, as_dict, as_json_text
from trajudge.trajectories.readers._conversation import Conversation

_TEXT_ACTIONS = {"message", "think"}
_BOOKKEEPING = {"agent_state_changed", "null", "change_agent_state", "recall"}


def _sdk_text(value: Any) -> str | None:
    if isinstance(value, dict):
        value = value.get("text", value.get("content"))
    if isinstance(value, list):
        texts = [
            str(p["text"]) for p in value if isinstance(p, dict) and isinstance(p.get("text"), str)
        ]
        return "\n".join(texts) if texts else None
    return value if isinstance(value, str) else None


def _v0(
    conv: Conversation, events: list[tuple[str, dict[str, Any]]], ignored: Ignored
) -> tuple[str | None, list[int | None], float | None]:
    by_event: dict[Any, int] = {}
    final: str | None = None
    tokens: list[int | None] = [None, None]
    cost: float | None = None
    per_response: dict[str, tuple[Any, Any]] = {}  # model response id -> its (prompt, completion)
    for where, e in events:
        response = as_dict(as_dict(e.get("tool_call_metadata")).get("model_response"))
        usage_of = as_dict(response.get("usage"))
        if usage_of and "action" in e:  # its observation repeats the action's metadata
            rid = str(response.get("id") or f"event {e.get('id')}")
            per_response.setdefault(
                rid, (usage_of.get("prompt_tokens"), usage_of.get("completion_tokens"))
            )
        metrics = e.get("llm_metrics")
        if isinstance(metrics, dict):
            usage = metrics.get("accumulated_token_usage") or {}
            for i, key in enumerate(("prompt_tokens", "completion_tokens")):
                if isinstance(usage.get(key), int):
                    tokens[i] = usage[key]
            if isinstance(metrics.get("accumulated_cost"), int | float):
                cost = float(metrics["accumulated_cost"])
        args = as_dict(e.get("args"))
        if "action" in e:
            action = str(e["action"])
            if action == "system":
                conv.say("system", args.get("content") or e.get("message"))
            elif action in _TEXT_ACTIONS:
                text = args.get("content", args.get("thought")) or e.get("message")
                conv.say("user" if e.get("source") == "user" else "assistant", text)
            elif action == "finish":
                final = (
                    args.get("final_thought")
                    or args.get("outputs", {}).get("content")
                    or e.get("message")
                )
                conv.say("assistant", final)
            elif action in _BOOKKEEPING:
                ignored.add("bookkeeping event", "bookkeeping events", f"{where} ({action})")
            else:
                meta = as_dict(e.get("tool_call_metadata"))
                thought = args.get("thought")
                conv.say("assistant", thought or None)
                clean = {k: v for k, v in args.items() if k != "thought"}
                n = conv.call(
                    str(meta.get("function_name") or action), clean, meta.get("tool_call_id")
                )
                by_event[e.get("id")] = n
        elif "observation" in e:
            obs = str(e["observation"])
            found: int | None = by_event.get(e.get("cause"))
            if found is None:
                call_id = as_dict(e.get("tool_call_metadata")).get("tool_call_id")
                found = conv.pending(call_id=str(call_id)) if call_id else None
            if found is None or conv.answered(found):
                ignored.add(
                    "observation answering no action",
                    "observations answering no action",
                    f"{where} ({obs})",
                )
                continue
            conv.result(found, str(e.get("content") or ""), ok=obs != "error")
        else:
            ignored.add("event of a kind not read", "events of kinds not read", where)
    if tokens == [None, None] and per_response:
        # no llm_metrics (older files): each model response's usage, once per response (the
        # actions of one response carry the same one)
        for i in (0, 1):
            counts = [u[i] for u in per_response.values() if isinstance(u[i], int)]
            tokens[i] = sum(counts) if counts else None
    return final, tokens, cost


def _v1(
    conv: Conversation, events: list[tuple[str, dict[str, Any]]], ignored: Ignored
) -> str | None:
    final: str | None = None
    for where, e in events:
        k = e["kind"]
        if k == "SystemPromptEvent":
            conv.say("system", _sdk_text(e.get("system_prompt")))
        elif k == "MessageEvent":
            msg = as_dict(e.get("llm_message"))
            role = msg.get("role") or ("user" if e.get("source") == "user" else "assistant")
            text = _sdk_text(msg.get("content"))
            if role in ("user", "assistant", "system"):
                conv.say(role, text)  # type: ignore[arg-type]
                if role == "assistant":
                    final = text
            else:
                ignored.add("message of an unknown role", "messages of unknown roles", where)
        elif k == "ActionEvent":
            thought = _sdk_text(e.get("thought"))
            conv.say("assistant", thought or None)
            action = as_dict(e.get("action"))
            args = {key: v for key, v in action.items() if key != "kind"}
            name = str(e.get("tool_name") or action.get("kind") or "action")
            conv.call(name, args, e.get("tool_call_id"))
            if name == "finish" and isinstance(action.get("message"), str):
                final = action["message"]
        elif k in ("ObservationEvent", "AgentErrorEvent", "UserRejectObservation"):
            n = (
                conv.pending(call_id=e.get("tool_call_id"))
                if e.get("tool_call_id")
                else conv.pending(tool=e.get("tool_name"))
            )
            if n is None:
                ignored.add(
                    "observation answering no action", "observations answering no action", where
                )
                continue
            if k == "ObservationEvent":
                obs = as_dict(e.get("observation"))
                text = _sdk_text(obs.get("content")) or as_json_text(obs)
                conv.result(n, text, ok=not obs.get("is_error"))
            elif k == "AgentErrorEvent":
                conv.result(n, str(e.get("error") or "agent error"), ok=False)
            else:
                conv.result(
                    n,
                    None,
                    ok=False,
                    error=f"rejected by the user: {e.get('rejection_reason') or ''}".strip(),
                )
        else:
            ignored.add("event of a kind not read", "events of kinds not read", f"{where} ({k})")
    return final


def openhands_from_records(
    path: Path, records: list[Record], ignored: Ignored
) -> list[tuple[str, Trajectory]]:
    file = str(path)
    if len(records) == 1 and isinstance(records[0][1], list):
        label0 = records[0][0]
        events = [(f"{label0}[{i}]", e) for i, e in enumerate(records[0][1])]
    else:
        events = list(records)
    for where, e in events:
        if not isinstance(e, dict):
            raise InputError(file, record=where, reason=f"expected an event object, got {kind(e)}")
    conv = Conversation()
    sdk = any(isinstance(e.get("kind"), str) for _, e in events)
    tokens: list[int | None] = [None, None]
    cost: float | None = None
    if sdk:
        final = _v1(conv, events, ignored)
    else:
        final, tokens, cost = _v0(conv, events, ignored)
    conv.finish()
    label = events[0][0] if events else "record 0"
    name = path.parent.name if path.is_dir() and path.name == "events" else path.stem
    try:
        t = Trajectory(
            id=name,
            task_id=name,
            input=conv.first_user,
            messages=conv.messages,
            steps=conv.steps,
            final_answer=final if final is not None else conv.final_answer,
            usage=Usage(
                prompt_tokens=tokens[0],
                completion_tokens=tokens[1],
                cost_usd=cost,
                turns=conv.user_turns,
            ),
        )
    except ValidationError as exc:
        raise validation_error(file, label, exc) from None
    return [(label, t)]
