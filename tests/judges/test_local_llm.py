"""The embedded local judge: a real llama.cpp server (xllamacpp) and the gemma-3-270m GGUF.

No mocks on this path: real τ-bench trajectories, the real server, litellm + instructor.
Kept small (2 trajectories x 2 orders, short outputs) because the model runs on shared CPUs.
"""

from __future__ import annotations

import json
import math
import socket
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from trajudge.judges import (
    Judge,
    JudgeSpec,
    LocalModelServer,
    LocalServerError,
    aggregate_frame,
    load_rubric,
    score_dataset,
    shared_local_server,
    stop_shared_servers,
)
from trajudge.store import Store
from trajudge.trajectories import from_tau_bench

CANDIDATES = ["39-1", "14-2"]  # two failing trials with 3-4 steps (short prompts)


@pytest.fixture(scope="module")
def _servers() -> Iterator[None]:
    yield
    stop_shared_servers()


@pytest.mark.local_llm
@pytest.mark.slow
@pytest.mark.timeout(2400)  # ~1 min idle, 430 s measured at load 12 on two cores
def test_local_judge_scores_tau_bench_in_reference_mode(
    tau_bench_file: Path, db_url: str, _servers: None
) -> None:
    trajectories, specs = from_tau_bench(tau_bench_file)
    chosen = [t for t in trajectories if t.id in CANDIDATES]
    assert len(chosen) == 2 and not any(t.outcome for t in chosen)
    store = Store(db_url)
    # only failing trials are imported, so each reference is the task spec's expected calls
    store.import_dataset("tau", chosen, {t.task_id: specs[t.task_id] for t in chosen})
    spec = JudgeSpec(
        name="gemma",
        model="local/gemma-3-270m",
        rubric="trajectory_reasonableness_reference",
        max_tokens=128,
        max_reasoning_chars=80,
        prompt_budget=1800,  # user turns are never elided: 14-2 needs ~1,700 tokens
        concurrency=2,
        swap=True,
    )
    summary = score_dataset(store, "tau", [Judge(spec)], concurrency=2)
    assert summary.planned == 4 and summary.errors == 0 and summary.judged == 4
    assert summary.cost_usd == 0.0

    frame = store.judgments_frame("tau")
    assert len(frame) == 4
    assert sorted(frame["order"]) == ["ab", "ab", "ba", "ba"]
    assert set(frame["trajectory_id"]) == set(CANDIDATES)
    assert {o for o in frame["other_id"]} == {f"spec:{t.task_id}" for t in chosen}
    assert frame["error"].isna().all()
    assert frame["score"].between(1, 5).all() and (frame["score"] % 1 == 0).all()
    assert (frame["prompt_tokens"] > 200).all() and (frame["completion_tokens"] > 0).all()
    assert (frame["latency_s"] > 0).all() and (frame["cost_usd"] == 0).all()
    assert (frame["model"] == "local/gemma-3-270m").all()
    for raw in frame["raw"]:
        verdict = json.loads(raw)["verdict"]
        assert verdict["score_a"] in range(1, 6) and verdict["score_b"] in range(1, 6)
        assert len(verdict["reasoning"]) <= 80

    agg = aggregate_frame(
        frame,
        {"trajectory_reasonableness_reference": load_rubric("trajectory_reasonableness_reference")},
    )
    assert len(agg) == 2
    assert agg["inconsistent"].map(lambda v: isinstance(v, bool)).all()  # a flag per item
    assert all(1 <= s <= 5 and not math.isnan(s) for s in agg["score"])
    # the flag agrees with the stored rows: the sign of (candidate - reference) per order
    for tid, group in frame.groupby("trajectory_id"):
        margins = {
            r["order"]: r["score"] - json.loads(r["raw"])["other_score"]
            for r in group.to_dict("records")
        }
        sign = {o: (m > 0) - (m < 0) for o, m in margins.items()}
        flipped = bool(agg.loc[agg["trajectory_id"] == tid, "inconsistent"].iloc[0])
        assert flipped == (sign["ab"] != sign["ba"])


@pytest.mark.local_llm
@pytest.mark.slow
@pytest.mark.timeout(2400)  # one call on the shared server (prompt ~1,000 tokens)
def test_local_judge_records_score_probabilities_from_token_logprobs(
    tau_bench_file: Path, _servers: None
) -> None:
    trajectories, _ = from_tau_bench(tau_bench_file)
    [chosen] = [t for t in trajectories if t.id == CANDIDATES[0]]
    spec = JudgeSpec(
        name="gemma-lp",
        model="local/gemma-3-270m",
        rubric="trajectory_reasonableness",
        temperature=0.0,
        max_tokens=96,
        max_reasoning_chars=60,
        prompt_budget=1800,
        logprobs=True,
    )
    [j] = Judge(spec).judge(chosen).judgments
    assert j.error is None and j.score is not None, j.error
    probs = j.score_probs
    assert probs is not None and set(probs) == {"1", "2", "3", "4", "5"}, probs
    assert abs(sum(probs.values()) - 1.0) < 1e-6
    assert all(0.0 <= p <= 1.0 for p in probs.values())
    assert probs[str(int(j.score))] > 0  # the score it wrote had a probability
    assert j.expected_score is not None and 1.0 <= j.expected_score <= 5.0
    assert j.expected_score == pytest.approx(sum(int(k) * p for k, p in probs.items()))
    # greedy decoding under the JSON grammar writes the most likely allowed score
    assert max(probs, key=lambda k: probs[k]) == str(int(j.score)), (j.score, probs)


@pytest.mark.local_llm
@pytest.mark.slow
@pytest.mark.timeout(300)
def test_local_server_answers_and_stops(_servers: None) -> None:
    server = LocalModelServer("gemma-3-270m", n_ctx=4096, n_parallel=1)
    with server:
        assert server.api_base.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(server.base_url + "/health", timeout=10) as resp:
            assert resp.status == 200
        base = server.base_url
        assert server.ctx_per_slot == 4096
    assert not server.running
    with pytest.raises(OSError):
        urllib.request.urlopen(base + "/health", timeout=5)
    # the shared server is reused, not started twice
    assert shared_local_server("gemma-3-270m") is shared_local_server("gemma-3-270m")


def test_port_in_use_is_a_one_line_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        with pytest.raises(LocalServerError, match=f"port {port} on 127.0.0.1 is in use") as info:
            LocalModelServer("gemma-3-270m", port=port).start()
    assert "\n" not in str(info.value)


def test_missing_extra_names_the_pip_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "xllamacpp", None)  # makes `import xllamacpp` fail
    with pytest.raises(LocalServerError, match=r"pip install 'trajudge\[local\]'"):
        LocalModelServer("gemma-3-270m").start()


def test_unknown_local_model_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(LocalServerError, match="unknown local model"):
        LocalModelServer("llama-9000").start()
    with pytest.raises(LocalServerError, match="model file not found"):
        LocalModelServer("x", model_path=tmp_path / "nope.gguf").start()


def test_a_file_that_is_not_a_model_fails_to_start(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.gguf"
    bogus.write_bytes(b"not a gguf file")
    with pytest.raises(LocalServerError, match="failed to start"):
        LocalModelServer("x", model_path=bogus, n_ctx=512).start()
