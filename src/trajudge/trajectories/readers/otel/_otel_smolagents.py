"""smolagents traces (``openinference-instrumentation-smolagents``): each run's spans in order.

A smolagents trace cannot be read from its fullest model call, as other OpenInference traces
are: the history a model call sees writes earlier tool calls as text (``tool-call`` /
``tool-response`` turns holding ``Calling tools:\\n[...]`` and ``Observation:\\n...``), puts the
outputs of parallel calls in one observation, and leaves out the call of a step whose tool
raised. What happened is in the spans themselves, so the conversation is built from them in
start order:

* an ``AGENT`` span (``ToolCallingAgent.run``) opens a user turn with its ``task``
  (``input.value`` ``{"task": ...}``; the model saw it as ``"New task:\\n" + task``);
* an ``LLM`` span is an assistant turn: its output message's text, and its tool calls with
  their call ids; a call of ``final_answer`` (how a smolagents agent ends a run) is the
  turn's text, not a step; the system prompt is taken from the first model call;
* a ``TOOL`` span answers the earliest open call of the last assistant turns with its name and
  arguments, else the earliest with its name (its arguments are smolagents' call signature,
  ``{"args": [], "kwargs": {...}}``, unwrapped by ``tool_call``); it gives the output, the
  error of a tool that raised and ``latency_ms``. A tool span that answers no recorded call
  (a model class the instrumentor does not wrap records no ``LLM`` span) is a step of its
  own, and a ``final_answer`` span without a model call is the answer.

Every tool span is one step and every recorded call is one step: nothing is merged by name.
"""

from __future__ import annotations

from typing import Any

from trajudge.core import canonical_json
from trajudge.trajectories._models import Message
from trajudge.trajectories.readers._conversation import Conversation
from trajudge.trajectories.readers.otel._otel_conventions import (
    SMOLAGENTS_SCOPE,
    llm_messages,
    tool_call,
)
from trajudge.trajectories.readers.otel._otel_messages import as_text, parse_json
from trajudge.trajectories.readers.otel._otel_spans import Span

FINAL_ANSWER = "final_answer"


def is_smolagents(spans: list[Span]) -> bool:
    """The trace was written by smolagents' OpenInference instrumentor."""
    return any(s.scope.startswith(SMOLAGENTS_SCOPE) for s in spans)


def _kind(span: Span) -> str:
    return str(span.attrs.get("openinference.span.kind", "")).upper()


def _answer(args: dict[str, Any]) -> str | None:
    value = args.get("answer", args.get("input"))
    return value if value is None or isinstance(value, str) else as_text(value)


def conversation(spans: list[Span]) -> Conversation:
    """The conversation of a smolagents trace (or of several, one per run): module docstring."""
    conv = Conversation()
    system: str | None = None
    open_calls: list[int] = []  # steps called by a model and not yet answered, in order
    answered_by_model = False  # the current run's final_answer came with a model call
    for s in sorted(spans, key=lambda s: (s.start, s.order)):
        kind = _kind(s)
        if kind == "AGENT":
            given = parse_json(s.attrs.get("input.value"))
            task = given.get("task") if isinstance(given, dict) else None
            if isinstance(task, str):
                conv.say("user", task)
            answered_by_model = False
        elif kind == "LLM":
            found = llm_messages(s)
            if found is None:
                continue
            inputs, outputs = found
            if system is None:
                system = next((m.text for m in inputs if m.role == "system" and m.text), None)
            for m in outputs:
                if m.role != "assistant":
                    continue
                texts = [m.text] if m.text else []
                calls = []
                for call_id, name, args in m.calls:
                    if name == FINAL_ANSWER:
                        answer = _answer(args)
                        if answer:
                            texts.append(answer)
                        answered_by_model = True
                    else:
                        calls.append((call_id, name, args))
                conv.say("assistant", "\n".join(texts) if texts else None)
                for call_id, name, args in calls:
                    open_calls.append(conv.call(name, args, call_id))
        elif kind == "TOOL":
            call = tool_call(s)
            if call is None:
                continue
            if call.name == FINAL_ANSWER:
                if not answered_by_model and call.output:
                    conv.say("assistant", call.output)
                continue
            n = _take(conv, open_calls, call.name, call.args)
            latency = {"latency_ms": (s.end - s.start) / 1e6}
            if n is None:
                n = conv.call(call.name, call.args, call.call_id)
            conv.complete(n, **latency)
            if call.error is not None:
                conv.result(n, call.output, ok=False, error=call.error)
            else:
                conv.result(n, call.output)
    if system is not None:
        conv.messages.insert(0, Message(role="system", content=system))
    conv.finish()
    return conv


def _take(conv: Conversation, open_calls: list[int], name: str, args: dict[str, Any]) -> int | None:
    """The earliest open call with this name and these arguments, else with this name."""
    canon = canonical_json(args)
    for same_args in (True, False):
        for i, n in enumerate(open_calls):
            step = conv.steps[n]
            if step.tool == name and (not same_args or step.canonical_args() == canon):
                return open_calls.pop(i)
    return None
