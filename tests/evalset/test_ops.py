"""add_case, rotation, split and summary over a real temporary store."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from evalset_helpers import case, traj

from trajudge.core import InputError
from trajudge.evalset import (
    add_case,
    read_evalset,
    rotate_cases,
    rotate_evalset,
    split_evalset,
    split_of,
    summarize,
)
from trajudge.store import Store
from trajudge.trajectories import ExpectedCall, Step, TaskSpec


@pytest.fixture
def store(db_url: str) -> Store:
    s = Store(db_url)
    runs = [
        # task A: two passing trials (search+book, search+book+email) and a failing one
        traj("A", 0, outcome=True, intent="book", steps=[Step(tool="search"), Step(tool="book")]),
        traj(
            "A",
            1,
            outcome=True,
            intent="book",
            steps=[Step(tool="search"), Step(tool="book"), Step(tool="email")],
        ),
        traj(
            "A",
            2,
            outcome=False,
            intent="book",
            steps=[Step(tool="search", output="[]"), Step(tool="cancel")],
        ),
        # task B: no outcome (rules decide); task C: nothing known
        traj("B", 0, outcome=None, intent="refund"),
        traj("C", 0, outcome=None, intent="refund"),
    ]
    spec = TaskSpec(task_id="A", reference=[ExpectedCall(tool="book")], forbidden_tools=["wire"])
    s.import_dataset("ds", runs, {"A": spec})
    s.save_rule_results(
        "ds", [{"trajectory_id": "B-0", "spec_sha256": "x", "gates_passed": False, "data": {}}]
    )
    return s


def test_add_case_from_a_failed_run(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    c = add_case(store, "ds", "A-2", path)
    assert c.id == "ds/A-2"
    assert c.label.verdict == "fail" and c.label.reason == "environment outcome: failed"
    assert c.input == "please do A" and c.trajectory.id == "A-2"
    assert c.expectations.reference == [ExpectedCall(tool="book")]  # the stored spec
    assert c.expectations.required_tools == []  # nothing inferred unless asked
    assert c.tags == ["empty_result"]
    # runs: book 3, refund 2 -> book 60% is common; task A passes 2 of 3 -> not hard
    assert c.stratum == "common"
    assert c.split == split_of("A")
    assert read_evalset(path) == [c]


def test_rule_gates_give_the_label_and_no_evidence_needs_one(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    b = add_case(store, "ds", "B-0", path, tags=["ambiguous_request"], core=True)
    assert b.label.verdict == "fail" and b.label.reason == "rule gates failed"
    assert b.tags == ["ambiguous_request"] and b.core
    # refund is the long tail (40%); B's only verdict failed -> known hard
    assert b.stratum == "known_hard"
    with pytest.raises(InputError, match="no outcome and no rule result"):
        add_case(store, "ds", "C-0", path)
    c = add_case(store, "ds", "C-0", path, label="pass", reason="checked by hand")
    assert (c.label.verdict, c.label.reason, c.stratum) == ("pass", "checked by hand", "long_tail")
    assert [x.id for x in read_evalset(path)] == ["ds/B-0", "ds/C-0"]


def test_adding_the_same_trajectory_twice_is_refused(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    add_case(store, "ds", "A-2", path)
    before = path.read_bytes()
    with pytest.raises(InputError, match="'A-2' of dataset 'ds' is already case 'ds/A-2'"):
        add_case(store, "ds", "A-2", path, label="pass")
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"label": "maybe"}, "label: unknown value 'maybe'"),
        ({"stratum": "rare"}, "stratum: unknown value 'rare'"),
        ({"tags": ["slow"]}, "tags: unknown value 'slow'"),
    ],
)
def test_bad_values_write_nothing(
    store: Store, tmp_path: Path, kwargs: dict[str, object], match: str
) -> None:
    path = tmp_path / "set.jsonl"
    with pytest.raises(InputError, match=match):
        add_case(store, "ds", "A-2", path, **kwargs)  # type: ignore[arg-type]
    assert not path.exists()
    with pytest.raises(InputError, match="no trajectory 'Z-0'"):
        add_case(store, "ds", "Z-0", path)
    with pytest.raises(InputError, match="no dataset 'nope'"):
        add_case(store, "nope", "A-2", path)


def test_inferred_tools_only_on_request(store: Store, tmp_path: Path) -> None:
    c = add_case(store, "ds", "A-2", tmp_path / "s.jsonl", infer_tools=True)
    # required: reference {book} + called by both passing trials {search, book}
    assert c.expectations.required_tools == ["book", "search"]
    # forbidden: spec {wire} + called by A-2 but by no passing trial {cancel}
    assert c.expectations.forbidden_tools == ["cancel", "wire"]


def _strata(cases: list) -> Counter[str]:  # type: ignore[type-arg]
    return Counter(c.stratum for c in cases)


def test_rotation_keeps_strata_spares_core_and_is_seeded() -> None:
    cases = [
        *(case(f"c{i}", stratum="common") for i in range(6)),
        *(case(f"l{i}", stratum="long_tail") for i in range(3)),
        case("h0", stratum="known_hard"),
        case("core", stratum="common", core=True),
    ]
    pool = [
        *(case(f"nc{i}", stratum="common") for i in range(10)),
        *(case(f"nl{i}", stratum="long_tail") for i in range(10)),
        *(case(f"nh{i}", stratum="known_hard") for i in range(10)),
        case("c0", 1, stratum="common"),  # another trial of a task in the set: never drawn
    ]
    r = rotate_cases(cases, pool, share=0.5, seed=1)
    # 10 non-core cases, half = 5 out, split 6:3:1 by largest remainder -> 3 / 1.5 / .5:
    # floors 3 / 1 / 0, the one left goes to long_tail (.5 ties .5, larger weight first)
    assert _strata(r.removed) == Counter({"common": 3, "long_tail": 2})
    assert _strata(r.added) == _strata(r.removed)
    assert _strata(r.cases) == _strata(cases)
    assert len(r.cases) == len(cases)
    assert "ds/core-0" in [c.id for c in r.cases]
    assert all(c.task_id.startswith("n") for c in r.added)
    assert [c.id for c in r.cases[-5:]] == [c.id for c in r.added]
    again = rotate_cases(cases, pool, share=0.5, seed=1)
    assert [c.id for c in again.cases] == [c.id for c in r.cases]
    other = rotate_cases(cases, pool, share=0.5, seed=2)
    assert [c.id for c in other.added] != [c.id for c in r.added]


def test_rotation_keeps_cases_it_cannot_replace() -> None:
    cases = [
        *(case(f"c{i}", stratum="common") for i in range(4)),
        *(case(f"h{i}", stratum="known_hard") for i in range(4)),
    ]
    pool = [case(f"n{i}", stratum="common") for i in range(5)]
    r = rotate_cases(cases, pool, share=0.5, seed=0)  # 2 common + 2 hard wanted out
    assert _strata(r.removed) == Counter({"common": 2})
    assert r.kept_short == {"known_hard": 2}
    assert "known_hard: 2 case(s) kept" in r.warnings[0]
    assert rotate_cases(cases, pool, share=0.0).removed == []


def test_rotate_evalset_from_the_store(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    add_case(store, "ds", "A-2", path)
    add_case(store, "ds", "C-0", path, label="fail", stratum="common")
    r = rotate_evalset(store, "ds", path, share=0.5, seed=0)
    # 2 common cases, 1 goes out; candidates: tasks not in the set -> only B-0 (known hard),
    # so nothing common can come in and the set is unchanged
    assert r.removed == [] and r.kept_short == {"common": 1}
    assert r.not_eligible == 0
    assert [c.id for c in read_evalset(path)] == ["ds/A-2", "ds/C-0"]


def test_split_evalset_writes_splits(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    add_case(store, "ds", "A-2", path)
    add_case(store, "ds", "A-0", path)
    cases = split_evalset(path, dev_share=1.0)
    assert {c.split for c in read_evalset(path)} == {"dev"} == {c.split for c in cases}
    split_evalset(path, dev_share=0.0)
    assert {c.split for c in read_evalset(path)} == {"holdout"}
    with pytest.raises(InputError, match="dev_share"):
        split_evalset(path, dev_share=2)


def test_summary_counts() -> None:
    cases = [
        case("a", outcome=False, tags=("timeout",), core=True),
        case("b", outcome=True, stratum="long_tail"),
        case("b", 1, outcome=True, stratum="long_tail"),
    ]
    s = summarize(cases)
    assert (s.n_cases, s.n_core, s.n_tasks) == (3, 1, 2)
    assert s.by_stratum == {"common": 1, "long_tail": 2, "known_hard": 0}
    assert s.by_label == {"pass": 2, "fail": 1}
    assert s.by_tag["timeout"] == 1 and sum(s.by_tag.values()) == 1
    assert sum(s.by_split.values()) == 3
    assert s.coverage.n_boundary == 1
