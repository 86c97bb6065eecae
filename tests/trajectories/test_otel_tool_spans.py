"""Tool spans alone (no model call recorded its messages) are one step each, in start order.

The file is the real OpenInference export of openai-agents (``tests/fixtures/traces``, see its
manifest) with its LLM spans taken out, as a trace looks when the model client is not
instrumented: its two ``cancel_reservation`` spans have the same name and arguments, and each
must stay a step (the second was folded into the first, the failed one, and lost).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from trajudge.trajectories import read_trajectories

TRACES = Path(__file__).parents[1] / "fixtures" / "traces"
SOURCE = "openinference_openai_agents.jsonl"


def _without_llm_spans(out: Path) -> int:
    """Write the fixture without its LLM spans; return how many TOOL spans it keeps."""
    tools = 0
    lines = []
    for line in (TRACES / SOURCE).read_text().splitlines():
        export: dict[str, Any] = json.loads(line)
        for rs in export.get("resourceSpans", []):
            for ss in rs.get("scopeSpans", []):
                kinds = [
                    {a["key"]: a["value"] for a in s.get("attributes", [])}.get(
                        "openinference.span.kind", {}
                    ).get("stringValue")
                    for s in ss["spans"]
                ]
                ss["spans"] = [s for s, k in zip(ss["spans"], kinds, strict=True) if k != "LLM"]
                tools += kinds.count("TOOL")
        lines.append(json.dumps(export))
    out.write_text("\n".join(lines) + "\n")
    return tools


def test_same_name_tool_spans_are_separate_steps(tmp_path: Path) -> None:
    path = tmp_path / "tools_only.jsonl"
    n_tools = _without_llm_spans(path)
    expected = json.loads((TRACES / "manifest.json").read_text())[SOURCE]["expected"]["steps"]
    assert n_tools == len(expected) == 3
    (t,) = read_trajectories(path).trajectories
    assert [(s.tool, s.args, s.ok) for s in t.steps] == [
        (w["tool"], w["args"], w["ok"]) for w in expected
    ]
    assert t.steps[2].output == expected[2]["output"]
    assert t.steps[1].error is not None and expected[1]["error_contains"] in t.steps[1].error


def test_a_tool_result_that_is_a_json_list_is_kept() -> None:
    """Strands' result blocks give their text once: a tool that answers a JSON array keeps it
    (read a second time as blocks, the array of numbers gave no text and the output was lost)."""
    from trajudge.trajectories.readers.otel._otel_messages import block_text

    assert block_text('[{"text": "[1, 2]"}]') == "[1, 2]"
    assert block_text("[1, 2]") == "[1, 2]"
    assert block_text([{"json": {"a": 1}}]) == '{"a": 1}'
