"""The eval-set file: round trip, strict validation naming file / line / field, atomic writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from evalset_helpers import STAMP, case, traj

from trajudge.core import InputError
from trajudge.evalset import EvalCase, case_frame, make_case, read_evalset, write_evalset
from trajudge.trajectories import Step, TaskSpec


def test_round_trip_gives_equal_cases(tmp_path: Path) -> None:
    spec = TaskSpec(task_id="a", required_tools=["search"])
    t = traj("a", outcome=False, steps=[Step(tool="search", output="[]")], note=None)
    cases = [
        make_case(t, dataset="ds", spec=spec, core=True, added_at=STAMP),
        case("b", outcome=True, stratum="long_tail", tags=("ambiguous_request",)),
    ]
    path = tmp_path / "sets" / "airline.jsonl"  # the folder is created
    write_evalset(path, cases)
    back = read_evalset(path)
    assert back == cases
    assert back[0].trajectory.metadata == {"note": None}  # None inside metadata is kept
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2
    assert json.loads(lines[0])["source"] == {"dataset": "ds", "trajectory_id": "a-0"}


def test_write_leaves_no_temp_file_and_refuses_duplicate_ids(tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    write_evalset(path, [case("a")])
    before = path.read_bytes()
    with pytest.raises(ValueError, match="duplicate case id"):
        write_evalset(path, [case("b"), case("b")])
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["set.jsonl"]


def _write_lines(path: Path, objs: list[object]) -> None:
    path.write_text("\n".join(json.dumps(o) for o in objs) + "\n", encoding="utf-8")


def _good() -> dict[str, object]:
    return case("a").model_dump(mode="json")


@pytest.mark.parametrize(
    ("mutate", "line", "field", "reason"),
    [
        (lambda d: d["label"].update(verdict="maybe"), 2, "label.verdict", "'pass' or 'fail'"),
        (lambda d: d.update(stratum="rare"), 2, "stratum", "'known_hard'"),
        (lambda d: d.update(tags=["slow"]), 2, "tags[0]", "'timeout'"),
        (lambda d: d.update(core="yes"), 2, "core", "boolean"),
        (lambda d: d.pop("source"), 2, "source", "required"),
        (lambda d: d.update(extra=1), 2, "extra", "not permitted"),
        (lambda d: d["trajectory"]["steps"][0].update(ok="false"), 2, "trajectory.steps[0].ok", ""),
    ],
)
def test_bad_line_names_file_line_and_field(
    tmp_path: Path, mutate: object, line: int, field: str, reason: str
) -> None:
    bad = case("b").model_dump(mode="json")
    mutate(bad)  # type: ignore[operator]
    path = tmp_path / "set.jsonl"
    _write_lines(path, [_good(), bad])
    with pytest.raises(InputError) as err:
        read_evalset(path)
    assert err.value.file == str(path)
    assert err.value.record == f"line {line}"
    assert err.value.field == field
    assert reason in err.value.reason


def test_invalid_json_empty_file_and_repeats_are_errors(tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    path.write_text(json.dumps(_good()) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"line 2: invalid JSON"):
        read_evalset(path)
    path.write_text("", encoding="utf-8")
    with pytest.raises(InputError, match="empty"):
        read_evalset(path)
    _write_lines(path, [_good(), _good()])
    with pytest.raises(
        InputError, match=r"line 2: id: duplicate case id 'ds/a-0' \(first at line 1\)"
    ):
        read_evalset(path)
    other = _good()
    other["id"] = "renamed"
    _write_lines(path, [_good(), other])
    with pytest.raises(InputError, match=r"line 2: source: trajectory 'a-0' of dataset 'ds'"):
        read_evalset(path)
    with pytest.raises(InputError, match="no such file"):
        read_evalset(tmp_path / "missing.jsonl")


def test_case_frame_has_one_row_per_case() -> None:
    cases = [case("a", outcome=False), case("b", outcome=True, core=True, tags=("timeout",))]
    frame = case_frame(cases)
    assert frame["id"].tolist() == ["ds/a-0", "ds/b-0"]
    assert frame["label"].tolist() == ["fail", "pass"]
    assert frame["core"].tolist() == [False, True]
    assert frame["tags"].tolist() == [[], ["timeout"]]
    assert isinstance(cases[0], EvalCase)


def test_inferred_required_tools_are_the_ones_every_passing_trial_got_to_work() -> None:
    from trajudge.evalset import infer_tools

    failed_pay = Step(tool="pay", ok=False, error="declined")
    search = Step(tool="search")
    passing = [
        traj("a", trial=0, outcome=True, steps=[search, failed_pay, Step(tool="pay")]),
        traj("a", trial=1, outcome=True, steps=[search, failed_pay, Step(tool="wire")]),
    ]
    candidate = traj("a", trial=2, outcome=False, steps=[Step(tool="pay"), Step(tool="drop")])
    spec = infer_tools(candidate, TaskSpec(task_id="a"), passing)
    # search worked in both passing trials; pay worked in trial 0 only (trial 1 merely tried)
    assert spec.required_tools == ["search"]
    # drop: called here, by no passing trial; pay was called by both, so it is not forbidden
    assert spec.forbidden_tools == ["drop"]
