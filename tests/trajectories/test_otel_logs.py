"""OTLP log records beside the spans (the GenAI event form) are read and joined, none dropped.

``otel_genai_openai_events.jsonl`` was written by opentelemetry-instrumentation-openai-v2 with
message content captured and the OTLP JSON file exporters (see the fixtures' manifest): the
messages are only in its ``resourceLogs`` lines. Such a file was refused whole ("not a trace
export") at its first line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajudge.core import InputError
from trajudge.trajectories import read_trajectories
from trajudge.trajectories._options import Ignored
from trajudge.trajectories._stream import iter_json_records
from trajudge.trajectories.readers.otel._otel_spans import read_spans

FILE = Path(__file__).parents[1] / "fixtures" / "traces" / "otel_genai_openai_events.jsonl"


def _log_records(lines: list[str]) -> list[tuple[str, str]]:
    """(span id, event name) of every log record in the file's lines, counted from the JSON."""
    out = []
    for line in lines:
        for rl in json.loads(line).get("resourceLogs", []):
            for sl in rl["scopeLogs"]:
                out += [(r["spanId"], r["eventName"]) for r in sl["logRecords"]]
    return out


def test_every_log_record_joins_its_span() -> None:
    lines = FILE.read_text().splitlines()
    held = _log_records(lines)
    assert len(held) == 35  # 5 model calls: 3 + 5 + 7 + 9 + 11 messages and choices
    ignored = Ignored()
    spans = read_spans(str(FILE), iter_json_records(FILE), ignored)
    joined = [(s.span_id, name) for s in spans for name, _ in s.events]
    assert sorted(joined) == sorted(held) and not ignored


def test_a_log_record_whose_span_is_missing_is_counted_never_dropped(tmp_path: Path) -> None:
    lines = FILE.read_text().splitlines()
    first_span = next(i for i, line in enumerate(lines) if "resourceSpans" in line)
    orphans = _log_records(lines[:first_span])  # the first model call's messages
    path = tmp_path / "cut.jsonl"
    path.write_text("\n".join(lines[:first_span] + lines[first_span + 1 :]) + "\n")
    result = read_trajectories(path)
    assert result.ignored.lines() == ["3 log records of no span in the file were ignored"]
    assert len(orphans) == 3
    with pytest.raises(InputError, match=r"log records? of no span"):
        read_trajectories(path, strict=True)


@pytest.mark.parametrize(
    ("doc", "field"),
    [
        ({"resourceSpans": [{"scopeSpans": [["not", "an", "object"]]}]}, "scopeSpans[0]"),
        ({"resourceSpans": [], "resourceLogs": [{"scopeLogs": [{"logRecords": [7]}]}]},
         "scopeLogs[0].logRecords[0]"),
        ({"resourceLogs": ["x"]}, "resourceLogs[0]"),
    ],
)  # fmt: skip
def test_a_container_entry_that_is_not_an_object_is_one_line(
    tmp_path: Path, doc: dict[str, object], field: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(doc) + "\n")
    with pytest.raises(InputError) as err:
        read_trajectories(path)
    message = str(err.value)
    assert field in message and "expected an object" in message and "\n" not in message
