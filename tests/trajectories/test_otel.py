"""OpenTelemetry trace files: containers, errors, lenient parts.

The real exports of every convention are checked in test_real_fixtures.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from trajudge.core import InputError
from trajudge.trajectories import from_otel, read_trajectories

TRACES = Path(__file__).parents[1] / "fixtures" / "traces"
LANGCHAIN = TRACES / "openinference_langchain.jsonl"


def test_single_pretty_printed_document_and_auto_detection(tmp_path: Path) -> None:
    # the OTLP JSON file exporter writes one export per line; a pretty-printed single export
    # (what the collector's debug output or a hand copy looks like) reads the same
    lines = LANGCHAIN.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    path = tmp_path / "export.json"
    path.write_text(json.dumps(first, indent=2), encoding="utf-8")
    result = read_trajectories(path)
    assert result.fmt == "otel"
    (t,) = result.trajectories
    assert t.metadata["conversation_id"] == "conv-langchain-1"


def test_protobuf_json_snake_case_and_base64_ids_read_like_otlp_json(tmp_path: Path) -> None:
    # the same export as protobuf's MessageToJson(preserving_proto_field_name=True) names it
    import base64

    def snake(obj: Any) -> Any:
        if isinstance(obj, list):
            return [snake(v) for v in obj]
        if not isinstance(obj, dict):
            return obj
        out = {}
        for k, v in obj.items():
            key = "".join("_" + c.lower() if c.isupper() else c for c in k)
            if k in ("traceId", "spanId", "parentSpanId") and v:
                v = base64.b64encode(bytes.fromhex(v)).decode()
            out[key] = snake(v)
        return out

    exports = [json.loads(line) for line in LANGCHAIN.read_text().splitlines() if line]
    path = tmp_path / "snake.jsonl"
    path.write_text("\n".join(json.dumps(snake(e)) for e in exports) + "\n", encoding="utf-8")
    assert from_otel(path) == from_otel(LANGCHAIN)


def one_span(**attrs: Any) -> dict[str, Any]:
    def value(v: Any) -> dict[str, Any]:
        if isinstance(v, bool):
            return {"boolValue": v}
        if isinstance(v, int):
            return {"intValue": str(v)}
        return {"stringValue": v}

    span = {
        "traceId": "5b8efff798038103d269b633813fc60c",
        "spanId": "a1c0000000000001",
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
            one_span(**{"trajudge.trial": "two"}),
            f"line 1: {SPAN}.attributes.trajudge.trial: expected an integer, got a string",
        ),
        (
            one_span(**{"trajudge.outcome": 1}),
            f"line 1: {SPAN}.attributes.trajudge.outcome: expected a boolean, got a number",
        ),
        (
            one_span(**{"gen_ai.usage.input_tokens": "many"}),
            f"line 1: {SPAN}.attributes.gen_ai.usage.input_tokens: expected a non-negative integer",
        ),
        ({"spans": []}, "line 1: not a trace export"),
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


def test_arguments_that_are_not_a_json_object_are_kept_whole(tmp_path: Path) -> None:
    # exporters cut long attributes: a truncated argument string must not sink the file
    doc = one_span(
        **{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.arguments": '{"q": "abc'}
    )
    path = tmp_path / "cut.jsonl"
    path.write_text(json.dumps(doc) + "\n", encoding="utf-8")
    (t,) = from_otel(path)
    assert [(s.tool, s.args) for s in t.steps] == [("f", {"input": '{"q": "abc'})]


def test_tool_span_without_tool_attributes_is_counted_and_strict_fails(tmp_path: Path) -> None:
    doc = one_span(**{"openinference.span.kind": "TOOL"})
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["name"] = "tool"
    path = tmp_path / "bare.jsonl"
    path.write_text(json.dumps(doc) + "\n", encoding="utf-8")
    result = read_trajectories(path)
    assert result.ignored.lines() == ["1 TOOL span without tool attributes was ignored"]
    assert result.ignored.details() == [f"TOOL span without tool attributes: line 1: {SPAN} (tool)"]
    with pytest.raises(InputError) as info:
        read_trajectories(path, strict=True)
    assert str(info.value) == f"{path}: 1 TOOL span without tool attributes was ignored (--strict)"


def test_two_traces_claiming_the_same_task_and_trial(tmp_path: Path) -> None:
    a = one_span(**{"trajudge.task_id": "t", "trajudge.trial": 1})
    b = one_span(**{"trajudge.task_id": "t", "trajudge.trial": 1})
    b["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"] = (
        "0af7651916cd43dd8448eb211c80319c"
    )
    path = tmp_path / "dup.jsonl"
    path.write_text(json.dumps(a) + "\n" + json.dumps(b) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        from_otel(path)
    assert str(info.value) == (
        f"{path}: line 2: task_id/trial: duplicate (task_id, trial) = ('t', 1) (first at line 1)"
    )
