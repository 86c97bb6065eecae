"""What the two ``trajudge run`` end-to-end tests (Phoenix and MLflow as source and target)
share: the fake LLM that passes every trajectory (``passing_llm``, a fixture registered by
the conftest), the run config, and the ids read from the
OTLP files (the tracer's and the export's) without trajudge."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).parents[1] / "judges"))
from fake_llm import FakeLLM


@pytest.fixture
def passing_llm() -> Iterator[FakeLLM]:
    server = FakeLLM().start()
    # trajectory_reasonableness: 1..5, pass at 4 or more (src/trajudge/rubrics/*.yaml)
    server.decide = lambda user, verdict: {**verdict, "score": 4}
    yield server
    server.stop()


def run_config(tmp: Path, fake: FakeLLM, source: str, export: list[str]) -> Path:
    cfg = {
        "dataset": {"source": source},
        "cache": "cache.db",
        "judges": [{"name": "fake", "model": "openai/fake", "api_base": fake.api_base,
                    "rubric": "trajectory_reasonableness", "swap": False, "max_retries": 0}],
        "report": {"out": "out", "formats": ["json"], "n_boot": 200},
        "export": export,
    }  # fmt: skip
    path = tmp / "trajudge.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def otlp_roots(file: Path) -> dict[str, str]:
    """trace id -> root span id, from an OTLP trace file a tracer wrote."""
    out = {}
    for line in file.read_text().splitlines():
        for rs in json.loads(line)["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                for s in ss["spans"]:
                    if not s.get("parentSpanId"):
                        out[s["traceId"]] = s["spanId"]
    return out


def otlp_events(file: Path) -> list[tuple[str, str, float]]:
    """(trace id, span id, score) of every evaluation event in an exported OTLP file."""
    out = []
    for line in file.read_text().splitlines():
        for rl in json.loads(line)["resourceLogs"]:
            for sl in rl["scopeLogs"]:
                for r in sl["logRecords"]:
                    assert r["eventName"] == "gen_ai.evaluation.result"
                    attrs = {a["key"]: a["value"] for a in r["attributes"]}
                    score = attrs["gen_ai.evaluation.score.value"]["doubleValue"]
                    out.append((r["traceId"], r["spanId"], float(score)))
    return out
