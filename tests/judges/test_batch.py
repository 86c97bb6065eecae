"""Batch scoring: gates first, items per mode, immediate writes, resume after a kill."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from fake_llm import FakeLLM

from trajudge.judges import (
    BatchProgress,
    Judge,
    JudgeSpec,
    ResponseCache,
    aggregate_frame,
    ascore_dataset,
    run_sync,
    score_dataset,
)
from trajudge.store import Store
from trajudge.trajectories import ExpectedCall, Step, TaskSpec, Trajectory

pytestmark = pytest.mark.timeout(300)
ROOT = Path(__file__).resolve().parents[2]


def _t(task: str, trial: int, outcome: bool, tools: tuple[str, ...] = ("search",)) -> Trajectory:
    return Trajectory(
        id=f"{task}-{trial}",
        task_id=task,
        trial=trial,
        input=f"task {task}",
        steps=[Step(tool=tool, args={"q": task}, output="ok") for tool in tools],
        final_answer="done",
        outcome=outcome,
    )


TRAJECTORIES = [
    _t("1", 0, True),
    _t("1", 1, False),
    _t("2", 0, False, ("search", "delete_account")),  # fails the forbidden_tools gate
    _t("2", 1, False),
    _t("3", 0, False),
    _t("3", 1, False),
    _t("4", 0, False),
    _t("4", 1, False),
]
SPECS = {
    "2": TaskSpec(forbidden_tools=["delete_account"]),
    "3": TaskSpec(reference=[ExpectedCall(tool="book", args={"q": "3"})]),
}


def _store(db_url: str) -> Store:
    store = Store(db_url)
    store.import_dataset("ds", TRAJECTORIES, SPECS)
    return store


def _judge(fake: FakeLLM, name: str, rubric: str, **kw: object) -> Judge:
    spec: dict[str, object] = {
        "name": name,
        "model": "openai/fake",
        "api_base": fake.api_base,
        "rubric": rubric,
        "retry_backoff_s": 0.01,
        "max_retries": 1,
    }
    spec.update(kw)
    return Judge(JudgeSpec.model_validate(spec))


def test_gates_modes_references_and_immediate_writes(fake_llm: FakeLLM, db_url: str) -> None:
    store = _store(db_url)
    judges = [
        _judge(fake_llm, "point", "trajectory_reasonableness"),
        _judge(fake_llm, "ref", "trajectory_reasonableness_reference"),
        _judge(fake_llm, "pair", "trajectory_preference"),
    ]
    seen: list[tuple[int, int]] = []

    def progress(p: BatchProgress) -> None:
        # every completed call is already in the store when progress hears of it
        seen.append((p.done, len(store.judgments_frame("ds"))))

    summary = score_dataset(store, "ds", judges, concurrency=3, progress=progress)
    # pointwise: 8 trajectories - 1 gated = 7 calls
    # reference: 1-1 (ref 1-0), 3-0 and 3-1 (spec reference) x 2 orders = 6 calls;
    #            1-0 (only passing trial is itself), 2-1, 4-0, 4-1 have no reference
    # pairwise: pairs (1-0,1-1), (3-0,3-1), (4-0,4-1) x 2 orders = 6 calls (2-0 is gated)
    assert summary.gate_skipped == 1 and summary.gate_failures == {"2-0": ["forbidden_tools"]}
    assert summary.no_reference == 4
    assert summary.planned == 19 and summary.judged == 19 and summary.errors == 0
    assert fake_llm.calls == 19
    assert all(done == stored for done, stored in seen)
    assert seen[-1] == (19, 19)
    frame = store.judgments_frame("ds")
    assert "2-0" not in set(frame["trajectory_id"])
    ref = frame[frame["judge"] == "ref"]
    others = dict(zip(ref["trajectory_id"], ref["other_id"], strict=False))
    assert others == {"1-1": "1-0", "3-0": "spec:3", "3-1": "spec:3"}
    assert sorted(ref["order"]) == ["ab"] * 3 + ["ba"] * 3
    pair = frame[frame["judge"] == "pair"]
    assert set(zip(pair["trajectory_id"], pair["other_id"], strict=False)) == {
        ("1-0", "1-1"),
        ("3-0", "3-1"),
        ("4-0", "4-1"),
    }
    agg = aggregate_frame(frame)
    assert len(agg) == 7 + 3 + 3
    # the fake answers the highest level in every slot: pairwise "tie" is the last enum value
    assert set(agg[agg["judge"] == "pair"]["verdict"]) == {"tie"}

    # a re-run makes no call and stores nothing new
    again = score_dataset(store, "ds", judges)
    assert again.resumed == 19 and again.judged == 0 and fake_llm.calls == 19
    assert len(store.judgments_frame("ds")) == 19


def test_limits_select_a_subset(fake_llm: FakeLLM, db_url: str) -> None:
    store = _store(db_url)
    judge = _judge(fake_llm, "point", "trajectory_reasonableness")
    s = score_dataset(store, "ds", [judge], max_tasks=2, max_trials=1)
    assert s.trajectories == 2 and s.planned == 1  # 1-0 and 2-0; 2-0 is gated
    assert s.gate_skipped == 1 and s.judged == 1
    s = score_dataset(store, "ds", [judge], tasks=["4"])
    assert s.planned == 2 and s.judged == 2


def test_cancelled_batch_resumes_without_repeats_or_duplicates(
    fake_llm: FakeLLM, db_url: str
) -> None:
    store = _store(db_url)
    judge = _judge(fake_llm, "point", "trajectory_reasonableness")
    # three answers, then every call stays in flight until released
    fake_llm.script = ["ok", "ok", "ok"]
    fake_llm.default = "block"
    reported: list[int] = []

    async def run_and_cancel() -> int:
        task: asyncio.Task[object] | None = None

        def progress(p: BatchProgress) -> None:
            reported.append(p.done)
            if p.done >= 3 and task is not None:
                task.cancel()  # like Ctrl-C once three judgments are stored

        task = asyncio.ensure_future(
            ascore_dataset(store, "ds", [judge], concurrency=2, progress=progress)
        )
        with pytest.raises(asyncio.CancelledError):
            await task
        return len(store.judgments_frame("ds"))

    stored = run_sync(run_and_cancel())
    # every answer is stored (the calls in flight are lost), and was reported only once stored
    assert stored == 3 and reported[-1] == 3
    first_calls = fake_llm.calls
    fake_llm.release()
    fake_llm.requests.clear()
    fake_llm.default = "ok"
    summary = score_dataset(store, "ds", [judge])
    assert summary.resumed == 3 and summary.judged == 7 - 3
    assert fake_llm.calls == 7 - 3  # finished judgments are not repeated
    assert first_calls >= 3
    frame = store.judgments_frame("ds")
    assert len(frame) == 7 and frame["trajectory_id"].is_unique


def test_killed_process_resumes(fake_llm: FakeLLM, db_url: str, tmp_path: Path) -> None:
    store = _store(db_url)
    fake_llm.default = "delay:0.5"
    script = textwrap.dedent(
        f"""
        from trajudge.judges import Judge, JudgeSpec, score_dataset
        from trajudge.store import Store
        spec = JudgeSpec(name="point", model="openai/fake", api_base={fake_llm.api_base!r},
                         rubric="trajectory_reasonableness", concurrency=1)
        score_dataset(Store({db_url!r}), "ds", [Judge(spec)], concurrency=1)
        """
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    proc = subprocess.Popen([sys.executable, "-c", script], env=env, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 120
        while len(store.judgments_frame("ds")) < 2 and time.monotonic() < deadline:
            assert proc.poll() is None, "the batch ended before it was killed"
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
    after_kill = len(store.judgments_frame("ds"))
    assert 2 <= after_kill < 7
    fake_llm.requests.clear()
    fake_llm.default = "ok"
    judge = _judge(fake_llm, "point", "trajectory_reasonableness")
    summary = score_dataset(store, "ds", [judge])
    assert summary.resumed == after_kill
    assert fake_llm.calls == 7 - after_kill
    frame = store.judgments_frame("ds")
    assert len(frame) == 7 and frame["trajectory_id"].is_unique and frame["error"].isna().all()


def test_errors_are_stored_then_retried_on_the_next_run(fake_llm: FakeLLM, db_url: str) -> None:
    store = _store(db_url)
    judge = _judge(fake_llm, "point", "trajectory_reasonableness", max_retries=0)
    fake_llm.default = "500"
    s = score_dataset(store, "ds", [judge])
    assert s.errors == 7 and s.judged == 0
    frame = store.judgments_frame("ds")
    assert frame["error"].notna().all() and frame["score"].isna().all()
    agg = aggregate_frame(frame)
    assert agg["passed"].isna().all()  # errors are neither a pass nor a fail
    fake_llm.default = "ok"
    s = score_dataset(store, "ds", [judge])
    assert s.resumed == 0 and s.judged == 7
    frame = store.judgments_frame("ds")
    assert len(frame) == 7 and frame["error"].isna().all()


def test_cached_rerun_into_a_new_dataset_counts_hits_not_cost(
    fake_llm: FakeLLM, db_url: str, tmp_path: Path
) -> None:
    cache = ResponseCache(tmp_path / "c.db")
    store = _store(db_url)
    spec = JudgeSpec(name="p", model="openai/fake", api_base=fake_llm.api_base)
    first = score_dataset(store, "ds", [Judge(spec, cache=cache)])
    assert first.cache_hits == 0 and first.prompt_tokens == 7 * 100
    store.import_dataset("copy", TRAJECTORIES, SPECS)
    second = score_dataset(store, "copy", [Judge(spec, cache=cache)])
    assert second.cache_hits == 7 and second.prompt_tokens == 0 and fake_llm.calls == 7
    assert store.judgments_frame("copy")["cache_hit"].all()


def test_spec_reference_never_uses_the_outcome() -> None:
    """prefer="spec": the reference comes from the expected calls even when a passing trial
    exists, so the outcome (the label a judge is calibrated against) never picks it."""
    from trajudge.judges import choose_reference
    from trajudge.trajectories import ExpectedCall, Step, TaskSpec, Trajectory

    cand = Trajectory(id="t-0", task_id="t", trial=0, outcome=False, steps=[Step(tool="a")])
    good = Trajectory(id="t-1", task_id="t", trial=1, outcome=True, steps=[Step(tool="b")])
    spec = TaskSpec(reference=[ExpectedCall(tool="b", args={"x": 1})])
    passing = choose_reference(cand, [cand, good], spec)
    assert passing is not None and passing[0].id == "t-1" and passing[1] is False
    from_spec = choose_reference(cand, [cand, good], spec, prefer="spec")
    assert from_spec is not None and from_spec[1] is True
    assert [s.tool for s in from_spec[0].steps] == ["b"]
    assert choose_reference(cand, [cand, good], None, prefer="spec") is None


def test_a_gated_trajectory_reaches_no_prompt_not_even_as_a_reference(
    fake_llm: FakeLLM, db_url: str
) -> None:
    """A passing trial that fails a gate is never the REFERENCE (or the other of a pair) of its
    sibling trials, whether it is among the judged trajectories or outside them."""
    marker = "GATED-CONTENT-7f3a91"

    def trial(task: str, i: int, outcome: bool, tool: str = "search") -> Trajectory:
        return Trajectory(
            id=f"{task}-{i}",
            task_id=task,
            trial=i,
            input=f"task {task}",
            steps=[Step(tool=tool, args={"q": task}, output=marker if tool == "wipe" else "ok")],
            final_answer=marker if tool == "wipe" else "done",
            outcome=outcome,
        )

    store = Store(db_url)
    store.import_dataset(
        "ds",
        [
            trial("a", 0, True, "wipe"),  # the only passing trial, and it fails a gate
            trial("a", 1, False),
            trial("b", 0, False),
            trial("b", 1, True, "wipe"),  # outside max_trials=1, still the passing trial
        ],
        {
            "a": TaskSpec(forbidden_tools=["wipe"]),
            "b": TaskSpec(
                forbidden_tools=["wipe"], reference=[ExpectedCall(tool="book", args={"q": "b"})]
            ),
        },
    )
    judges = [
        _judge(fake_llm, "ref", "trajectory_reasonableness_reference"),
        _judge(fake_llm, "pair", "trajectory_preference"),
        _judge(fake_llm, "point", "trajectory_reasonableness"),
    ]
    subset = score_dataset(store, "ds", judges, max_trials=1)
    every = score_dataset(store, "ds", judges)
    prompts = [json.dumps(body) for body in fake_llm.requests]
    assert prompts and not [p for p in prompts if marker in p]
    assert subset.gate_failures == {"a-0": ["forbidden_tools"]}
    # a-1 has no reference left (task a has no spec reference); no pair survives in a or b
    assert every.gate_failures == {"a-0": ["forbidden_tools"], "b-1": ["forbidden_tools"]}
    assert every.no_reference == 1 and every.errors == 0
    frame = store.judgments_frame("ds")
    assert not ({"a-0", "b-1"} & (set(frame["trajectory_id"]) | set(frame["other_id"])))
    ref = frame[frame["judge"] == "ref"]
    assert set(zip(ref["trajectory_id"], ref["other_id"], strict=True)) == {("b-0", "spec:b")}


def test_resume_never_reuses_judgments_of_another_configuration(
    fake_llm: FakeLLM, db_url: str
) -> None:
    store = _store(db_url)
    first = score_dataset(store, "ds", [_judge(fake_llm, "j", "trajectory_reasonableness")])
    assert first.judged == 7 and fake_llm.calls == 7
    # the same judge name with another model: every call is made again, none resumed
    changed = _judge(fake_llm, "j", "trajectory_reasonableness", model="openai/fake-2")
    second = score_dataset(store, "ds", [changed])
    assert second.resumed == 0 and second.judged == 7 and fake_llm.calls == 14
    assert {r["model"] for r in fake_llm.requests[7:]} == {"fake-2"}
    frame = store.judgments_frame("ds")
    assert len(frame) == 14
    assert frame.groupby("config_sha256")["model"].unique().map(list).to_dict() == {
        changed.config_sha256: ["openai/fake-2"],
        _judge(fake_llm, "j", "trajectory_reasonableness").config_sha256: ["openai/fake"],
    }
    # and the same configuration again resumes everything
    again = score_dataset(store, "ds", [changed])
    assert again.resumed == 7 and again.judged == 0 and fake_llm.calls == 14


def test_an_answer_is_stored_while_later_calls_are_still_in_flight(
    fake_llm: FakeLLM, db_url: str
) -> None:
    """The half-second flush does not wait for the next answer: with one call answered and
    every other one held at the server, the answer reaches the store (checked by state)."""
    store = _store(db_url)
    judge = _judge(fake_llm, "point", "trajectory_reasonableness")
    fake_llm.script = ["ok"]
    fake_llm.default = "block"
    stored_while_held: list[int] = []

    async def run() -> None:
        task = asyncio.ensure_future(ascore_dataset(store, "ds", [judge], concurrency=2))
        deadline = time.monotonic() + 120
        while not task.done() and time.monotonic() < deadline:
            n = len(store.judgments_frame("ds"))
            if n:
                stored_while_held.append(fake_llm.in_flight)
                break
            await asyncio.sleep(0.05)
        fake_llm.release()
        await task

    run_sync(run())
    # the first answer was stored while the second call was still held in flight
    assert stored_while_held and stored_while_held[0] >= 1
    assert len(store.judgments_frame("ds")) == 7


def test_each_prompt_is_rendered_once_for_every_sample_and_judge_sharing_it(
    fake_llm: FakeLLM, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import trajudge.judges.calls._judge as judge_module

    rendered: list[tuple[str, ...]] = []
    real = judge_module.build_prompt

    def counting(rubric, shown, **kw):  # type: ignore[no-untyped-def]
        rendered.append(tuple(s.trajectory.id for s in shown))
        return real(rubric, shown, **kw)

    monkeypatch.setattr(judge_module, "build_prompt", counting)
    store = _store(db_url)
    judges = [
        _judge(fake_llm, "a", "trajectory_preference", samples=3),
        _judge(fake_llm, "b", "trajectory_preference", samples=2, model="openai/other"),
    ]
    summary = score_dataset(store, "ds", judges)
    # pairs (1-0,1-1), (3-0,3-1), (4-0,4-1) in two orders: 6 prompts for 6 x (3 + 2) calls
    assert summary.judged == 30 and fake_llm.calls == 30
    assert sorted(rendered) == sorted(
        [(a, b) for a, b in [("1-0", "1-1"), ("3-0", "3-1"), ("4-0", "4-1")]]
        + [(b, a) for a, b in [("1-0", "1-1"), ("3-0", "3-1"), ("4-0", "4-1")]]
    )
    # and each judge's calls still differ by sample (seeded requests are not merged)
    frame = store.judgments_frame("ds")
    assert frame.groupby("judge")["sample"].nunique().to_dict() == {"a": 3, "b": 2}


def test_a_rerun_reads_in_bulk_whatever_the_number_of_trajectories(
    fake_llm: FakeLLM, db_url: str
) -> None:
    """Planning makes no per-item query: a re-run of 7 or of 14 stored judgments sends the
    store the same number of statements, and a cached re-run the cache as few."""
    from sqlalchemy import event

    def statements(store: Store, dataset: str, judge: Judge) -> int:
        seen: list[str] = []

        def count(conn, cursor, statement, *args):  # type: ignore[no-untyped-def]
            seen.append(statement)

        event.listen(store.sql_engine, "before_cursor_execute", count)
        try:
            score_dataset(store, dataset, [judge])
        finally:
            event.remove(store.sql_engine, "before_cursor_execute", count)
        return len(seen)

    store = _store(db_url)
    store.import_dataset("big", [*TRAJECTORIES, *[_t(f"x{i}", 0, False) for i in range(7)]], SPECS)
    judge = _judge(fake_llm, "point", "trajectory_reasonableness")
    assert score_dataset(store, "ds", [judge]).judged == 7
    assert score_dataset(store, "big", [judge]).judged == 14
    small, big = statements(store, "ds", judge), statements(store, "big", judge)
    assert small == big and fake_llm.calls == 21


def test_a_rerun_parses_only_the_tasks_with_a_call_to_make(
    fake_llm: FakeLLM, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stored re-run costs a read of ids and keys: no trajectory is parsed for a task whose
    judgments are all stored, and its summary is the first run's. Task 2 stays open (2-0
    fails its gate, so it has no judgment): only its trajectories are read and gated."""
    store = _store(db_url)
    store.import_dataset("ok", [t for t in TRAJECTORIES if t.task_id != "2"], SPECS)
    judges = [
        _judge(fake_llm, "point", "trajectory_reasonableness"),
        _judge(fake_llm, "ref", "trajectory_reasonableness_reference"),
        _judge(fake_llm, "pair", "trajectory_preference"),
    ]
    first = {ds: score_dataset(store, ds, judges) for ds in ("ds", "ok")}
    assert (first["ds"].judged, first["ok"].judged) == (
        19,
        18,
    )  # 6 pointwise + 6 reference + 6 pairwise
    parsed: list[str] = []
    read = store.iter_hashed_trajectories

    def spy(*args: object, **kwargs: object) -> object:
        for t, sha in read(*args, **kwargs):  # type: ignore[arg-type]
            parsed.append(t.id)
            yield t, sha

    monkeypatch.setattr(store, "iter_hashed_trajectories", spy)
    again = score_dataset(store, "ds", judges)
    assert sorted(parsed) == ["2-0", "2-1"]
    assert (again.planned, again.resumed, again.judged) == (19, 19, 0)
    assert (again.gate_failures, again.no_reference) == ({"2-0": ["forbidden_tools"]}, 4)
    assert again.trajectories == first["ds"].trajectories == 8
    parsed.clear()
    again = score_dataset(store, "ok", judges)
    assert parsed == [] and (again.planned, again.resumed, again.judged) == (18, 18, 0)
    assert again.no_reference == first["ok"].no_reference == 3
    assert fake_llm.calls == 37


