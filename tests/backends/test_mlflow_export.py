"""`trajudge export DATASET --to mlflow+http://...` against a real MLflow tracking server: what
is read back from the server equals what the store holds; a re-export and an interrupted one
add nothing twice; a label changed since is replaced; faults are one line and write nothing.

Expected figures come from the test's own data: κ from scikit-learn, TPR and TNR counted by
hand below.
"""

from __future__ import annotations

import itertools
import json
import re
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
import typer.testing
from _mlflow_server import MlflowServer
from sklearn.metrics import cohen_kappa_score

import trajudge.cli._commands  # noqa: F401  (registers the commands)
from _postgres import free_port
from trajudge.backends import parse_backend_url
from trajudge.backends._mlflow_export import export_mlflow
from trajudge.cli import app
from trajudge.store import Store

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "traces"))
import scenario as S

pytestmark = pytest.mark.slow  # one worker for tests/backends: see its conftest
runner = typer.testing.CliRunner()
_names = itertools.count()
RUBRIC = "answer_faithfulness"  # a shipped binary rubric
CONFIG = "c" * 64
SECRET = "sk-abcdefghijklmnopqrstuvwx0123"
HUMAN = [1, 0, 1, 1, 0, 1]  # run i's label
JUDGE = [1, 0, 0, 1, 1, 1]  # run i's verdict


def cli(*args: str) -> typer.testing.Result:
    return runner.invoke(app, list(args))


@pytest.fixture
def judged(mlflow_server: MlflowServer, tmp_path: Path) -> tuple[str, str, str]:
    """Six traced runs pulled into a dataset, judged and labelled: (db, dataset, experiment)."""
    name = f"export-{next(_names)}"
    mlflow_server.trace_runs(name, tmp_path / "runs.jsonl", runs=6)
    db = f"sqlite:///{tmp_path / 't.db'}"
    assert cli("import", f"mlflow+{mlflow_server.url}/{name}", "--db", db).exit_code == 0
    store = Store(db)
    try:
        for t in store.trajectories(name):
            i = int(t.task_id.rsplit("-", 1)[1])
            row = {"trajectory_id": t.id, "judge": "alpha", "rubric_id": RUBRIC,
                   "rubric_version": "v1", "model": "gpt-4o-mini", "mode": "pointwise",
                   "order": "ab", "config_sha256": CONFIG, "judge_config": "{}"}  # fmt: skip
            store.add_judgment(
                name,
                {**row, "sample": 0, "score": float(JUDGE[i]),
                 "verdict": "pass" if JUDGE[i] else "fail",
                 "reasoning": f"run {i} looks {'right' if JUDGE[i] else 'wrong'}; {SECRET}"},
            )  # fmt: skip
            if i == 0:  # a call that failed: no verdict to export
                store.add_judgment(name, {**row, "sample": 1, "error": "timeout"})
            store.save_label(name, t.id, RUBRIC, "h1", float(HUMAN[i]), note=f"label {i}")
            if i == 1:
                store.save_label(name, t.id, RUBRIC, "h2", None, skipped=True)
    finally:
        store.close()
    return db, name, name


def _assessments(server: MlflowServer, trace_id: str) -> list[dict[str, Any]]:
    info = httpx.get(f"{server.url}/api/3.0/mlflow/traces/{trace_id}").json()["trace"]
    return [a for a in info["trace_info"].get("assessments", []) if a.get("valid", True)]


def _all(server: MlflowServer, db: str, dataset: str) -> dict[str, list[dict[str, Any]]]:
    store = Store(db)
    try:
        ids = {t.id: f"tr-{t.metadata['trace_ids'][0]}" for t in store.trajectories(dataset)}
    finally:
        store.close()
    return {tid: _assessments(server, trace) for tid, trace in ids.items()}


def _runs(server: MlflowServer, experiment: str) -> list[dict[str, Any]]:
    exp = httpx.get(
        f"{server.url}/api/2.0/mlflow/experiments/get-by-name",
        params={"experiment_name": experiment},
    ).json()["experiment"]["experiment_id"]
    got = httpx.post(f"{server.url}/api/2.0/mlflow/runs/search", json={"experiment_ids": [exp]})
    return list(got.json().get("runs", []))


