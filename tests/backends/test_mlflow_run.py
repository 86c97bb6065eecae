"""``trajudge run`` with ``dataset.source:`` a real MLflow experiment and ``export:`` the same
MLflow server (and an OTLP file): pull, check, judge with the fake LLM on loopback, report,
write back; the assessments read back from MLflow equal the store; a second run pulls nothing,
calls no model and writes nothing twice; a new trace is pulled, judged and written back alone.
The expected trace and span ids come from the OTLP file MLflow's tracer wrote beside the server,
never from trajudge."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
import typer.testing
from _mlflow_server import MlflowServer
from _run_config import otlp_events, otlp_roots, run_config
from fake_llm import FakeLLM

import trajudge.cli._commands  # noqa: F401  (registers the commands)
from trajudge.cli import app
from trajudge.store import Store

pytestmark = pytest.mark.slow  # one worker for tests/backends: see its conftest
N = 3  # runs traced before the first `trajudge run`
EXPERIMENT = "ci-mlflow"
runner = typer.testing.CliRunner()


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
    passing_llm: FakeLLM,
    tmp_path: Path,
) -> None:
    traced = tmp_path / "traced.jsonl"
    mlflow_server.trace_runs(EXPERIMENT, traced, runs=N)
    source = f"mlflow+{mlflow_server.url}/{EXPERIMENT}"
    evals = tmp_path / "evals.jsonl"
    target = f"mlflow+{mlflow_server.url}"
    config = run_config(tmp_path, passing_llm, source, [target, f"otlp-file:{evals}"])
    db = f"sqlite:///{tmp_path / 's.db'}"
    first = runner.invoke(app, ["run", str(config), "--db", db])
    assert first.exit_code == 0, first.output
    said = " ".join(first.output.split())
    roots = otlp_roots(traced)  # one trace a run
    assert len(roots) == N
    assert f"pulled {N} traces from {source}: {N} trajectories ({N} added" in said, said
    assert len(passing_llm.requests) == N  # one pointwise call per run, no swap
    assert f"exported {N} judgments and 0 labels to {target}: {N} written, 0 already" in said
    assert f"exported {N} judgments and 0 labels to otlp-file:{evals}: {N} written" in said
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["dataset"] == EXPERIMENT
    events = otlp_events(evals)
    assert len(events) == N
    assert all(roots[trace] == span and score == 4.0 for trace, span, score in events)
    back = _assessments(mlflow_server, list(roots))
    _check_against_the_store(back, db)

    text = evals.read_text()
    again = runner.invoke(app, ["run", str(config), "--db", db])
    assert again.exit_code == 0, again.output
    said = " ".join(again.output.split())
    assert f"pulled 0 traces from {source}" in said, said
    assert len(passing_llm.requests) == N  # nothing new to judge
    assert f"to {target}: 0 written, {N} already there" in said, said
    assert f"to otlp-file:{evals}: 0 written, {N} already there" in said
    assert evals.read_text() == text
    assert _assessments(mlflow_server, list(roots)) == back

    mlflow_server.trace_runs(EXPERIMENT, traced, runs=1, first=N)  # one new run
    third = runner.invoke(app, ["run", str(config), "--db", db])
    assert third.exit_code == 0, third.output
    said = " ".join(third.output.split())
    roots = otlp_roots(traced)
    assert len(roots) == N + 1
    assert f"pulled 1 trace from {source}: 1 trajectory (1 added" in said, said
    # (the scripted runs say the same words: its judgment may come from the cache)
    assert f"exported {N + 1} judgments and 0 labels to {target}: 1 written, {N} already" in said
    assert len(otlp_events(evals)) == N + 1
    now = _assessments(mlflow_server, list(roots))
    _check_against_the_store(now, db)
    assert {t: now[t] for t in back} == back  # the first ones untouched
