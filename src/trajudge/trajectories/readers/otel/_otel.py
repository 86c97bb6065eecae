"""Import OpenTelemetry traces of agent runs (``--format otel``).

Containers: see :mod:`trajudge.trajectories.readers.otel._otel_spans` (OTLP JSON and JSON lines,
Tempo exports, Jaeger JSON). Conventions: see
:mod:`trajudge.trajectories.readers.otel._otel_conventions` (GenAI
current and older forms, OpenInference, OpenLLMetry, pydantic-ai / logfire, Google ADK).

Assembly:

* traces that share a conversation id (``gen_ai.conversation.id``, OpenInference
  ``session.id``, ADK ``gcp.vertex.agent.session_id``, ...) are one conversation and become one
  trajectory with ``id`` = that id; with ``per_turn`` each trace (turn) is its own trajectory
  ``f"{conversation}:{n}"`` whose input is that turn's user message. A trace without such an id
  is its own trajectory with ``id`` = the trace id;
* ``messages``: each turn's conversation is the model call that saw the most of it (its input
  plus output messages; a pydantic-ai agent-run span's ``all_messages`` when present); turns are
  joined in time order, a later turn that repeats the earlier history replacing it;
* ``steps``: the tool calls in those messages, linked to their assistant turns and answered by
  the tool messages; each tool span is matched to its call (``_assign``: by call id, else by
  name and arguments, else by name in time order, each call answered by one span) and gives
  ``latency_ms``, its result when no message had it, and its error (a failed span makes the
  step failed). A tool span matching no call becomes a step of its own, never a candidate for
  another span. Without any recorded messages the steps are the tool spans in start order.
  smolagents traces are assembled from their spans instead
  (:mod:`trajudge.trajectories.readers.otel._otel_smolagents`);
* ``usage``: token counts summed over the spans carrying them, skipping a span whose
  descendants carry their own (an agent span repeating its model calls' totals is not counted
  twice); ``latency_s`` = first start to last end;
* ``task_id`` / ``trial`` / ``outcome`` / ``intent`` from ``trajudge.*`` attributes when present
  (else ``task_id`` = the trajectory id); ``metadata``: ``trace_ids``, ``root_span_ids`` (each
  trace's root span, in the same order), ``conversation_id``,
  ``model``, ``agent_name``, ``service_name``.

Spans of known kinds that give nothing (a TOOL span without a tool name) are counted as ignored.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from trajudge.core import InputError, canonical_json
from trajudge.trajectories._io import (
    Record,
    check_file,
    check_unique,
    kind,
    validation_error,
)
from trajudge.trajectories._models import Trajectory, Usage
from trajudge.trajectories._options import Ignored, ReadOptions
from trajudge.trajectories._stream import iter_json_records
from trajudge.trajectories.readers._conversation import NO_RESULT, Conversation
from trajudge.trajectories.readers.otel._otel_conventions import (
    CONVERSATION_KEYS,
    TOKEN_KEYS,
    ToolCall,
    declares_tool,
    is_whole_run,
    llm_messages,
    tool_call,
)
from trajudge.trajectories.readers.otel._otel_messages import Msg
from trajudge.trajectories.readers.otel._otel_smolagents import (
    conversation as smolagents_conversation,
)
from trajudge.trajectories.readers.otel._otel_smolagents import is_smolagents
from trajudge.trajectories.readers.otel._otel_spans import Span, read_spans


def _set_depths(spans: list[Span]) -> None:
    by_id = {s.span_id: s for s in spans}
    for s in spans:
        s.depth = 0
        parent, seen = by_id.get(s.parent_id), {s.span_id}
        while parent is not None and parent.span_id not in seen:
            s.depth += 1
            seen.add(parent.span_id)
            parent = by_id.get(parent.parent_id)


def _tokens(span: Span, keys: tuple[str, ...], file: str) -> int | None:
    for key in keys:
        value = span.attrs.get(key)
        if value is None:
            continue
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise InputError(
                file,
                record=span.record,
                field=span.where(key),
                reason="expected a non-negative integer",
            )
        return value
    return None


def _usage(spans: list[Span], file: str) -> tuple[int | None, int | None]:
    by_id = {s.span_id: s for s in spans}
    keys = TOKEN_KEYS[0] + TOKEN_KEYS[1]
    counted = [s for s in spans if any(k in s.attrs for k in keys)]
    covered: set[str] = set()  # spans with a descendant carrying counts
    for s in counted:
        parent, seen = by_id.get(s.parent_id), set()
        while parent is not None and parent.span_id not in seen:
            seen.add(parent.span_id)
            covered.add(parent.span_id)
            parent = by_id.get(parent.parent_id)
    totals: list[int | None] = [None, None]
    for s in counted:
        if s.span_id in covered:
            continue
        for i in (0, 1):
            value = _tokens(s, TOKEN_KEYS[i], file)
            if value is not None:
                totals[i] = (totals[i] or 0) + value
    return totals[0], totals[1]


def _turn_history(spans: list[Span]) -> list[Msg]:
    """The fullest conversation one trace recorded."""
    best: list[Msg] = []
    best_key: tuple[int, int, int] = (-1, -1, -1)
    for s in spans:
        found = llm_messages(s)
        if found is None:
            continue
        inputs, outputs = found
        history = [*inputs, *outputs]
        key = (1 if is_whole_run(s) else 0, len(history), s.end)
        if key > best_key:
            best, best_key = history, key
    return best


def _same(a: Sequence[Msg], b: Sequence[Msg]) -> bool:
    return [m.key() for m in a if m.role != "system"] == [m.key() for m in b if m.role != "system"]


def _join(turns: list[list[Msg]]) -> tuple[list[Msg], list[int]]:
    """Join per-turn histories; returns the messages and where each turn's new part starts."""
    acc: list[Msg] = []
    starts: list[int] = []
    for history in turns:
        if (acc and len(history) >= len(acc) and _same(history[: len(acc)], acc)) or (
            acc and len(history) > len(acc) and _same(history[-len(acc) :], acc)
        ):
            starts.append(len(acc))
            acc = list(history)
        else:
            starts.append(len(acc))
            acc += [m for m in history if not (acc and m.role == "system")]
    return acc, starts


