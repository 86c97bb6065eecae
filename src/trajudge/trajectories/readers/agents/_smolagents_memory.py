"""Import smolagents agent memory (``--format smolagents``): the steps an agent keeps.

smolagents serialises an agent's memory itself; the files read are what that gives, as JSON:

* a JSON list (or JSON Lines) of step dicts: ``agent.memory.get_full_steps()``,
  ``agent.memory.get_succinct_steps()`` or ``[s.dict() for s in agent.memory.steps]`` (also the
  steps a ``step_callbacks`` function or ``agent.run(..., stream=True)`` wrote, one a line). The
  file is one trajectory, ``id`` = ``task_id`` = the file name without suffix;
* ``RunResult.dict()`` of ``agent.run(..., return_full_result=True)``, an object with
  ``output``, ``state``, ``token_usage``, ``timing`` and the same ``steps``: each such record
  is one trajectory, ``{file name}-{n}`` for the n-th (from 0).

The step dicts carry no class name; they are told by their keys: ``task`` (TaskStep: a user
turn), ``step_number`` (ActionStep), ``plan`` (PlanningStep: an assistant turn named ``plan``),
``system_prompt`` (SystemPromptStep), ``output`` alone (FinalAnswerStep). An ActionStep's calls
are its ``model_output_message.tool_calls`` (in the model's order), else its ``tool_calls``
(smolagents leaves these empty when a call raised, and sorts them by call id); its
``model_output`` text is the assistant turn. A call of ``final_answer`` is the agent's answer
(an assistant turn), not a step. ``observations`` is the results of the step's calls joined
with newlines, in call-id order: with one call it is that call's output; with several it is
split into one line per call when it has that many lines, else every call keeps the whole text
(``metadata.joined_observations`` names those steps). A step with an ``error`` (smolagents
records one per step) fails every call it made; an error of a step without calls is kept in
``metadata.step_errors``. ``final_answer``: ``RunResult.output``, else a FinalAnswerStep's
``output``, else the last ``final_answer`` call (``action_output`` for a CodeAgent). Usage: the
``token_usage`` of each ActionStep and PlanningStep, one model response each. The system
prompt is a SystemPromptStep's, else the first ``model_input_messages`` system message (the
only part of those inputs read: they repeat the memory). Images are counted as ignored.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from trajudge.core import InputError
from trajudge.trajectories._census import Held
from trajudge.trajectories._io import Record, kind
from trajudge.trajectories._models import Message, Trajectory
from trajudge.trajectories._options import Ignored, as_count, as_dict, as_json_text
from trajudge.trajectories.readers._conversation import Conversation
from trajudge.trajectories.readers.chat._openai import content_text

FINAL = "final_answer"
_RUN_KEYS = {"output", "state", "steps"}


def is_smolagents_step(obj: Any) -> bool:
    """A step dict as smolagents' memory serialises it (TaskStep, ActionStep, PlanningStep)."""
    if not isinstance(obj, dict):
        return False
    if "task" in obj and "task_images" in obj:
        return True
    if "step_number" in obj and "observations" in obj and "model_output_message" in obj:
        return True
    return "plan" in obj and "model_output_message" in obj


def is_run_result(obj: Any) -> bool:
    return (
        isinstance(obj, dict)
        and set(obj) >= _RUN_KEYS
        and "timing" in obj
        and isinstance(obj["steps"], list)
    )


def is_smolagents_record(obj: Any) -> bool:
    return is_smolagents_step(obj) or is_run_result(obj)


