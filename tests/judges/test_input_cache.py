"""Cached re-runs looked up by content: input keys and cached gate results.

A re-run into a new dataset of trajectories already judged must find its answers from the
store's content hashes alone, without parsing, gating or rendering; and every part of what a
prompt or a gate depends on must be in the keys: each test below changes one part and
checks that the cache misses (a call is made, or the gate is evaluated again). Each would
pass a key that left that part out only if the cache served a stale answer, which the test
sees as a missing call or a judged gated trajectory.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fake_llm import FakeLLM

from trajudge.judges import Judge, JudgeSpec, ResponseCache, load_rubric, score_dataset
from trajudge.store import Store
from trajudge.trajectories import ExpectedCall, Step, TaskSpec, Trajectory

pytestmark = pytest.mark.timeout(300)


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
]
SPECS = {
    "2": TaskSpec(forbidden_tools=["delete_account"]),
    "3": TaskSpec(reference=[ExpectedCall(tool="book", args={"q": "3"})]),
}


def _judge(fake: FakeLLM, cache: ResponseCache, name: str, rubric: str, **kw: Any) -> Judge:
    spec: dict[str, Any] = {
        "name": name,
        "model": "openai/fake",
        "api_base": fake.api_base,
        "rubric": rubric,
        "retry_backoff_s": 0.01,
        "max_retries": 1,
    }
    spec.update(kw)
    return Judge(JudgeSpec.model_validate(spec), cache=cache)


def _judges(fake: FakeLLM, cache: ResponseCache) -> list[Judge]:
    return [
        _judge(fake, cache, "point", "trajectory_reasonableness"),
        _judge(fake, cache, "ref", "trajectory_reasonableness_reference"),
        _judge(fake, cache, "pair", "trajectory_preference"),
    ]


COLUMNS = ["judge", "trajectory_id", "other_id", "order", "sample", "score", "verdict"]
COLUMNS += ["reasoning", "raw", "request_sha256", "config_sha256", "error"]


def _rows(store: Store, dataset: str) -> list[tuple[Any, ...]]:
    frame = store.judgments_frame(dataset)[COLUMNS].astype(object)
    frame = frame.where(frame.notna(), None)
    return sorted(map(tuple, frame.to_numpy().tolist()), key=repr)


@pytest.fixture
def cache(tmp_path: Path) -> ResponseCache:
    return ResponseCache(tmp_path / "cache.db")


def test_a_cached_rerun_into_a_new_dataset_parses_gates_and_renders_nothing(
    fake_llm: FakeLLM, db_url: str, cache: ResponseCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(db_url)
    store.import_dataset("ds", TRAJECTORIES, SPECS)
    first = score_dataset(store, "ds", _judges(fake_llm, cache))
    assert first.errors == 0 and first.judged == fake_llm.calls > 0
    calls = fake_llm.calls
    store.import_dataset("copy", TRAJECTORIES, SPECS)

    seen: list[str] = []
    read = store.iter_hashed_trajectories

    def spy(*args: Any, **kwargs: Any) -> Any:
        for t, sha in read(*args, **kwargs):
            seen.append(t.id)
            yield t, sha

    def never(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a cached re-run gated or rendered a trajectory")

    monkeypatch.setattr(store, "iter_hashed_trajectories", spy)
    monkeypatch.setattr("trajudge.judges.runs._items.iter_check_dataset", never)
    monkeypatch.setattr("trajudge.judges.calls._judge.build_prompt", never)
    again = score_dataset(store, "copy", _judges(fake_llm, cache))
    assert seen == [] and fake_llm.calls == calls
    assert (again.judged, again.cache_hits, again.errors) == (first.judged, first.judged, 0)
    assert (again.planned, again.resumed) == (first.planned, 0)
    assert again.gate_failures == first.gate_failures == {"2-0": ["forbidden_tools"]}
    assert again.no_reference == first.no_reference
    assert again.prompt_tokens == 0 and again.cost_usd == 0.0
    # the same judgments as the first run's, marked as cache hits
    assert _rows(store, "copy") == _rows(store, "ds")
    assert store.judgments_frame("copy")["cache_hit"].all()


def _first_then_copy(
    store: Store,
    judges: list[Judge],
    copy: list[Trajectory],
    specs: dict[str, TaskSpec] | None = None,
) -> None:
    store.import_dataset("ds", TRAJECTORIES, SPECS)
    assert score_dataset(store, "ds", judges).errors == 0
    store.import_dataset("copy", copy, SPECS if specs is None else specs)


def test_a_changed_trajectory_misses(fake_llm: FakeLLM, db_url: str, cache: ResponseCache) -> None:
    store = Store(db_url)
    changed = [
        t.model_copy(update={"final_answer": "CHANGED-ANSWER"}) if t.id == "3-1" else t
        for t in TRAJECTORIES
    ]
    _first_then_copy(
        store, [_judge(fake_llm, cache, "point", "trajectory_reasonableness")], changed
    )
    calls = fake_llm.calls
    again = score_dataset(
        store, "copy", [_judge(fake_llm, cache, "point", "trajectory_reasonableness")]
    )
    assert fake_llm.calls == calls + 1 and again.cache_hits == 4
    assert "CHANGED-ANSWER" in json.dumps(fake_llm.requests[-1])
    frame = store.judgments_frame("copy").set_index("trajectory_id")
    assert not frame.loc["3-1", "cache_hit"] and frame.drop("3-1")["cache_hit"].all()


def test_a_changed_other_trajectory_or_spec_reference_misses(
    fake_llm: FakeLLM, db_url: str, cache: ResponseCache
) -> None:
    """1-1 is only ever the OTHER trajectory (B of the pair 1-0/1-1); task 3's reference is
    built from its spec. Changing either changes a prompt whose candidate did not change."""
    store = Store(db_url)
    changed = [
        t.model_copy(update={"final_answer": "CHANGED-OTHER"}) if t.id == "1-1" else t
        for t in TRAJECTORIES
    ]
    specs = {**SPECS, "3": TaskSpec(reference=[ExpectedCall(tool="book", args={"q": "CHG"})])}

    def judges() -> list[Judge]:
        return [
            _judge(fake_llm, cache, "pair", "trajectory_preference"),
            _judge(fake_llm, cache, "ref", "trajectory_reasonableness_reference", reference="spec"),
        ]

    _first_then_copy(store, judges(), changed, specs)
    calls = fake_llm.calls
    again = score_dataset(store, "copy", judges())
    made = [json.dumps(r) for r in fake_llm.requests[calls:]]
    # pair 1-0/1-1 in both orders; reference judgments of 3-0 and 3-1 in both orders
    assert len(made) == 2 + 4 and again.cache_hits == again.judged - 6
    assert sum("CHANGED-OTHER" in m for m in made) == 2
    assert sum("CHG" in m for m in made) == 4
    # pairs of task 3 (neither changed) and the spec-less reference of 1-x: hits
    assert again.cache_hits > 0


@pytest.mark.parametrize(
    "change",
    [
        {"temperature": 0.7},
        {"max_tokens": 300},
        {"model": "openai/fake-2"},
        "rubric",
    ],
    ids=["temperature", "max_tokens", "model", "rubric"],
)
def test_a_changed_judge_configuration_misses(
    fake_llm: FakeLLM, db_url: str, cache: ResponseCache, change: object
) -> None:
    store = Store(db_url)
    _first_then_copy(
        store, [_judge(fake_llm, cache, "point", "trajectory_reasonableness")], TRAJECTORIES
    )
    calls = fake_llm.calls
    if change == "rubric":
        rubric = load_rubric("trajectory_reasonableness")
        edited = rubric.model_copy(update={"description": rubric.description + " Be strict."})
        spec = _judge(fake_llm, cache, "point", "trajectory_reasonableness").spec
        judge = Judge(spec, rubric=edited, cache=cache)
    else:
        assert isinstance(change, dict)
        judge = _judge(fake_llm, cache, "point", "trajectory_reasonableness", **change)
    again = score_dataset(store, "copy", [judge])
    assert again.cache_hits == 0 and fake_llm.calls == calls + 5


def test_each_order_and_sample_has_its_own_answer(
    fake_llm: FakeLLM, db_url: str, cache: ResponseCache
) -> None:
    """First run: one sample, order ab only; re-run: two samples in both orders. Only the
    first run's (ab, sample 0) calls are hits."""
    store = Store(db_url)
    _first_then_copy(
        store,
        [_judge(fake_llm, cache, "ref", "trajectory_reasonableness_reference", swap=False)],
        TRAJECTORIES,
    )
    calls = fake_llm.calls
    again = score_dataset(
        store,
        "copy",
        [_judge(fake_llm, cache, "ref", "trajectory_reasonableness_reference", samples=2)],
    )
    frame = store.judgments_frame("copy")
    hit = frame[frame["cache_hit"].astype(bool)]
    assert set(zip(hit["order"], hit["sample"], strict=True)) == {("ab", 0)}
    assert again.cache_hits == len(hit) == calls
    assert fake_llm.calls == calls + 3 * calls and len(frame) == 4 * calls