def _conversation(
    msgs: list[Msg], tools: list[tuple[Span, ToolCall]], ignored: Ignored, label: str
) -> Conversation:
    conv = Conversation()
    for m in msgs:
        if m.role in ("system", "user"):
            conv.say(m.role, m.text, name=m.name)  # type: ignore[arg-type]
        elif m.role == "assistant":
            conv.say("assistant", m.text, name=m.name)
            for call_id, name, args in m.calls:
                conv.call(name, args, call_id)
        else:
            n = conv.pending(call_id=m.call_id) if m.call_id else conv.pending(tool=m.name)
            if n is None:
                ignored.add(
                    "tool message answering no call",
                    "tool messages answering no call",
                    f"{label}: tool message {m.call_id or m.name}",
                )
                conv.result(None, m.text, name=m.name)
            else:
                text = m.text or ""
                # the chat-log convention: a tool message starting with "Error" reports a failure
                conv.result(n, text, ok=not (m.failed or text.startswith("Error")))
    assigned = _assign(conv, [call for _, call in tools])
    for i, (span, call) in enumerate(tools):
        fields: dict[str, Any] = {"latency_ms": (span.end - span.start) / 1e6}
        n = assigned.get(i)
        if call.error is not None:
            said = None if n is None else conv.steps[n].error
            keep = call.bare_error and said not in (None, NO_RESULT)
            fields.update(ok=False, error=said if keep else call.error)
        if n is None:
            if call.error is None or (call.output is not None and call.output != call.error):
                fields["output"] = call.output
            conv.call(call.name, call.args, call.call_id, **fields)
            continue
        step = conv.steps[n]
        if step.output is None and call.output is not None and call.output != call.error:
            fields["output"] = call.output
        if call.error is not None and step.output == call.output:
            fields["output"] = None if step.error is None else step.output
        conv.complete(n, **fields)
    conv.finish()
    return conv


def _assign(conv: Conversation, calls: list[ToolCall]) -> dict[int, int]:
    """Tool span ``i`` -> the step of the recorded call it answers (each step answered once).

    Matched in passes over all the spans, each pass taking the earliest free step: by call id,
    then by name and arguments, then by name in time order. A step made from a tool span is
    never a candidate (two calls of one tool are two steps), and two different call ids never
    match.
    """
    free = list(range(len(conv.steps)))
    out: dict[int, int] = {}
    canon = [canonical_json(c.args) for c in calls]

    def fits(n: int, i: int, rule: str) -> bool:
        s, c = conv.steps[n], calls[i]
        if rule == "id":
            return c.call_id is not None and s.call_id == c.call_id
        if s.tool != c.name or (s.call_id and c.call_id and s.call_id != c.call_id):
            return False
        return rule == "name" or s.canonical_args() == canon[i]

    for rule in ("id", "args", "name"):
        for i in range(len(calls)):
            if i in out:
                continue
            n = next((n for n in free if fits(n, i, rule)), None)
            if n is not None:
                out[i] = n
                free.remove(n)
    return out


def _trajudge_attr(
    spans: list[Span], key: str, types: tuple[type, ...], what: str, file: str
) -> Any:
    for s in sorted(spans, key=lambda s: (s.depth, s.order)):
        if key in s.attrs and s.attrs[key] is not None:
            value = s.attrs[key]
            if not isinstance(value, types) or (bool not in types and isinstance(value, bool)):
                raise InputError(
                    file,
                    record=s.record,
                    field=s.where(key),
                    reason=f"expected {what}, got {kind(value)}",
                )
            return value
    return None


def _first_attr(spans: list[Span], *keys: str) -> Any:
    for key in keys:
        for s in spans:
            if s.attrs.get(key) is not None:
                return s.attrs[key]
    return None


