"""``--engine batch`` on Vertex AI: batch prediction jobs against the fake on loopback.

The fake (fake_vertex.py) serves Gemini's ``generateContent`` (the local engine), Cloud
Storage's JSON API (``STORAGE_EMULATOR_HOST``), batch prediction jobs (the judge's
``api_base``) and Google's OAuth token endpoint (the ``token_uri`` of a service-account key
made here with ``cryptography`` and read by ``google-auth`` as Application Default
Credentials): every request of both engines is answered by the chat server's own logic, so
the two runs can be compared row by row.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from batch_kill import kill_after_submit
from batch_templates import check_template_bodies
from fake_llm import FakeLLM
from fake_vertex import as_chat
from test_batch import SPECS, TRAJECTORIES, _judge, _store
from test_provider_batch import _engine, _rows

from trajudge.core import InputError
from trajudge.judges import LLMClient, batch_cost, score_dataset
from trajudge.store import Store

pytestmark = pytest.mark.timeout(300)
ROOT = Path(__file__).resolve().parents[2]
MODEL = "vertex_ai/gemini-2.0-flash"
WHERE = {"project": "trajudge-test", "location": "us-central1", "bucket": "judge-batches"}


@pytest.fixture(scope="session")
def _key_pem() -> str:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()


@pytest.fixture
def vertex(
    fake_llm: FakeLLM, _key_pem: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[FakeLLM]:
    """The fake as Google Cloud: a service-account key whose token endpoint is the fake's, as
    Application Default Credentials, and the fake as the Cloud Storage endpoint."""
    root = fake_llm.api_base.removesuffix("/v1")
    key = {
        "type": "service_account",
        "project_id": WHERE["project"],
        "private_key_id": "trajudge-test-key",
        "private_key": _key_pem,
        "client_email": "judge@trajudge-test.iam.gserviceaccount.com",
        "client_id": "1",
        "token_uri": f"{root}/token",
    }
    path = tmp_path / "service-account.json"
    path.write_text(json.dumps(key))
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(path))
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", f"127.0.0.1:{fake_llm.port}")
    for name in ("VERTEXAI_CREDENTIALS", "VERTEXAI_PROJECT", "VERTEXAI_LOCATION"):
        monkeypatch.delenv(name, raising=False)
    yield fake_llm


def _vertex_judge(fake: FakeLLM, name: str, rubric: str, **kw: Any) -> Any:
    """A Gemini judge on Vertex AI, the fake at its root as Vertex's endpoint."""
    kw.setdefault("vertex", WHERE)
    root = fake.api_base.removesuffix("/v1")
    return _judge(fake, name, rubric, model=MODEL, api_base=root, mode="json_schema_mode", **kw)


def _user_prompt(chat: dict[str, Any]) -> str:
    return "".join(m["content"] for m in chat["messages"] if m["role"] == "user")


def _fault(chat: dict[str, Any]) -> str | None:
    # tied to the request (the chat form of either engine's Gemini request): task 3 gets a
    # 500, except the pair's seeded second sample, which answers garbage; task 4's pairs,
    # seeded 7, are cut by max_tokens
    prompt = _user_prompt(chat)
    if "task 3" in prompt:
        return "garbage" if chat.get("seed") == 8 else "500"
    if "task 4" in prompt and chat.get("seed") == 7:
        return "length"
    return None


