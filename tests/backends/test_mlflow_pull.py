"""`trajudge import mlflow+http://...` against a real MLflow tracking server.

The scripted agent run is traced by MLflow's own tracing (``mlflow.openai.autolog`` and
``@mlflow.trace`` tools) into the server and into an OTLP file at once; the pull must build what
the file import builds, and both what the scenario script says it did (its expectations are
written in ``tests/fixtures/traces/scenario.py``, not read from trajudge).
"""

from __future__ import annotations

import itertools
import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
import typer.testing
from _mlflow_server import MlflowServer

import trajudge.cli._commands  # noqa: F401  (registers the commands)
from _postgres import free_port
from trajudge.backends import parse_backend_url, pull_mlflow
from trajudge.backends._mlflow import MlflowClient
from trajudge.backends._mlflow_pull import otlp_document
from trajudge.cli import app
from trajudge.core import InputError
from trajudge.store import Store
from trajudge.trajectories import read_trajectories

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "traces"))
import scenario as S

pytestmark = pytest.mark.slow  # one worker for tests/backends: see its conftest
runner = typer.testing.CliRunner()
_names = itertools.count()


def run(*args: str) -> typer.testing.Result:
    return runner.invoke(app, ["import", *args])


def url_of(server: MlflowServer, experiment: str) -> str:
    return f"mlflow+{server.url}/{experiment}"


@pytest.fixture
def experiment(mlflow_server: MlflowServer, tmp_path: Path) -> tuple[str, Path]:
    """A new experiment holding one traced run; the same run's OTLP file."""
    name = f"airline-support-{next(_names)}"
    file = tmp_path / "run.jsonl"
    mlflow_server.trace_runs(name, file)
    return name, file


def _stored(db: str, dataset: str) -> list[dict[str, Any]]:
    store = Store(db)
    try:
        return [t.model_dump(mode="json") for t in store.trajectories(dataset)]
    finally:
        store.close()


def test_pull_equals_the_otlp_file_and_the_script(
    mlflow_server: MlflowServer,
    experiment: tuple[str, Path],
    tmp_path: Path,
) -> None:
    name, file = experiment
    db = f"sqlite:///{tmp_path / 't.db'}"
    pulled = run(url_of(mlflow_server, name), "--db", db, "--strict")
    assert pulled.exit_code == 0, pulled.output
    assert f"pulled 1 trace from {url_of(mlflow_server, name)}" in pulled.output
    assert "1 added" in pulled.output
    read = run(str(file), "--format", "otel", "--dataset", "file", "--db", db, "--strict")
    assert read.exit_code == 0, read.output
    [server] = _stored(db, name)
    [local] = _stored(db, "file")
    assert server == local  # calls, args, results, user turns, usage, metadata: all of it
    want = S.expected()
    assert [m["content"] for m in server["messages"] if m["role"] == "user"] == want["user_turns"]
    got_steps = [
        {k: s[k] for k in ("tool", "args", "ok")}
        | ({"output": s["output"]} if s["ok"] else {"error": s["error"]})
        for s in server["steps"]
    ]
    assert got_steps == want["steps"]
    assert [s["call_id"] for s in server["steps"]] == [c[2] for k, c in S.TURNS if k == "call"]
    assert server["final_answer"] == want["final_answer"]
    assert server["usage"]["prompt_tokens"] == sum(i for i, _ in S.USAGE) == 970
    assert server["usage"]["completion_tokens"] == sum(o for _, o in S.USAGE) == 112
    assert server["usage"]["turns"] == 2
    assert server["task_id"] == "mlflow-run-0"
    # the id MLflow gives the trace is the OpenTelemetry trace id the file holds
    info = httpx.post(
        f"{mlflow_server.url}/api/3.0/mlflow/traces/search",
        json={
            "locations": [
                {
                    "type": "MLFLOW_EXPERIMENT",
                    "mlflow_experiment": {"experiment_id": _experiment_id(mlflow_server, name)},
                }
            ]
        },
    ).json()["traces"]
    assert [t["trace_id"] for t in info] == [f"tr-{server['id']}"]
    assert server["metadata"]["trace_ids"] == [server["id"]]
    # the census counted the server's spans: three tool spans, one of them failed (the script)
    url = parse_backend_url(url_of(mlflow_server, name), kinds=("mlflow",), need_name=True)
    with MlflowClient(url) as client:
        doc = otlp_document(info[0], client.spans(info[0]["trace_id"]))
    spool = tmp_path / "server.jsonl"
    spool.write_text(json.dumps(doc) + "\n")
    held = read_trajectories(spool, fmt="otel", strict=True).held
    assert held is not None and (held.tool_calls, held.failed_calls) == (3, 1)


