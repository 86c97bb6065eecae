"""The census of an OpenTelemetry trace export: a lower bound on the tool calls it holds.

A trace records each tool execution as a span of its own in every convention trajudge reads
(GenAI ``execute_tool``, OpenInference ``TOOL``, OpenLLMetry ``tool``, pydantic-ai's ``running
tool``), so a trace holds at least as many tool calls as it has named tool spans, and at least
as many failed ones as those spans that ended in an error. The calls its model messages name
beyond those (tools run without a span), its user turns and its tokens are repeated from model
call to model call and joined by the reader alone: the census does not count them, and says so
(``Held.unknown``) instead of echoing the reader.

smolagents ends a run by calling its ``final_answer`` tool: that span is the answer, not a
call.
"""

from __future__ import annotations

from typing import Any

from trajudge.trajectories._census import Held
from trajudge.trajectories._options import Ignored

_NAME_KEYS = ("gen_ai.tool.name", "tool.name", "tool_name", "traceloop.entity.name")


def census_otel(label: str, value: Any, held: Held) -> None:
    """Census of ``--format otel``: the records are kept and their spans counted at the end."""
    records = held.scratch.get("records")
    if records is None:
        records = held.scratch["records"] = []
        held.floor.update(("tool_calls", "failed_calls"))
        held.unknown.update(("user_messages", "prompt_tokens", "completion_tokens"))
        held.finish.append(_count)
    records.append((label, value))


def _is_tool(name: str, attrs: dict[str, Any]) -> bool:
    kinds = (
        attrs.get("gen_ai.operation.name"),
        str(attrs.get("openinference.span.kind", "")).upper(),
        attrs.get("traceloop.span.kind"),
    )
    return (
        "execute_tool" in kinds
        or "TOOL" in kinds
        or "tool" in kinds
        or name.startswith("execute_tool")
        or name == "running tool"
    )


def _count(held: Held) -> None:
    # the containers (OTLP, Jaeger, Tempo, SDK JSON) are told apart by the shared span parser:
    # what is counted here is what the spans say, not how the reader joins them
    from trajudge.trajectories.readers.otel._otel_spans import read_spans

    spans = read_spans("<census>", held.scratch.pop("records"), Ignored())
    for span in spans:
        if not _is_tool(span.name, span.attrs):
            continue
        tool = next((span.attrs[k] for k in _NAME_KEYS if span.attrs.get(k)), None)
        if tool is None or (tool == "final_answer" and span.scope.startswith("openinference")):
            continue
        held.tool_calls += 1
        failed = span.error is not None or any(n == "exception" for n, _ in span.events)
        held.failed_calls += 1 if failed else 0