def _trajectory(
    tid: str,
    conv_id: str | None,
    turns: list[list[Span]],
    msgs: list[Msg],
    file: str,
    ignored: Ignored,
) -> Trajectory:
    spans = [s for t in turns for s in t]
    tools: list[tuple[Span, ToolCall]] = []
    for s in sorted(spans, key=lambda s: (s.start, s.order)):
        call = tool_call(s)
        if call is not None:
            tools.append((s, call))
        elif declares_tool(s) and s.attrs.get("gen_ai.tool.name") != "(merged tools)":
            ignored.add(
                "TOOL span without tool attributes",
                "TOOL spans without tool attributes",
                f"{s.record}: {s.path} ({s.name})",
            )
    if is_smolagents(spans):
        conv = smolagents_conversation(spans)
    else:
        conv = _conversation(msgs, tools, ignored, spans[0].record)
    prompt, completion = _usage(spans, file)
    task_id = _trajudge_attr(spans, "trajudge.task_id", (str, int), "a string", file)
    trial = _trajudge_attr(spans, "trajudge.trial", (int,), "an integer", file)
    outcome = _trajudge_attr(spans, "trajudge.outcome", (bool,), "a boolean", file)
    intent = _trajudge_attr(spans, "trajudge.intent", (str,), "a string", file)
    metadata: dict[str, Any] = {"trace_ids": list(dict.fromkeys(s.trace_id for s in spans))}
    # each trace's root span (the first without a parent here): where an evaluation of the
    # trajectory is attached when it is written back (trajudge export)
    roots: dict[str, str] = {}
    for s in sorted(spans, key=lambda s: (s.depth, s.start, s.order)):
        roots.setdefault(s.trace_id, s.span_id)
    metadata["root_span_ids"] = [roots[t] for t in metadata["trace_ids"]]
    if conv_id is not None:
        metadata["conversation_id"] = conv_id
    extras = {
        "model": ("gen_ai.response.model", "gen_ai.request.model", "llm.model_name"),
        "agent_name": ("gen_ai.agent.name", "agent.name", "agent_name"),
    }
    for name, keys in extras.items():
        value = _first_attr(spans, *keys)
        if value is not None:
            metadata[name] = value
    service = next(
        (s.resource["service.name"] for s in spans if "service.name" in s.resource), None
    )
    if service is not None:
        metadata["service_name"] = service
    has_messages = bool(conv.messages) and any(
        m.role != "assistant" or m.content for m in conv.messages
    )
    try:
        return Trajectory(
            id=tid,
            task_id=str(task_id) if task_id is not None else tid,
            trial=trial if trial is not None else 0,
            input=conv.first_user,
            messages=conv.messages if has_messages else [],
            steps=conv.steps,
            final_answer=conv.final_answer,
            outcome=outcome,
            usage=Usage(
                prompt_tokens=prompt,
                completion_tokens=completion,
                latency_s=(max(s.end for s in spans) - min(s.start for s in spans)) / 1e9,
                turns=conv.user_turns if has_messages else None,
            ),
            intent=intent,
            metadata=metadata,
        )
    except ValidationError as exc:
        raise validation_error(file, spans[0].record, exc, f"trace {tid}") from None


def from_otel(path: str | os.PathLike[str], *, per_turn: bool = False) -> list[Trajectory]:
    """Read a trace file: one trajectory per conversation or trace (see the module docstring)."""
    p = check_file(path)
    records = iter_json_records(p)
    return [t for _, t in otel_from_records(p, records, ReadOptions(per_turn=per_turn), Ignored())]


def _conversation_id(spans: list[Span]) -> str | None:
    for key in CONVERSATION_KEYS:
        for s in sorted(spans, key=lambda s: (s.depth, s.order)):
            value = s.attrs.get(key)
            if value is not None and value != "":
                return str(value)
    return None


def otel_from_records(
    path: Path, records: Iterable[Record], opts: ReadOptions, ignored: Ignored
) -> list[tuple[str, Trajectory]]:
    file = str(path)
    traces: dict[str, list[Span]] = {}
    for span in read_spans(file, records, ignored):
        traces.setdefault(span.trace_id, []).append(span)
    if not traces:
        raise InputError(file, reason="no spans found")
    groups: dict[str, list[list[Span]]] = {}
    conv_ids: dict[str, str | None] = {}
    for trace_id, spans in traces.items():
        _set_depths(spans)
        cid = _conversation_id(spans)
        key = cid if cid is not None else trace_id
        groups.setdefault(key, []).append(spans)
        conv_ids[key] = cid
    items: list[tuple[str, Trajectory]] = []
    for key, turns in groups.items():
        turns.sort(key=lambda t: min(s.start for s in t))
        msgs, starts = _join([_turn_history(t) for t in turns])
        label = min(turns[0], key=lambda s: s.order).record
        if opts.per_turn and conv_ids[key] is not None:
            for n, turn in enumerate(turns):
                end = starts[n + 1] if n + 1 < len(turns) else len(msgs)
                part = msgs[starts[n] : end]
                t = _trajectory(f"{key}:{n}", conv_ids[key], [turn], part, file, ignored)
                items.append((label, t))
        else:
            items.append((label, _trajectory(key, conv_ids[key], turns, msgs, file, ignored)))
    check_unique(file, items)
    return items
