"""Shipped rubrics load and are complete; malformed rubrics fail at load with file/key/reason."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from trajudge.core import InputError
from trajudge.judges import (
    available_rubrics,
    build_prompt,
    load_rubric,
    load_rubric_file,
    verdict_model,
)
from trajudge.judges.prompts._prompt import Shown
from trajudge.trajectories import Step, Trajectory

SHIPPED = {
    "trajectory_reasonableness": "pointwise",
    "trajectory_reasonableness_reference": "reference",
    "trajectory_preference": "pairwise",
    "tool_use_appropriateness": "pointwise",
    "answer_faithfulness": "pointwise",
    "policy_compliance": "pointwise",
}


@pytest.mark.parametrize(("rubric_id", "mode"), sorted(SHIPPED.items()))
def test_shipped_rubric_loads_with_an_anchor_per_level(rubric_id: str, mode: str) -> None:
    rubric = load_rubric(rubric_id)
    assert rubric.id == rubric_id and rubric.mode == mode
    for level in rubric.scale.levels:
        # an anchor a human can apply: a full sentence, not a one-word label
        assert len(level.anchor.split()) >= 12, (rubric_id, level.value)
    if rubric.mode == "reference":
        assert (rubric.scale.min, rubric.scale.max) == (1, 5)


def test_all_shipped_rubrics_are_listed() -> None:
    assert set(SHIPPED) <= set(available_rubrics())


def test_verdict_model_constrains_score_to_the_scale() -> None:
    rubric = load_rubric("trajectory_reasonableness")
    model = verdict_model(rubric)
    schema = model.model_json_schema()
    assert schema["properties"]["score"]["enum"] == [1, 2, 3, 4, 5]
    assert schema["required"][0] == "reasoning"
    crit = schema["$defs"][schema["properties"]["criteria"]["$ref"].split("/")[-1]]
    assert set(crit["properties"]) == {"tool_choice", "arguments", "efficiency"}
    ok = {"reasoning": "r", "criteria": dict.fromkeys(crit["properties"], 3), "score": 4}
    assert model.model_validate(ok).model_dump()["score"] == 4
    with pytest.raises(ValueError):
        model.model_validate({**ok, "score": 6})
    binary = verdict_model(load_rubric("answer_faithfulness")).model_json_schema()
    assert binary["properties"]["score"]["enum"] == [0, 1]
    pair = verdict_model(load_rubric("trajectory_preference")).model_json_schema()
    assert pair["properties"]["verdict"]["enum"] == ["A", "B", "tie"]
    ref = verdict_model(load_rubric("trajectory_reasonableness_reference")).model_json_schema()
    assert {"score_a", "score_b"} <= set(ref["properties"])


GOOD = {
    "id": "mine",
    "description": "d",
    "scale": {
        "kind": "ordinal",
        "levels": [
            {"value": 1, "label": "bad", "anchor": "a"},
            {"value": 2, "label": "ok", "anchor": "b"},
            {"value": 3, "label": "good", "anchor": "c"},
        ],
    },
}


def _write(tmp_path: Path, data: object) -> Path:
    p = tmp_path / "mine.yaml"
    p.write_text(yaml.safe_dump(data) if not isinstance(data, str) else data, encoding="utf-8")
    return p


def _with(**changes: object) -> dict[str, object]:
    data = yaml.safe_load(yaml.safe_dump(GOOD))
    data.update(changes)
    return data


@pytest.mark.parametrize(
    ("data", "key", "reason"),
    [
        (_with(scale=None), "scale", "valid dictionary"),
        (
            _with(scale={"kind": "binary", "levels": [{"value": 1, "label": "x", "anchor": "y"}]}),
            "scale",
            "exactly the levels 0",
        ),
        (
            _with(scale={**GOOD["scale"], "levels": [{"value": 1, "label": "x", "anchor": ""}]}),
            "scale.levels[0].anchor",
            "at least 1 character",
        ),
        (_with(colour="blue"), "colour", "Extra inputs"),
        (
            _with(
                mode="pairwise",
                scale={**GOOD["scale"], "kind": "ordinal", "levels": GOOD["scale"]["levels"][:2]},
            ),
            "scale.kind",
            "pairwise rubric needs",
        ),
        (_with(examples=[{"input": "x", "score": 7}]), "examples[0].score", "not a level"),
        (_with(template="{% if %}"), "template", "invalid Jinja2"),
        (_with(template="{{ no_such_variable }}"), "template", "UndefinedError"),
        (
            _with(criteria=[{"id": "a", "description": "x"}, {"id": "a", "description": "y"}]),
            "criteria[1].id",
            "duplicate",
        ),
        (_with(mode="sideways"), "mode", "Input should be"),
    ],
)
def test_malformed_rubric_raises_input_error_naming_file_key_reason(
    tmp_path: Path, data: dict[str, object], key: str, reason: str
) -> None:
    path = _write(tmp_path, data)
    with pytest.raises(InputError) as info:
        load_rubric_file(path)
    err = info.value
    assert err.file == str(path)
    assert err.field == key
    assert reason in err.reason
    assert "\n" not in str(err)


def test_not_a_mapping_and_bad_yaml(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="YAML mapping"):
        load_rubric_file(_write(tmp_path, "- just\n- a list\n"))
    with pytest.raises(InputError, match="line 2"):
        load_rubric_file(_write(tmp_path, "id: x\n  bad: [indent\n"))


def test_custom_template_is_used_and_blocks_stay_delimited(tmp_path: Path) -> None:
    rubric = load_rubric_file(
        _write(
            tmp_path, _with(template="Judge this. {{ levels | length }} levels.\n{{ trajectory }}")
        )
    )
    t = Trajectory(id="t", task_id="1", input="do it", steps=[Step(tool="x", output="y")])
    prompt = build_prompt(rubric, [Shown(t)])
    user = prompt.messages[1]["content"]
    assert user.startswith("Judge this. 3 levels.")
    assert '<trajectory label="candidate">' in user and user.rstrip().endswith("</trajectory>")


NOMINAL = {
    "id": "error_type",
    "description": "Which kind of error does the trajectory make, if any?",
    "scale": {
        "kind": "nominal",
        "levels": [
            {"value": "none", "label": "no error", "anchor": "Every call is right."},
            {"value": "wrong_tool", "label": "wrong tool", "anchor": "A call uses a tool that"},
            {"value": "wrong_args", "label": "wrong arguments", "anchor": "A call passes"},
        ],
    },
    "examples": [{"input": "step 1: search()", "score": "wrong_tool"}],
}


def test_nominal_rubric_asks_for_one_of_its_categories(tmp_path: Path) -> None:
    rubric = load_rubric_file(_write(tmp_path, NOMINAL))
    assert rubric.scale.categorical and rubric.scale.categories == [
        "none",
        "wrong_tool",
        "wrong_args",
    ]
    assert rubric.scale.pass_threshold is None
    with pytest.raises(ValueError, match="no pass/fail"):
        rubric.scale.passed(1.0)
    schema = verdict_model(rubric).model_json_schema()
    assert schema["properties"]["verdict"]["enum"] == ["none", "wrong_tool", "wrong_args"]
    assert "score" not in schema["properties"]
    traj = Trajectory(id="t", task_id="1", input="x", steps=[Step(tool="search")])
    user = build_prompt(rubric, [Shown(traj)]).messages[1]["content"]
    # the categories in the declared order, the example's verdict by name
    assert user.index("- none = no error") < user.index("- wrong_tool") < user.index("- wrong_a")
    assert "Verdict: wrong_tool" in user and "one of none, wrong_tool, wrong_args" in user


def test_pairwise_scale_without_ties_is_a_forced_choice(tmp_path: Path) -> None:
    data = yaml.safe_load(Path(available_rubrics()["trajectory_preference"]).read_text())
    data["scale"]["levels"] = [lv for lv in data["scale"]["levels"] if lv["value"] != "tie"]
    rubric = load_rubric_file(_write(tmp_path, data))
    assert rubric.scale.ties is False
    schema = verdict_model(rubric).model_json_schema()
    assert schema["properties"]["verdict"]["enum"] == ["A", "B"]
    traj = Trajectory(id="t", task_id="1", input="x", steps=[Step(tool="search")])
    user = build_prompt(rubric, [Shown(traj), Shown(traj)]).messages[1]["content"]
    assert '"B" if B is better).' in user and '"tie"' not in user


@pytest.mark.parametrize(
    ("change", "key", "reason"),
    [
        ({"mode": "pointwise"}, "scale.kind", "pairwise scale a pairwise rubric"),
        ({"mode": "reference", "kind": "nominal"}, "scale.kind", "reference rubric scores"),
        ({"levels": ["A", "B", "draw"]}, "scale", "levels A and B"),
        ({"kind": "nominal", "levels": ["ok", "inconsistent"]}, "scale", "reserved"),
        ({"kind": "nominal", "levels": ["ok"]}, "scale", "two or more"),
        ({"pass_threshold": 2}, "scale", "no pass_threshold"),
        ({"kind": "ordinal"}, "scale", "integer levels"),
    ],
)
def test_categorical_scales_are_checked(
    tmp_path: Path, change: dict[str, object], key: str, reason: str
) -> None:
    data = yaml.safe_load(Path(available_rubrics()["trajectory_preference"]).read_text())
    levels = change.pop("levels", None)
    if levels is not None:
        data["scale"]["levels"] = [
            {"value": v, "label": str(v), "anchor": "when it applies"} for v in levels
        ]
    if "mode" in change:
        data["mode"] = change.pop("mode")
    data["scale"].update(change)
    path = _write(tmp_path, data)
    with pytest.raises(InputError) as info:
        load_rubric_file(path)
    assert info.value.field is not None and info.value.field.startswith(key)
    assert reason in info.value.reason