def _experiment_id(server: MlflowServer, name: str) -> str:
    got = httpx.get(
        f"{server.url}/api/2.0/mlflow/experiments/get-by-name", params={"experiment_name": name}
    )
    return str(got.json()["experiment"]["experiment_id"])


def test_incremental_pull_and_time_window(
    mlflow_server: MlflowServer,
    experiment: tuple[str, Path],
    tmp_path: Path,
) -> None:
    name, _ = experiment
    db = f"sqlite:///{tmp_path / 't.db'}"
    url = url_of(mlflow_server, name)
    assert run(url, "--db", db).exit_code == 0
    again = run(url, "--db", db)
    assert again.exit_code == 0, again.output
    assert "pulled 0 traces" in again.output  # remembered: nothing read twice
    mlflow_server.trace_runs(name, tmp_path / "more.jsonl", runs=2, first=1)
    more = run(url, "--db", db)
    assert more.exit_code == 0, more.output
    assert "pulled 2 traces" in more.output and "2 added" in more.output
    tasks = sorted(t["task_id"] for t in _stored(db, name))
    assert tasks == ["mlflow-run-0", "mlflow-run-1", "mlflow-run-2"]
    # a window in the future holds nothing; one ending before the runs holds nothing either
    fresh = f"sqlite:///{tmp_path / 'w.db'}"
    later = run(url, "--db", fresh, "--since", "2999-01-01")
    assert later.exit_code == 0 and "pulled 0 traces" in later.output
    before = run(url, "--db", fresh, "--since", "2000-01-01", "--until", "2000-01-02")
    assert before.exit_code == 0 and "pulled 0 traces" in before.output
    window = run(url, "--db", fresh, "--since", "1h")
    assert window.exit_code == 0 and "pulled 3 traces" in window.output, window.output


def _one_line_error(result: typer.testing.Result) -> str:
    assert result.exit_code == 2, result.output
    lines = [x for x in result.output.splitlines() if x.strip()]
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    return lines[0]


def test_faults_are_one_line_and_store_nothing(
    mlflow_server: MlflowServer,
    experiment: tuple[str, Path],
    tmp_path: Path,
) -> None:
    name, _ = experiment
    db = f"sqlite:///{tmp_path / 't.db'}"
    down = _one_line_error(run(f"mlflow+http://127.0.0.1:{free_port()}/{name}", "--db", db))
    assert "cannot reach the MLflow server" in down
    wrong = _one_line_error(run(f"mlflow+{mlflow_server.url}/no/such/prefix/{name}", "--db", db))
    assert "not an MLflow tracking server" in wrong
    unknown = _one_line_error(run(url_of(mlflow_server, "nope"), "--db", db))
    assert "no experiment 'nope'" in unknown and name in unknown and "Default" in unknown
    secret = _one_line_error(
        run(f"mlflow+http://user:hunter2@127.0.0.1:{free_port()}/{name}", "--db", db)
    )
    assert "hunter2" not in secret
    store = Store(db)
    try:
        assert not store.has_dataset(name)
        assert store.pull_cursor(name, url_of(mlflow_server, name)) is None
    finally:
        store.close()


def test_a_name_that_looks_like_an_id_says_which_it_took(
    mlflow_server: MlflowServer,
    experiment: tuple[str, Path],
    tmp_path: Path,
) -> None:
    name, _ = experiment
    exp_id = _experiment_id(mlflow_server, name)
    db = f"sqlite:///{tmp_path / 't.db'}"
    result = run(url_of(mlflow_server, exp_id), "--db", db)
    assert result.exit_code == 0, result.output
    assert f"no experiment is named '{exp_id}': took experiment id {exp_id} ('{name}')" in (
        " ".join(result.output.split())
    )
    # an experiment whose name is another's id: the name wins, and the message says so
    other = httpx.post(
        f"{mlflow_server.url}/api/2.0/mlflow/experiments/create", json={"name": exp_id}
    )
    assert other.status_code == 200, other.text
    both = run(url_of(mlflow_server, exp_id), "--db", db, "--dataset", "by-name")
    assert both.exit_code == 0, both.output
    said = " ".join(both.output.split())
    assert f"'{exp_id}' is both an experiment's name" in said and "took the one named" in said
    assert "pulled 0 traces" in said