def _args(name: str, value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    if value is None:
        return {}
    # a CodeAgent's code, or arguments a model gave as plain text (smolagents passes them on)
    return {"code" if name == "python_interpreter" else "arguments": value}


def _answer(args: Any) -> str:
    if isinstance(args, dict) and "answer" in args:
        return as_json_text(args["answer"])
    return as_json_text(args)


class _Run:
    """One trajectory being built from steps."""

    def __init__(self, file: str, ignored: Ignored) -> None:
        self.file = file
        self.ignored = ignored
        self.conv = Conversation()
        self.tokens: list[int | None] = [None, None]
        self.final: str | None = None
        self.system: str | None = None
        self.model: str | None = None
        self.step_errors: list[dict[str, Any]] = []
        self.joined: list[str] = []

    def fail(self, where: str, field: str, reason: str) -> InputError:
        return InputError(self.file, record=where, field=field, reason=reason)

    def add_tokens(self, usage: Any, where: str) -> None:
        if usage is None:
            return
        if not isinstance(usage, dict):
            raise self.fail(where, "token_usage", f"expected an object, got {kind(usage)}")
        for i, key in enumerate(("input_tokens", "output_tokens")):
            n = as_count(usage.get(key))
            if n is None and usage.get(key) is not None:
                raise self.fail(where, f"token_usage.{key}", "expected a count of tokens")
            if n is not None:
                self.tokens[i] = (self.tokens[i] or 0) + n

    def step(self, where: str, s: Any) -> None:
        if not isinstance(s, dict):
            raise InputError(self.file, record=where, reason=f"expected a step, got {kind(s)}")
        if "task" in s:
            task = s["task"]
            if not isinstance(task, str):
                raise self.fail(where, "task", f"expected a string, got {kind(task)}")
            self.conv.say("user", task)
            if s.get("task_images"):
                self.ignored.add("task image list", "task image lists", where)
        elif "step_number" in s:
            self.action(where, s)
        elif "plan" in s:
            self.add_tokens(s.get("token_usage"), where)
            self.conv.say("assistant", content_text(s["plan"], self.ignored, where), name="plan")
        elif "system_prompt" in s:
            self.system = content_text(s["system_prompt"], self.ignored, where)
        elif set(s) == {"output"}:
            self.final = None if s["output"] is None else as_json_text(s["output"])
        else:
            self.ignored.add("record of a kind not read", "records of kinds not read", where)

    def _calls(self, where: str, s: dict[str, Any]) -> list[tuple[str, Any, str | None]]:
        message = as_dict(s.get("model_output_message"))
        calls, field = message.get("tool_calls"), "model_output_message.tool_calls"
        if not calls:
            calls, field = s.get("tool_calls"), "tool_calls"
        if calls is None:
            return []
        if not isinstance(calls, list):
            raise self.fail(where, field, f"expected a list, got {kind(calls)}")
        out = []
        for i, c in enumerate(calls):
            fn = as_dict(as_dict(c).get("function"))
            name = fn.get("name")
            if not isinstance(name, str) or not name:
                raise self.fail(where, f"{field}[{i}].function.name", "expected a tool name")
            call_id = c.get("id")
            out.append((name, fn.get("arguments"), call_id if isinstance(call_id, str) else None))
        return out

    def _outputs(self, where: str, s: dict[str, Any], n_calls: int) -> dict[str | None, str]:
        """Each executed call's output by call id (``None``: the one call's, or every call's)."""
        observations = s.get("observations")
        if observations is None:
            return {}
        if not isinstance(observations, str):
            raise self.fail(where, "observations", f"expected a string, got {kind(observations)}")
        executed = s.get("tool_calls")
        ids = [as_dict(c).get("id") for c in executed] if isinstance(executed, list) else []
        lines = observations.split("\n")
        keyed = all(isinstance(i, str) for i in ids)  # a hostile id (a list) keys nothing
        if n_calls > 1 and len(ids) == n_calls == len(lines) and keyed:
            return dict(zip(ids, lines, strict=True))  # smolagents joins them in call-id order
        if n_calls > 1:
            self.joined.append(where)
        return {None: observations}

    def action(self, where: str, s: dict[str, Any]) -> None:
        self.add_tokens(s.get("token_usage"), where)
        message = as_dict(s.get("model_output_message"))
        model = as_dict(message.get("raw")).get("model")
        if isinstance(model, str):
            self.model = model
        if self.system is None:
            inputs = s.get("model_input_messages")
            first = inputs[0] if isinstance(inputs, list) and inputs else None
            if isinstance(first, dict) and first.get("role") == "system":
                self.system = content_text(first.get("content"), self.ignored, where)
        error = s.get("error")
        if error is not None and not isinstance(error, dict | str):
            raise self.fail(where, "error", f"expected an object, got {kind(error)}")
        err = as_json_text(error.get("message", error)) if isinstance(error, dict) else error
        calls = self._calls(where, s)
        tools = [c for c in calls if c[0] != FINAL]
        text = content_text(s.get("model_output"), self.ignored, f"{where}: model_output")
        text = text.strip() if text else None
        if tools:
            self.conv.say("assistant", text)
            outputs = self._outputs(where, s, len(tools))
            made = [(self.conv.call(name, _args(name, a), i), i) for name, a, i in tools]
            for n, call_id in made:  # the results after all the calls: one assistant turn
                out = outputs.get(call_id, outputs.get(None))
                if err is not None:
                    self.conv.result(n, out, ok=False, error=err)
                else:
                    self.conv.result(n, out if out is not None else "")
        elif text:
            self.conv.say("assistant", text)
        if err is not None and not tools:
            self.step_errors.append({"step": where, "error": error})
        for name, args, _ in calls:
            if name == FINAL:
                answer = _answer(args)
                self.conv.say("assistant", answer)
                if s.get("is_final_answer") is not False and err is None:
                    self.final = answer
        if s.get("is_final_answer") and not any(c[0] == FINAL for c in calls):
            output = s.get("action_output")
            if output is not None:
                self.final = as_json_text(output)
        if s.get("observations_images"):
            self.ignored.add("observation image list", "observation image lists", where)

    def trajectory(self, tid: str, record: str, run: dict[str, Any] | None) -> Trajectory:
        if self.system is not None:
            self.conv.messages.insert(0, Message(role="system", content=self.system))
        metadata: dict[str, Any] = {"model": self.model} if self.model else {}
        if self.step_errors:
            metadata["step_errors"] = self.step_errors
        if self.joined:
            metadata["joined_observations"] = self.joined
        final = self.final
        if run is not None:
            if run.get("output") is not None:
                final = as_json_text(run["output"])
            for key in ("state", "token_usage", "timing"):
                if run.get(key) is not None:
                    metadata[f"run_{key}"] = run[key]
        t = self.conv.trajectory(
            self.tokens, file=self.file, record=record, id=tid, task_id=tid, metadata=metadata
        )
        return t if final is None else t.model_copy(update={"final_answer": final})


def smolagents_from_records(
    path: Path, records: Iterator[Record], ignored: Ignored
) -> Iterator[tuple[str, Trajectory]]:
    file = str(path)
    steps: _Run | None = None
    first_label: str | None = None
    n_runs = 0
    for label, value in records:
        if is_run_result(value):
            if steps is not None:
                raise InputError(file, record=label, reason="a run result among memory steps")
            run = _Run(file, ignored)
            for i, s in enumerate(value["steps"]):
                run.step(f"{label}: steps[{i}]", s)
            tid = f"{path.stem}-{n_runs}"
            n_runs += 1
            yield label, run.trajectory(tid, label, value)
            continue
        if n_runs:
            raise InputError(file, record=label, reason="a memory step among run results")
        if steps is None:
            steps, first_label = _Run(file, ignored), label
        steps.step(label, value)
    if steps is not None and first_label is not None:
        yield first_label, steps.trajectory(path.stem, first_label, None)


def census(label: str, value: Any, held: Held) -> None:
    """Count what a smolagents record holds, apart from the reader: user tasks, tool calls
    (the executed ``tool_calls``, else the model's, ``final_answer`` aside), the calls of steps
    with an error, and each model response's ``token_usage``."""
    steps = value["steps"] if is_run_result(value) else [value]
    for s in steps:
        if not isinstance(s, dict):
            continue
        if isinstance(s.get("task"), str):
            held.user_messages += 1
        if "step_number" not in s and "plan" not in s:
            continue
        usage = s.get("token_usage")
        if isinstance(usage, dict):
            held.add_tokens(
                as_count(usage.get("input_tokens")), as_count(usage.get("output_tokens"))
            )
        if "plan" in s and "step_number" not in s:
            continue
        calls = s.get("tool_calls") or as_dict(s.get("model_output_message")).get("tool_calls")
        names = (
            [as_dict(as_dict(c).get("function")).get("name") for c in calls or []]
            if isinstance(calls, list)
            else []
        )
        made = sum(1 for n in names if n != FINAL)
        held.tool_calls += made
        if s.get("error") is not None:
            held.failed_calls += made
