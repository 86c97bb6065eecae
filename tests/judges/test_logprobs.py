"""Expected scores from token log-probabilities, against the fake OpenAI-compatible server.

Every expected value is computed by hand in the test from the probabilities the fake server
is told to report; the server answers in OpenAI's shape (``choices[0].logprobs.content``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from fake_llm import FakeLLM, token_logprobs

from trajudge.judges import Judge, JudgeSpec, ResponseCache, score_dataset
from trajudge.store import Store
from trajudge.trajectories import Step, Trajectory

pytestmark = pytest.mark.timeout(300)

Alternatives = Sequence[tuple[str, float]]


def _logprobs(fields: dict[str, list[tuple[str, Alternatives]]]) -> Any:
    """A ``FakeLLM.logprobs`` hook: :func:`fake_llm.token_logprobs` with ``fields``."""
    return lambda content: token_logprobs(content, fields)


def _traj(task: str, trial: int) -> Trajectory:
    return Trajectory(
        id=f"{task}-{trial}",
        task_id=task,
        trial=trial,
        input=f"task {task}",
        steps=[Step(tool="search", args={"q": task}, output="ok")],
        final_answer="done",
        outcome=trial == 0,
    )


def _judge(fake: FakeLLM, **kw: Any) -> Judge:
    spec: dict[str, Any] = {
        "name": "lp",
        "model": "openai/fake",
        "api_base": fake.api_base,
        "rubric": "trajectory_reasonableness",
        "retry_backoff_s": 0.01,
        "max_retries": 1,
        "logprobs": True,
    }
    spec.update(kw)
    rubric_dirs = spec.pop("rubric_dirs", ())
    cache = spec.pop("cache", None)
    return Judge(JudgeSpec.model_validate(spec), rubric_dirs=rubric_dirs, cache=cache)


def _store(db_url: str, n: int = 2) -> Store:
    store = Store(db_url)
    store.import_dataset("ds", [_traj("1", i) for i in range(n)])
    return store


def test_expected_score_is_the_probability_weighted_score_renormalised_over_the_scale(
    fake_llm: FakeLLM, db_url: str
) -> None:
    fake_llm.choose = lambda name, values: 3 if name == "score" else values[-1]
    # the token holds the space before the value; "0" is not on the 1..5 scale, "3" without
    # the space is another path (the space not written): both are left out
    tops = [(" 3", 0.3), (" 4", 0.15), (" 5", 0.05), (" 0", 0.4), ("3", 0.1)]
    fake_llm.logprobs = _logprobs({"score": [(" 3", tops)]})
    store = _store(db_url)
    summary = score_dataset(store, "ds", [_judge(fake_llm)])
    assert summary.judged == 2 and summary.errors == 0
    assert all(r["logprobs"] is True and r["top_logprobs"] == 20 for r in fake_llm.requests)

    frame = store.judgments_frame("ds")
    total = 0.3 + 0.15 + 0.05
    p3, p4, p5 = 0.3 / total, 0.15 / total, 0.05 / total  # 0.6, 0.3, 0.1
    assert (p3, p4, p5) == pytest.approx((0.6, 0.3, 0.1))
    for _, row in frame.iterrows():
        assert row["score"] == 3
        probs = row["score_probs"]
        probs = json.loads(probs) if isinstance(probs, str) else probs
        assert probs == pytest.approx({"1": 0.0, "2": 0.0, "3": p3, "4": p4, "5": p5})
        assert row["expected_score"] == pytest.approx(3 * 0.6 + 4 * 0.3 + 5 * 0.1)  # 3.5


def test_tokens_around_a_stripped_message_still_line_up(fake_llm: FakeLLM) -> None:
    # llama.cpp's tokens hold whitespace before and after the JSON that the message text
    # (as litellm returns it) no longer has: seen on the embedded server
    fake_llm.choose = lambda name, values: 3 if name == "score" else values[-1]
    tops = [(" 3", 0.3), (" 4", 0.15), (" 5", 0.05), (" 0", 0.5)]
    inner = _logprobs({"score": [(" 3", tops)]})
    pad = token_logprobs("  \n  ", {})
    fake_llm.logprobs = lambda content: pad + inner(content) + pad
    [j] = _judge(fake_llm).judge(_traj("1", 0)).judgments
    assert j.expected_score == pytest.approx(3 * 0.6 + 4 * 0.3 + 5 * 0.1)


def test_a_score_split_across_tokens_is_resolved_at_the_next_token(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    levels = "\n".join(f"    - {{value: {v}, label: l{v}, anchor: a{v}}}" for v in range(1, 11))
    (tmp_path / "ten.yaml").write_text(
        "id: ten\ndescription: d\nmode: pointwise\nscale:\n  kind: ordinal\n"
        f"  pass_threshold: 6\n  levels:\n{levels}\n"
    )
    fake_llm.choose = lambda name, values: 10 if name == "score" else values[-1]
    # digits are single tokens: "10" is "1" then "0"; at "1" the model could also have
    # written "7" (a whole value) or "2" (2 alone: no value starts with "2" and goes on);
    # after "1", "0" makes 10 and "}" ends the number at 1
    fake_llm.logprobs = _logprobs(
        {
            "score": [
                (" ", [(" ", 1.0)]),
                ("1", [("1", 0.5), ("7", 0.3), ("2", 0.2)]),
                ("0", [("0", 0.8), ("}", 0.15), ("x", 0.05)]),
            ]
        }
    )
    judge = _judge(fake_llm, rubric="ten", rubric_dirs=[str(tmp_path)])
    [j] = judge.judge(_traj("1", 0)).judgments
    assert j.score == 10 and j.score_probs is not None
    # "x" is no continuation of a number: the next position renormalises over 0.8 + 0.15
    p10 = 0.5 * 0.8 / 0.95
    p1 = 0.5 * 0.15 / 0.95
    expected = {str(v): 0.0 for v in range(1, 11)} | {"10": p10, "1": p1, "7": 0.3, "2": 0.2}
    assert j.score_probs == pytest.approx(expected)
    assert j.expected_score == pytest.approx(10 * p10 + 1 * p1 + 7 * 0.3 + 2 * 0.2)


def test_reference_mode_reads_the_candidates_slot_in_each_order(fake_llm: FakeLLM) -> None:
    fake_llm.choose = lambda name, values: {"score_a": 2, "score_b": 5}.get(name, values[-1])
    fake_llm.logprobs = _logprobs(
        {
            "score_a": [(" 2", [(" 2", 0.5), (" 1", 0.5)])],
            "score_b": [(" 5", [(" 5", 0.75), (" 4", 0.25)])],
        }
    )
    judge = _judge(fake_llm, rubric="trajectory_reasonableness_reference")
    ref = Trajectory(id="r", task_id="1", steps=[Step(tool="book", args={})])
    by_order = {j.order: j for j in judge.judge(_traj("1", 0), other=ref).judgments}
    # ab: the candidate is A (score_a); ba: it is B (score_b)
    assert by_order["ab"].score == 2 and by_order["ab"].expected_score == pytest.approx(1.5)
    assert by_order["ba"].score == 5 and by_order["ba"].expected_score == pytest.approx(4.75)
    assert by_order["ba"].score_probs == pytest.approx(
        {"1": 0.0, "2": 0.0, "3": 0.0, "4": 0.25, "5": 0.75}
    )


def test_pairwise_categories_get_probabilities_mapped_back_in_the_second_order(
    fake_llm: FakeLLM,
) -> None:
    fake_llm.choose = lambda name, values: "A" if name == "verdict" else values[-1]
    fake_llm.logprobs = _logprobs(
        {"verdict": [(' "A', [(' "A', 0.6), (' "B', 0.3), (' "t', 0.1)])]}
    )
    judge = _judge(fake_llm, rubric="trajectory_preference")
    other = _traj("1", 1)
    by_order = {j.order: j for j in judge.judge(_traj("1", 0), other=other).judgments}
    assert by_order["ab"].score_probs == pytest.approx({"A": 0.6, "B": 0.3, "tie": 0.1})
    # shown second, the candidate is "B": the probabilities are mapped back like the verdict
    assert by_order["ba"].verdict == "B"
    assert by_order["ba"].score_probs == pytest.approx({"A": 0.3, "B": 0.6, "tie": 0.1})
    assert by_order["ab"].expected_score is None  # categories have no expected score


def test_nominal_categories_sharing_a_prefix_are_resolved_at_the_next_token(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    (tmp_path / "kinds.yaml").write_text(
        "id: kinds\ndescription: d\nmode: pointwise\nscale:\n  kind: nominal\n  levels:\n"
        + "".join(
            f"    - {{value: {c}, label: {c}, anchor: a}}\n"
            for c in ("timeout", "tool_error", "none")
        )
    )
    fake_llm.choose = lambda name, values: "timeout" if name == "verdict" else values[-1]
    # ' "t' starts timeout and tool_error: the next token decides ('ime' or 'ool')
    fake_llm.logprobs = _logprobs(
        {"verdict": [(' "t', [(' "t', 0.7), (' "n', 0.3)]), ("ime", [("ime", 0.5), ("ool", 0.5)])]}
    )
    judge = _judge(fake_llm, rubric="kinds", rubric_dirs=[str(tmp_path)])
    [j] = judge.judge(_traj("1", 0)).judgments
    assert j.verdict == "timeout" and j.expected_score is None
    assert j.score_probs == pytest.approx(
        {"timeout": 0.7 * 0.5, "tool_error": 0.7 * 0.5, "none": 0.3}
    )


def test_a_provider_without_logprobs_is_named_once_and_the_columns_stay_empty(
    fake_llm: FakeLLM, db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    store = _store(db_url, n=4)  # four calls, no logprobs hook: the answers carry none
    with caplog.at_level(logging.WARNING, logger="trajudge.judges"):
        summary = score_dataset(store, "ds", [_judge(fake_llm)])
    assert summary.judged == 4 and fake_llm.calls == 4
    warned = [r for r in caplog.records if "log-probabilities" in r.getMessage()]
    assert len(warned) == 1 and "'lp'" in warned[0].getMessage()
    frame = store.judgments_frame("ds")
    assert frame["score"].notna().all()
    assert frame["expected_score"].isna().all() and frame["score_probs"].isna().all()


def test_logprobs_are_off_by_default_and_the_option_is_in_the_cache_key(
    fake_llm: FakeLLM, caplog: pytest.LogCaptureFixture
) -> None:
    off, on = _judge(fake_llm, logprobs=False), _judge(fake_llm)
    assert JudgeSpec(name="d").logprobs is False
    assert off.config_sha256 != on.config_sha256
    [a] = off.prepare(_traj("1", 0))
    [b] = on.prepare(_traj("1", 0))
    assert a.key != b.key and "logprobs" not in a.params
    with caplog.at_level(logging.WARNING, logger="trajudge.judges"):
        [j] = off.judge(_traj("1", 0)).judgments
    assert "logprobs" not in fake_llm.requests[0] and j.expected_score is None
    assert not caplog.records  # not asked for: nothing to say


def test_a_cached_rerun_and_a_resumed_run_keep_the_probabilities(
    fake_llm: FakeLLM, db_url: str, tmp_path: Path
) -> None:
    fake_llm.choose = lambda name, values: 4 if name == "score" else values[-1]
    tops = [(" 4", 0.5), (" 5", 0.25), (" 2", 0.25)]
    fake_llm.logprobs = _logprobs({"score": [(" 4", tops)]})
    cache = ResponseCache(tmp_path / "cache.db")
    store = _store(db_url)
    score_dataset(store, "ds", [_judge(fake_llm, cache=cache)])
    assert fake_llm.calls == 2
    expected = 4 * 0.5 + 5 * 0.25 + 2 * 0.25  # 3.75

    # resumed: nothing to call, the stored rows are as written
    again = score_dataset(store, "ds", [_judge(fake_llm, cache=cache)])
    assert again.resumed == 2 and again.judged == 0 and fake_llm.calls == 2

    # a new dataset from the cache (a fresh cache object: read back from disk)
    store.import_dataset("copy", [_traj("1", i) for i in range(2)])
    reread = ResponseCache(tmp_path / "cache.db")
    copy = score_dataset(store, "copy", [_judge(fake_llm, cache=reread)])
    assert copy.cache_hits == 2 and fake_llm.calls == 2
    for name in ("ds", "copy"):
        frame = store.judgments_frame(name)
        assert frame["expected_score"].tolist() == pytest.approx([expected, expected])
        for probs in frame["score_probs"]:
            probs = json.loads(probs) if isinstance(probs, str) else probs
            assert probs == pytest.approx({"1": 0, "2": 0.25, "3": 0, "4": 0.5, "5": 0.25})
    assert store.judgments_frame("copy")["cache_hit"].all()


def test_a_cache_written_before_the_option_is_upgraded_in_place(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE responses (key TEXT PRIMARY KEY, model TEXT NOT NULL, verdict TEXT NOT"
        " NULL, content TEXT NOT NULL, prompt_tokens INTEGER, completion_tokens INTEGER,"
        " cost_usd REAL, latency_s REAL, created_at TEXT NOT NULL DEFAULT 'x')"
    )
    conn.execute("INSERT INTO responses VALUES ('k', 'm', '{\"score\": 4}', '', 1, 2, 0, 1, 'x')")
    conn.commit()
    conn.close()
    cache = ResponseCache(path)
    hit = cache.get("k")
    assert hit is not None and hit.verdict == {"score": 4} and hit.probs is None


def test_the_provider_batch_engine_stores_the_same_probabilities(
    fake_llm: FakeLLM, db_url: str
) -> None:
    from trajudge.judges import ProviderBatchEngine

    fake_llm.choose = lambda name, values: 3 if name == "score" else values[-1]
    tops = [(" 3", 0.3), (" 4", 0.15), (" 5", 0.05), (" 0", 0.5)]
    fake_llm.logprobs = _logprobs({"score": [(" 3", tops)]})
    store = _store(db_url)
    engine = ProviderBatchEngine(store, "ds", poll_interval_s=0.02)
    summary = score_dataset(store, "ds", [_judge(fake_llm)], engine=engine)
    assert summary.judged == 2 and summary.errors == 0
    frame = store.judgments_frame("ds")
    assert frame["expected_score"].tolist() == pytest.approx([3.5, 3.5])


@pytest.mark.ray
@pytest.mark.timeout(600)
def test_the_ray_engine_stores_what_the_local_engine_stores(
    ray_cluster: Any, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    from trajudge.judges import LocalEngine, RayEngine

    fake_llm.choose = lambda name, values: 3 if name == "score" else values[-1]
    tops = [(" 3", 0.3), (" 4", 0.15), (" 5", 0.05), (" 0", 0.5)]
    fake_llm.logprobs = _logprobs({"score": [(" 3", tops)]})
    got = {}
    for name, engine in (("local", LocalEngine(2)), ("ray", RayEngine(2))):
        store = _store(f"sqlite:///{tmp_path / name}.db")
        score_dataset(store, "ds", [_judge(fake_llm)], engine=engine)
        frame = store.judgments_frame("ds").sort_values("trajectory_id")
        got[name] = (frame["expected_score"].tolist(), frame["score_probs"].tolist())
        store.close()
    assert got["ray"] == got["local"]
    assert got["ray"][0] == pytest.approx([3.5, 3.5])
