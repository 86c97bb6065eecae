"""Judge calls through litellm + instructor against a real fake server on loopback:
retries, error recording, concurrency and RPM limits, the response cache, modes."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fake_llm import FakeLLM

from trajudge.judges import (
    Judge,
    JudgeSpec,
    ResponseCache,
    choose_mode,
    load_rubric,
    run_sync,
)
from trajudge.trajectories import Step, Trajectory

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.timeout(120)


def _traj(i: int = 0) -> Trajectory:
    return Trajectory(
        id=f"t{i}",
        task_id="1",
        trial=i,
        input=f"book flight {i}",
        steps=[Step(tool="search_flights", args={"n": i}, output="[]")],
        final_answer="ok",
    )


def _judge(fake: FakeLLM, cache: ResponseCache | None = None, **kw: object) -> Judge:
    params: dict[str, object] = {
        "name": "fake",
        "model": "openai/fake",
        "api_base": fake.api_base,
        "max_retries": 3,
        "retry_backoff_s": 0.01,
        "timeout": 10,
    }
    params.update(kw)
    return Judge(JudgeSpec.model_validate(params), cache=cache)


def test_a_verdict_is_parsed_with_tokens_cost_and_latency(fake_llm: FakeLLM) -> None:
    fake_llm.choose = lambda name, values: 4 if 4 in values else values[0]
    result = _judge(fake_llm).judge(_traj())
    [j] = result.judgments
    assert j.error is None and j.score == 4.0 and j.verdict == "pass"  # pass_threshold 4
    assert j.criteria == {"tool_choice": 4.0, "arguments": 4.0, "efficiency": 4.0}
    assert (j.prompt_tokens, j.completion_tokens) == (100, 20)  # the fake server's usage
    assert j.cost_usd == 0.0  # a loopback server costs nothing
    assert j.latency_s is not None and j.latency_s > 0
    assert j.request_sha256 is not None and len(j.request_sha256) == 64
    assert fake_llm.calls == 1
    # JSON-schema constrained output for an OpenAI-compatible server
    fmt = fake_llm.requests[0]["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["schema"]["properties"]["score"]["enum"] == [1, 2, 3, 4, 5]
    assert result.aggregate.score == 4.0 and result.aggregate.passed is True


@pytest.mark.parametrize("model", ["openai/gpt-4o-mini", "openai/my-self-hosted-llama"])
def test_a_server_off_this_machine_costs_what_litellm_stamped_priced_once(
    fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch, model: str
) -> None:
    # the fake server stands in for one on another host (a cloud API, a vLLM box)
    monkeypatch.setattr("trajudge.judges.calls._client.is_local_base", lambda base: False)
    import litellm

    priced_again: list[str] = []
    real = litellm.completion_cost

    def counting(*args: object, **kwargs: object) -> float:
        priced_again.append(str(kwargs.get("model")))
        return float(real(*args, **kwargs))

    monkeypatch.setattr(litellm, "completion_cost", counting)
    [j] = _judge(fake_llm, model=model).judge(_traj()).judgments
    assert j.error is None and (j.prompt_tokens, j.completion_tokens) == (100, 20)
    if model == "openai/gpt-4o-mini":
        # by hand from litellm's price table: 100 prompt and 20 completion tokens
        price = litellm.model_cost["gpt-4o-mini"]
        expected = 100 * price["input_cost_per_token"] + 20 * price["output_cost_per_token"]
        assert j.cost_usd == pytest.approx(expected) and expected > 0
    else:
        assert j.cost_usd is None  # no price known: unknown, not free
    assert priced_again == []  # the response's own stamp, not a second walk of the table


def test_500_429_and_garbage_are_retried_then_succeed(fake_llm: FakeLLM) -> None:
    fake_llm.script = ["500", "429", "garbage"]
    [j] = _judge(fake_llm).judge(_traj()).judgments
    assert j.error is None and j.score == 5.0
    assert fake_llm.calls == 4  # 3 failures + 1 success: no hidden SDK retries


def test_after_the_last_retry_the_error_is_recorded_not_a_score(fake_llm: FakeLLM) -> None:
    fake_llm.default = "503"
    result = _judge(fake_llm, max_retries=2).judge(_traj())
    [j] = result.judgments
    assert fake_llm.calls == 3  # 1 + 2 retries
    assert j.score is None and j.verdict is None
    assert j.error is not None and "after 3 attempt(s)" in j.error and "503" in j.error
    assert result.aggregate.n == 0 and result.aggregate.n_errors == 1
    assert result.aggregate.passed is None  # an error is never a pass or a fail


def test_unparseable_output_every_time_is_an_error(fake_llm: FakeLLM) -> None:
    fake_llm.default = "garbage"
    [j] = _judge(fake_llm, max_retries=1).judge(_traj()).judgments
    assert fake_llm.calls == 2 and j.score is None and j.error is not None


def test_a_bad_request_is_not_retried(fake_llm: FakeLLM) -> None:
    fake_llm.default = "400"
    [j] = _judge(fake_llm).judge(_traj()).judgments
    assert fake_llm.calls == 1 and j.error is not None and "BadRequest" in j.error


def test_timeouts_are_retried(fake_llm: FakeLLM) -> None:
    fake_llm.script = ["delay:3"]
    [j] = _judge(fake_llm, timeout=1).judge(_traj()).judgments
    assert j.error is None and fake_llm.calls == 2


def test_concurrency_limit_bounds_requests_in_flight(fake_llm: FakeLLM) -> None:
    fake_llm.default = "delay:0.3"
    judge = _judge(fake_llm, concurrency=2)

    async def many() -> list[object]:
        return list(await asyncio.gather(*(judge.ajudge(_traj(i)) for i in range(6))))

    results = run_sync(many())
    assert len(results) == 6 and fake_llm.calls == 6
    assert fake_llm.max_in_flight == 2


def test_rpm_limit_spaces_request_starts(fake_llm: FakeLLM) -> None:
    judge = _judge(fake_llm, rpm=600, concurrency=8)  # one start per 0.1 s

    async def many() -> None:
        await asyncio.gather(*(judge.ajudge(_traj(i)) for i in range(5)))

    t0 = time.perf_counter()
    run_sync(many())
    # 5 starts spaced 0.1 s apart take at least 0.4 s
    assert time.perf_counter() - t0 >= 0.4
    assert fake_llm.calls == 5


def test_cache_hit_makes_no_call_and_reports_the_original_usage(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    cache = ResponseCache(tmp_path / "cache.db")
    first = _judge(fake_llm, cache).judge(_traj()).judgments[0]
    assert fake_llm.calls == 1 and not first.cache_hit
    # a new Judge and a reopened cache file: still a hit
    cache.close()
    cache = ResponseCache(tmp_path / "cache.db")
    again = _judge(fake_llm, cache).judge(_traj()).judgments[0]
    assert fake_llm.calls == 1 and again.cache_hit
    assert (again.score, again.reasoning, again.request_sha256) == (
        first.score,
        first.reasoning,
        first.request_sha256,
    )
    assert again.prompt_tokens == first.prompt_tokens


def test_changing_temperature_schema_sample_or_input_misses_the_cache(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    cache = ResponseCache(tmp_path / "cache.db")
    _judge(fake_llm, cache).judge(_traj())
    assert fake_llm.calls == 1
    _judge(fake_llm, cache, temperature=0.7).judge(_traj())
    assert fake_llm.calls == 2
    # the response schema changes with the reasoning cap (maxLength)
    _judge(fake_llm, cache, max_reasoning_chars=100).judge(_traj())
    assert fake_llm.calls == 3
    _judge(fake_llm, cache, max_tokens=300).judge(_traj())
    assert fake_llm.calls == 4
    _judge(fake_llm, cache, samples=2).judge(_traj())  # sample 0 hits, sample 1 is new
    assert fake_llm.calls == 5
    _judge(fake_llm, cache).judge(_traj(1))
    assert fake_llm.calls == 6
    _judge(fake_llm, cache).judge(_traj())  # the very first request again
    assert fake_llm.calls == 6


def test_changing_the_rubric_misses_the_cache(fake_llm: FakeLLM, tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache.db")
    base = load_rubric("trajectory_reasonableness")
    Judge(_judge(fake_llm).spec, rubric=base, cache=cache).judge(_traj())
    edited = base.model_copy(update={"instructions": "Be strict."})
    assert edited.version != base.version
    Judge(_judge(fake_llm).spec, rubric=edited, cache=cache).judge(_traj())
    assert fake_llm.calls == 2


def test_errors_are_not_cached(fake_llm: FakeLLM, tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache.db")
    fake_llm.default = "500"
    assert _judge(fake_llm, cache, max_retries=0).judge(_traj()).judgments[0].error
    fake_llm.default = "ok"
    j = _judge(fake_llm, cache, max_retries=0).judge(_traj()).judgments[0]
    assert j.error is None and not j.cache_hit and fake_llm.calls == 2


def test_missing_api_key_env_is_a_clear_input_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from trajudge.core import InputError

    monkeypatch.delenv("TRAJUDGE_TEST_KEY", raising=False)
    with pytest.raises(InputError, match="TRAJUDGE_TEST_KEY is not set"):
        Judge(JudgeSpec(name="x", model="openai/gpt-4o-mini", api_key_env="TRAJUDGE_TEST_KEY"))


def test_api_key_is_read_from_the_named_env_var_and_sent(
    fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRAJUDGE_TEST_KEY", "sk-test-123")
    judge = _judge(fake_llm, api_key_env="TRAJUDGE_TEST_KEY")
    assert "sk-test-123" not in judge.spec.model_dump_json()  # never stored
    assert judge.judge(_traj()).judgments[0].error is None


@pytest.mark.parametrize(
    ("model", "api_base", "mode"),
    [
        ("openai/gemma", "http://127.0.0.1:8080/v1", "json_schema_mode"),
        ("hosted_vllm/llama", None, "json_schema_mode"),
        ("ollama/llama3:8b", None, "json_mode"),
        ("anthropic/claude-3-5-sonnet", None, "tool_call"),
        ("gpt-4o-mini", None, "tool_call"),
    ],
)
def test_instructor_mode_per_provider(model: str, api_base: str | None, mode: str) -> None:
    assert choose_mode(model, api_base) == mode


def test_a_judge_on_another_endpoint_is_not_served_from_the_cache(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    cache = ResponseCache(tmp_path / "cache.db")
    served = _judge(fake_llm, cache).judge(_traj()).judgments[0]
    assert served.error is None and fake_llm.calls == 1
    # the same model, rubric and parameters on a dead endpoint: an error, not a cached verdict
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"  # bound, never listening
        [j] = _judge(fake_llm, cache, api_base=dead, max_retries=0).judge(_traj()).judgments
    assert not j.cache_hit and j.score is None
    assert j.error is not None and "Connection" in j.error
    assert j.request_sha256 != served.request_sha256
    assert j.config_sha256 != served.config_sha256


def test_the_judge_configuration_names_what_changes_a_request_and_no_key(
    fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRAJUDGE_TEST_KEY", "sk-test-abcdefghijklmnop")
    judge = _judge(fake_llm, api_key_env="TRAJUDGE_TEST_KEY", seed=7)
    config = json.loads(judge.config_json)
    assert config["model"] == "openai/fake" and config["api_base"] == fake_llm.api_base
    assert config["params"] == {"temperature": 0.0, "max_tokens": 512, "seed": 7}
    assert config["mode"] == "json_schema_mode"
    assert config["rubric"]["id"] == "trajectory_reasonableness"
    assert "sk-test" not in judge.config_json and "TRAJUDGE_TEST_KEY" not in judge.config_json
    j = judge.judge(_traj()).judgments[0]
    assert (j.config_sha256, j.judge_config) == (judge.config_sha256, judge.config_json)
    # limits that do not change an answer leave the configuration alone; the rest change it
    same = {"timeout": 99, "concurrency": 9, "max_retries": 0, "rpm": 100, "samples": 3}
    assert _judge(fake_llm, api_key_env="TRAJUDGE_TEST_KEY", seed=7, **same).config_sha256 == (
        judge.config_sha256
    )
    for change in (
        {"model": "openai/other"},
        {"api_base": "http://127.0.0.1:1/v1"},
        {"temperature": 0.5},
        {"max_tokens": 300},
        {"seed": 8},
        {"mode": "json_mode"},
        {"max_reasoning_chars": 100},
        {"prompt_budget": 3000},
        {"rubric": "answer_faithfulness"},
    ):
        other = _judge(fake_llm, **{"api_key_env": "TRAJUDGE_TEST_KEY", "seed": 7, **change})
        assert other.config_sha256 != judge.config_sha256, change


def test_a_timeout_error_names_the_setting_to_raise(fake_llm: FakeLLM) -> None:
    fake_llm.default = "delay:5"
    [j] = _judge(fake_llm, timeout=1, max_retries=1).judge(_traj()).judgments
    assert j.score is None and fake_llm.calls == 2
    assert j.error is not None and j.error.startswith(
        "timed out after 1 s (2 attempt(s)): raise `timeout:` of judge 'fake' in trajudge.yaml "
        "or --timeout."
    )


def test_a_verdict_cut_by_max_tokens_names_the_setting_to_raise(fake_llm: FakeLLM) -> None:
    fake_llm.default = "length"
    [j] = _judge(fake_llm, max_retries=0, max_tokens=64).judge(_traj()).judgments
    assert j.error is not None and j.error.startswith(
        "the verdict did not fit in max_tokens=64 (1 attempt(s)): raise `max_tokens:` of judge "
        "'fake' in trajudge.yaml or --max-tokens."
    )


@pytest.mark.parametrize("action", ["ok", "500", "400", "401-echo", "garbage", "length", "slow"])
def test_json_schema_calls_skip_instructor_with_the_same_request_and_outcome(
    fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch, action: str
) -> None:
    """The cheaper path for json_schema_mode sends the very request instructor sends (body in
    the same key order, same headers) and ends in the same verdict or the same stored error,
    without calling instructor at all."""
    import instructor

    def outcome(via_instructor: bool) -> tuple[object, ...]:
        fake_llm.reset()
        fake_llm.default = "delay:3" if action == "slow" else action
        judge = _judge(fake_llm, max_retries=1, timeout=1)
        judge.client().via_instructor = via_instructor
        [j] = judge.judge(_traj()).judgments
        headers = {k: v for k, v in fake_llm.headers[0].items() if k != "Content-Length"}
        error = None if j.error is None else re.sub(r"time taken=[0-9.]+", "", j.error)
        return (
            j.score,
            j.criteria,
            j.reasoning,
            error,
            fake_llm.calls,
            json.dumps(fake_llm.requests[0]),  # key order kept: a grammar follows it
            headers,
        )

    through_instructor = outcome(True)

    def refuse(*args: object, **kwargs: object) -> object:
        raise AssertionError("instructor was used")

    monkeypatch.setattr(instructor, "from_litellm", refuse)
    assert outcome(False) == through_instructor


def test_tool_call_mode_still_goes_through_instructor(fake_llm: FakeLLM) -> None:
    fake_llm.choose = lambda name, values: 4 if 4 in values else values[0]
    direct = _judge(fake_llm).judge(_traj()).judgments[0]
    tools = _judge(fake_llm, mode="tool_call").judge(_traj()).judgments[0]
    body = fake_llm.requests[-1]
    assert "tools" in body and "response_format" not in body  # instructor's function calling
    assert tools.error is None and (tools.score, tools.criteria, tools.reasoning) == (
        direct.score,
        direct.criteria,
        direct.reasoning,
    )


def test_the_cache_key_is_the_hash_of_the_request_description(fake_llm: FakeLLM) -> None:
    """``request_key`` reuses the schema's JSON per verdict model; it must equal the SHA-256
    of the canonical JSON of ``describe``, the documented key (keys of existing caches)."""
    from trajudge.judges import build_prompt, request_key
    from trajudge.judges.prompts._prompt import Shown

    judge = _judge(fake_llm, seed=3)
    client = judge.client()
    prompt = build_prompt(judge.rubric, [Shown(_traj(5))])
    params = {"temperature": 0.0, "max_tokens": 512, "seed": 3}
    extra = {"judge_config": judge.config_sha256, "sample": 0, "order": "ab"}
    assert client.request_key(prompt.messages, judge.verdict_model, params, extra) == request_key(
        client.describe(prompt.messages, judge.verdict_model, params, extra)
    )
    [prepared] = judge.prepare(_traj(5))
    assert prepared.key == request_key(
        client.describe(prompt.messages, judge.verdict_model, {**params, "seed": 3}, extra)
    )


def test_retries_back_off_exponentially_with_jitter_up_to_the_cap() -> None:
    """Retry n waits backoff * 2**(n-1) plus up to one backoff of jitter, at most the cap
    (bounds computed by hand for backoff 1 s and a 30 s cap)."""
    from trajudge.judges.calls._client import LLMClient

    client = LLMClient("openai/fake", backoff_s=1.0, backoff_max_s=30.0)
    for retry, (low, high) in {1: (1, 2), 2: (2, 3), 3: (4, 5), 5: (16, 17), 6: (30, 30)}.items():
        waits = [client._backoff(retry) for _ in range(200)]
        assert all(low <= w <= high for w in waits), (retry, min(waits), max(waits))
        if low < high:
            assert max(waits) - min(waits) > 0.5  # jitter: not one fixed wait


@pytest.mark.parametrize(
    ("model", "placeholder"),
    [
        ("openai/gemma", True),
        ("gpt-4o-mini", True),
        ("hosted_vllm/llama", True),
        ("ollama/llama3:8b", True),
        ("azure/my-gpt-4o-mini", False),  # AZURE_API_KEY
        ("anthropic/claude-3-5-haiku", False),  # ANTHROPIC_API_KEY
        ("bedrock/anthropic.claude-3-5-haiku", False),  # SigV4: a key would be a bearer token
        ("vertex_ai/gemini-2.0-flash", False),  # Google OAuth
        ("litellm_proxy/gpt-4o", False),  # LITELLM_PROXY_API_KEY
    ],
)
def test_a_placeholder_key_goes_only_to_openai_compatible_servers(
    model: str, placeholder: bool
) -> None:
    """With an ``api_base`` and no ``api_key_env``, an OpenAI-format server gets a placeholder
    key (never OPENAI_API_KEY); any other provider keeps the credentials litellm finds."""
    from trajudge.judges.calls._client import LLMClient

    kwargs = LLMClient(model, api_base="https://gateway.example/v1")._request_kwargs({})
    assert kwargs["api_base"] == "https://gateway.example/v1"
    assert ("api_key" in kwargs) is placeholder
    if placeholder:
        assert kwargs["api_key"] == "sk-no-key-needed"
    assert "api_key" not in LLMClient(model)._request_kwargs({})  # no api_base: litellm's own


_FETCHES = r"""
import json, os, sys
import httpx
seen = []
real_get = httpx.get
def get(url, *args, **kwargs):
    seen.append(str(url))
    raise httpx.ConnectError("no network in this test")