def test_vertex_batches_store_the_local_engines_judgments_from_the_same_requests(
    vertex: FakeLLM, db_url: str
) -> None:
    """Same plan, same faults, over Gemini's generateContent (local engine) and a batch
    prediction job (batch engine): the same judgments, and each row's request is the body the
    local engine sent (plus the row's label)."""

    def judges() -> list[Any]:
        return [
            _vertex_judge(vertex, "ref", "trajectory_reasonableness_reference", max_retries=0),
            _vertex_judge(vertex, "pair", "trajectory_preference", samples=2, seed=7,
                          max_retries=0),
        ]  # fmt: skip

    vertex.action_for = _fault
    vertex.choose = lambda name, values: values[0]
    store = _store(db_url)
    store.import_dataset("batch", TRAJECTORIES, SPECS)
    local = score_dataset(store, "ds", judges(), concurrency=1)
    sent = sorted(json.dumps(b, sort_keys=True) for b in vertex.requests)
    vertex.requests.clear()
    batch = score_dataset(store, "batch", judges(), engine=_engine(store, "batch"))

    assert _rows(store, "batch") == _rows(store, "ds")
    assert (batch.judged, batch.errors) == (local.judged, local.errors)
    # task 3: reference 2 trials x 2 orders and the pair's seed-7 sample in 2 orders get a
    # 500, its seed-8 sample garbage; task 4: the pair's seed-7 sample cut in 2 orders
    errors = store.judgments_frame("batch")["error"].dropna().tolist()
    assert sum(e.startswith("InternalServerError after 1 attempt(s)") for e in errors) == 4 + 2
    assert sum(e.startswith("ValidationError after 1 attempt(s)") for e in errors) == 2
    assert sum(e.startswith("the verdict did not fit in max_tokens=") for e in errors) == 2
    assert len(errors) == local.errors == 10
    # the fake answered each batch row as the same request in chat form: what the local
    # engine asked is what each row asked
    assert sorted(json.dumps(b, sort_keys=True) for b in vertex.requests) == sent
    rows = vertex.vertex.input_rows()
    assert len(rows) == len(sent) == local.judged + local.errors
    assert sorted(json.dumps(as_chat(r["request"]), sort_keys=True) for r in rows) == sent
    assert all(set(r["request"]["labels"]) == {"trajudge_custom_id"} for r in rows)
    # one job (one model), in the judge's project and location, input and output in its bucket
    [job_id] = vertex.vertex.created
    job = vertex.vertex.jobs[job_id]
    assert job["name"].startswith("projects/trajudge-test/locations/us-central1/")
    assert job["model"] == "publishers/google/models/gemini-2.0-flash"
    assert job["inputConfig"]["gcsSource"]["uris"][0].startswith("gs://judge-batches/")
    [row] = store.provider_batches("batch")
    assert (row["provider"], row["status"], row["batch_id"]) == ("vertex_ai", "completed", job_id)
    assert row["input_file_id"] == job["inputConfig"]["gcsSource"]["uris"][0]


def test_a_partly_failed_vertex_batch_stores_errors_then_resubmits_only_those(
    vertex: FakeLLM, db_url: str
) -> None:
    store = _store(db_url)
    judge = _vertex_judge(vertex, "point", "trajectory_reasonableness")
    # tasks 1 and 4 (1-0, 1-1, 4-0, 4-1: 4 of the 7 rows) are answered 503: in a job that
    # succeeds, those rows carry the error as their status
    vertex.action_for = lambda chat: "503" if any(
        t in _user_prompt(chat) for t in ("task 1", "task 4")
    ) else None  # fmt: skip
    first = score_dataset(store, "ds", [judge], engine=_engine(store))
    assert (first.judged, first.errors) == (3, 4)
    frame = store.judgments_frame("ds")
    failed = frame[frame["error"].notna()]
    assert sorted(failed["trajectory_id"]) == ["1-0", "1-1", "4-0", "4-1"]
    assert failed["score"].isna().all() and failed["verdict"].isna().all()
    assert all(
        e.startswith("ServiceUnavailableError after 1 attempt(s)") and "fake error 503" in e
        for e in failed["error"]
    )
    assert frame.loc[frame["error"].isna(), "score"].notna().all()
    [row] = store.provider_batches("ds")
    assert row["status"] == "completed"

    vertex.action_for = None
    second = score_dataset(store, "ds", [judge], engine=_engine(store))
    assert (second.resumed, second.judged, second.errors) == (3, 4, 0)
    assert len(vertex.vertex.created) == 2 and len(vertex.vertex.input_rows()) == 7 + 4
    frame = store.judgments_frame("ds")
    assert len(frame) == 7 and frame["error"].isna().all() and frame["trajectory_id"].is_unique