def test_new_rendering_code_misses(
    fake_llm: FakeLLM, db_url: str, cache: ResponseCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(db_url)
    _first_then_copy(
        store, [_judge(fake_llm, cache, "point", "trajectory_reasonableness")], TRAJECTORIES
    )
    calls = fake_llm.calls
    monkeypatch.setattr("trajudge.judges.prompts._inputs.render_code_sha256", lambda: "0" * 64)
    again = score_dataset(
        store, "copy", [_judge(fake_llm, cache, "point", "trajectory_reasonableness")]
    )
    # the input keys miss; the requests, rendered again, are the same: request-key hits
    assert again.cache_hits == 5 and fake_llm.calls == calls
    assert len(cache._conn.execute("SELECT key FROM inputs").fetchall()) == 10


def test_a_changed_rule_spec_or_trajectory_is_gated_again(
    fake_llm: FakeLLM, db_url: str, cache: ResponseCache
) -> None:
    """The first run gates nothing (no spec forbids anything), so every trajectory's answer
    is cached. A copy whose spec now forbids a tool, and one whose trajectory now calls the
    forbidden tool, must be gated again: no judgment for the gated trajectory, from the
    cache or otherwise, and its content in no prompt."""
    marker = "WIPED-7f3a91"
    store = Store(db_url)
    plain = [_t("a", 0, True), _t("a", 1, False), _t("b", 0, False), _t("b", 1, False)]
    store.import_dataset("ds", plain, {"a": TaskSpec(forbidden_tools=["wipe"])})

    def judges() -> list[Judge]:
        return [
            _judge(fake_llm, cache, "point", "trajectory_reasonableness"),
            _judge(fake_llm, cache, "pair", "trajectory_preference"),
        ]

    first = score_dataset(store, "ds", judges())
    assert first.gate_failures == {} and first.judged == 4 + 2 * 2
    # 1. the same trajectories, a spec that now gates b-0
    store.import_dataset("spec", plain, {"b": TaskSpec(forbidden_tools=["search"])})
    calls = fake_llm.calls
    again = score_dataset(store, "spec", judges())
    assert again.gate_failures == {"b-0": ["forbidden_tools"], "b-1": ["forbidden_tools"]}
    assert fake_llm.calls == calls and again.judged == again.cache_hits == 2 + 2
    assert set(store.judgments_frame("spec")["trajectory_id"]) == {"a-0", "a-1"}
    # 2. the same spec, a trajectory that now calls the forbidden tool
    wiped = [
        t.model_copy(update={"steps": [Step(tool="wipe", output=marker)]}) if t.id == "a-1" else t
        for t in plain
    ]
    store.import_dataset("traj", wiped, {"a": TaskSpec(forbidden_tools=["wipe"])})
    again = score_dataset(store, "traj", judges())
    assert again.gate_failures == {"a-1": ["forbidden_tools"]}
    assert fake_llm.calls == calls and again.judged == again.cache_hits == 3 + 2
    frame = store.judgments_frame("traj")
    assert "a-1" not in set(frame["trajectory_id"]) | set(frame["other_id"].dropna())
    assert not [r for r in fake_llm.requests if marker in json.dumps(r)]


def test_cached_gate_results_are_reused_across_datasets(
    fake_llm: FakeLLM, db_url: str, cache: ResponseCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A copy with one new trajectory: only that one is gated (the others' results are
    cached), and only the calls that show it are made."""
    store = Store(db_url)
    extra = _t("2", 2, False).model_copy(update={"final_answer": "a new answer"})
    _first_then_copy(
        store,
        [_judge(fake_llm, cache, "point", "trajectory_reasonableness")],
        [*TRAJECTORIES, extra],
    )
    from trajudge.rules import iter_check_dataset

    gated: list[str] = []

    def spy(trajectories: Any, *args: Any, **kwargs: Any) -> Any:
        ts = list(trajectories)
        gated.extend(t.id for t in ts)
        return iter_check_dataset(ts, *args, **kwargs)

    monkeypatch.setattr("trajudge.judges.runs._items.iter_check_dataset", spy)
    calls = fake_llm.calls
    again = score_dataset(
        store, "copy", [_judge(fake_llm, cache, "point", "trajectory_reasonableness")]
    )
    assert gated == ["2-2"] and fake_llm.calls == calls + 1
    assert again.gate_failures == {"2-0": ["forbidden_tools"]} and again.cache_hits == 5


def test_new_rules_code_gates_again(
    fake_llm: FakeLLM, db_url: str, cache: ResponseCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(db_url)
    _first_then_copy(
        store, [_judge(fake_llm, cache, "point", "trajectory_reasonableness")], TRAJECTORIES
    )
    from trajudge.rules import iter_check_dataset

    gated: list[str] = []

    def spy(trajectories: Any, *args: Any, **kwargs: Any) -> Any:
        ts = list(trajectories)
        gated.extend(t.id for t in ts)
        return iter_check_dataset(ts, *args, **kwargs)

    monkeypatch.setattr("trajudge.judges.runs._items.iter_check_dataset", spy)
    monkeypatch.setattr("trajudge.judges.prompts._inputs.rules_code_sha256", lambda: "0" * 64)
    calls = fake_llm.calls
    again = score_dataset(
        store, "copy", [_judge(fake_llm, cache, "point", "trajectory_reasonableness")]
    )
    assert sorted(gated) == sorted(t.id for t in TRAJECTORIES) and fake_llm.calls == calls
    assert again.gate_failures == {"2-0": ["forbidden_tools"]} and again.cache_hits == 5
