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
from trajudge.trajectories.readers._openai import content_text, parse_args


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
    if not isinstance(steps_in, list):
        raise InputError(
            file, record=label, field="trajectory", reason=f"expected a list, got {kind(steps_in)}"
        )
    history = doc.get("history") if isinstance(doc.get("history"), list) else []
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