def test_a_failed_vertex_job_stores_its_reason_as_every_requests_error(
    vertex: FakeLLM, db_url: str
) -> None:
    store = _store(db_url)
    judge = _vertex_judge(vertex, "point", "trajectory_reasonableness")
    vertex.vertex.mode = "fail"
    first = score_dataset(store, "ds", [judge], engine=_engine(store))
    assert (first.judged, first.errors) == (0, 7)
    [job_id] = vertex.vertex.created
    reason = f"batch {job_id}: the batch failed: 3: fake: the batch input failed validation"
    frame = store.judgments_frame("ds")
    assert (frame["error"] == reason).all() and frame["score"].isna().all()
    [row] = store.provider_batches("ds")
    assert (
        row["status"] == "failed" and row["detail"] == "3: fake: the batch input failed validation"
    )
    assert vertex.calls == 0  # the job ran nothing

    vertex.vertex.mode = "complete"
    second = score_dataset(store, "ds", [judge], engine=_engine(store))
    assert (second.resumed, second.judged, second.errors) == (0, 7, 0)
    assert len(vertex.vertex.created) == 2
    assert store.judgments_frame("ds")["error"].isna().all()


def test_a_vertex_run_killed_after_submitting_collects_the_same_job(
    vertex: FakeLLM, db_url: str
) -> None:
    store = _store(db_url)
    vertex.vertex.mode = "hold"  # the job stays running until the test says
    root = vertex.api_base.removesuffix("/v1")
    kill_after_submit(
        store,
        db_url,
        f'model={MODEL!r}, api_base={root!r}, mode="json_schema_mode", vertex={WHERE!r}',
    )
    assert len(store.judgments_frame("ds")) == 0
    assert len(vertex.vertex.created) == 1 and vertex.calls == 0

    vertex.vertex.mode = "complete"
    judge = _vertex_judge(vertex, "point", "trajectory_reasonableness")
    summary = score_dataset(store, "ds", [judge], engine=_engine(store))
    assert summary.judged == 7 and summary.errors == 0
    assert len(vertex.vertex.created) == 1  # collected, not submitted again
    assert vertex.calls == 7  # each request answered once, by the one job
    frame = store.judgments_frame("ds")
    assert len(frame) == 7 and frame["error"].isna().all()
    [row] = store.provider_batches("ds")
    assert row["status"] == "completed" and row["requests"] == 7


def test_no_credential_or_token_reaches_the_store(
    vertex: FakeLLM, db_url: str, _key_pem: str, tmp_path: Path
) -> None:
    store = _store(db_url)
    judge = _vertex_judge(vertex, "point", "trajectory_reasonableness")
    summary = score_dataset(store, "ds", [judge], engine=_engine(store))
    assert (summary.judged, summary.errors) == (7, 0)
    # the batch calls were made with tokens the fake issued for the key (OAuth worked) ...
    assert vertex.vertex.bearers and vertex.vertex.bearers <= set(vertex.vertex.tokens)
    # ... and none of them, nor the key, nor the signed grant, is in the database
    secrets = [*vertex.vertex.tokens, *vertex.vertex.grants, "trajudge-test-key"]
    secrets += [line for line in _key_pem.splitlines() if "PRIVATE KEY" not in line][:3]
    dump = _dump(store, db_url)
    assert "ya29.fake-token" not in dump
    assert not [s for s in secrets if s and s in dump]
    assert str(tmp_path) not in dump  # not even where the key file is


