"""``trajudge export``: judgments, human labels and calibration written back as OTel
``gen_ai.evaluation.result`` events (OTLP JSON file) and as Phoenix span annotations on a real
server, read back and compared with the store; idempotent; an interrupted export completes.

The calibration figures are recomputed here with scikit-learn and by hand from the tables
below, never read from trajudge."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer.testing
from sklearn.metrics import cohen_kappa_score

import trajudge.cli._commands  # noqa: F401  (registers the commands)
from _phoenix import Phoenix
from trajudge.cli import app
from trajudge.store import Store
from trajudge.trajectories import Trajectory

RUBRIC = "answer_faithfulness"  # a shipped binary rubric
JUDGE = [1, 1, 0, 1, 0, 0, 1, 1, 0, 1]  # judge alpha's verdict on conversation k
HUMAN = [1, 1, 0, 0, 0, 1, 1, 1, 0, 1]  # annotator h1's label on conversation k
N = len(JUDGE)
CONFIG = "c0ffee" * 10 + "abcd"
runner = typer.testing.CliRunner()


@pytest.fixture(scope="module")
def judged(phoenix: Phoenix, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """N traced conversations pulled from Phoenix, judged by alpha and labelled by h1, and a
    native trajectory (not from OTel) judged too: (database URL, Phoenix URL with project)."""
    tmp = tmp_path_factory.mktemp("exported")
    phoenix.trace_run("exported", tmp / "run.jsonl", n=N)
    db = f"sqlite:///{tmp / 's.db'}"
    url = f"phoenix+{phoenix.url}/exported"
    assert runner.invoke(app, ["import", url, "--db", db]).exit_code == 0
    store = Store(db)
    store.import_dataset("exported", [Trajectory(id="native-1", task_id="native")])
    for k in range(N):
        store.add_judgment("exported", _judgment(f"conv-phoenix-{k}", JUDGE[k]))
        store.save_label("exported", f"conv-phoenix-{k}", RUBRIC, "h1", float(HUMAN[k]),
                         note=f"checked turn {k}")  # fmt: skip
    store.add_judgment("exported", _judgment("native-1", 1))
    store.close()
    return db, url


def _judgment(tid: str, verdict: int) -> dict[str, Any]:
    return {
        "trajectory_id": tid, "judge": "alpha", "rubric_id": RUBRIC, "rubric_version": "v1",
        "model": "claude-3-haiku", "mode": "pointwise", "order": "ab", "sample": 0,
        "score": float(verdict), "verdict": "pass" if verdict else "fail",
        "reasoning": f"the answer {'matches' if verdict else 'contradicts'} the tool output",
        "config_sha256": CONFIG, "judge_config": json.dumps({"model": "claude-3-haiku"}),
        "latency_s": 1.0,
    }  # fmt: skip


def _expected_calibration() -> dict[str, float]:
    tp = sum(h == 1 and j == 1 for h, j in zip(HUMAN, JUDGE, strict=True))
    fn = sum(h == 1 and j == 0 for h, j in zip(HUMAN, JUDGE, strict=True))
    tn = sum(h == 0 and j == 0 for h, j in zip(HUMAN, JUDGE, strict=True))
    fp = sum(h == 0 and j == 1 for h, j in zip(HUMAN, JUDGE, strict=True))
    return {
        "kappa": float(cohen_kappa_score(HUMAN, JUDGE)),
        "tpr": tp / (tp + fn),  # 5 / 6
        "tnr": tn / (tn + fp),  # 3 / 4
    }


def _attrs(record: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for a in record["attributes"]:
        v = a["value"]
        out[a["key"]] = int(v["intValue"]) if "intValue" in v else next(iter(v.values()))
    return out


def _check_provenance(a: dict[str, Any], tid_k: int) -> None:
    exp = _expected_calibration()
    assert a["trajudge.judge.config_sha256"] == CONFIG
    assert a["trajudge.rubric.id"] == RUBRIC and a["trajudge.rubric.version"] == "v1"
    assert a["trajudge.calibration.labels"] == N
    assert a["trajudge.calibration.kappa"] == pytest.approx(exp["kappa"], abs=1e-9)
    assert a["trajudge.calibration.kappa.low"] < exp["kappa"] < a["trajudge.calibration.kappa.high"]
    assert a["trajudge.calibration.tpr"] == pytest.approx(exp["tpr"])
    assert a["trajudge.calibration.tnr"] == pytest.approx(exp["tnr"])
    assert a["trajudge.judge.name"] == "alpha"
    assert a["gen_ai.evaluation.score.label"] == ("pass" if JUDGE[tid_k] else "fail")


def test_the_otlp_file_holds_one_event_per_judgment_and_label_on_the_judged_span(
    judged: tuple[str, str], tmp_path: Path
) -> None:
    db, _ = judged
    out = tmp_path / "evals.jsonl"
    first = runner.invoke(app, ["export", "exported", "--to", f"otlp-file:{out}", "--db", db])
    assert first.exit_code == 0, first.output
    assert f"{N} judgments and {N} labels" in first.output and f"{2 * N} written" in first.output
    # the native trajectory says why it is left out, in one line
    assert "1 judged or labelled trajectories were not imported from OTel traces" in first.output
    assert "native-1" in first.output
    records = [
        r
        for line in out.read_text().splitlines()
        for rl in json.loads(line)["resourceLogs"]
        for sl in rl["scopeLogs"]
        for r in sl["logRecords"]
    ]
    assert len(records) == 2 * N
    store = Store(db)
    spans = {t.id: (t.metadata["trace_ids"][0], t.metadata["root_span_ids"][0])
             for t in store.trajectories("exported") if t.id != "native-1"}  # fmt: skip
    labels = store.labels_frame("exported")
    store.close()
    for r in records:
        a = _attrs(r)
        assert r["eventName"] == "gen_ai.evaluation.result"
        assert a["gen_ai.evaluation.name"] == RUBRIC
        tid = a["trajudge.trajectory.id"]
        k = int(tid.rsplit("-", 1)[1])
        assert (r["traceId"], r["spanId"]) == spans[tid]
        if a["trajudge.source"] == "judge":
            assert a["gen_ai.evaluation.score.value"] == float(JUDGE[k])
            _check_provenance(a, k)
        else:
            assert a["gen_ai.evaluation.score.value"] == float(HUMAN[k])
            assert a["trajudge.label.annotator"] == "h1"
            assert a["gen_ai.evaluation.explanation"] == f"checked turn {k}"
    assert len(labels) == N
    # no trajectory text went out
    text = out.read_text()
    assert "mia_li_3668" not in text and "SFO" not in text
    again = runner.invoke(app, ["export", "exported", "--to", f"otlp-file:{out}", "--db", db])
    assert "0 written" in again.output and f"{2 * N} already there" in again.output
    assert out.read_text() == text


def test_phoenix_annotations_read_back_equal_the_store_and_an_interrupted_export_completes(
    judged: tuple[str, str], phoenix: Phoenix, monkeypatch: pytest.MonkeyPatch
) -> None:
    import trajudge.backends._phoenix_out as out
    from _faulty_proxy import FaultyProxy
    from trajudge.backends import parse_backend_url
    from trajudge.backends._phoenix import PhoenixClient

    db, url = judged
    monkeypatch.setattr(out, "BATCH", 3)  # several batches, so one can fail midway
    with FaultyProxy(phoenix.url) as proxy:
        proxy.fail("/v1/span_annotations", 3, sticky=True)  # down from the third request on
        cut = runner.invoke(app, ["export", "exported", "--to", f"phoenix+{proxy.url}", "--db", db])
        assert cut.exit_code == 2 and "6 written before" in cut.output, cut.output
        assert len(cut.output.strip().splitlines()) == 1
        proxy.heal()
        done = runner.invoke(app, ["export", "exported", "--to", f"phoenix+{proxy.url}/exported",
                                   "--db", db])  # fmt: skip
        assert done.exit_code == 0, done.output
    again = runner.invoke(app, ["export", "exported", "--to", f"phoenix+{phoenix.url}", "--db", db])
    assert again.exit_code == 0, again.output
    store = Store(db)
    roots = {t.metadata["root_span_ids"][0]: t.id
             for t in store.trajectories("exported") if t.id != "native-1"}  # fmt: skip
    store.close()
    with PhoenixClient(parse_backend_url(url, kinds=("phoenix",), need_name=True)) as client:
        found = client.annotations(sorted(roots))
    # one annotation per judgment and per label, after three exports (one cut short)
    assert len(found) == 2 * N
    by_kind = {"LLM": 0, "HUMAN": 0}
    for a in found:
        tid = roots[a["span_id"]]
        k = int(tid.rsplit("-", 1)[1])
        by_kind[a["annotator_kind"]] += 1
        if a["annotator_kind"] == "LLM":
            assert a["name"] == f"{RUBRIC} (judge alpha)"
            assert a["result"]["score"] == float(JUDGE[k])
            _check_provenance(
                {**a["metadata"], "gen_ai.evaluation.score.label": a["result"]["label"]}, k
            )
        else:
            assert a["name"] == f"{RUBRIC} (human)"
            assert a["result"]["score"] == float(HUMAN[k])
            assert a["result"]["explanation"] == f"checked turn {k}"
            assert a["metadata"]["trajudge.label.annotator"] == "h1"
    assert by_kind == {"LLM": N, "HUMAN": N}


def test_export_faults_are_one_line_exit_2(judged: tuple[str, str], tmp_path: Path) -> None:
    from _postgres import free_port

    db, _ = judged
    for target, needle in (
        (f"phoenix+http://127.0.0.1:{free_port()}", "cannot reach the Phoenix server"),
        (f"otlp+http://127.0.0.1:{free_port()}", "cannot reach the collector"),
        ("jaeger+http://127.0.0.1:1", "unknown backend"),
        ("somewhere", "unknown target"),
    ):
        r = runner.invoke(app, ["export", "exported", "--to", target, "--db", db])
        assert r.exit_code == 2 and needle in r.output, r.output
        assert len(r.output.strip().splitlines()) == 1, r.output
    r = runner.invoke(app, ["export", "nope", "--to", f"otlp-file:{tmp_path / 'x'}", "--db", db])
    assert r.exit_code == 2
    assert not (tmp_path / "x").exists()
