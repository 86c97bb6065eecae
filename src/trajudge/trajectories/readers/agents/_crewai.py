"""Import CrewAI crew results (``--format crewai``): ``crew.kickoff()``'s ``CrewOutput``, dumped.

The file is what pydantic gives for the result (``result.model_dump_json()`` or
``json.dumps(result.model_dump())``), one object or one a line; a single task's ``TaskOutput``
(``task.output.model_dump()``) is read as a crew of that task. Each record is one trajectory,
``id`` = ``task_id`` = ``{file name}-{n}`` for the n-th (from 0).

Each entry of ``tasks_output`` carries ``messages``: the chat its agent had (OpenAI chat
messages: the system prompt, the task prompt CrewAI wrote as the user turn, assistant turns
with ``tool_calls``, ``tool`` results naming their ``tool_call_id``), which are read in task
order: a system prompt only when it differs from the one before, assistant turns named after
the task's ``agent``. Results are matched to calls by call id. CrewAI marks a failed call only
in the task's ``tool_failures`` (tool name, arguments and message, no call id) and writes the
result as ``Error executing tool: ...``: each failure fails the earliest call of that task with
the same tool and arguments whose result holds its message; one that matches no call is counted
as ignored. A task without ``messages`` is its ``description`` and ``raw`` output.
``final_answer`` = the crew's ``raw``; ``usage`` = its ``token_usage`` (the crew's totals: CrewAI
keeps no per-response counts; the cache and reasoning counts and the request count go to
``metadata``). The crew's ``output_log_file`` is not read: it holds each task's start and end
and output, no tool call.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from trajudge.core import InputError
from trajudge.trajectories._census import Held
from trajudge.trajectories._io import Record, kind
from trajudge.trajectories._models import Trajectory
from trajudge.trajectories._options import Ignored, as_count, as_dict
from trajudge.trajectories.readers._conversation import Conversation
from trajudge.trajectories.readers.chat._openai import content_text, parse_args

_USAGE_EXTRA = ("total_tokens", "cached_prompt_tokens", "reasoning_tokens",
                "cache_creation_tokens", "successful_requests")  # fmt: skip


def is_task_output(obj: Any) -> bool:
    return isinstance(obj, dict) and {"description", "agent", "raw", "output_format"} <= set(obj)


def is_crew_output(obj: Any) -> bool:
    return (
        isinstance(obj, dict)
        and isinstance(obj.get("tasks_output"), list)
        and "raw" in obj
        and "token_usage" in obj
    )


def is_crewai_record(obj: Any) -> bool:
    return is_crew_output(obj) or is_task_output(obj)


class _Crew:
    def __init__(self, file: str, label: str, ignored: Ignored) -> None:
        self.file = file
        self.label = label
        self.ignored = ignored
        self.conv = Conversation()
        self.system: str | None = None

    def fail(self, field: str, reason: str) -> InputError:
        return InputError(self.file, record=self.label, field=field, reason=reason)

    def task(self, where: str, task: Any) -> None:
        if not isinstance(task, dict):
            raise self.fail(where, f"expected a task output, got {kind(task)}")
        agent = task.get("agent") if isinstance(task.get("agent"), str) else None
        messages = task.get("messages")
        if messages is not None and not isinstance(messages, list):
            raise self.fail(f"{where}.messages", f"expected a list, got {kind(messages)}")
        first = len(self.conv.steps)
        if not messages:
            self.conv.say("user", content_text(task.get("description")))
            self.conv.say("assistant", content_text(task.get("raw")), name=agent)
        for i, m in enumerate(messages or []):
            self._message(f"{where}.messages[{i}]", m, agent)
        self._failures(where, task.get("tool_failures"), first)

    def _message(self, where: str, m: Any, agent: str | None) -> None:
        if not isinstance(m, dict):
            raise self.fail(where, f"expected a message, got {kind(m)}")
        role = m.get("role")
        text = content_text(m.get("content"), self.ignored, f"{self.label}: {where}.content")
        if role == "system":
            if text != self.system:
                self.conv.say("system", text)
            self.system = text
        elif role == "user":
            self.conv.say("user", text)
        elif role == "assistant":
            self.conv.say("assistant", text or None, name=agent)
            calls = m.get("tool_calls") or []
            if not isinstance(calls, list):
                raise self.fail(f"{where}.tool_calls", f"expected a list, got {kind(calls)}")
            for j, c in enumerate(calls):
                fn = as_dict(as_dict(c).get("function"))
                name = fn.get("name")
                if not isinstance(name, str) or not name:
                    raise self.fail(
                        f"{where}.tool_calls[{j}].function.name", "expected a tool name"
                    )
                args = fn.get("arguments")
                if args is not None and not isinstance(args, str | dict):
                    raise self.fail(
                        f"{where}.tool_calls[{j}].function.arguments",
                        f"expected JSON text, got {kind(args)}",
                    )
                field = f"{where}.tool_calls[{j}].function.arguments"
                call_id = as_dict(c).get("id")
                self.conv.call(
                    name,
                    parse_args(args, self.file, self.label, field),
                    call_id if isinstance(call_id, str) else None,
                    name=agent,
                )
        elif role == "tool":
            call_id = m.get("tool_call_id")
            n = self.conv.pending(call_id=call_id) if isinstance(call_id, str) else None
            if n is None:
                self.ignored.add(
                    "tool result answering no call",
                    "tool results answering no call",
                    f"{self.label}: {where}",
                )
                return
            self.conv.result(n, text if text is not None else "")
        else:
            raise self.fail(
                f"{where}.role", f"expected system, user, assistant or tool, got {role!r}"
            )

    def _failures(self, where: str, failures: Any, first: int) -> None:
        if failures is None:
            return
        if not isinstance(failures, list):
            raise self.fail(f"{where}.tool_failures", f"expected a list, got {kind(failures)}")
        for i, f in enumerate(failures):
            f = as_dict(f)
            message = as_dict(f.get("failure")).get("message")
            args = f.get("tool_args")
            if isinstance(args, str):
                args = parse_args(
                    args, self.file, self.label, f"{where}.tool_failures[{i}].tool_args"
                )
            found = next(
                (
                    n
                    for n in range(first, len(self.conv.steps))
                    if (s := self.conv.steps[n]).ok
                    and s.tool == f.get("tool_name")
                    and s.args == (args or {})
                    and (not isinstance(message, str) or message in (s.output or ""))
                ),
                None,
            )
            if found is None:
                self.ignored.add(
                    "tool failure matching no call",
                    "tool failures matching no call",
                    f"{self.label}: {where}.tool_failures[{i}]",
                )
                continue
            step = self.conv.steps[found]
            self.conv.complete(found, ok=False, error=step.output or message, output=None)


def crewai_from_records(
    path: Path, records: Iterator[Record], ignored: Ignored
) -> Iterator[tuple[str, Trajectory]]:
    file = str(path)
    for n, (label, value) in enumerate(records):
        if not is_crewai_record(value):
            raise InputError(file, record=label, reason=f"expected a CrewOutput, got {kind(value)}")
        crew = _Crew(file, label, ignored)
        tasks = value["tasks_output"] if is_crew_output(value) else [value]
        for i, task in enumerate(tasks):
            crew.task(f"tasks_output[{i}]" if is_crew_output(value) else "(task)", task)
        usage = as_dict(value.get("token_usage"))
        metadata: dict[str, Any] = {
            k: usage[k] for k in _USAGE_EXTRA if as_count(usage.get(k)) is not None
        }
        descriptions = [as_dict(t).get("description") for t in tasks]
        metadata["tasks"] = [d for d in descriptions if isinstance(d, str)]
        for key in ("prompt_tokens", "completion_tokens"):
            if usage.get(key) is not None and as_count(usage.get(key)) is None:
                raise crew.fail(f"token_usage.{key}", "expected a count of tokens")
        totals = [as_count(usage.get("prompt_tokens")), as_count(usage.get("completion_tokens"))]
        tid = f"{path.stem}-{n}"
        t = crew.conv.trajectory(
            totals, file=file, record=label, id=tid, task_id=tid, metadata=metadata
        )
        raw = value.get("raw")
        yield (
            label,
            t
            if not isinstance(raw, str) or not raw
            else t.model_copy(update={"final_answer": raw}),
        )


def census(label: str, value: Any, held: Held) -> None:
    """Count what a CrewAI result holds, apart from the reader: user messages (a task without
    messages is one), the ``tool_calls`` of assistant messages, ``tool_failures``, and the
    crew's ``token_usage``."""
    if not isinstance(value, dict):
        return
    tasks = value.get("tasks_output") if "tasks_output" in value else [value]
    for task in tasks if isinstance(tasks, list) else []:
        if not isinstance(task, dict):
            continue
        messages = task.get("messages")
        if not messages and isinstance(task.get("description"), str):
            held.user_messages += 1
        for m in messages if isinstance(messages, list) else []:
            if isinstance(m, dict) and m.get("role") == "user":
                held.user_messages += 1
            if (
                isinstance(m, dict)
                and m.get("role") == "assistant"
                and isinstance(m.get("tool_calls"), list)
            ):
                held.tool_calls += len(m["tool_calls"])
        if isinstance(task.get("tool_failures"), list):
            held.failed_calls += len(task["tool_failures"])
    usage = value.get("token_usage")
    if isinstance(usage, dict):
        held.add_tokens(
            as_count(usage.get("prompt_tokens")), as_count(usage.get("completion_tokens"))
        )
