"""``--engine batch``: the provider's batch API, against the fake batch endpoint on loopback.

The fake (fake_batch.py) answers every batch line with the chat server's own logic, so a
fault tied to a request hits it on either engine and the two runs can be compared row by row.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from batch_kill import kill_after_submit
from batch_templates import check_template_bodies
from fake_llm import FakeLLM
from test_batch import SPECS, TRAJECTORIES, _judge, _store

from trajudge.core import InputError
from trajudge.judges import (
    LLMClient,
    ProviderBatchEngine,
    aggregate_frame,
    batch_cost,
    score_dataset,
)
from trajudge.store import Store

pytestmark = pytest.mark.timeout(300)
ROOT = Path(__file__).resolve().parents[2]
COLUMNS = [
    "trajectory_id", "other_id", "judge", "order", "sample", "score", "verdict", "reasoning",
    "criteria", "raw", "error", "request_sha256", "config_sha256", "judge_config",
    "prompt_tokens", "completion_tokens", "cost_usd", "cache_hit",
]  # fmt: skip


def _engine(store: Store, dataset: str = "ds") -> ProviderBatchEngine:
    return ProviderBatchEngine(store, dataset, poll_interval_s=0.02)


def _rows(store: Store, dataset: str, error: Callable[[str], str] = str) -> list[tuple[str, ...]]:
    frame = store.judgments_frame(dataset)[COLUMNS].astype(object)
    frame["error"] = frame["error"].map(lambda e: error(e) if isinstance(e, str) else e)
    return sorted(tuple(r) for r in frame.where(frame.notna(), "-").astype(str).itertuples(False))


def _same_json(error: str) -> str:
    """``error`` with the JSON body after ``AnthropicException - `` in canonical form."""
    match = re.search(r"AnthropicException - (\{.*\})\. Handle", error)
    if match is None:
        return error
    body = json.dumps(json.loads(match.group(1)), sort_keys=True)
    return error[: match.start(1)] + body + error[match.end(1) :]


def _user_prompt(body: dict[str, Any]) -> str:
    return "".join(str(m.get("content") or "") for m in body["messages"] if m["role"] == "user")


def _fault(body: dict[str, Any]) -> str | None:
    # tied to the request, not to its position: calls showing task 3 fail with a 500, their
    # seeded second sample answers garbage; task 4's pairs, seeded 7, are cut by max_tokens
    prompt = _user_prompt(body)
    if "task 3" in prompt:
        return "garbage" if body.get("seed") == 8 else "500"
    if "task 4" in prompt and body.get("seed") == 7:
        return "length"
    return None


def test_the_batch_engine_stores_the_local_engines_judgments_from_the_same_requests(
    fake_llm: FakeLLM, db_url: str
) -> None:
    """Same plan, same faults: every judgment (ids, scores, verdicts, errors, tokens, cost) is
    the local engine's, and every batch line's body is the request the local engine sent.
    ``max_retries=0``: the local engine makes one attempt, as a batch line is one."""

    def judges() -> list[Any]:
        return [
            _judge(fake_llm, "ref", "trajectory_reasonableness_reference", max_retries=0),
            _judge(fake_llm, "pair", "trajectory_preference", samples=2, seed=7, max_retries=0),
            # litellm maps this model's parameters (max_tokens -> max_completion_tokens, no
            # temperature): the batch body must be mapped the same way
            _judge(
                fake_llm,
                "five",
                "trajectory_reasonableness",
                model="openai/gpt-5-mini",
                max_retries=0,
            ),
        ]

    fake_llm.action_for = _fault
    fake_llm.choose = lambda name, values: values[0]
    store = _store(db_url)
    store.import_dataset("batch", TRAJECTORIES, SPECS)
    local = score_dataset(store, "ds", judges(), concurrency=1)
    sent = [json.dumps(b, sort_keys=True) for b in fake_llm.requests]
    fake_llm.requests.clear()
    batch = score_dataset(store, "batch", judges(), engine=_engine(store, "batch"))

    assert _rows(store, "batch") == _rows(store, "ds")
    assert (batch.judged, batch.errors) == (local.judged, local.errors)
    # task 3: reference 2 trials x 2 orders, pairs 2 orders x 2 samples, pointwise 2 trials;
    # task 4: the pair's seed-7 sample cut in 2 orders
    assert local.errors == 4 + 4 + 2 + 2
    errors = store.judgments_frame("batch")["error"].dropna().tolist()
    assert sum(e.startswith("InternalServerError after 1 attempt(s)") for e in errors) == 4 + 2 + 2
    assert sum(e.startswith("ValidationError after 1 attempt(s)") for e in errors) == 2
    assert sum(e.startswith("the verdict did not fit in max_tokens=") for e in errors) == 2
    bodies = fake_llm.batches.input_bodies()
    assert sorted(json.dumps(b, sort_keys=True) for b in bodies) == sorted(sent)
    five = [b for b in bodies if b["model"] == "gpt-5-mini"]
    assert five and all("max_completion_tokens" in b and "temperature" not in b for b in five)
    # one batch per model (OpenAI allows one model per input file)
    assert len(fake_llm.batches.created) == 2
    assert {b["status"] for b in store.provider_batches("batch")} == {"completed"}


def test_a_partly_failed_batch_stores_errors_then_the_next_run_resubmits_only_those(
    fake_llm: FakeLLM, db_url: str
) -> None:
    store = _store(db_url)
    judge = _judge(fake_llm, "point", "trajectory_reasonableness")
    # tasks 1 and 4 (1-0, 1-1, 4-0, 4-1: 4 of the 7 lines) are answered 503
    fake_llm.action_for = lambda body: "503" if _shows(body, "task 1", "task 4") else None
    first = score_dataset(store, "ds", [judge], engine=_engine(store))
    assert (first.judged, first.errors) == (3, 4)
    frame = store.judgments_frame("ds")
    failed = frame[frame["error"].notna()]
    assert sorted(failed["trajectory_id"]) == ["1-0", "1-1", "4-0", "4-1"]
    assert failed["score"].isna().all() and failed["verdict"].isna().all()
    agg = aggregate_frame(frame).set_index("trajectory_id")
    assert agg.loc[["1-0", "1-1", "4-0", "4-1"], "passed"].isna().all()  # neither pass nor fail
    assert all("ServiceUnavailableError after 1 attempt(s)" in e for e in failed["error"])

    fake_llm.action_for = None
    second = score_dataset(store, "ds", [judge], engine=_engine(store))
    assert (second.resumed, second.judged, second.errors) == (3, 4, 0)
    # a new batch with exactly the four failed requests; the first batch is not collected again
    assert len(fake_llm.batches.created) == 2
    assert len(fake_llm.batches.input_bodies()) == 7 + 4
    frame = store.judgments_frame("ds")
    assert len(frame) == 7 and frame["error"].isna().all() and frame["trajectory_id"].is_unique


def _shows(body: dict[str, Any], *texts: str) -> bool:
    prompt = _user_prompt(body)
    return any(t in prompt for t in texts)


def test_a_run_killed_after_submitting_resumes_by_collecting_the_same_batch(
    fake_llm: FakeLLM, db_url: str
) -> None:
    store = _store(db_url)
    fake_llm.batches.mode = "hold"  # the batch stays in progress until the test says
    kill_after_submit(store, db_url, f'model="openai/fake", api_base={fake_llm.api_base!r}')
    assert len(store.judgments_frame("ds")) == 0
    assert len(fake_llm.batches.created) == 1 and fake_llm.calls == 0

    fake_llm.batches.mode = "complete"
    summary = score_dataset(store, "ds", [_judge(fake_llm, "point", "trajectory_reasonableness")],
                            engine=_engine(store))  # fmt: skip
    assert summary.judged == 7 and summary.errors == 0
    assert len(fake_llm.batches.created) == 1 and len(fake_llm.batches.uploads) == 1
    assert fake_llm.calls == 7  # each request answered once, by the one batch
    frame = store.judgments_frame("ds")
    assert len(frame) == 7 and frame["error"].isna().all()
    [row] = store.provider_batches("ds")
    assert row["status"] == "completed" and row["requests"] == 7


@pytest.mark.parametrize(
    ("mode", "answered", "reason"),
    [
        ("expire:3", 3, "batch_expired: This request could not be executed"),
        ("fail", 0, "the batch failed: invalid_request: fake: the batch failed validation"),
    ],
)
def test_a_batch_that_expires_or_fails_as_a_whole_leaves_errors_to_resubmit(
    fake_llm: FakeLLM, db_url: str, mode: str, answered: int, reason: str
) -> None:
    store = _store(db_url)
    judge = _judge(fake_llm, "point", "trajectory_reasonableness")
    fake_llm.batches.mode = mode
    first = score_dataset(store, "ds", [judge], engine=_engine(store))
    assert (first.judged, first.errors) == (answered, 7 - answered)
    frame = store.judgments_frame("ds")
    errors = frame[frame["error"].notna()]
    assert len(errors) == 7 - answered and errors["score"].isna().all()
    assert all(e.startswith("batch batch_1: ") and reason in e for e in errors["error"])
    assert store.provider_batches("ds")[0]["status"] == ("expired" if answered else "failed")

    fake_llm.batches.mode = "complete"
    second = score_dataset(store, "ds", [judge], engine=_engine(store))
    assert (second.resumed, second.judged) == (answered, 7 - answered)
    assert len(fake_llm.batches.input_bodies()) == 7 + (7 - answered)
    assert store.judgments_frame("ds")["error"].isna().all()


def test_cost_is_at_the_batch_price() -> None:
    import litellm

    usage = {"prompt_tokens": 1000, "completion_tokens": 200, "total_tokens": 1200}
    completion = litellm.ModelResponse(
        id="x", choices=[{"index": 0, "message": {"role": "assistant", "content": "{}"}}],
        usage=usage,
    )  # fmt: skip
    hosted = LLMClient(model="openai/gpt-4o-mini")
    # OpenAI's batch price for gpt-4o-mini: $0.075 / 1M input, $0.30 / 1M output tokens
    # (half the $0.15 / $0.60 of a direct call): 1000 * 0.075e-6 + 200 * 0.30e-6 = 1.35e-4
    assert batch_cost(litellm, hosted, completion) == pytest.approx(1.35e-4, rel=1e-9)
    # a model whose cost map entry has no batch price: half its direct price (litellm's rule)
    info = litellm.get_model_info("gpt-4")
    assert info.get("input_cost_per_token_batches") is None
    half = (1000 * info["input_cost_per_token"] + 200 * info["output_cost_per_token"]) / 2
    plain = LLMClient(model="openai/gpt-4")
    assert batch_cost(litellm, plain, completion) == pytest.approx(half, rel=1e-9)
    assert batch_cost(litellm, LLMClient(model="openai/no-such-model"), completion) is None
    local = LLMClient(model="openai/gpt-4o-mini", api_base="http://127.0.0.1:9/v1")
    assert batch_cost(litellm, local, completion) == 0.0


@pytest.mark.parametrize(
    ("spec", "field", "words"),
    [
        ({"model": "openai/gpt-4o-mini", "api_base": None}, "mode", "json_schema_mode"),
        (
            {"model": "groq/llama-3.1-8b-instant", "api_base": None},
            "model",
            "'groq' has no batch API trajudge can send",
        ),
    ],
)
def test_judges_the_batch_api_cannot_serve_are_refused_before_anything_is_sent(
    fake_llm: FakeLLM, db_url: str, spec: dict[str, Any], field: str, words: str
) -> None:
    store = _store(db_url)
    judge = _judge(fake_llm, "hosted", "trajectory_reasonableness", **spec)
    with pytest.raises(InputError) as err:
        score_dataset(store, "ds", [judge], engine=_engine(store))
    assert err.value.file == "judge hosted" and err.value.field == field
    assert words in err.value.reason
    assert fake_llm.batches.uploads == [] and store.judgments_frame("ds").empty


def test_requests_are_split_into_batches_of_at_most_max_requests(
    fake_llm: FakeLLM, db_url: str
) -> None:
    store = _store(db_url)
    judge = _judge(fake_llm, "point", "trajectory_reasonableness")
    engine = ProviderBatchEngine(store, "ds", poll_interval_s=0.02, max_requests=3)
    summary = score_dataset(store, "ds", [judge], engine=engine)
    assert summary.judged == 7 and summary.errors == 0
    assert [b["requests"] for b in store.provider_batches("ds")] == [3, 3, 1]
    assert len(fake_llm.batches.created) == 3 and fake_llm.calls == 7
    # each custom_id is unique within its batch, as OpenAI requires
    for fid in fake_llm.batches.uploads:
        ids = [json.loads(x)["custom_id"] for x in fake_llm.batches.files[fid].splitlines()]
        assert len(ids) == len(set(ids))


# -- Azure OpenAI ----------------------------------------------------------------------------
AZURE_KEY_ENV = "TRAJUDGE_TEST_AZURE_KEY"


def _azure_judge(fake: FakeLLM, name: str, rubric: str, **kw: Any) -> Any:
    """A judge on an Azure OpenAI deployment (litellm's ``azure/<deployment>``) served by the
    fake at its root, as an Azure resource's endpoint."""
    root = fake.api_base.removesuffix("/v1")
    return _judge(
        fake, name, rubric, model="azure/judge-deploy", api_base=root, api_key_env=AZURE_KEY_ENV,
        mode="json_schema_mode", **kw,
    )  # fmt: skip


def test_azure_batches_store_the_local_engines_judgments_and_resubmit_only_failures(
    fake_llm: FakeLLM, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Azure's routes (``/openai/...?api-version=``, ``api-key`` header, endpoint and line url
    ``/chat/completions``, the deployment as the body's model); tasks 1 and 4 are answered 503
    in both engines, so the first batch is partly failed, and the next run sends only those."""
    monkeypatch.setenv(AZURE_KEY_ENV, "azure-test-key")
    fake_llm.action_for = lambda body: "503" if _shows(body, "task 1", "task 4") else None
    store = _store(db_url)
    store.import_dataset("batch", TRAJECTORIES, SPECS)

    def judges() -> list[Any]:
        return [_azure_judge(fake_llm, "point", "trajectory_reasonableness", max_retries=0)]

    local = score_dataset(store, "ds", judges(), concurrency=1)
    sent = sorted(json.dumps(b, sort_keys=True) for b in fake_llm.requests)
    first = score_dataset(store, "batch", judges(), engine=_engine(store, "batch"))
    assert (first.judged, first.errors) == (local.judged, local.errors) == (3, 4)
    assert _rows(store, "batch") == _rows(store, "ds")
    bodies = fake_llm.batches.input_bodies()
    assert sorted(json.dumps(b, sort_keys=True) for b in bodies) == sent
    assert {b["model"] for b in bodies} == {"judge-deploy"}
    assert set(fake_llm.batches.azure_keys) == {"azure-test-key"}
    errors = store.judgments_frame("batch")["error"].dropna().tolist()
    assert len(errors) == 4
    assert all(e.startswith("ServiceUnavailableError after 1 attempt(s)") for e in errors)
    [row] = store.provider_batches("batch")
    assert (row["provider"], row["status"], row["requests"]) == ("azure", "completed", 7)

    fake_llm.action_for = None
    second = score_dataset(store, "batch", judges(), engine=_engine(store, "batch"))
    assert (second.resumed, second.judged, second.errors) == (3, 4, 0)
    assert len(fake_llm.batches.created) == 2 and len(fake_llm.batches.input_bodies()) == 7 + 4


def test_an_azure_judge_without_api_key_env_uses_azure_api_key_not_a_placeholder(
    fake_llm: FakeLLM, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no ``api_key_env``, litellm's own AZURE_API_KEY must reach Azure, on a direct call
    and in a batch (a placeholder key for OpenAI-compatible servers used to replace it)."""
    monkeypatch.setenv("AZURE_API_KEY", "azure-env-key")
    root = fake_llm.api_base.removesuffix("/v1")

    def judges() -> list[Any]:
        judge = _judge(
            fake_llm, "point", "trajectory_reasonableness", model="azure/judge-deploy",
            api_base=root, mode="json_schema_mode",
        )  # fmt: skip
        return [judge]

    store = _store(db_url)
    store.import_dataset("batch", TRAJECTORIES, SPECS)
    local = score_dataset(store, "ds", judges(), concurrency=1)
    assert (local.judged, local.errors) == (7, 0)
    assert {h.get("api-key") for h in fake_llm.headers} == {"azure-env-key"}
    batch = score_dataset(store, "batch", judges(), engine=_engine(store, "batch"))
    assert (batch.judged, batch.errors) == (7, 0)
    assert set(fake_llm.batches.azure_keys) == {"azure-env-key"}


def test_an_interrupted_azure_run_collects_its_batch_instead_of_resubmitting(
    fake_llm: FakeLLM, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio

    from trajudge.judges import ascore_dataset

    monkeypatch.setenv(AZURE_KEY_ENV, "azure-test-key")
    store = _store(db_url)
    fake_llm.batches.mode = "hold"

    async def interrupted() -> None:
        judge = _azure_judge(fake_llm, "point", "trajectory_reasonableness")
        task = asyncio.ensure_future(ascore_dataset(store, "ds", [judge], engine=_engine(store)))
        while not any(r["status"] == "in_progress" for r in store.provider_batches("ds")):
            assert not task.done(), "the run ended before it was interrupted"
            await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(interrupted())
    assert store.judgments_frame("ds").empty and fake_llm.calls == 0
    fake_llm.batches.mode = "complete"
    judge = _azure_judge(fake_llm, "point", "trajectory_reasonableness")
    summary = score_dataset(store, "ds", [judge], engine=_engine(store))
    assert (summary.judged, summary.errors) == (7, 0)
    assert len(fake_llm.batches.created) == 1 and len(fake_llm.batches.uploads) == 1
    assert fake_llm.calls == 7
    [row] = store.provider_batches("ds")
    assert row["provider"] == "azure" and row["status"] == "completed"


# -- Anthropic Message Batches ---------------------------------------------------------------
ANTHROPIC_KEY_ENV = "TRAJUDGE_TEST_ANTHROPIC_KEY"


def _anthropic_judge(fake: FakeLLM, name: str, rubric: str, **kw: Any) -> Any:
    """A judge on an Anthropic model, the fake at its root as Anthropic's API."""
    kw.setdefault("model", "anthropic/claude-3-5-haiku-20241022")
    root = fake.api_base.removesuffix("/v1")
    return _judge(fake, name, rubric, api_base=root, api_key_env=ANTHROPIC_KEY_ENV,
                  mode="json_schema_mode", **kw)  # fmt: skip


def _anthropic_fault(body: dict[str, Any]) -> str | None:
    # tied to the request: task 3's prompts get a 500, task 4's pairwise ones are cut
    prompt = _user_prompt(body)
    if "task 3" in prompt:
        return "500"
    if "task 4" in prompt and '"verdict"' in json.dumps(body.get("response_format")):
        return "length"
    return None


def test_anthropic_message_batches_store_the_local_engines_judgments(
    fake_llm: FakeLLM, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same plan, same faults, over Anthropic's Messages API (local engine) and its Message
    Batches (batch engine): the same judgments, and each batch request's ``params`` is the
    body the local engine sent; a model that takes ``output_format`` gets its beta header."""
    monkeypatch.setenv(ANTHROPIC_KEY_ENV, "anthropic-test-key")

    def judges() -> list[Any]:
        return [
            _anthropic_judge(fake_llm, "ref", "trajectory_reasonableness_reference",
                             max_retries=0),
            _anthropic_judge(fake_llm, "pair", "trajectory_preference", max_retries=0),
            # structured outputs (``output_format`` and its ``anthropic-beta`` header)
            _anthropic_judge(fake_llm, "five", "trajectory_reasonableness",
                             model="anthropic/claude-sonnet-4-5", max_retries=0),
        ]  # fmt: skip

    fake_llm.action_for = _anthropic_fault
    fake_llm.choose = lambda name, values: values[0]
    store = _store(db_url)
    store.import_dataset("batch", TRAJECTORIES, SPECS)
    local = score_dataset(store, "ds", judges(), concurrency=1)
    sent = sorted(json.dumps(b, sort_keys=True) for b in fake_llm.requests)
    fake_llm.requests.clear()
    batch = score_dataset(store, "batch", judges(), engine=_engine(store, "batch"))

    # an error names the API's error body, which a batch result carries parsed: the same
    # JSON object, not necessarily the same spacing
    assert _rows(store, "batch", _same_json) == _rows(store, "ds", _same_json)
    assert (batch.judged, batch.errors) == (local.judged, local.errors)
    errors = store.judgments_frame("batch")["error"].dropna().tolist()
    # task 3: reference 2 trials x 2 orders, pairs 2 orders, pointwise 2 trials: a 500;
    # task 4: the pair's 2 orders cut by max_tokens
    assert sum(e.startswith("InternalServerError after 1 attempt(s)") for e in errors) == 8
    assert sum(e.startswith("the verdict did not fit in max_tokens=") for e in errors) == 2
    assert len(errors) == local.errors == 10
    # what each batch request asked is what the local engine asked, in chat form
    from fake_anthropic import as_chat

    params = fake_llm.anthropic.input_params()
    assert sorted(json.dumps(as_chat(p), sort_keys=True) for p in params) == sent
    assert all("tools" in p for p in params if p["model"] == "claude-3-5-haiku-20241022")
    assert all("output_format" in p for p in params if p["model"] == "claude-sonnet-4-5")
    assert len(fake_llm.anthropic.created) == 2  # one batch per model
    betas = dict(zip(fake_llm.anthropic.created, fake_llm.anthropic.betas, strict=True))
    rows = {r["batch_id"]: r for r in store.provider_batches("batch")}
    assert {r["provider"] for r in rows.values()} == {"anthropic"}
    assert {rows[b]["model"]: beta for b, beta in betas.items()} == {
        "anthropic/claude-3-5-haiku-20241022": None,
        "anthropic/claude-sonnet-4-5": "structured-outputs-2025-11-13",
    }
    assert set(fake_llm.anthropic.keys) == {"anthropic-test-key"}


@pytest.mark.parametrize(
    ("model", "rubric"),
    [
        ("anthropic/claude-3-5-haiku-20241022", "trajectory_reasonableness"),  # a forced tool
        ("anthropic/claude-sonnet-4-5", "trajectory_reasonableness"),  # output_format
        ("anthropic/claude-3-5-haiku-20241022", "trajectory_preference"),  # two trajectories
    ],
)
def test_anthropic_bodies_from_the_template_are_litellms_own_whatever_the_content(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model: str, rubric: str
) -> None:
    """litellm builds an Anthropic body in 20-70 ms (it moves the system message out of the
    messages), so bodies come from a template once the first one is litellm's own: each must
    be exactly what litellm builds, even for content that looks like the template's
    placeholders, quotes, escapes or non-ASCII text."""
    monkeypatch.setenv(ANTHROPIC_KEY_ENV, "anthropic-test-key")
    engine = ProviderBatchEngine(_store(f"sqlite:///{tmp_path / 's.db'}"), "ds")
    judge = _anthropic_judge(fake_llm, "j", rubric, model=model)
    other = TRAJECTORIES[1] if judge.rubric.mode == "pairwise" else None
    call = judge.prepare(TRAJECTORIES[0], other=other)[0]
    bodies = check_template_bodies(engine, call, '{"system": [], "messages": []}')
    assert bodies[0]["system"] and all(m["role"] != "system" for m in bodies[0]["messages"])


def test_a_partly_expired_anthropic_batch_is_collected_once_and_only_its_failures_resent(
    fake_llm: FakeLLM, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first run is interrupted while its batch is in progress; the second collects that
    batch (not resubmitted): 3 requests answered, 4 expired; the third sends only those 4."""
    import asyncio

    from trajudge.judges import ascore_dataset

    monkeypatch.setenv(ANTHROPIC_KEY_ENV, "anthropic-test-key")
    store = _store(db_url)
    fake_llm.anthropic.mode = "hold"

    async def interrupted() -> None:
        judge = _anthropic_judge(fake_llm, "point", "trajectory_reasonableness")
        task = asyncio.ensure_future(ascore_dataset(store, "ds", [judge], engine=_engine(store)))
        while not any(r["status"] == "in_progress" for r in store.provider_batches("ds")):
            assert not task.done(), "the run ended before it was interrupted"
            await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(interrupted())
    assert store.judgments_frame("ds").empty and fake_llm.calls == 0

    fake_llm.anthropic.mode = "expire:3"
    judge = _anthropic_judge(fake_llm, "point", "trajectory_reasonableness")
    second = score_dataset(store, "ds", [judge], engine=_engine(store))
    assert (second.judged, second.errors) == (3, 4)
    assert len(fake_llm.anthropic.created) == 1 and fake_llm.calls == 3
    frame = store.judgments_frame("ds")
    failed = frame[frame["error"].notna()]
    assert len(failed) == 4 and failed["score"].isna().all()
    assert all(e == "batch msgbatch_01: request expired" for e in failed["error"])
    [row] = store.provider_batches("ds")
    assert (row["status"], row["requests"], row["input_file_id"]) == ("ended", 7, "inline")

    fake_llm.anthropic.mode = "complete"
    third = score_dataset(store, "ds", [judge], engine=_engine(store))
    assert (third.resumed, third.judged, third.errors) == (3, 4, 0)
    assert len(fake_llm.anthropic.created) == 2 and len(fake_llm.anthropic.input_params()) == 11
    assert store.judgments_frame("ds")["error"].isna().all()


def test_anthropic_cost_is_at_the_batch_price() -> None:
    import litellm

    usage = {"prompt_tokens": 1000, "completion_tokens": 200, "total_tokens": 1200}
    completion = litellm.ModelResponse(
        id="x", choices=[{"index": 0, "message": {"role": "assistant", "content": "{}"}}],
        usage=usage,
    )  # fmt: skip
    # Anthropic's Message Batches cost half the standard price (anthropic.com/pricing):
    # claude-haiku-4-5, $1 / $5 per 1M input / output tokens, in a batch $0.50 / $2.50:
    # 1000 * 0.5e-6 + 200 * 2.5e-6 = 1e-3; claude-sonnet-4-5, $3 / $15, in a batch
    # $1.50 / $7.50: 1000 * 1.5e-6 + 200 * 7.5e-6 = 3e-3
    haiku = LLMClient(model="anthropic/claude-haiku-4-5")
    assert batch_cost(litellm, haiku, completion) == pytest.approx(1e-3, rel=1e-9)
    sonnet = LLMClient(model="anthropic/claude-sonnet-4-5")
    assert batch_cost(litellm, sonnet, completion) == pytest.approx(3e-3, rel=1e-9)


def test_anthropic_batches_without_the_sdk_name_the_extra_to_install(
    fake_llm: FakeLLM, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ANTHROPIC_KEY_ENV, "anthropic-test-key")
    monkeypatch.setitem(sys.modules, "anthropic", None)  # as if it were not installed
    store = _store(db_url)
    judge = _anthropic_judge(fake_llm, "point", "trajectory_reasonableness")
    with pytest.raises(InputError) as err:
        score_dataset(store, "ds", [judge], engine=_engine(store))
    assert err.value.field == "model" and "pip install 'trajudge[anthropic]'" in err.value.reason
    assert fake_llm.anthropic.created == [] and store.judgments_frame("ds").empty