def test_export_read_back_equals_the_store(
    mlflow_server: MlflowServer,
    judged: tuple[str, str, str],
) -> None:
    db, dataset, experiment = judged
    target = f"mlflow+{mlflow_server.url}"
    first = cli("export", dataset, "--to", target, "--db", db)
    assert first.exit_code == 0, first.output
    said = " ".join(first.output.split())
    assert "written 1 calibration, 6 judgments, 6 labels" in said
    assert re.search(
        rf"exported \d+ judgments and \d+ labels to {re.escape(target)}: 13 written, 0 already",
        said,
    )
    assert "not exported: 1 judgments that failed (no verdict)" in said
    assert "not exported: 1 skipped labels (no value)" in said
    store = Store(db)
    try:
        stored = store.judgments_frame(dataset)
        stored = stored[stored["error"].isna()].set_index("trajectory_id")
        labels = store.labels_frame(dataset, source="human")
        labels = labels[labels["value"].notna()].set_index("trajectory_id")
        task_of = {t.id: int(t.task_id.rsplit("-", 1)[1]) for t in store.trajectories(dataset)}
    finally:
        store.close()
    back = _all(mlflow_server, db, dataset)
    text = json.dumps(back)
    for trajectory_text in (S.USER_1, S.SYSTEM, S.OUTPUT_GET, S.ASK, S.DONE):
        assert trajectory_text not in text
    assert SECRET not in text and "[redacted]" in text
    for tid, items in back.items():
        judged_ = [a for a in items if a["source"]["source_type"] == "LLM_JUDGE"]
        human = [a for a in items if a["source"]["source_type"] == "HUMAN"]
        assert len(judged_) == 1 and len(human) == 1, items
        j, h = judged_[0], human[0]
        assert j["feedback"]["value"] == stored.loc[tid, "verdict"]
        assert j["source"]["source_id"] == "alpha"
        meta = j["metadata"]
        assert meta["trajudge.judge_config_sha256"] == CONFIG
        assert (meta["trajudge.rubric_id"], meta["trajudge.rubric_version"]) == (RUBRIC, "v1")
        assert float(meta["trajudge.score"]) == stored.loc[tid, "score"]
        i = task_of[tid]
        assert j["rationale"].startswith(f"run {i} looks")
        assert h["feedback"]["value"] == labels.loc[tid, "value"] == float(HUMAN[i])
        assert (h["source"]["source_id"], h["rationale"]) == ("h1", f"label {i}")
    [run] = _runs(mlflow_server, experiment)
    metrics = {m["key"]: m["value"] for m in run["data"]["metrics"]}
    tags = {t["key"]: t["value"] for t in run["data"]["tags"]}
    assert metrics["kappa"] == pytest.approx(cohen_kappa_score(HUMAN, JUDGE))  # 0.25
    # human-pass runs 0, 2, 3, 5: the judge passes 0, 3, 5 -> TPR 3/4; human-fail runs 1, 4:
    # the judge fails 1 only -> TNR 1/2
    assert (metrics["tpr"], metrics["tnr"]) == (pytest.approx(3 / 4), pytest.approx(1 / 2))
    assert metrics["kappa_low"] <= metrics["kappa"] <= metrics["kappa_high"]
    assert (metrics["n_items"], metrics["n_labels"]) == (6, 6)
    assert tags["trajudge.judge_config_sha256"] == CONFIG
    assert (tags["trajudge.rubric_id"], tags["trajudge.rubric_version"]) == (RUBRIC, "v1")
    again = cli("export", dataset, "--to", target, "--db", db)
    assert again.exit_code == 0, again.output
    said = " ".join(again.output.split())
    assert "written nothing; replaced nothing" in said
    assert re.search(rf"to {re.escape(target)}: 0 written, 13 already there", said)
    assert _all(mlflow_server, db, dataset) == back
    assert len(_runs(mlflow_server, experiment)) == 1


class _Stop(Exception):
    pass


def test_an_interrupted_export_completes_without_duplicates(
    mlflow_server: MlflowServer,
    judged: tuple[str, str, str],
) -> None:
    db, dataset, _ = judged
    url = parse_backend_url(f"mlflow+{mlflow_server.url}", kinds=("mlflow",), need_name=False)

    def stop_after_five(summary: Any) -> None:
        if sum(summary.written.values()) >= 5:
            raise _Stop

    store = Store(db)
    try:
        with pytest.raises(_Stop):
            export_mlflow(store, url, dataset, progress=stop_after_five)
        half = _all(mlflow_server, db, dataset)
        assert sum(len(v) for v in half.values()) == 5
        rest = export_mlflow(store, url, dataset)
        assert sum(rest.written.values()) == 12 - 5 + 1  # the other seven, and the calibration
        assert sum(rest.kept.values()) == 5
    finally:
        store.close()
    whole = _all(mlflow_server, db, dataset)
    keys = [a["metadata"]["trajudge.key"] for v in whole.values() for a in v]
    assert len(keys) == len(set(keys)) == 12


