"""``trajudge export DATASET --to otlp+http://HOST:PORT`` against a real OTLP/HTTP receiver
(oteltest's sink, ``tests/backends/_otlp_sink.py``), which decodes each request with the official
``opentelemetry-proto`` messages: what it decoded equals what the store holds; a re-export sends
nothing; a receiver that dies mid-export and comes back gets the rest, and nothing twice.

The dataset is imported from OTLP files the agents' own tracers wrote (tests/fixtures/traces);
the expected trace and span ids are read from those files here, the calibration recomputed with
scikit-learn and by hand, never read from trajudge.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.testing
from _otlp_sink import OtlpSink, hex_id, otlp_sink
from sklearn.metrics import cohen_kappa_score

import trajudge.cli._commands  # noqa: F401  (registers the commands)
from _faulty_proxy import FaultyProxy
from trajudge.backends._evaluations import collect
from trajudge.backends._otlp_out import otlp_headers
from trajudge.backends._otlp_send import send_http
from trajudge.cli import app
from trajudge.core import InputError
from trajudge.store import Store

pytestmark = pytest.mark.slow  # one worker for tests/backends: see its conftest
runner = typer.testing.CliRunner()
TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
FILES = [  # one conversation each, of distinct ids
    "mlflow_openai.jsonl",
    "openinference_openai.jsonl",
    "openinference_langchain.jsonl",
    "openinference_openai_agents.jsonl",
    "pydantic_ai_v6.jsonl",
    "strands_genai_latest.jsonl",
]
RUBRIC = "answer_faithfulness"  # a shipped binary rubric
JUDGE = [1, 0, 0, 1, 1, 1]  # judge alpha's verdict on the trajectory of FILES[k]
HUMAN = [1, 0, 1, 1, 0, 1]  # annotator h1's label on it
CONFIG = "ab" * 32
SECRET = "sk-abcdefghijklmnopqrstuvwx0123"


@pytest.fixture(scope="session")
def sink() -> Iterator[OtlpSink]:
    yield from otlp_sink()


def _first_root(file: Path) -> tuple[str, str]:
    """(trace id, span id) of the earliest root span in an OTLP JSON file: the span a
    conversation's evaluation belongs on."""
    roots = []
    for line in file.read_text().splitlines():
        for rs in json.loads(line)["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                for s in ss["spans"]:
                    if not s.get("parentSpanId"):
                        roots.append((int(s["startTimeUnixNano"]), s["traceId"], s["spanId"]))
    _, trace, span = min(roots)
    return trace.lower(), span.lower()


def cli(*args: str) -> typer.testing.Result:
    return runner.invoke(app, list(args))


@pytest.fixture
def judged(tmp_path: Path) -> tuple[str, dict[str, int]]:
    """The six files imported into dataset ``traced``, judged by alpha (one call failed) and
    labelled by h1: (database URL, trajectory id -> k)."""
    db = f"sqlite:///{tmp_path / 's.db'}"
    index: dict[str, int] = {}
    for k, name in enumerate(FILES):
        done = cli("import", str(TRACES / name), "--dataset", "traced", "--db", db)
        assert done.exit_code == 0, done.output
        store = Store(db)
        try:
            [new] = [t for t in store.trajectories("traced") if t.id not in index]
        finally:
            store.close()
        index[new.id] = k
    store = Store(db)
    try:
        for tid, k in index.items():
            row = {"trajectory_id": tid, "judge": "alpha", "rubric_id": RUBRIC,
                   "rubric_version": "v1", "model": "gpt-4o-mini", "mode": "pointwise",
                   "order": "ab", "config_sha256": CONFIG, "judge_config": "{}"}  # fmt: skip
            store.add_judgment("traced", {**row, "sample": 0, "score": float(JUDGE[k]),
                               "verdict": "pass" if JUDGE[k] else "fail",
                               "reasoning": f"file {k} is {'right' if JUDGE[k] else 'wrong'}; "
                               f"key {SECRET}"})  # fmt: skip
            if k == 0:
                store.add_judgment("traced", {**row, "sample": 1, "error": "timeout"})
            store.save_label("traced", tid, RUBRIC, "h1", float(HUMAN[k]), note=f"label {k}")
    finally:
        store.close()
    return db, index


def _records(sink: OtlpSink) -> list[tuple[str, dict[str, Any]]]:
    """(content type, log record) of everything the receiver decoded, in order; every request
    was one the official message knows field for field."""
    out = []
    for got in sink.received():
        assert got["unknown"] == 0, got
        for rl in got["request"]["resourceLogs"]:
            attrs = {a["key"]: a["value"] for a in rl["resource"]["attributes"]}
            assert attrs == {"service.name": {"stringValue": "trajudge"}}
            for sl in rl["scopeLogs"]:
                out += [(got["content_type"], r) for r in sl["logRecords"]]
    return out


def _value(v: dict[str, Any]) -> Any:
    [(kind, x)] = v.items()
    return int(x) if kind == "intValue" else x


def test_the_receiver_decodes_what_the_store_holds_and_a_re_export_sends_nothing(
    sink: OtlpSink, judged: tuple[str, dict[str, int]]
) -> None:
    db, index = judged
    sink.clear()
    target = f"otlp+{sink.url}"
    first = cli("export", "traced", "--to", target, "--db", db)
    assert first.exit_code == 0, first.output
    said = " ".join(first.output.split())
    assert f"exported 6 judgments and 6 labels to {target}: 12 written, 0 already there" in said
    assert "1 errored judgments not exported" in said
    records = _records(sink)
    assert len(records) == 12
    assert {ct for ct, _ in records} == {"application/x-protobuf"}
    roots = {tid: _first_root(TRACES / FILES[k]) for tid, k in index.items()}
    tp = sum(h == j == 1 for h, j in zip(HUMAN, JUDGE, strict=True))  # files 0, 3, 5
    tn = sum(h == j == 0 for h, j in zip(HUMAN, JUDGE, strict=True))  # file 1
    kappa = cohen_kappa_score(HUMAN, JUDGE)
    store = Store(db)
    try:
        judgments = store.judgments_frame("traced")
        judgments = judgments[judgments["error"].isna()].set_index("trajectory_id")
        labels = store.labels_frame("traced", source="human").set_index("trajectory_id")
        texts = [m.content for t in store.trajectories("traced") for m in t.messages]
    finally:
        store.close()
    seen: dict[tuple[str, str], int] = {}
    for _, r in records:
        assert r["eventName"] == "gen_ai.evaluation.result"
        a = {x["key"]: _value(x["value"]) for x in r["attributes"]}
        tid = a["trajudge.trajectory.id"]
        k = index[tid]
        assert (hex_id(r["traceId"]), hex_id(r["spanId"])) == roots[tid]
        assert a["gen_ai.evaluation.name"] == a["trajudge.rubric.id"] == RUBRIC
        assert a["trajudge.dataset"] == "traced"
        seen[(tid, a["trajudge.source"])] = seen.get((tid, a["trajudge.source"]), 0) + 1
        if a["trajudge.source"] == "judge":
            assert a["gen_ai.evaluation.score.value"] == judgments.loc[tid, "score"] == JUDGE[k]
            assert a["gen_ai.evaluation.score.label"] == judgments.loc[tid, "verdict"]
            assert a["gen_ai.evaluation.explanation"].startswith(f"file {k} is ")
            assert (a["trajudge.judge.name"], a["trajudge.judge.model"]) == ("alpha", "gpt-4o-mini")
            assert a["trajudge.judge.config_sha256"] == CONFIG
            assert a["trajudge.rubric.version"] == "v1"
            assert a["trajudge.judgment.sample"] == 0
            assert a["trajudge.calibration.labels"] == 6
            assert a["trajudge.calibration.kappa"] == pytest.approx(kappa)  # 0.25
            assert (
                a["trajudge.calibration.kappa.low"] <= kappa <= a["trajudge.calibration.kappa.high"]
            )
            assert a["trajudge.calibration.tpr"] == pytest.approx(tp / sum(HUMAN))  # 3 / 4
            assert a["trajudge.calibration.tnr"] == pytest.approx(tn / (6 - sum(HUMAN)))  # 1 / 2
        else:
            assert a["gen_ai.evaluation.score.value"] == labels.loc[tid, "value"] == HUMAN[k]
            assert a["trajudge.label.annotator"] == "h1"
            assert a["gen_ai.evaluation.explanation"] == f"label {k}"
    assert seen == {(tid, s): 1 for tid in index for s in ("judge", "human")}
    body = json.dumps(sink.received())
    assert SECRET not in body and "[redacted]" in body
    for text in texts:  # no trajectory text went out
        if isinstance(text, str) and len(text) > 20:
            assert text not in body, text

    again = cli("export", "traced", "--to", target, "--db", db)
    assert again.exit_code == 0, again.output
    assert f"to {target}: 0 written, 12 already there" in " ".join(again.output.split())
    assert len(sink.received()) == 1  # the first export's one request, and no other


def test_a_receiver_gone_mid_export_gets_the_rest_once_it_is_back(
    sink: OtlpSink, judged: tuple[str, dict[str, int]]
) -> None:
    db, _ = judged
    shown = f"otlp+{sink.url}"
    sink.stop()
    sink.clear()
    sink.start(stop_after=2)  # answers two requests, dies on the third
    store = Store(db)
    try:
        found = collect(store, "traced")  # as the CLI does (the same bootstrap)
        assert len(found.evaluations) == 12
        with pytest.raises(InputError) as failed:
            send_http(store, sink.url, shown, "traced", found.evaluations, batch=3)
        assert "cannot reach the collector" in str(failed.value)
        assert "(6 evaluations sent before; the next export resumes after them)" in str(
            failed.value
        )
        assert sink.wait_exited() == 3
        assert len(_records(sink)) == 6
        sink.start()  # back, on the same port
        assert send_http(store, sink.url, shown, "traced", found.evaluations, batch=3) == (6, 6)
    finally:
        store.close()
    records = _records(sink)
    assert len(sink.received()) == 4  # two requests before, two after
    items = [
        next(
            x["value"]["stringValue"] for x in r["attributes"] if x["key"] == "trajudge.export.item"
        )
        for _, r in records
    ]
    assert len(items) == len(set(items)) == 12
    assert set(items) == {e.item for e in found.evaluations}
    again = cli("export", "traced", "--to", shown, "--db", db)
    assert again.exit_code == 0, again.output
    assert "0 written, 12 already there" in " ".join(again.output.split())
    assert len(sink.received()) == 4


def test_the_collector_gets_the_otel_headers_and_nothing_shows_them(
    sink: OtlpSink,
    judged: tuple[str, dict[str, int]],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    db, _ = judged
    sink.clear()
    target = f"otlp+{sink.url}"
    token = "s3cr3t-collector-token"
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_LOGS_HEADERS", raising=False)
    # a malformed entry: one line naming the variable and the entry, not its text; nothing sent
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", f"x-tenant=evals,Bearer {token}")
    bad = cli("export", "traced", "--to", target, "--db", db)
    assert bad.exit_code == 2, bad.output
    assert bad.output.strip() == (
        "error: OTEL_EXPORTER_OTLP_HEADERS: entry 2 is not key=value (its text not shown)"
    )
    assert sink.received() == []
    # the OpenTelemetry exporter's form: comma-separated, values percent-encoded
    monkeypatch.setenv(
        "OTEL_EXPORTER_OTLP_HEADERS", f"Authorization=Bearer%20{token}, x-tenant = evals"
    )
    done = cli("export", "traced", "--to", target, "--db", db)
    assert done.exit_code == 0, done.output
    [got] = sink.received()
    assert got["headers"]["authorization"] == f"Bearer {token}"
    assert got["headers"]["x-tenant"] == "evals"
    assert token not in done.output
    assert token.encode() not in (tmp_path / "s.db").read_bytes()
    # the logs' own variable comes first, whole (as the OpenTelemetry SDK reads them)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_LOGS_HEADERS", "x-tenant=logs")
    assert otlp_headers() == {"x-tenant": "logs"}


def test_a_busy_collector_is_retried_and_a_lasting_fault_stops_the_export(
    sink: OtlpSink, judged: tuple[str, dict[str, int]]
) -> None:
    """429 / 503 are transient (the OTLP specification): retried after the server's
    Retry-After; five in a row stop the export with one line and nothing marked sent."""
    db, _ = judged
    sink.clear()
    with FaultyProxy(sink.url) as proxy:
        target = f"otlp+{proxy.url}"
        proxy.fail("/v1/logs", 1, sticky=True, status=503, headers={"Retry-After": "0"})
        down = cli("export", "traced", "--to", target, "--db", db)
        assert down.exit_code == 2, down.output
        assert " ".join(down.output.split()) == (
            f"error: {target}: the collector answered HTTP 503"
        )
        assert proxy.seen == ["/v1/logs"] * 5 and sink.received() == []
        proxy.fail("/v1/logs", 1, status=429, headers={"Retry-After": "0"})  # once only
        up = cli("export", "traced", "--to", target, "--db", db)
        assert up.exit_code == 0, up.output
        assert "12 written, 0 already there" in " ".join(up.output.split())
        assert proxy.seen == ["/v1/logs"] * 7
    assert len(sink.received()) == 1 and len(_records(sink)) == 12


def test_a_partial_success_is_an_error_and_that_request_is_sent_again(
    sink: OtlpSink, judged: tuple[str, dict[str, int]]
) -> None:
    """A collector that accepts a request but rejects some of its records says how many
    (``partial_success``), not which: the export stops there, naming the count and the
    collector's message, and marks none of that request as sent."""
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
        ExportLogsPartialSuccess,
        ExportLogsServiceResponse,
    )

    db, _ = judged
    shown = f"otlp+{sink.url}"
    sink.clear()
    answer = ExportLogsServiceResponse(
        partial_success=ExportLogsPartialSuccess(
            rejected_log_records=2, error_message="log record too large"
        )
    ).SerializeToString()
    store = Store(db)
    try:
        found = collect(store, "traced")
        with FaultyProxy(sink.url) as proxy:
            proxy.replace("/v1/logs", 2, 200, "application/x-protobuf", answer)
            with pytest.raises(InputError) as failed:
                send_http(store, proxy.url, shown, "traced", found.evaluations, batch=3)
            assert str(failed.value) == (
                f"{shown}: the collector rejected 2 of the 3 evaluations of one request: log "
                "record too large; none of that request is marked sent (3 evaluations sent "
                "before; the next export resumes after them)"
            )
            assert len(sink.received()) == 2  # the collector kept what it did not reject
            assert send_http(store, proxy.url, shown, "traced", found.evaluations, batch=3) == (
                9,
                3,
            )
    finally:
        store.close()
    assert len(sink.received()) == 5


JSON_ANSWER = b'{"partialSuccess": {"rejectedLogRecords": "4", "errorMessage": "quota"}}'


@pytest.mark.parametrize(
    ("kind", "body", "want"),
    [
        # OTLP JSON writes int64 as a string ("4"): the specification's JSON mapping
        ("application/json", JSON_ANSWER, (4, "quota")),
        ("application/json; charset=utf-8", b"{}", (0, "")),
        ("application/x-protobuf", b"", (0, "")),
        ("text/html", b"OK", (0, "")),  # oteltest's sink and other plain receivers
        ("application/json", b"not json", (0, "")),
    ],
)
def test_partial_success_is_read_from_json_and_protobuf_answers(
    kind: str, body: bytes, want: tuple[int, str]
) -> None:
    import httpx

    from trajudge.backends._otlp_send import partial_success

    answer = httpx.Response(200, headers={"Content-Type": kind}, content=body)
    assert partial_success(answer) == want
