"""Import AutoGen AgentChat runs (``--format autogen``), as ``autogen-agentchat`` serialises them.

Files read (each what the library's own ``dump()`` / ``model_dump()`` / ``save_state()`` gives):

* a JSON list (or JSON Lines) of AgentChat messages, each ``message.dump()`` (a
  ``TaskResult``'s ``messages``, or the items of ``run_stream`` as they come): one trajectory,
  ``id`` = ``task_id`` = the file name without suffix;
* ``TaskResult.model_dump()`` objects ``{"messages": [...], "stop_reason": ...}``: each record
  one trajectory, ``{file name}-{n}`` for the n-th (from 0);
* ``await agent.save_state()`` (``AssistantAgentState``: its ``llm_context`` messages) and
  ``await team.save_state()`` (``TeamState``: the group chat manager's ``message_thread``, which
  is every agent's messages with their token counts; each agent's own ``llm_context`` repeats
  it and is counted as ignored; a team state without a thread is read from its agents'
  contexts, a trajectory each, ``{file name}:{agent}``): one trajectory each.

Messages are told by their ``type``: ``TextMessage`` from ``source`` ``user`` is a user turn,
from any other source an assistant turn named after it (as are ``StopMessage``,
``HandoffMessage``, ``ToolCallSummaryMessage``, ``StructuredMessage`` and ``ThoughtEvent``);
``ToolCallRequestEvent``'s function calls are steps (``arguments`` parsed as JSON), answered by
the ``ToolCallExecutionEvent`` result with the same ``call_id`` (``is_error`` fails the step).
A ``ToolCallSummaryMessage`` repeats its calls and results, so only its text is kept. Tokens are
each message's ``models_usage`` (one model response each). The model-context messages of a
state (``SystemMessage``, ``UserMessage``, ``AssistantMessage`` with text or function calls,
``FunctionExecutionResultMessage``) are read the same way; they carry no token counts. Other
events (code execution, memory queries, speaker selection, streaming chunks) are counted as
ignored.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from trajudge.core import InputError
from trajudge.trajectories._census import Held
from trajudge.trajectories._io import Record, kind
from trajudge.trajectories._models import Trajectory
from trajudge.trajectories._options import Ignored, as_dict, as_json_text
from trajudge.trajectories.readers._conversation import REASONING, Conversation
from trajudge.trajectories.readers.chat._openai import content_text, parse_args

_TEXT = {"TextMessage", "StopMessage", "HandoffMessage", "ToolCallSummaryMessage",
         "MultiModalMessage", "ThoughtEvent", "UserMessage", "SystemMessage"}  # fmt: skip
_CALLS = {"ToolCallRequestEvent", "AssistantMessage"}
_RESULTS = {"ToolCallExecutionEvent", "FunctionExecutionResultMessage"}
#: every message type read; the others of AgentChat are counted as ignored
TYPES = _TEXT | _CALLS | _RESULTS
_EVENTS = {"CodeGenerationEvent", "CodeExecutionEvent", "UserInputRequestedEvent",
           "MemoryQueryEvent", "ModelClientStreamingChunkEvent", "SelectSpeakerEvent",
           "SelectorEvent"}  # fmt: skip
_STATES = {"AssistantAgentState", "TeamState"}


def _typed(obj: Any) -> str | None:
    t = obj.get("type") if isinstance(obj, dict) else None
    return t if isinstance(t, str) else None


def is_agentchat_message(obj: Any) -> bool:
    """A ``message.dump()`` of AgentChat: a known ``type`` and a ``source``."""
    t = _typed(obj)
    known = t in TYPES or t in _EVENTS or (t or "").startswith("StructuredMessage")
    return known and "source" in obj and "content" in obj


def is_task_result(obj: Any) -> bool:
    if not isinstance(obj, dict) or not isinstance(obj.get("messages"), list):
        return False
    first = obj["messages"][0] if obj["messages"] else None
    return "stop_reason" in obj and (first is None or is_agentchat_message(first))


def is_autogen_record(obj: Any) -> bool:
    if _typed(obj) in _STATES:
        return isinstance(obj.get("llm_context"), dict) or isinstance(obj.get("agent_states"), dict)
    return is_agentchat_message(obj) or is_task_result(obj)


class _Chat:
    """One trajectory being built from AgentChat or model-context messages."""

    def __init__(self, file: str, ignored: Ignored) -> None:
        self.file = file
        self.ignored = ignored
        self.conv = Conversation()
        self.tokens: list[int | None] = [None, None]
        self.sources: list[str] = []
        self.stop_reason: str | None = None

    def fail(self, where: str, field: str | None, reason: str) -> InputError:
        return InputError(self.file, record=where, field=field, reason=reason)

    def usage(self, where: str, usage: Any) -> None:
        if usage is None:
            return
        if not isinstance(usage, dict):
            raise self.fail(where, "models_usage", f"expected an object, got {kind(usage)}")
        for i, key in enumerate(("prompt_tokens", "completion_tokens")):
            n = usage.get(key)
            if n is None:
                continue
            if not isinstance(n, int) or isinstance(n, bool) or n < 0:
                raise self.fail(where, f"models_usage.{key}", "expected a count of tokens")
            self.tokens[i] = (self.tokens[i] or 0) + n

    def message(self, where: str, m: Any) -> None:
        t = _typed(m)
        if not isinstance(m, dict):
            raise self.fail(where, None, f"expected a message, got {kind(m)}")
        if t is None:
            raise self.fail(where, "type", f"expected a message type, got {kind(m.get('type'))}")
        self.usage(where, m.get("models_usage"))
        source = m.get("source")
        name = source if isinstance(source, str) and source else None
        if name and name != "user" and name not in self.sources:
            self.sources.append(name)
        content = m.get("content")
        if t in _CALLS and isinstance(content, list):
            thought = m.get("thought")
            self.conv.say("assistant", thought if isinstance(thought, str) else None, name=name)
            self._calls(where, content, name)
        elif t in _RESULTS:
            self._results(where, content)
        elif t in _TEXT or t in _CALLS or t.startswith("StructuredMessage"):
            if isinstance(content, dict):  # a StructuredMessage's object
                text: str | None = as_json_text(content)
            else:
                text = content_text(content, self.ignored, f"{where}: content")
                if text is None and content is not None:
                    raise self.fail(where, "content", f"expected text, got {kind(content)}")
            if t == "SystemMessage":
                self.conv.say("system", text)
            elif t == "UserMessage" or (
                t in ("TextMessage", "MultiModalMessage") and name == "user"
            ):
                self.conv.say("user", text)
            else:
                self.conv.say("assistant", text, name=REASONING if t == "ThoughtEvent" else name)
        else:
            self.ignored.add(
                "event of a kind not read", "events of kinds not read", f"{where} ({t})"
            )

    def _calls(self, where: str, calls: list[Any], name: str | None) -> None:
        for i, c in enumerate(calls):
            tool = c.get("name") if isinstance(c, dict) else None
            if not isinstance(tool, str) or not tool:
                raise self.fail(where, f"content[{i}].name", "expected a tool name")
            args = c.get("arguments")
            if args is not None and not isinstance(args, str | dict):
                raise self.fail(
                    where, f"content[{i}].arguments", f"expected JSON text, got {kind(args)}"
                )
            call_id = c.get("id")
            self.conv.call(
                tool,
                parse_args(args, self.file, where, f"content[{i}].arguments"),
                call_id if isinstance(call_id, str) else None,
                name=name,
            )

    def _results(self, where: str, results: Any) -> None:
        if not isinstance(results, list):
            raise self.fail(where, "content", f"expected a list of results, got {kind(results)}")
        for i, r in enumerate(results):
            if not isinstance(r, dict):
                raise self.fail(where, f"content[{i}]", f"expected a result, got {kind(r)}")
            call_id = r.get("call_id")
            n = self.conv.pending(call_id=call_id) if isinstance(call_id, str) else None
            text = content_text(r.get("content"), self.ignored, f"{where}: content[{i}]")
            if n is None:
                self.ignored.add(
                    "tool result answering no call",
                    "tool results answering no call",
                    f"{where}[{i}]",
                )
                continue
            self.conv.result(n, text if text is not None else "", ok=r.get("is_error") is not True)

    def trajectory(self, tid: str, record: str, extra: dict[str, Any] | None = None) -> Trajectory:
        metadata: dict[str, Any] = {"agents": self.sources} if self.sources else {}
        metadata.update(extra or {})
        return self.conv.trajectory(
            self.tokens, file=self.file, record=record, id=tid, task_id=tid, metadata=metadata
        )


def _messages(chat: _Chat, where: str, messages: Any, field: str) -> None:
    if not isinstance(messages, list):
        raise chat.fail(where, field, f"expected a list, got {kind(messages)}")
    for i, m in enumerate(messages):
        chat.message(f"{where}: {field}[{i}]", m)


def _state(
    path: Path, label: str, doc: dict[str, Any], ignored: Ignored
) -> list[tuple[str, Trajectory]]:
    file = str(path)
    if doc["type"] == "AssistantAgentState":
        chat = _Chat(file, ignored)
        _messages(
            chat, label, as_dict(doc.get("llm_context")).get("messages"), "llm_context.messages"
        )
        return [(label, chat.trajectory(path.stem, label))]
    agents = doc.get("agent_states")
    if not isinstance(agents, dict):
        raise InputError(
            file,
            record=label,
            field="agent_states",
            reason=f"expected an object, got {kind(agents)}",
        )
    threads = [(k, v) for k, v in agents.items() if isinstance(v, dict) and "message_thread" in v]
    contexts = [
        (k, as_dict(v.get("agent_state")))
        for k, v in agents.items()
        if isinstance(v, dict)
        and isinstance(as_dict(v.get("agent_state")).get("llm_context"), dict)
    ]
    if threads:
        chat = _Chat(file, ignored)
        for key, manager in threads:
            _messages(chat, label, manager["message_thread"], f"agent_states.{key}.message_thread")
        for key, _ in contexts:  # each agent's view of the same thread
            ignored.add(
                "agent model context (the team's thread has it)",
                "agent model contexts (the team's thread has them)",
                f"{label}: {key}",
            )
        return [(label, chat.trajectory(path.stem, label, {"team_state": True}))]
    out = []
    for key, state in contexts:
        chat = _Chat(file, ignored)
        field = f"agent_states.{key}.agent_state.llm_context.messages"
        _messages(chat, label, state["llm_context"].get("messages"), field)
        out.append((label, chat.trajectory(f"{path.stem}:{key}", label)))
    return out


def autogen_from_records(
    path: Path, records: Iterator[Record], ignored: Ignored
) -> Iterator[tuple[str, Trajectory]]:
    file = str(path)
    stream: _Chat | None = None
    first_label: str | None = None
    n = 0  # records that are trajectories of their own
    for label, value in records:
        whole = _typed(value) in _STATES or is_task_result(value)
        if (whole and stream is not None) or (not whole and n):
            raise InputError(
                file,
                record=label,
                reason="messages and task results or states in one file "
                "(run_stream's last item, the TaskResult, repeats its messages: leave it out)",
            )
        if _typed(value) in _STATES:
            n += 1
            yield from _state(path, label, value, ignored)
        elif whole:
            chat = _Chat(file, ignored)
            _messages(chat, label, value["messages"], "messages")
            stop = value.get("stop_reason")
            extra = {"stop_reason": stop} if isinstance(stop, str) else {}
            yield label, chat.trajectory(f"{path.stem}-{n}", label, extra)
            n += 1
        else:
            if stream is None:
                stream, first_label = _Chat(file, ignored), label
            stream.message(label, value)
    if stream is not None and first_label is not None:
        yield first_label, stream.trajectory(path.stem, first_label)


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def census(label: str, value: Any, held: Held) -> None:
    """Count what an AutoGen record holds, apart from the reader: user text messages, function
    calls of requests, results marked ``is_error``, and each ``models_usage``."""
    if not isinstance(value, dict):
        return
    kind_ = value.get("type")
    if kind_ == "AssistantAgentState":
        messages = as_dict(value.get("llm_context")).get("messages")
    elif kind_ == "TeamState":
        states = [s for s in as_dict(value.get("agent_states")).values() if isinstance(s, dict)]
        threads = [s["message_thread"] for s in states if isinstance(s.get("message_thread"), list)]
        if threads:
            messages = [m for t in threads for m in t]
        else:
            messages = [
                m
                for s in states
                for m in as_dict(as_dict(s.get("agent_state")).get("llm_context")).get("messages")
                or []
            ]
    elif isinstance(value.get("messages"), list) and "stop_reason" in value:
        messages = value["messages"]
    else:
        messages = [value]
    for m in messages if isinstance(messages, list) else []:
        if not isinstance(m, dict):
            continue
        t = m.get("type")
        usage = m.get("models_usage")
        if isinstance(usage, dict):
            held.add_tokens(
                _count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens"))
            )
        if t == "UserMessage" or (
            t in ("TextMessage", "MultiModalMessage") and m.get("source") == "user"
        ):
            held.user_messages += 1
        elif t in ("ToolCallRequestEvent", "AssistantMessage") and isinstance(
            m.get("content"), list
        ):
            held.tool_calls += len(m["content"])
        elif t in ("ToolCallExecutionEvent", "FunctionExecutionResultMessage") and isinstance(
            m.get("content"), list
        ):
            held.failed_calls += sum(
                1 for r in m["content"] if isinstance(r, dict) and r.get("is_error") is True
            )