def test_a_changed_label_replaces_its_assessment(
    mlflow_server: MlflowServer,
    judged: tuple[str, str, str],
) -> None:
    db, dataset, _ = judged
    target = f"mlflow+{mlflow_server.url}"
    assert cli("export", dataset, "--to", target, "--db", db).exit_code == 0
    store = Store(db)
    try:
        first = store.trajectories(dataset)[0]
        old = store.labels_frame(dataset).set_index("trajectory_id").loc[first.id, "value"]
        store.save_label(dataset, first.id, RUBRIC, "h1", 1.0 - old, note="changed my mind")
    finally:
        store.close()
    again = cli("export", dataset, "--to", target, "--db", db)
    assert again.exit_code == 0, again.output
    said = " ".join(again.output.split())
    assert "replaced 1 calibration, 1 label" in said and "written nothing" in said
    mine = [
        a
        for a in _all(mlflow_server, db, dataset)[first.id]
        if a["source"]["source_type"] == "HUMAN"
    ]
    assert [(a["feedback"]["value"], a["rationale"]) for a in mine] == [
        (1.0 - old, "changed my mind")
    ]


def test_export_faults_are_one_line_and_write_nothing(
    mlflow_server: MlflowServer,
    judged: tuple[str, str, str],
    tmp_path: Path,
) -> None:
    db, dataset, _ = judged
    down = cli("export", dataset, "--to", f"mlflow+http://127.0.0.1:{free_port()}", "--db", db)
    assert down.exit_code == 2 and "cannot reach the MLflow server" in down.output, down.output
    missing = cli("export", "nope", "--to", f"mlflow+{mlflow_server.url}", "--db", db)
    assert missing.exit_code == 2 and "no dataset 'nope'" in missing.output, missing.output
    # the same run imported from its OTLP file into another store, traced again elsewhere:
    # its trace ids are not on this server
    other = f"sqlite:///{tmp_path / 'other.db'}"
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "traces" / "mlflow_openai.jsonl"
    assert cli("import", str(fixture), "--dataset", "elsewhere", "--db", other).exit_code == 0
    store = Store(other)
    try:
        [t] = store.trajectories("elsewhere")
        store.save_label("elsewhere", t.id, RUBRIC, "h1", 1.0)
    finally:
        store.close()
    foreign = cli("export", "elsewhere", "--to", f"mlflow+{mlflow_server.url}", "--db", other)
    assert foreign.exit_code == 2, foreign.output
    assert "1 of the 1 traces of dataset 'elsewhere' are not on this server" in " ".join(
        foreign.output.split()
    )
    for result in (down, missing, foreign):
        assert len([x for x in result.output.splitlines() if x.strip()]) == 1
    assert all(v == [] for v in _all(mlflow_server, db, dataset).values())


def test_an_assessment_is_asked_again_only_when_the_server_cannot_have_written_it(
    mlflow_server: MlflowServer,
    judged: tuple[str, str, str],
) -> None:
    """Creating an assessment is not idempotent: after a 502 (a proxy: did the server write
    it?) the export stops rather than risk writing it twice; after a 429 (refused unprocessed)
    it is asked again. Either way each judgment and label is on the server once."""
    from _faulty_proxy import FaultyProxy

    db, dataset, _ = judged
    with FaultyProxy(mlflow_server.url) as proxy:
        target = f"mlflow+{proxy.url}"
        proxy.fail("/assessments", 3, status=502)
        cut = cli("export", dataset, "--to", target, "--db", db)
        assert cut.exit_code == 2, cut.output
        assert "HTTP 502" in cut.output and len(cut.output.strip().splitlines()) == 1
        assert sum("/assessments" in p for p in proxy.seen) == 3  # the third not sent again
        assert sum(len(v) for v in _all(mlflow_server, db, dataset).values()) == 2
        proxy.seen.clear()
        proxy.fail("/assessments", 1, status=429, headers={"Retry-After": "0"})
        done = cli("export", dataset, "--to", target, "--db", db)
        assert done.exit_code == 0, done.output
        assert sum("/assessments" in p for p in proxy.seen) == 10 + 1  # the 429 asked again
    whole = _all(mlflow_server, db, dataset)
    keys = [a["metadata"]["trajudge.key"] for v in whole.values() for a in v]
    assert len(keys) == len(set(keys)) == 12
