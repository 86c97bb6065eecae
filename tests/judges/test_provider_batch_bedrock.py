"""``--engine batch`` on Amazon Bedrock: model invocation jobs over S3, against the fakes.

The fake server (fake_bedrock.py) plays bedrock-runtime (InvokeModel, for the local engine),
the Bedrock control plane (CreateModelInvocationJob, GetModelInvocationJob) and S3, all on
loopback; the code under test is the one users run, only the AWS endpoints are pointed at the
fake (``AWS_BEDROCK_RUNTIME_ENDPOINT``, ``AWS_ENDPOINT_URL_S3``, ``AWS_ENDPOINT_URL_BEDROCK``).
Every record is answered by the chat server's own logic, as every direct call is, so a fault
tied to a request hits it on either engine and the runs compare row by row.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from batch_kill import kill_after_submit
from fake_llm import FakeLLM
from test_batch import SPECS, TRAJECTORIES, _judge, _store
from test_provider_batch import COLUMNS, _anthropic_fault, _engine, _shows

from trajudge.core import InputError
from trajudge.judges import LLMClient, batch_cost, score_dataset
from trajudge.store import Store

pytestmark = pytest.mark.timeout(300)
HAIKU = "anthropic.claude-3-5-haiku-20241022-v1:0"
SONNET = "anthropic.claude-sonnet-4-5-20250929-v1:0"
SECRET = "wJalrXUtnFEMI-trajudge-test-secret-K7MDENG"
ACCESS_KEY = "AKIATRAJUDGETEST0001"
ROLE = "arn:aws:iam::123456789012:role/trajudge-batch"
BUCKET = "trajudge-batches"


@pytest.fixture
def aws(fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> FakeLLM:
    """AWS configured as a user would, every endpoint on the fake."""
    root = fake_llm.api_base.removesuffix("/v1")
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_REGION"):
        monkeypatch.delenv(name, raising=False)
    env = {
        "AWS_ACCESS_KEY_ID": ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": SECRET,
        "AWS_REGION_NAME": "us-east-1",
        "AWS_S3_BUCKET_NAME": BUCKET,
        "AWS_BATCH_ROLE_ARN": ROLE,
        "AWS_BEDROCK_RUNTIME_ENDPOINT": root,
        "AWS_ENDPOINT_URL_S3": root,
        "AWS_ENDPOINT_URL_BEDROCK": root,
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return fake_llm


def _bedrock_judge(fake: FakeLLM, name: str, rubric: str, **kw: Any) -> Any:
    """A judge on Claude through Bedrock's InvokeModel (no api_base: the AWS endpoint
    settings say where Bedrock is, as for a hosted model, so its cost is counted)."""
    kw.setdefault("model", f"bedrock/invoke/{HAIKU}")
    return _judge(fake, name, rubric, api_base=None, mode="json_schema_mode", **kw)


KEY = ["trajectory_id", "other_id", "judge", "order", "sample"]


def _rows(store: Store, dataset: str) -> list[tuple[str, ...]]:
    columns = [c for c in COLUMNS if c != "cost_usd"]
    frame = store.judgments_frame(dataset)[columns].astype(object)
    return sorted(tuple(r) for r in frame.where(frame.notna(), "-").astype(str).itertuples(False))


def _costs(store: Store, dataset: str) -> dict[tuple[Any, ...], Any]:
    frame = store.judgments_frame(dataset).astype(object)
    frame = frame.where(frame.notna(), None)
    return {tuple(r[k] for k in KEY): r["cost_usd"] for _, r in frame.iterrows()}


def _stored_text(store: Store) -> str:
    """Every value of every table of the store, as text."""
    import sqlalchemy as sa

    meta = sa.MetaData()
    meta.reflect(store.sql_engine)
    with store.sql_engine.connect() as conn:
        return "\n".join(
            repr(tuple(row)) for table in meta.sorted_tables for row in conn.execute(table.select())
        )


def test_bedrock_jobs_store_the_local_engines_judgments_at_the_batch_price(
    aws: FakeLLM, db_url: str
) -> None:
    """Same plan, same faults, over InvokeModel (local engine) and model invocation jobs
    (batch engine): the same judgments, each record's ``modelInput`` is the body the local
    engine sent, each cost is half the local one, and no AWS secret reaches the store."""

    def judges() -> list[Any]:
        return [
            _bedrock_judge(aws, "ref", "trajectory_reasonableness_reference", max_retries=0),
            _bedrock_judge(aws, "pair", "trajectory_preference", max_retries=0),
            _bedrock_judge(aws, "point", "trajectory_reasonableness", max_retries=0,
                           model="bedrock/invoke/us.anthropic.claude-3-5-haiku-20241022-v1:0"),
            _bedrock_judge(aws, "sonnet", "trajectory_reasonableness", max_retries=0,
                           model=f"bedrock/invoke/{SONNET}"),
        ]  # fmt: skip

    aws.action_for = _anthropic_fault
    aws.choose = lambda name, values: values[0]
    store = _store(db_url)
    store.import_dataset("batch", TRAJECTORIES, SPECS)
    local = score_dataset(store, "ds", judges(), concurrency=1)
    sent = sorted(json.dumps(b, sort_keys=True) for b in aws.bedrock.invoked)
    assert len(sent) == aws.calls == local.judged + local.errors
    aws.requests.clear()
    batch = score_dataset(store, "batch", judges(), engine=_engine(store, "batch"))

    assert _rows(store, "batch") == _rows(store, "ds")
    assert (batch.judged, batch.errors) == (local.judged, local.errors)
    errors = store.judgments_frame("batch")["error"].dropna().tolist()
    # task 3: reference 2 trials x 2 orders, pairs 2 orders, pointwise 2 trials (2 judges): a 500
    # (litellm maps Bedrock's 500 to ServiceUnavailableError, on a direct call as here)
    unavailable = "ServiceUnavailableError after 1 attempt(s): litellm.ServiceUnavailableError: "
    assert sum(e.startswith(unavailable + "BedrockException - ") for e in errors) == 10
    assert (
        sum(e.startswith("the verdict did not fit in max_tokens=") for e in errors) == 2
    )  # task 4
    assert len(errors) == 12
    # each record's modelInput is the InvokeModel body of the same request
    records = aws.bedrock.inputs()
    assert sorted(json.dumps(r["modelInput"], sort_keys=True) for r in records) == sent
    assert aws.calls == len(records)  # each request answered once, by its job
    # a job per model, with its Bedrock model id and the configured role
    jobs = [aws.bedrock.jobs[arn] for arn in aws.bedrock.created]
    assert sorted(j["modelId"] for j in jobs) == [HAIKU, SONNET, f"us.{HAIKU}"]
    # the rubric's schema as litellm sends it to each model: a forced tool, or structured
    # outputs (``output_config.format``) where the model takes them
    sonnet = [r["modelInput"] for r in records if r["modelInput"].get("output_config")]
    assert len(sonnet) == 7 and all("tools" not in m for m in sonnet)
    assert all("tools" in r["modelInput"] for r in records if r["modelInput"] not in sonnet)
    assert {j["roleArn"] for j in jobs} == {ROLE}
    rows = store.provider_batches("batch")
    assert {(r["provider"], r["status"]) for r in rows} == {("bedrock", "completed")}
    assert sorted(r["batch_id"] for r in rows) == sorted(aws.bedrock.created)
    assert all(r["input_file_id"].startswith(f"s3://{BUCKET}/") for r in rows)
    # at the batch price: half of each direct call's (litellm's rule where the cost map has
    # no batch price, as for this model; Bedrock's batch inference is half the on-demand
    # price), the same tokens
    local_costs, batch_costs = _costs(store, "ds"), _costs(store, "batch")
    assert local_costs.keys() == batch_costs.keys()
    priced = [k for k, c in local_costs.items() if c is not None]
    assert len(priced) == local.judged
    for k in priced:
        assert batch_costs[k] == pytest.approx(local_costs[k] / 2, rel=1e-9)
    # every call signed with the configured key; the secret itself is stored nowhere
    assert set(aws.bedrock.access_keys) == {ACCESS_KEY}
    assert {"s3", "bedrock"} <= set(aws.bedrock.services)
    stored = _stored_text(store)
    assert "AKIATRAJUDGETEST" not in stored and SECRET not in stored and "trajudge-batch" in stored


def test_a_partly_failed_job_stores_errors_then_the_next_run_resubmits_only_those(
    aws: FakeLLM, db_url: str
) -> None:
    store = _store(db_url)
    # litellm's default route for Claude on Bedrock (Converse on a direct call): its batch
    # records are InvokeModel bodies all the same
    judge = _bedrock_judge(aws, "point", "trajectory_reasonableness", model=f"bedrock/{HAIKU}")
    # tasks 1 and 4 (1-0, 1-1, 4-0, 4-1: 4 of the 7 records) fail: task 1 with a 429 (a
    # throttled record), task 4 with a 503
    aws.action_for = lambda body: (
        "429" if _shows(body, "task 1") else "503" if _shows(body, "task 4") else None
    )
    first = score_dataset(store, "ds", [judge], engine=_engine(store))
    assert (first.judged, first.errors) == (3, 4)
    frame = store.judgments_frame("ds")
    failed = frame[frame["error"].notna()]
    assert sorted(failed["trajectory_id"]) == ["1-0", "1-1", "4-0", "4-1"]
    assert failed["score"].isna().all() and failed["verdict"].isna().all()
    # each record's error, as litellm raises it for a direct call answered with that status
    pairs = zip(failed["trajectory_id"], failed["error"], strict=True)
    kinds = {t: e.split(" ", 1)[0] for t, e in pairs}
    assert kinds == {
        "1-0": "RateLimitError", "1-1": "RateLimitError",
        "4-0": "ServiceUnavailableError", "4-1": "ServiceUnavailableError",
    }  # fmt: skip
    assert all('BedrockException - {"message": ' in e for e in failed["error"])
    [row] = store.provider_batches("ds")
    assert (row["status"], row["requests"]) == ("completed", 7)
    assert row["output_file_id"].endswith(".jsonl.out")

    assert all(
        r["modelInput"]["anthropic_version"] == "bedrock-2023-05-31" for r in aws.bedrock.inputs()
    )
    assert [aws.bedrock.jobs[a]["modelId"] for a in aws.bedrock.created] == [HAIKU]

    aws.action_for = None
    second = score_dataset(store, "ds", [judge], engine=_engine(store))
    assert (second.resumed, second.judged, second.errors) == (3, 4, 0)
    # a new job with exactly the four failed requests; the first is not collected again
    assert len(aws.bedrock.created) == 2 and len(aws.bedrock.inputs()) == 7 + 4
    frame = store.judgments_frame("ds")
    assert len(frame) == 7 and frame["error"].isna().all() and frame["trajectory_id"].is_unique


@pytest.mark.parametrize(
    ("mode", "answered", "status", "reason"),
    [
        ("fail", 0, "failed", "the job failed: fake: the role cannot read the input bucket"),
        ("stop:3", 3, "cancelled", "no result for this request (job cancelled)"),
        # PartiallyCompleted (litellm's "completed"): the records it did not run have no line
        ("partial:5", 5, "completed", "no result for this request (job completed)"),
        # stopped before it wrote an output file: S3 answers NoSuchKey
        ("stop:0", 0, "cancelled", "no result for this request (job cancelled)"),
    ],
)
def test_a_job_that_fails_is_stopped_or_partly_completed_leaves_errors_to_resubmit(
    aws: FakeLLM, db_url: str, mode: str, answered: int, status: str, reason: str
) -> None:
    store = _store(db_url)
    judge = _bedrock_judge(aws, "point", "trajectory_reasonableness")
    aws.bedrock.mode = mode
    first = score_dataset(store, "ds", [judge], engine=_engine(store))
    assert (first.judged, first.errors) == (answered, 7 - answered)
    frame = store.judgments_frame("ds")
    errors = frame[frame["error"].notna()]
    assert len(errors) == 7 - answered and errors["score"].isna().all()
    [arn] = aws.bedrock.created
    assert all(e == f"batch {arn}: {reason}" for e in errors["error"])
    [row] = store.provider_batches("ds")
    assert row["status"] == status

    aws.bedrock.mode = "complete"
    second = score_dataset(store, "ds", [judge], engine=_engine(store))
    assert (second.resumed, second.judged, second.errors) == (answered, 7 - answered, 0)
    assert len(aws.bedrock.inputs()) == 7 + (7 - answered)
    assert store.judgments_frame("ds")["error"].isna().all()


def test_a_job_bedrock_refuses_leaves_every_request_an_error_and_no_job_recorded(
    aws: FakeLLM, db_url: str
) -> None:
    store = _store(db_url)
    judge = _bedrock_judge(aws, "point", "trajectory_reasonableness")
    aws.bedrock.mode = "refuse"
    first = score_dataset(store, "ds", [judge], engine=_engine(store))
    assert (first.judged, first.errors) == (0, 7)
    errors = store.judgments_frame("ds")["error"].tolist()
    assert len(errors) == 7 and len(set(errors)) == 1
    assert errors[0].startswith("could not submit the batch: BedrockError after 1 attempt(s)")
    assert "the service role is not assumable" in errors[0]
    assert aws.bedrock.created == [] and store.provider_batches("ds") == []

    aws.bedrock.mode = "complete"
    second = score_dataset(store, "ds", [judge], engine=_engine(store))
    assert (second.judged, second.errors) == (7, 0)
    assert len(aws.bedrock.created) == 1 and aws.calls == 7


def test_a_run_killed_after_submitting_resumes_by_collecting_the_same_job(
    aws: FakeLLM, db_url: str
) -> None:
    store = _store(db_url)
    aws.bedrock.mode = "hold"  # the job stays in progress until the test says
    kill_after_submit(store, db_url, f'model="bedrock/invoke/{HAIKU}", mode="json_schema_mode"')
    assert len(store.judgments_frame("ds")) == 0
    assert len(aws.bedrock.created) == 1 and aws.calls == 0

    aws.bedrock.mode = "complete"
    judge = _bedrock_judge(aws, "point", "trajectory_reasonableness")
    summary = score_dataset(store, "ds", [judge], engine=_engine(store))
    assert (summary.judged, summary.errors) == (7, 0)
    assert len(aws.bedrock.created) == 1 and aws.calls == 7  # answered once, by the one job
    frame = store.judgments_frame("ds")
    assert len(frame) == 7 and frame["error"].isna().all()
    [row] = store.provider_batches("ds")
    assert (row["provider"], row["status"], row["requests"]) == ("bedrock", "completed", 7)
    assert row["batch_id"] == aws.bedrock.created[0]


def test_bedrock_cost_is_at_the_batch_price() -> None:
    import litellm

    usage = {"prompt_tokens": 1000, "completion_tokens": 200, "total_tokens": 1200}
    completion = litellm.ModelResponse(
        id="x", choices=[{"index": 0, "message": {"role": "assistant", "content": "{}"}}],
        usage=usage,
    )  # fmt: skip
    # Claude 3.5 Haiku on Bedrock: $0.80 / $4.00 per 1M input / output tokens on demand;
    # batch inference is half (aws.amazon.com/bedrock/pricing), $0.40 / $2.00:
    # 1000 * 0.4e-6 + 200 * 2e-6 = 8e-4
    client = LLMClient(model=f"bedrock/invoke/{HAIKU}")
    assert batch_cost(litellm, client, completion) == pytest.approx(8e-4, rel=1e-9)


@pytest.mark.parametrize(
    ("model", "unset", "words"),
    [
        ("bedrock/amazon.nova-lite-v1:0", None, "Bedrock batches are read for Claude models"),
        (f"bedrock/invoke/{HAIKU}", "AWS_BATCH_ROLE_ARN", "need AWS_BATCH_ROLE_ARN (the IAM"),
        (f"bedrock/{HAIKU}", "AWS_S3_BUCKET_NAME", "need AWS_S3_BUCKET_NAME (the S3 bucket"),
    ],
)
def test_bedrock_judges_a_job_cannot_serve_are_refused_before_anything_is_sent(
    aws: FakeLLM, db_url: str, monkeypatch: pytest.MonkeyPatch, model: str, unset: str | None,
    words: str,
) -> None:  # fmt: skip
    if unset:
        monkeypatch.delenv(unset)
    store = _store(db_url)
    judge = _bedrock_judge(aws, "hosted", "trajectory_reasonableness", model=model)
    with pytest.raises(InputError) as err:
        score_dataset(store, "ds", [judge], engine=_engine(store))
    assert err.value.file == "judge hosted" and err.value.field == "model"
    assert words in err.value.reason
    assert aws.bedrock.objects == {} and aws.bedrock.created == []
    assert store.judgments_frame("ds").empty


def test_bedrock_batches_without_boto3_name_the_extra_to_install(
    aws: FakeLLM, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "boto3", None)  # as if it were not installed
    store = _store(db_url)
    judge = _bedrock_judge(aws, "point", "trajectory_reasonableness")
    with pytest.raises(InputError) as err:
        score_dataset(store, "ds", [judge], engine=_engine(store))
    assert err.value.field == "model" and "pip install 'trajudge[bedrock]'" in err.value.reason
    assert aws.bedrock.created == [] and store.judgments_frame("ds").empty