def test_a_page_failing_mid_pull_resumes_from_the_last_complete_page(
    mlflow_server: MlflowServer,
    experiment: tuple[str, Path],
    tmp_path: Path,
) -> None:
    name, _ = experiment
    exp_id = _experiment_id(mlflow_server, name)
    # a trace the server lists but whose spans it cannot give (created with its info only),
    # between the first run and the next ones: the second page of a one-trace-a-page pull fails
    bad = "tr-" + "0" * 29 + "bad"
    now = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    made = httpx.post(
        f"{mlflow_server.url}/api/3.0/mlflow/traces",
        json={
            "trace": {
                "trace_info": {
                    "trace_id": bad,
                    "request_time": now,
                    "execution_duration": "1s",
                    "state": "OK",
                    "trace_location": {
                        "type": "MLFLOW_EXPERIMENT",
                        "mlflow_experiment": {"experiment_id": exp_id},
                    },
                }
            }
        },
    )
    assert made.status_code == 200, made.text
    mlflow_server.trace_runs(name, tmp_path / "more.jsonl", runs=1, first=1)
    db = f"sqlite:///{tmp_path / 't.db'}"
    url = parse_backend_url(url_of(mlflow_server, name), kinds=("mlflow",), need_name=True)
    store = Store(db)
    try:
        with pytest.raises(InputError) as failed:
            pull_mlflow(store, url, None, page=1)
        assert f"trace {bad}" in str(failed.value)
        assert "after 1 complete pages, stored" in str(failed.value)
        assert [t.task_id for t in store.trajectories(name)] == ["mlflow-run-0"]
        gone = httpx.post(
            f"{mlflow_server.url}/api/3.0/mlflow/traces/delete-traces",
            json={"experiment_id": exp_id, "request_ids": [bad]},
        )
        assert gone.status_code == 200, gone.text
        summary = pull_mlflow(store, url, None, page=1)
        assert (summary.traces, summary.added) == (1, 1)  # the first run is not read again
        assert sorted(t.task_id for t in store.trajectories(name)) == [
            "mlflow-run-0",
            "mlflow-run-1",
        ]
    finally:
        store.close()


def test_a_trace_in_progress_holds_the_cursor_before_it(
    mlflow_server: MlflowServer,
    experiment: tuple[str, Path],
    tmp_path: Path,
) -> None:
    name, _ = experiment
    exp_id = _experiment_id(mlflow_server, name)
    running = "tr-" + "0" * 28 + "beef"
    now = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    made = httpx.post(
        f"{mlflow_server.url}/api/3.0/mlflow/traces",
        json={"trace": {"trace_info": {
            "trace_id": running, "request_time": now, "state": "IN_PROGRESS",
            "trace_location": {"type": "MLFLOW_EXPERIMENT",
                               "mlflow_experiment": {"experiment_id": exp_id}}}}},
    )  # fmt: skip
    assert made.status_code == 200, made.text
    mlflow_server.trace_runs(name, tmp_path / "more.jsonl", runs=1, first=1)
    db = f"sqlite:///{tmp_path / 't.db'}"
    url = url_of(mlflow_server, name)
    first = run(url, "--db", db)
    assert first.exit_code == 0, first.output
    said = " ".join(first.output.split())
    assert "pulled 1 trace" in said and "1 trace still open, left for the next pull" in said
    gone = httpx.post(
        f"{mlflow_server.url}/api/3.0/mlflow/traces/delete-traces",
        json={"experiment_id": exp_id, "request_ids": [running]},
    )
    assert gone.status_code == 200, gone.text
    second = run(url, "--db", db)
    assert second.exit_code == 0 and "pulled 1 trace" in second.output, second.output
    assert sorted(t["task_id"] for t in _stored(db, name)) == ["mlflow-run-0", "mlflow-run-1"]
