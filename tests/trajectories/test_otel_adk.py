"""Google ADK's traces read the same in every schema and content-capture mode ADK offers.

The ``adk_*`` fixtures were written by google-adk itself (``tests/fixtures/traces/gen_adk.py``):
ADK 2.13 in its GenAI schema with content on the spans, in log records or both; the same
release switched back to its legacy schema (``ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN=1``); and ADK
1.39 (the last 1.x) in that schema by default, each legacy one with the content on ADK's own
spans, in the GenAI events, or both. One scripted run, so one trajectory. ADK 2's defaults
record no content at all (``adk_genai_no_content.jsonl``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from trajudge.trajectories import Trajectory, read_trajectories
from trajudge.trajectories._options import Ignored
from trajudge.trajectories._stream import iter_json_records
from trajudge.trajectories.readers.otel._otel_conventions import llm_messages
from trajudge.trajectories.readers.otel._otel_spans import read_spans

TRACES = Path(__file__).parents[1] / "fixtures" / "traces"
MANIFEST: dict[str, Any] = json.loads((TRACES / "manifest.json").read_text(encoding="utf-8"))
ADK = sorted(n for n in MANIFEST if n.startswith("adk_") and "scenario" not in MANIFEST[n])
NO_CONTENT = "adk_genai_no_content.jsonl"
LEGACY = [n for n in ADK if n.startswith(("adk_legacy_", "adk_schema_v1"))]


def _whole(t: Trajectory) -> tuple[Any, ...]:
    steps = [s.model_dump(exclude={"latency_ms"}) for s in t.steps]
    return t.id, t.messages, steps, t.final_answer, t.usage.prompt_tokens, t.usage.completion_tokens


def _raw(name: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The file's spans and log records, straight from its JSON lines."""
    spans: list[dict[str, Any]] = []
    logs: list[dict[str, Any]] = []
    for line in (TRACES / name).read_text(encoding="utf-8").splitlines():
        doc = json.loads(line)
        spans += [
            s for r in doc.get("resourceSpans", []) for ss in r["scopeSpans"] for s in ss["spans"]
        ]
        logs += [
            x
            for r in doc.get("resourceLogs", [])
            for sl in r["scopeLogs"]
            for x in sl["logRecords"]
        ]
    return spans, logs


def _attr(span: dict[str, Any], key: str) -> Any:
    return next(
        (a["value"].get("stringValue") for a in span["attributes"] if a["key"] == key), None
    )


def test_the_files_cover_every_schema_and_mode() -> None:
    majors = {MANIFEST[n]["tools"][0].split("==")[1].split(".")[0] for n in ADK}
    assert majors == {"1", "2"}
    assert len(LEGACY) == 6  # two releases x content on ADK's spans, in the events, both


@pytest.mark.parametrize("name", ADK)
def test_every_schema_and_mode_gives_the_same_trajectory(name: str) -> None:
    (reference,) = read_trajectories(TRACES / "adk_genai_latest.jsonl").trajectories
    (t,) = read_trajectories(TRACES / name).trajectories
    assert _whole(t) == _whole(reference)


@pytest.mark.parametrize("name", LEGACY)
def test_the_legacy_files_hold_the_content_where_their_mode_says(name: str) -> None:
    spans, logs = _raw(name)
    on_spans = not name.endswith("_event_only.jsonl")
    in_events = name.endswith(("_event_only.jsonl", "_span_and_event.jsonl"))
    call_llm = [s for s in spans if s["name"] == "call_llm"]
    tools = [s for s in spans if s["name"].startswith("execute_tool")]
    assert len(call_llm) == 5 and len(tools) == 3
    # ADK writes "{}" in place of content it does not capture on its spans
    assert all((_attr(s, "gcp.vertex.agent.llm_request") != "{}") is on_spans for s in call_llm)
    assert all((_attr(s, "gcp.vertex.agent.tool_call_args") != "{}") is on_spans for s in tools)
    contents = [
        next(f["value"] for f in x["body"]["kvlistValue"]["values"] if f["key"] == "content")
        for x in logs
    ]
    assert contents and all((c != {"stringValue": "<elided>"}) is in_events for c in contents)


def test_elided_events_are_no_messages() -> None:
    # ADK's defaults: the model calls' GenAI events say "<elided>"; the call_llm spans beside
    # them hold the conversation, and no placeholder may compete with it
    name = "adk_legacy_1.39.1.jsonl"
    spans = read_spans(name, iter_json_records(TRACES / name), Ignored())
    generate = [s for s in spans if s.name.startswith("generate_content")]
    assert len(generate) == 5 and all(s.events for s in generate)
    assert [llm_messages(s) for s in generate] == [None] * 5
    (t,) = read_trajectories(TRACES / name).trajectories
    assert all(m.content != "<elided>" for m in t.messages)


def test_without_content_the_calls_failures_and_tokens_are_read() -> None:
    entry = MANIFEST[NO_CONTENT]
    want = entry["expected"]
    # ADK recorded no message, argument or result: the reservation is named nowhere in the file
    assert "ABC123" not in (TRACES / NO_CONTENT).read_text(encoding="utf-8")
    result = read_trajectories(TRACES / NO_CONTENT)
    assert not result.ignored and result.losses == []
    (t,) = result.trajectories
    assert t.id == want["conversation_id"]
    assert [(s.tool, s.args, s.ok, s.error, s.output) for s in t.steps] == [
        (w["tool"], w["args"], w["ok"], w.get("error"), None) for w in want["steps"]
    ]
    assert [s.call_id for s in t.steps] == entry["call_ids"]
    assert (t.messages, t.final_answer, t.usage.turns) == ([], None, None)
    assert (t.usage.prompt_tokens, t.usage.completion_tokens) == (
        want["prompt_tokens"],
        want["completion_tokens"],
    )