def _dump(store: Store, db_url: str) -> str:
    """Every value of every table of the store, as text."""
    import sqlalchemy as sa

    engine = store.sql_write_engine
    with engine.connect() as conn:
        names = sa.inspect(conn).get_table_names()
        return "\n".join(
            repr(tuple(r)) for n in names for r in conn.execute(sa.text(f'SELECT * FROM "{n}"'))
        )


def test_a_vertex_judge_without_a_bucket_is_refused_before_anything_is_sent(
    vertex: FakeLLM, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GCS_BUCKET_NAME", raising=False)
    store = _store(db_url)
    judge = _vertex_judge(vertex, "gemini", "trajectory_reasonableness",
                          vertex={"project": "p", "location": "us-central1"})  # fmt: skip
    with pytest.raises(InputError) as err:
        score_dataset(store, "ds", [judge], engine=_engine(store))
    assert err.value.file == "judge gemini" and err.value.field == "vertex.bucket"
    assert vertex.vertex.objects == {} and store.judgments_frame("ds").empty


def test_vertex_cost_is_at_the_batch_price() -> None:
    import litellm

    usage = {"prompt_tokens": 1000, "completion_tokens": 200, "total_tokens": 1200}
    completion = litellm.ModelResponse(
        id="x", choices=[{"index": 0, "message": {"role": "assistant", "content": "{}"}}],
        usage=usage,
    )  # fmt: skip
    info = litellm.get_model_info("vertex_ai/gemini-2.0-flash")
    # Vertex AI batch prediction costs half the online price (Vertex AI pricing: "Batch
    # prediction ... 50% discount"); gemini-2.0-flash online: $0.15 / 1M input and
    # $0.60 / 1M output tokens, so 1000 * 0.075e-6 + 200 * 0.30e-6 = 1.35e-4
    assert (info["input_cost_per_token"], info["output_cost_per_token"]) == (1.5e-7, 6e-7)
    gemini = LLMClient(model="vertex_ai/gemini-2.0-flash")
    assert batch_cost(litellm, gemini, completion) == pytest.approx(1.35e-4, rel=1e-9)


def test_judges_in_different_buckets_get_one_job_each_staged_in_their_own_bucket(
    vertex: FakeLLM, db_url: str
) -> None:
    store = _store(db_url)
    judges = [
        _vertex_judge(vertex, "a", "trajectory_reasonableness"),
        _vertex_judge(vertex, "b", "trajectory_reasonableness",
                      vertex={**WHERE, "bucket": "other-bucket/judging"}),
    ]  # fmt: skip
    summary = score_dataset(store, "ds", judges, engine=_engine(store))
    assert (summary.judged, summary.errors) == (14, 0)
    jobs = [vertex.vertex.jobs[j] for j in vertex.vertex.created]
    uris = sorted(j["inputConfig"]["gcsSource"]["uris"][0] for j in jobs)
    assert len(uris) == 2
    assert uris[0].startswith("gs://judge-batches/litellm-vertex-files/")
    assert uris[1].startswith("gs://other-bucket/judging/litellm-vertex-files/")
    # each job's output was written, and read back, under its own input's folder
    outputs = sorted(j["outputInfo"]["gcsOutputDirectory"] for j in jobs)
    assert [o.rsplit("/", 1)[0] for o in outputs] == [u.rsplit("/", 1)[0] for u in uris]


def test_the_endpoints_are_googles_unless_overridden_the_standard_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from trajudge.judges.engines.batch._vertex_api import storage_base, vertex_base

    monkeypatch.delenv("STORAGE_EMULATOR_HOST", raising=False)
    assert storage_base() == "https://storage.googleapis.com"
    # Google's client libraries take a host and port (over http) or a URL
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", "localhost:4443")
    assert storage_base() == "http://localhost:4443"
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", "https://gcs.internal:8443/")
    assert storage_base() == "https://gcs.internal:8443"
    # Vertex's regional endpoints, and the global one
    assert vertex_base(None, "europe-west4") == "https://europe-west4-aiplatform.googleapis.com"
    assert vertex_base(None, "global") == "https://aiplatform.googleapis.com"
    # an api_base with the API version, as litellm takes it for chat calls
    assert vertex_base("https://psc.example.com/v1/", "us-central1") == "https://psc.example.com"


def test_bodies_from_the_template_are_litellms_own_whatever_the_content(
    vertex: FakeLLM, db_url: str
) -> None:
    """Each row's body comes from a template (litellm's ``return_raw_request`` costs ~50 ms a
    call); it must be exactly what litellm builds, even for content that looks like the
    template's placeholders, quotes, escapes or non-ASCII text."""
    from trajudge.judges import ProviderBatchEngine

    engine = ProviderBatchEngine(Store(db_url), "ds")
    judge = _vertex_judge(vertex, "point", "trajectory_reasonableness")
    [call] = judge.prepare(TRAJECTORIES[0])
    check_template_bodies(engine, call, '{"contents": []}')


def test_the_vertex_key_is_refused_on_a_model_that_does_not_run_on_vertex() -> None:
    from pydantic import ValidationError

    from trajudge.judges import JudgeSpec

    with pytest.raises(ValidationError, match="applies to vertex_ai/ models"):
        JudgeSpec(name="g", model="openai/gpt-4o-mini", vertex=WHERE)
    with pytest.raises(ValidationError, match="extra"):
        JudgeSpec(name="g", model=MODEL, vertex={**WHERE, "credentials": "key.json"})
    assert JudgeSpec(name="g", model=MODEL, vertex=WHERE).vertex is not None


def test_transient_errors_of_every_vertex_call_are_retried(vertex: FakeLLM, db_url: str) -> None:
    """A 503 or 429 on the upload, the job creation, a status poll and the output download:
    each call is tried again (the judge's ``max_retries``), and the run ends as if none had
    happened."""
    store = _store(db_url)
    judge = _vertex_judge(vertex, "point", "trajectory_reasonableness", max_retries=2)
    faults = [("upload", 503), ("create", 429), ("job", 503), ("job", 500), ("download", 503)]
    vertex.vertex.faults = list(faults)
    summary = score_dataset(store, "ds", [judge], engine=_engine(store))
    assert (summary.judged, summary.errors) == (7, 0)
    assert vertex.vertex.faulted == faults and vertex.vertex.faults == []
    assert len(vertex.vertex.created) == 1 and vertex.calls == 7


def test_a_vertex_batch_that_cannot_be_submitted_leaves_errors_to_submit_again(
    vertex: FakeLLM, db_url: str
) -> None:
    store = _store(db_url)
    judge = _vertex_judge(vertex, "point", "trajectory_reasonableness", max_retries=1)
    vertex.vertex.faults = [("upload", 503), ("upload", 503)]  # the try and its retry
    first = score_dataset(store, "ds", [judge], engine=_engine(store))
    assert (first.judged, first.errors) == (0, 7)
    errors = store.judgments_frame("ds")["error"]
    assert all(e.startswith("could not submit the batch: ") and "503" in e for e in errors)
    assert store.provider_batches("ds") == [] and vertex.vertex.created == []

    second = score_dataset(store, "ds", [judge], engine=_engine(store))
    assert (second.judged, second.errors) == (7, 0)


def test_vertex_batches_without_google_auth_name_the_extra_to_install(
    vertex: FakeLLM, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "google.auth", None)  # as if it were not installed
    store = _store(db_url)
    judge = _vertex_judge(vertex, "gemini", "trajectory_reasonableness")
    with pytest.raises(InputError) as err:
        score_dataset(store, "ds", [judge], engine=_engine(store))
    assert err.value.field == "model" and "pip install 'trajudge[vertex]'" in err.value.reason
    assert vertex.vertex.objects == {} and store.judgments_frame("ds").empty