httpx.get = get
from trajudge.judges import Judge, JudgeSpec, ProviderBatchEngine
from trajudge.store import Store
from trajudge.trajectories import Trajectory
judge = Judge(JudgeSpec(name="j", model="anthropic/claude-sonnet-4-5",
                        rubric="trajectory_reasonableness"))
call = judge.prepare(Trajectory(id="t", task_id="k", input="book a flight"))[0]
body = ProviderBatchEngine(Store(sys.argv[1]), "ds").body(call)
print(json.dumps({"fetched": seen, "system": bool(body.get("system"))}))
"""


@pytest.mark.parametrize("override", [False, True])
def test_litellm_fetches_no_table_at_run_time_unless_the_environment_asks(
    tmp_path: Path, override: bool
) -> None:
    """An Anthropic request makes litellm fetch its beta-header table from GitHub (5 s without
    a network, and what is sent then depends on that file) unless told to use its bundled
    copy, which trajudge does by default; a user can still ask for the fetch."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LITELLM_")}
    env.update(PYTHONPATH=str(ROOT / "src"), ANTHROPIC_API_KEY="sk-ant-test")
    if override:
        env.update(LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS="false", LITELLM_OFFLINE_MODE="false")
    proc = subprocess.run(
        [sys.executable, "-c", _FETCHES, f"sqlite:///{tmp_path / 's.db'}"],
        env=env, capture_output=True, text=True, check=False, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["system"]  # the body was built (litellm moved the system message)
    beta = [u for u in out["fetched"] if "anthropic_beta_headers" in u]
    assert bool(beta) == override, out["fetched"]
