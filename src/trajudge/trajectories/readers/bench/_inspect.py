"""Import Inspect AI eval logs (``.eval`` and ``.json``) through ``inspect_ai``'s own reader.

Needs the optional extra ``trajudge[inspect]``. Each sample (and epoch) is a trajectory
(``--format inspect``):

* ``id`` = ``f"{sample id}-{trial}"``, ``task_id`` = the sample id, ``trial`` = ``epoch - 1``;
* ``messages``: the sample's system, user, assistant and tool messages in order; assistant
  ``tool_calls`` are the steps (``function``, ``arguments``, ``id``), answered by the tool
  message with that ``tool_call_id``; a tool message with an ``error`` (``ToolCallError``) makes
  its step failed with the error's message; a call whose arguments did not parse keeps the
  ``parse_error`` as its error. Text content keeps its text parts; reasoning parts become an
  assistant turn named ``reasoning``; other parts (images, audio) are counted as ignored;
* ``outcome``: the first score, turned into a number by ``inspect_ai``'s ``value_to_float``
  (``C`` = 1, ``I`` = 0, ``P`` = 0.5, numbers and booleans as they are); the sample passes when
  that number is 1. A sample without scores, or whose score is not a single value, has
  ``outcome = None``; every score is kept in ``metadata.scores``;
* ``usage``: input / output tokens and ``total_cost`` summed over ``model_usage``,
  ``latency_s`` = ``total_time``; ``metadata``: ``task``, ``model``, ``log_file``, ``target``,
  ``scores``, ``error`` (a sample that errored).
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from trajudge.core import InputError
from trajudge.trajectories._io import check_size, check_unique, validation_error
from trajudge.trajectories._models import Trajectory, Usage
from trajudge.trajectories._options import Ignored
from trajudge.trajectories.readers._conversation import REASONING, Conversation
from trajudge.trajectories.readers.bench._inspect_zip import check_eval_zip

INSTALL_HINT = "reading Inspect logs needs inspect_ai: pip install 'trajudge[inspect]'"


def _texts(content: Any, conv: Conversation, ignored: Ignored, where: str) -> str | None:
    if content is None or isinstance(content, str):
        return content
    texts: list[str] = []
    for i, part in enumerate(content):
        t = getattr(part, "type", None)
        if t == "text":
            texts.append(part.text)
        elif t == "reasoning":
            summary = getattr(part, "summary", None) or getattr(part, "reasoning", None)
            if summary and not getattr(part, "redacted", False):
                conv.say("assistant", str(summary), name=REASONING)
        else:
            ignored.add("non-text message part", "non-text message parts", f"{where}[{i}] ({t})")
    return "\n".join(texts) if texts else None


def _score(scores: dict[str, Any] | None) -> tuple[bool | None, dict[str, Any]]:
    from inspect_ai.scorer import value_to_float

    if not scores:
        return None, {}
    kept = {name: s.value for name, s in scores.items()}
    first = next(iter(scores.values())).value
    if isinstance(first, dict | list):
        return None, kept
    try:
        number = value_to_float()(first)
    except (ValueError, TypeError):
        return None, kept
    return number == 1.0, kept


def _sample(sample: Any, log: Any, file: str, label: str, ignored: Ignored) -> Trajectory:
    conv = Conversation()
    for i, m in enumerate(sample.messages):
        where = f"{label}: messages[{i}]"
        text = _texts(m.content, conv, ignored, f"{where}.content")
        if m.role in ("system", "user"):
            conv.say(m.role, text)
        elif m.role == "assistant":
            conv.say("assistant", text)
            for call in m.tool_calls or []:
                fields: dict[str, Any] = {}
                if getattr(call, "parse_error", None):
                    fields = {"ok": False, "error": f"arguments did not parse: {call.parse_error}"}
                conv.call(call.function, dict(call.arguments or {}), call.id, **fields)
        elif m.role == "tool":
            n = (
                conv.pending(call_id=m.tool_call_id)
                if m.tool_call_id
                else conv.pending(tool=m.function)
            )
            error = getattr(m, "error", None)
            if n is None:
                ignored.add(
                    "tool message answering no call", "tool messages answering no call", where
                )
                conv.result(None, text, name=m.function)
            elif error is not None:
                conv.result(n, text or "", ok=False, error=error.message or error.type)
            else:
                conv.result(n, text or "")
    conv.finish()
    prompt = completion = None
    cost = None
    for usage in (sample.model_usage or {}).values():
        prompt = (prompt or 0) + usage.input_tokens
        completion = (completion or 0) + usage.output_tokens
        if usage.total_cost is not None:
            cost = (cost or 0.0) + usage.total_cost
    outcome, scores = _score(sample.scores)
    trial = max(int(sample.epoch) - 1, 0)
    metadata: dict[str, Any] = {
        "task": log.eval.task,
        "model": log.eval.model,
        "log_file": Path(file).name,
        "target": sample.target,
        "scores": json.loads(json.dumps(scores, default=str)),
    }
    if sample.error is not None:
        metadata["error"] = sample.error.message
    try:
        return Trajectory(
            id=f"{sample.id}-{trial}",
            task_id=str(sample.id),
            trial=trial,
            input=conv.first_user,
            messages=conv.messages,
            steps=conv.steps,
            final_answer=conv.final_answer,
            outcome=outcome,
            usage=Usage(
                prompt_tokens=prompt,
                completion_tokens=completion,
                cost_usd=cost,
                latency_s=sample.total_time,
                turns=conv.user_turns,
            ),
            metadata=metadata,
        )
    except ValidationError as exc:
        raise validation_error(file, label, exc) from None


def read_inspect(path: Path, ignored: Ignored) -> list[tuple[str, Trajectory]]:
    """Every sample of an Inspect log as a trajectory (see the module docstring)."""
    file = str(path)
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise InputError(file, reason=INSTALL_HINT) from None
    if zipfile.is_zipfile(path):
        check_eval_zip(path)
    else:  # inspect_ai reads a .json log whole
        check_size(path, path.stat().st_size)
    try:
        log = read_eval_log(str(path))
    except Exception as exc:  # inspect_ai raises many kinds on a broken file
        reason = " ".join(str(exc).split())[:300]
        raise InputError(
            file, reason=f"not a readable Inspect log: {type(exc).__name__}: {reason}"
        ) from None
    if not log.samples:
        raise InputError(
            file, field="samples", reason=f"the log has no samples (status {log.status})"
        )
    items = [
        (f"samples[{i}]", _sample(s, log, file, f"samples[{i}]", ignored))
        for i, s in enumerate(log.samples)
    ]
    check_unique(file, items)
    return items
