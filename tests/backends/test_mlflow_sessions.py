"""MLflow sessions: a chat app traced one trace per user turn, the turns of a conversation
joined by MLflow's session id (``mlflow.update_current_trace(session_id=...)``), which the
server keeps in the trace's metadata only. The pull makes each session one trajectory, as the
OTel reader makes one of the traces of an OTLP file that share a ``session.id``: the pulled
trajectory equals the import of the OTLP file MLflow's tracer wrote beside the server, and both
equal what the scenario script says it did (``tests/fixtures/traces/scenario.py``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import typer.testing
from _mlflow_server import MlflowServer

import trajudge.cli._commands  # noqa: F401  (registers the commands)
from trajudge.backends import parse_backend_url, pull_mlflow
from trajudge.backends._mlflow import MlflowClient
from trajudge.cli import app
from trajudge.store import Store

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "traces"))
import scenario as S

pytestmark = pytest.mark.slow  # one worker for tests/backends: see its conftest
runner = typer.testing.CliRunner()
EXPERIMENT = "chat-sessions"


def _stored(db: str, dataset: str) -> list[dict[str, Any]]:
    store = Store(db)
    try:
        return [t.model_dump(mode="json") for t in store.trajectories(dataset)]
    finally:
        store.close()


def _file_traces(file: Path) -> list[tuple[int, str, str, str | None]]:
    """(start, trace id, root span id, session.id) of each trace in the OTLP file."""
    out = []
    for line in file.read_text().splitlines():
        for rs in json.loads(line)["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                for s in ss["spans"]:
                    if not s.get("parentSpanId"):
                        attrs = {a["key"]: a["value"] for a in s.get("attributes", [])}
                        session = attrs.get("session.id", {}).get("stringValue")
                        out.append((int(s["startTimeUnixNano"]), s["traceId"], s["spanId"],
                                    session))  # fmt: skip
    return sorted(out)


def _check_conversation(t: dict[str, Any], run: int) -> None:
    """The scripted conversation, both turns, as the scenario says it went."""
    want = S.expected()
    assert t["id"] == f"session-mlflow-run-{run}" == t["metadata"]["conversation_id"]
    assert t["task_id"] == f"mlflow-run-{run}"
    assert [m["content"] for m in t["messages"] if m["role"] == "user"] == want["user_turns"]
    steps = [
        {k: s[k] for k in ("tool", "args", "ok")}
        | ({"output": s["output"]} if s["ok"] else {"error": s["error"]})
        for s in t["steps"]
    ]
    assert steps == want["steps"]
    assert [s["call_id"] for s in t["steps"]] == [c[2] for k, c in S.TURNS if k == "call"]
    assert t["final_answer"] == want["final_answer"]
    assert t["usage"]["prompt_tokens"] == sum(i for i, _ in S.USAGE) == 970
    assert t["usage"]["completion_tokens"] == sum(o for _, o in S.USAGE) == 112
    assert t["usage"]["turns"] == 2


def test_a_session_is_one_trajectory_equal_to_the_otlp_file_import(
    mlflow_server: MlflowServer,
    tmp_path: Path,
) -> None:
    file = tmp_path / "chat.jsonl"
    mlflow_server.trace_runs(EXPERIMENT, file, runs=2, mode="session")
    traces = _file_traces(file)
    assert len(traces) == 4  # two runs, one trace a user turn
    sessions = {"session-mlflow-run-0", "session-mlflow-run-1"}
    assert {s for *_, s in traces} == sessions

    # the server keeps the session in each trace's metadata, and on no span
    url = parse_backend_url(f"mlflow+{mlflow_server.url}/{EXPERIMENT}", kinds=("mlflow",),
                            need_name=True)  # fmt: skip
    with MlflowClient(url) as client:
        exp_id, _, _ = client.experiment()
        infos, _ = client.search(exp_id, "trace.timestamp_ms >= 0", None)
        assert len(infos) == 4
        for info in infos:
            meta = info["trace_metadata"]
            assert meta["mlflow.trace.session"] in sessions
            assert meta["mlflow.trace.user"] == meta["mlflow.trace.session"].replace(
                "session-", "user-"
            )
            for span in client.spans(info["trace_id"]):
                assert "session.id" not in span.get("attributes", {})

    db = f"sqlite:///{tmp_path / 't.db'}"
    source = f"mlflow+{mlflow_server.url}/{EXPERIMENT}"
    pulled = runner.invoke(app, ["import", source, "--db", db, "--strict"])
    assert pulled.exit_code == 0, pulled.output
    said = " ".join(pulled.output.split())
    assert f"pulled 4 traces from {source}: 2 trajectories (2 added" in said, said
    read = runner.invoke(
        app, ["import", str(file), "--format", "otel", "--dataset", "file", "--db", db, "--strict"]
    )
    assert read.exit_code == 0, read.output
    server = sorted(_stored(db, EXPERIMENT), key=lambda t: t["id"])
    local = sorted(_stored(db, "file"), key=lambda t: t["id"])
    assert server == local  # calls, args, results, user turns, usage, metadata: all of it
    for run, t in enumerate(server):
        _check_conversation(t, run)
        mine = [(tr, sp) for _, tr, sp, s in traces if s == t["id"]]  # in time order
        assert t["metadata"]["trace_ids"] == [tr for tr, _ in mine]
        assert t["metadata"]["root_span_ids"] == [sp for _, sp in mine]

    # one trace a page: a session's second turn comes after its first is stored, as a turn
    # traced after a pull would; the stored turn is read again, the trajectory updated whole
    store = Store(f"sqlite:///{tmp_path / 'paged.db'}")
    try:
        summary = pull_mlflow(store, url, "paged", page=1)
        assert summary.traces == 4 and summary.pages >= 4
        assert (summary.added, summary.updated) == (2, 2)
        paged = sorted((t.model_dump(mode="json") for t in store.trajectories("paged")),
                       key=lambda t: t["id"])  # fmt: skip
    finally:
        store.close()
    assert paged == server
