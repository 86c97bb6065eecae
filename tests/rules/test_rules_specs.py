"""Spec files: loading, merging, and errors that name the file and the key."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from trajudge.core import InputError
from trajudge.rules import load_specs, resolve_specs
from trajudge.trajectories import ExpectedCall, TaskSpec


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "specs.yaml"
    p.write_text(textwrap.dedent(text), encoding="utf-8")
    return p


GOOD = """
defaults:
  forbidden_tools: [rm]
  loop_threshold: 3
  budgets: {max_steps: 20, tolerance: 2.0}
tasks:
  12:
    reference:
      - {tool: get_user_details, args: {user_id: mia}}
      - {tool: book}
    match_mode: any_order
    forbidden_tools: [drop]
    budgets: {max_steps: 5}
    arg_checks:
      - {tool: book, path: "passengers[0].dob", value: "1990-04-05"}
    checks:
      - {name: max_calls, params: {tool: book, limit: 1}, severity: gate}
"""


def test_load_and_merge(tmp_path):
    specs = load_specs(write(tmp_path, GOOD))
    assert specs.defaults.loop_threshold == 3
    assert set(specs.tasks) == {"12"}  # YAML int keys become text task ids
    s = specs.spec_for("12")
    assert s.forbidden_tools == ["drop"]  # lists replace
    assert s.loop_threshold == 3  # inherited
    assert s.budgets is not None and (s.budgets.max_steps, s.budgets.tolerance) == (5, 2.0)
    assert s.match_mode == "any_order" and s.reference is not None and len(s.reference) == 2
    assert specs.spec_for("99") == specs.defaults


@pytest.mark.parametrize(
    ("text", "field", "reason"),
    [
        ("tasks: {12: {bogus: 1}}", "tasks.12.bogus", "unknown key"),
        ("defaults: {match_mode: sideways}", "defaults.match_mode", "exact"),
        (
            "tasks: {12: {arg_checks: [{tool: a, path: x, op: like}]}}",
            "tasks.12.arg_checks[0].op",
            "equals",
        ),
        (
            "tasks: {12: {arg_checks: [{tool: a, path: x, op: regex, value: '(unclosed'}]}}",
            "tasks.12.arg_checks[0].value",
            "bad regex",
        ),
        (
            "tasks: {12: {arg_checks: [{tool: a, path: 'x..y'}]}}",
            "tasks.12.arg_checks[0].path",
            "cannot parse path",
        ),
        (
            "tasks: {12: {arg_checks: [{tool: a, path: x, op: approx, value: abc}]}}",
            "tasks.12.arg_checks[0].value",
            "needs a number",
        ),
        (
            "defaults: {output_schema: {type: 12}}",
            "defaults.output_schema",
            "malformed JSON schema",
        ),
        ("tasks: {7: {checks: [{name: nope}]}}", "tasks.7.checks[0].name", "unknown custom check"),
        (
            "tasks: {7: {checks: [{name: max_calls, params: {tool: a}}]}}",
            "tasks.7.checks[0].params",
            "limit",
        ),
        ("defaults: {weights: {refrence_match: 2}}", "defaults.weights.refrence_match", "unknown"),
        ("defaults: {weights: {loops: -1}}", "defaults.weights", ">= 0"),
        ("defaults: {severities: {loops: fatal}}", "defaults.severities.loops", "gate"),
        ("default: {}", "default", "unknown key"),
        ("tasks: [1, 2]", "tasks", "mapping"),
        ("imports: [no_such_module_xyz]", "imports[0]", "cannot import"),
    ],
)
def test_errors_name_file_key_and_reason(tmp_path, text, field, reason):
    path = write(tmp_path, text)
    with pytest.raises(InputError) as info:
        load_specs(path)
    err = info.value
    assert err.file == str(path)
    assert err.field == field
    assert reason in err.reason
    assert "\n" not in str(err)


def test_invalid_yaml_and_missing_file(tmp_path):
    with pytest.raises(InputError, match="invalid YAML"):
        load_specs(write(tmp_path, "tasks: {a: [1, 2"))
    with pytest.raises(InputError, match=r"absent\.yaml: file not found"):
        load_specs(tmp_path / "absent.yaml")


def test_imports_register_custom_checks(tmp_path, monkeypatch):
    (tmp_path / "my_checks_mod.py").write_text(
        textwrap.dedent(
            """
            from trajudge.rules import CheckResult, register_check

            @register_check("my_check")
            def my_check(trajectory, spec, *, n=1):
                return CheckResult(check="my_check", passed=len(trajectory.steps) == n)
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    path = write(tmp_path, "imports: [my_checks_mod]\ndefaults: {checks: [{name: my_check}]}")
    from trajudge.rules import unregister_check

    try:
        specs = load_specs(path)
        assert specs.defaults.checks[0].name == "my_check"
    finally:
        unregister_check("my_check")


def test_resolve_stored_and_file_specs(tmp_path):
    stored = {
        "1": TaskSpec(reference=[ExpectedCall(tool="book", args={"id": 1})], match_mode="in_order"),
        "2": TaskSpec(reference=[ExpectedCall(tool="cancel")]),
    }
    text = """
    defaults: {forbidden_tools: [rm], match_mode: any_order}
    tasks:
      "2": {reference: [{tool: refund}]}
      "3": {required_tools: [x]}
    """
    tasks, defaults = resolve_specs(stored, load_specs(write(tmp_path, text)))
    assert set(tasks) == {"1", "2", "3"}
    from trajudge.rules import merge_specs

    s1 = merge_specs(defaults, tasks["1"])
    # the stored reference stays and its explicit match mode beats the file's defaults
    assert s1.reference == stored["1"].reference and s1.match_mode == "in_order"
    assert s1.forbidden_tools == ["rm"]  # added by the file's defaults
    s2 = merge_specs(defaults, tasks["2"])
    assert [c.tool for c in s2.reference or []] == ["refund"]  # the file's entry wins
    assert merge_specs(defaults, tasks["3"]).required_tools == ["x"]
    # no file: stored specs as they are, default settings
    tasks, defaults = resolve_specs(stored)
    assert tasks == stored and defaults == TaskSpec()


def test_non_utf8_and_missing_spec_files_are_one_line_errors(tmp_path: Path) -> None:
    # before the shared YAML reader, a non-UTF-8 spec file escaped as a UnicodeDecodeError;
    # the bad byte \xe9 is at offset len(b"defaults:\n  forbidden_tools: [caf") = 33
    bad = tmp_path / "specs.yaml"
    bad.write_bytes(b"defaults:\n  forbidden_tools: [caf\xe9]\n")
    with pytest.raises(InputError, match=r"specs\.yaml: byte 33: not UTF-8 text"):
        load_specs(bad)
    with pytest.raises(InputError, match="file not found"):
        load_specs(tmp_path / "missing.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("defaults: [unclosed\n")
    with pytest.raises(InputError, match=r"broken\.yaml: line \d+: invalid YAML"):
        load_specs(broken)