def test_an_engine_gets_the_same_judgments_from_the_same_plan(
    fake_llm: FakeLLM, db_url: str, tmp_path: Path
) -> None:
    """The engine seam: another engine (here one call at a time, last planned first) makes
    the same calls and the runner stores the same judgments as the local engine."""
    from collections.abc import AsyncIterator

    from trajudge.judges import PreparedCall

    class Reversed:
        async def run(self, calls: AsyncIterator[PreparedCall], emit: object) -> None:  # Engine.run
            pending = [c async for c in calls]
            for call in reversed(pending):
                emit(call, await call.judge.call(call))  # type: ignore[operator]

    def user_prompt(body: dict[str, object]) -> str:
        return "".join(
            str(m.get("content") or "")  # type: ignore[union-attr]
            for m in body["messages"]  # type: ignore[union-attr]
            if m.get("role") == "user"  # type: ignore[union-attr]
        )

    def fault(body: dict[str, object]) -> str | None:
        # faults tied to the request, not to its position: calls showing task 3 fail with a
        # 500 (max_retries=0: stored as errors), their seeded second sample answers garbage
        prompt = user_prompt(body)
        if "task 3" in prompt:
            return "garbage" if body.get("seed") == 8 else "500"
        return None

    def verdicts(name: str, engine: object | None) -> list[tuple[object, ...]]:
        fake_llm.action_for = fault
        fake_llm.decide = lambda prompt, v: {**v, "verdict": "A"} if "task 4" in prompt else v
        store = Store(db_url) if name == "local" else Store(f"sqlite:///{tmp_path / 'r.db'}")
        store.import_dataset(name, TRAJECTORIES, SPECS)
        judges = [
            _judge(fake_llm, "ref", "trajectory_reasonableness_reference", max_retries=0),
            _judge(fake_llm, "pair", "trajectory_preference", samples=2, seed=7, max_retries=0),
        ]
        score_dataset(store, name, judges, engine=engine, concurrency=1)  # type: ignore[arg-type]
        frame = store.judgments_frame(name)
        cols = ["trajectory_id", "other_id", "judge", "order", "sample", "score", "verdict"]
        picked = frame[[*cols, "error", "request_sha256", "config_sha256"]].astype(object)
        rows = picked.where(picked.notna(), "-").astype(str)
        return sorted(tuple(r) for r in rows.itertuples(index=False))

    fake_llm.choose = lambda name, values: values[0]
    local = verdicts("local", None)
    other = verdicts("other", Reversed())
    assert len(local) == 6 + 12 and local == other
    errors = [r for r in local if r[7] != "-"]
    assert len(errors) == 4 + 4  # task 3: 2 trials x 2 orders (reference), 2 x 2 samples (pairs)
    # the model always answers "A": in order ba that is mapped back to B (original numbering)
    pair_4 = [r for r in local if r[2] == "pair" and r[0] == "4-0"]
    assert {(r[3], r[6]) for r in pair_4} == {("ab", "A"), ("ba", "B")}
