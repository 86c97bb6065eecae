"""OpenTelemetry GenAI traces (OTLP JSON file exporter output) -> trajectories."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from trajudge.trajectories import InputError, from_otel, read_trajectories

FIXTURE = Path(__file__).parent / "data" / "otel_genai_traces.jsonl"
TRACE_A = "5b8efff798038103d269b633813fc60c"
TRACE_B = "0af7651916cd43dd8448eb211c80319c"


def test_fixture_gives_one_trajectory_per_trace() -> None:
    a, b = from_otel(FIXTURE)
    assert (a.id, b.id) == (TRACE_A, TRACE_B)

    # trace A: a support agent; trajudge.* attributes on the invoke_agent root span
    assert (a.task_id, a.trial, a.outcome, a.intent) == ("refund-1", 2, False, "refund")
    assert a.input == "Order A-1001 arrived broken, please refund it."
    assert a.final_answer is not None and a.final_answer.startswith("I could not issue")
    assert [(s.tool, s.call_id, s.ok) for s in a.steps] == [
        ("get_order", "call_7Hq2", True),
        ("issue_refund", "call_9Kd1", False),  # status code 2 and error.type
    ]
    assert a.steps[0].args == {"order_id": "A-1001"}
    assert a.steps[0].output == '{"status": "delivered", "total": 42.5}'
    assert a.steps[1].args == {"order_id": "A-1001", "amount": 42.5}
    assert a.steps[1].error == "payment gateway timeout"
    # get_order runs from +1.30 s to +1.55 s, issue_refund from +2.5 s to +3.1 s
    assert a.steps[0].latency_ms == pytest.approx(250.0, abs=1e-3)
    assert a.steps[1].latency_ms == pytest.approx(600.0, abs=1e-3)
    # chat spans: 700+800+900 input, 80+120+60 output; the agent span's own 2400/260 repeat
    # those totals and must not be added again (that would give 4800/520)
    assert (a.usage.prompt_tokens, a.usage.completion_tokens) == (2400, 260)
    assert a.usage.latency_s == pytest.approx(4.5)  # root span 0.0 .. 4.5 s
    assert a.metadata == {
        "trace_id": TRACE_A,
        "model": "gpt-4o-2024-08-06",  # the response model wins over the requested alias
        "agent_name": "support-agent",
        "conversation_id": "conv_51",
        "service_name": "support-bot",
    }

    # trace B: spread over two export lines, no trajudge.* attributes
    assert (b.task_id, b.trial, b.outcome, b.intent) == (TRACE_B, 0, None, None)
    # Paris starts at +0.2 s but ends after Rome (+0.3 s .. +0.5 s), so the file lists Rome
    # first; steps follow start time. Rome's span has no gen_ai.tool.name: the span name is used
    assert [(s.tool, s.args) for s in b.steps] == [
        ("get_weather", {"city": "Paris"}),
        ("get_weather", {"city": "Rome"}),
    ]
    assert [s.output for s in b.steps] == ["18°C, cloudy", "24°C, sunny"]
    # no messages on the agent span: input from the first chat span, answer from the last
    assert b.input == "Weather in Paris and Rome?"
    assert b.final_answer == "Paris: 18°C and cloudy. Rome: 24°C and sunny."
    assert (b.usage.prompt_tokens, b.usage.completion_tokens) == (120 + 200, 30 + 25)
    assert b.usage.latency_s == pytest.approx(1.4)
    assert b.metadata["model"] == "gpt-4o-mini"


def test_single_pretty_printed_document_and_auto_detection(tmp_path: Path) -> None:
    first = json.loads(FIXTURE.read_text(encoding="utf-8").splitlines()[0])
    path = tmp_path / "export.json"
    path.write_text(json.dumps(first, indent=2), encoding="utf-8")
    result = read_trajectories(path)
    assert result.fmt == "otel"
    # only the tool spans of trace B are in the first line
    assert [t.id for t in result.trajectories] == [TRACE_A, TRACE_B]
    assert len(result.trajectories[1].steps) == 2


def one_span(**attrs: Any) -> dict[str, Any]:
    def value(v: Any) -> dict[str, Any]:
        if isinstance(v, bool):
            return {"boolValue": v}
        if isinstance(v, int):
            return {"intValue": str(v)}
        return {"stringValue": v}

    span = {
        "traceId": "t1",
        "spanId": "s1",
        "name": "execute_tool f",
        "startTimeUnixNano": "1000",
        "endTimeUnixNano": "2000",
        "attributes": [{"key": k, "value": value(v)} for k, v in attrs.items()],
    }
    return {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}


SPAN = "resourceSpans[0].scopeSpans[0].spans[0]"


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        (
            one_span(
                **{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.arguments": "{"}
            ),
            f"line 1: {SPAN}.attributes.gen_ai.tool.call.arguments: invalid JSON",
        ),
        (
            one_span(
                **{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.arguments": "3"}
            ),
            f"line 1: {SPAN}.attributes.gen_ai.tool.call.arguments: expected a JSON object, got a",
        ),
        (
            one_span(**{"trajudge.trial": "two"}),
            f"line 1: {SPAN}.attributes.trajudge.trial: expected an integer, got a string",
        ),
        (
            one_span(**{"trajudge.outcome": 1}),
            f"line 1: {SPAN}.attributes.trajudge.outcome: expected a boolean, got a number",
        ),
        ({"spans": []}, "line 1: resourceSpans: missing: not an OTLP trace export"),
        (
            {"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "t", "spanId": "s"}]}]}]},
            f"line 1: {SPAN}.startTimeUnixNano: expected nanoseconds, got null",
        ),
    ],
)
def test_bad_spans_name_line_and_attribute(tmp_path: Path, doc: Any, expected: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(doc) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        from_otel(path)
    assert str(info.value).startswith(f"{path}: {expected}")


def test_two_traces_claiming_the_same_task_and_trial(tmp_path: Path) -> None:
    a = one_span(**{"trajudge.task_id": "t", "trajudge.trial": 1})
    b = one_span(**{"trajudge.task_id": "t", "trajudge.trial": 1})
    b["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"] = "t2"
    path = tmp_path / "dup.jsonl"
    path.write_text(json.dumps(a) + "\n" + json.dumps(b) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        from_otel(path)
    assert str(info.value) == (
        f"{path}: line 2: task_id/trial: duplicate (task_id, trial) = ('t', 1) (first at line 1)"
    )
