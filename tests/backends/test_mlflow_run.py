"""``trajudge run`` with ``dataset.source:`` a real MLflow experiment and ``export:`` the same
MLflow server (and an OTLP file): pull, check, judge with the fake LLM on loopback, report,
write back; the assessments read back from MLflow equal the store; a second run pulls nothing,
calls no model and writes nothing twice; a new trace is pulled, judged and written back alone.
The expected trace and span ids come from the OTLP file MLflow's tracer wrote beside the server,
never from trajudge."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import typer.testing
import yaml
from _mlflow_server import MlflowServer

import trajudge.cli._commands  # noqa: F401  (registers the commands)
from trajudge.cli import app
from trajudge.store import Store

sys.path.insert(0, str(Path(__file__).parents[1] / "judges"))
from fake_llm import FakeLLM

pytestmark = pytest.mark.slow  # one worker for tests/backends: see its conftest
N = 3  # runs traced before the first `trajudge run`
EXPERIMENT = "ci-mlflow"
runner = typer.testing.CliRunner()


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    server = FakeLLM().start()
    # trajectory_reasonableness: 1..5, pass at 4 or more (src/trajudge/rubrics/*.yaml)
    server.decide = lambda user, verdict: {**verdict, "score": 4}
    yield server
    server.stop()


def _config(tmp: Path, fake: FakeLLM, source: str, export: list[str]) -> Path:
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


def _roots(file: Path) -> dict[str, str]:
    """trace id -> root span id, from the OTLP file MLflow's tracer wrote."""
    out = {}
    for line in file.read_text().splitlines():
        for rs in json.loads(line)["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                for s in ss["spans"]:
                    if not s.get("parentSpanId"):
                        out[s["traceId"]] = s["spanId"]
    return out


def _events(file: Path) -> list[tuple[str, str, float]]:
    """(trace id, span id, score) of every evaluation event in an exported OTLP file."""
    out = []
    for line in file.read_text().splitlines():
        for rl in json.loads(line)["resourceLogs"]:
            for sl in rl["scopeLogs"]:
                for r in sl["logRecords"]:
                    attrs = {a["key"]: a["value"] for a in r["attributes"]}
                    score = attrs["gen_ai.evaluation.score.value"]["doubleValue"]
                    out.append((r["traceId"], r["spanId"], float(score)))
    return out


def _assessments(server: MlflowServer, traces: list[str]) -> dict[str, list[dict[str, Any]]]:
    """The valid assessments of each trace (OpenTelemetry id -> MLflow's read of them)."""
    out = {}
    for trace in traces:
        got = httpx.get(f"{server.url}/api/3.0/mlflow/traces/tr-{trace}", timeout=60)
        assert got.status_code == 200, got.text
        info = got.json()["trace"]["trace_info"]
        out[trace] = [a for a in info.get("assessments", []) if a.get("valid", True)]
    return out


def _check_against_the_store(back: dict[str, list[dict[str, Any]]], db: str) -> None:
    store = Store(db)
    try:
        frame = store.judgments_frame(EXPERIMENT)
        by_trace = {t.metadata["trace_ids"][0]: t.id for t in store.trajectories(EXPERIMENT)}
    finally:
        store.close()
    rows = frame.set_index("trajectory_id")
    assert set(back) == set(by_trace)
    for trace, items in back.items():
        [a] = items  # one judgment, no label: one assessment
        row = rows.loc[by_trace[trace]]
        assert a["source"] == {"source_type": "LLM_JUDGE", "source_id": "fake"}
        assert a["feedback"]["value"] == row["verdict"] == "pass"
        assert float(a["metadata"]["trajudge.score"]) == row["score"] == 4.0
        assert a["metadata"]["trajudge.rubric_id"] == "trajectory_reasonableness"
        assert a["metadata"]["trajudge.judge_config_sha256"] == row["config_sha256"]
        assert a["rationale"] and a["rationale"] == row["reasoning"]


def test_run_pulls_from_mlflow_judges_reports_and_writes_back_once(
    mlflow_server: MlflowServer,
    fake_llm: FakeLLM,
    tmp_path: Path,
) -> None:
    traced = tmp_path / "traced.jsonl"
    mlflow_server.trace_runs(EXPERIMENT, traced, runs=N)
    source = f"mlflow+{mlflow_server.url}/{EXPERIMENT}"
    evals = tmp_path / "evals.jsonl"
    target = f"mlflow+{mlflow_server.url}"
    config = _config(tmp_path, fake_llm, source, [target, f"otlp-file:{evals}"])
    db = f"sqlite:///{tmp_path / 's.db'}"
    first = runner.invoke(app, ["run", str(config), "--db", db])
    assert first.exit_code == 0, first.output
    said = " ".join(first.output.split())
    roots = _roots(traced)  # one trace a run
    assert len(roots) == N
    assert f"pulled {N} traces from {source}: {N} trajectories ({N} added" in said, said
    assert len(fake_llm.requests) == N  # one pointwise call per run, no swap
    assert f"exported {N} judgments and 0 labels to {target}: {N} written, 0 already" in said
    assert f"exported {N} judgments and 0 labels to otlp-file:{evals}: {N} written" in said
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["dataset"] == EXPERIMENT
    events = _events(evals)
    assert len(events) == N
    assert all(roots[trace] == span and score == 4.0 for trace, span, score in events)
    back = _assessments(mlflow_server, list(roots))
    _check_against_the_store(back, db)

    text = evals.read_text()
    again = runner.invoke(app, ["run", str(config), "--db", db])
    assert again.exit_code == 0, again.output
    said = " ".join(again.output.split())
    assert f"pulled 0 traces from {source}" in said, said
    assert len(fake_llm.requests) == N  # nothing new to judge
    assert f"to {target}: 0 written, {N} already there" in said, said
    assert f"to otlp-file:{evals}: 0 written, {N} already there" in said
    assert evals.read_text() == text
    assert _assessments(mlflow_server, list(roots)) == back

    mlflow_server.trace_runs(EXPERIMENT, traced, runs=1, first=N)  # one new run
    third = runner.invoke(app, ["run", str(config), "--db", db])
    assert third.exit_code == 0, third.output
    said = " ".join(third.output.split())
    roots = _roots(traced)
    assert len(roots) == N + 1
    assert f"pulled 1 trace from {source}: 1 trajectory (1 added" in said, said
    # (the scripted runs say the same words: its judgment may come from the cache)
    assert f"exported {N + 1} judgments and 0 labels to {target}: 1 written, {N} already" in said
    assert len(_events(evals)) == N + 1
    now = _assessments(mlflow_server, list(roots))
    _check_against_the_store(now, db)
    assert {t: now[t] for t in back} == back  # the first ones untouched
