"""Import SWE-agent ``.traj`` files (``--format swe-agent``).

A ``.traj`` file is one JSON object ``{"trajectory": [...], "history": [...], "info": {...}}``
and becomes one trajectory:

* ``id`` = ``task_id`` = the file name without ``.traj`` (SWE-agent names it after the
  instance id);
* each ``trajectory`` entry is a step: ``output`` = its ``observation``, ``latency_ms`` =
  ``execution_time``; the tool and arguments are those of the matching assistant message's
  ``tool_calls`` in ``history`` (function-calling agents), else the first word of ``action``
  with ``{"command": action}``. Its ``thought`` is the assistant turn that made the step;
* ``messages``: the system prompt and the task (the first user message of ``history`` that is
  not a demonstration), then one assistant and one tool turn per step. Demonstration messages
  (``is_demo``) are part of the prompt, not of this run, and are counted as ignored;
* ``final_answer`` = ``info.submission`` (the patch); ``usage`` from ``info.model_stats``
  (``tokens_sent``, ``tokens_received``, ``instance_cost``, ``api_calls``);
  ``metadata.exit_status``; ``outcome`` is unknown (SWE-bench grades patches separately): give
  it with ``--outcome`` or a mapping.

A file with ``history`` and no ``trajectory`` (SWE-agent's demonstrations are written so) is
read from its messages alone: each assistant message's ``tool_calls`` are its steps (else its
``action``, as above), answered by the ``tool`` message naming their ids in ``tool_call_ids``
(else by the observation that follows); the assistant text is the turn's thought.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from trajudge.core import InputError
from trajudge.trajectories._io import Record, kind, validation_error
from trajudge.trajectories._models import Trajectory, Usage
from trajudge.trajectories._options import Ignored, as_dict
from trajudge.trajectories.readers._conversation import Conversation
from trajudge.trajectories.readers.chat._openai import content_text, parse_args


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def swe_agent_from_records(
    path: Path, records: list[Record], ignored: Ignored
) -> list[tuple[str, Trajectory]]:
    file = str(path)
    if len(records) != 1:
        raise InputError(file, record=records[1][0], reason="a .traj file is one JSON object")
    label, doc = records[0]
    steps_in = doc.get("trajectory") if isinstance(doc, dict) else None
    history_only = isinstance(doc, dict) and "trajectory" not in doc
    if not isinstance(steps_in, list) and not history_only:
        raise InputError(
            file, record=label, field="trajectory", reason=f"expected a list, got {kind(steps_in)}"
        )
    history = doc.get("history") if isinstance(doc.get("history"), list) else []
    if history_only and not history:
        raise InputError(file, record=label, field="history", reason="no trajectory and no history")
    info = as_dict(doc.get("info"))
    conv = Conversation()
    system = next((h for h in history if isinstance(h, dict) and h.get("role") == "system"), None)
    if system is not None:
        conv.say(
            "system", content_text(system.get("content"), ignored, f"{label}: history (system)")
        )
    assistants: list[dict[str, Any]] = []
    task: str | None = None
    for i, h in enumerate(history):
        if not isinstance(h, dict):
            continue
        if h.get("is_demo"):
            ignored.add("demonstration message", "demonstration messages", f"{label}: history[{i}]")
            continue
        if h.get("role") == "user" and task is None:
            task = content_text(h.get("content"), ignored, f"{label}: history[{i}].content")
        elif h.get("role") == "assistant":
            assistants.append(h)
    conv.say("user", task or "")
    if not isinstance(steps_in, list):
        _history_steps(conv, history, file, label, ignored)
        steps_in = []
    use_calls = len(assistants) == len(steps_in)
    for i, entry in enumerate(steps_in):
        where = f"trajectory[{i}]"
        if not isinstance(entry, dict):
            raise InputError(
                file, record=label, field=where, reason=f"expected an object, got {kind(entry)}"
            )
        action = entry.get("action")
        if not isinstance(action, str):
            raise InputError(
                file,
                record=label,
                field=f"{where}.action",
                reason=f"expected a string, got {kind(action)}",
            )
        action = action.rstrip("\n")  # SWE-agent ends every action with a newline
        calls = (assistants[i].get("tool_calls") or []) if use_calls else []
        if calls and isinstance(calls[0], dict) and isinstance(calls[0].get("function"), dict):
            fn = calls[0]["function"]
            tool = str(fn.get("name") or "")
            args = parse_args(
                fn.get("arguments"),
                file,
                label,
                f"history (assistant {i}).tool_calls[0].function.arguments",
            )
            call_id = calls[0].get("id")
        else:
            tool = action.strip().split(maxsplit=1)[0] if action.strip() else ""
            args, call_id = {"command": action}, None
        thought = entry.get("thought")
        text = thought.strip() if isinstance(thought, str) else ""
        conv.say("assistant", text or None)
        seconds = _num(entry.get("execution_time"))
        n = conv.call(
            tool or "(empty action)",
            args,
            call_id,
            latency_ms=None if seconds is None else seconds * 1000,
        )
        observation = entry.get("observation")
        conv.result(
            n, observation if isinstance(observation, str) else content_text(observation) or ""
        )
    conv.finish()
    stats = as_dict(info.get("model_stats"))
    tokens_in, tokens_out = stats.get("tokens_sent"), stats.get("tokens_received")
    metadata = {
        k: info[k]
        for k in ("exit_status", "swe_agent_version", "swe_rex_version")
        if info.get(k) is not None
    }
    if stats.get("api_calls") is not None:
        metadata["api_calls"] = stats["api_calls"]
    tid = path.name[: -len(".traj")] if path.name.endswith(".traj") else path.stem
    submission = info.get("submission")
    try:
        t = Trajectory(
            id=tid,
            task_id=tid,
            input=task or "",
            messages=conv.messages,
            steps=conv.steps,
            final_answer=submission if isinstance(submission, str) else None,
            usage=Usage(
                prompt_tokens=tokens_in if isinstance(tokens_in, int) else None,
                completion_tokens=tokens_out if isinstance(tokens_out, int) else None,
                cost_usd=_num(stats.get("instance_cost")),
                turns=1,
            ),
            metadata=metadata,
        )
    except ValidationError as exc:
        raise validation_error(file, label, exc) from None
    return [(label, t)]


def _history_steps(
    conv: Conversation, history: list[Any], file: str, label: str, ignored: Ignored
) -> None:
    """The steps of a file without ``trajectory``: from ``history`` (module docstring)."""
    task_seen = False
    last_calls: list[int] = []  # the steps of the last assistant message, for observations
    for i, h in enumerate(history):
        if not isinstance(h, dict) or h.get("is_demo") or h.get("role") == "system":
            continue  # demonstrations were counted with the task; the system prompt is said
        role, where = h.get("role"), f"history[{i}]"
        if role == "user" and not task_seen:
            task_seen = True  # the task, already said
            continue
        if role == "assistant":
            conv.say("assistant", content_text(h.get("content"), ignored, f"{label}: {where}"))
            last_calls = []
            calls = h.get("tool_calls")
            for j, c in enumerate(calls if isinstance(calls, list) else []):
                fn = as_dict(c.get("function")) if isinstance(c, dict) else {}
                name = fn.get("name")
                if not isinstance(name, str) or not name:
                    raise InputError(
                        file,
                        record=label,
                        field=f"{where}.tool_calls[{j}].function.name",
                        reason=f"expected a tool name, got {kind(name)}",
                    )
                args = parse_args(
                    fn.get("arguments"), file, label, f"{where}.tool_calls[{j}].function.arguments"
                )
                call_id = c.get("id")
                last_calls.append(
                    conv.call(name, args, call_id if isinstance(call_id, str) else None)
                )
            action = h.get("action")
            if not last_calls and isinstance(action, str) and action.strip():
                action = action.rstrip("\n")
                tool = action.strip().split(maxsplit=1)[0]
                last_calls.append(conv.call(tool, {"command": action}))
            continue
        text = content_text(h.get("content"), ignored, f"{label}: {where}.content") or ""
        ids = h.get("tool_call_ids")
        found = [conv.pending(call_id=str(c)) for c in ids] if isinstance(ids, list) else []
        answered = [n for n in found if n is not None]
        if not answered:
            answered = [n for n in last_calls if not conv.answered(n)][:1]
        if not answered:
            ignored.add(
                "observation answering no call",
                "observations answering no call",
                f"{label}: {where}",
            )
            continue
        for n in answered:
            conv.result(n, text)
