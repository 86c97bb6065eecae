"""`trajudge check`: per-check table, JSON, stored results, exit codes, spec errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer.testing

import trajudge.cli._commands  # noqa: F401  (registers the commands)
from trajudge.cli import app
from trajudge.store import Store
from trajudge.trajectories import ExpectedCall, Step, TaskSpec, Trajectory, from_tau_bench

runner = typer.testing.CliRunner()


def _store_small(db_url: str) -> None:
    trajs = [
        Trajectory(id="a-0", task_id="a", steps=[Step(tool="search"), Step(tool="book")]),
        Trajectory(id="a-1", task_id="a", trial=1, steps=[Step(tool="book"), Step(tool="rm")]),
        Trajectory(id="b-0", task_id="b", steps=[Step(tool="search", ok=False)]),
    ]
    specs = {"a": TaskSpec(reference=[ExpectedCall(tool="search"), ExpectedCall(tool="book")])}
    store = Store(db_url)
    store.import_dataset("small", trajs, specs)


def run(*args: str) -> typer.testing.Result:
    return runner.invoke(app, ["check", *args])


def test_table_and_stored_results(db_url: str, tmp_path: Path) -> None:
    _store_small(db_url)
    result = run("small", "--db", db_url)
    assert result.exit_code == 0, result.output
    out = result.output
    # reference_match ran for task a only: 2 runs, a-0 passes, a-1 (book, rm) does not
    line = next(x for x in out.splitlines() if "reference_match" in x)
    assert [c.strip() for c in line.strip("│ ").split("│")] == [
        "reference_match",
        "diagnostic",
        "2",
        "1",
        "1",
        # a-0: 1.0; a-1: in_order LCS of (search, book) in (book, rm) is 1 -> 1/2; mean 0.75
        "0.750",
    ]
    assert "3 trajectories" in out and "0 with a failed gate" in out
    stored = Store(db_url).rule_results("small")
    assert set(stored) == {"a-0", "a-1", "b-0"}
    assert stored["a-0"]["gates_passed"] is True
    assert stored["a-0"]["data"]["results"][0]["check"] == "reference_match"
    assert len(stored["a-0"]["spec_sha256"]) == 64


def test_spec_file_gates_json_and_fail_on_gate(db_url: str, tmp_path: Path) -> None:
    _store_small(db_url)
    spec = tmp_path / "spec.yaml"
    spec.write_text("defaults:\n  forbidden_tools: [rm]\n", encoding="utf-8")
    result = run("small", "--db", db_url, "--spec", str(spec), "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["summary"]["gate_failures"] == 1
    assert doc["summary"]["checks"]["forbidden_tools"] == {
        "runs": 3,
        "passed": 2,
        "failed": 1,
        "mean_score": pytest.approx((1 + 0.5 + 1) / 3),  # a-1: 1 of 2 calls forbidden
        "severity": "gate",
    }
    failed = [r["trajectory_id"] for r in doc["reports"] if not r["gates_passed"]]
    assert failed == ["a-1"]
    # the stored reference still applies alongside the file's defaults
    assert doc["summary"]["checks"]["reference_match"]["runs"] == 2
    assert run("small", "--db", db_url, "--spec", str(spec), "--fail-on-gate").exit_code == 1
    assert Store(db_url).rule_results("small")["a-1"]["gates_passed"] is False


def test_bad_spec_is_one_red_line_and_writes_nothing(db_url: str, tmp_path: Path) -> None:
    _store_small(db_url)
    spec = tmp_path / "spec.yaml"
    spec.write_text("tasks:\n  a:\n    arg_checks: [{tool: x, path: y, op: like}]\n")
    result = run("small", "--db", db_url, "--spec", str(spec))
    assert result.exit_code == 2
    lines = [x for x in result.output.splitlines() if x.strip()]
    assert len(lines) == 1 and "tasks.a.arg_checks[0].op" in lines[0]
    assert Store(db_url).rule_results("small") == {}


def test_unknown_dataset(db_url: str) -> None:
    Store(db_url).close()  # a store without that dataset (no store at all: test_reading_commands)
    result = run("nope", "--db", db_url)
    assert result.exit_code == 2 and "no dataset 'nope'" in result.output


@pytest.mark.shared
def test_tau_bench_stored_specs(db_url: str, tau_bench_file: Path) -> None:
    trajs, specs = from_tau_bench(tau_bench_file)
    Store(db_url).import_dataset("airline", trajs, specs)
    result = run("airline", "--db", db_url, "--json")
    assert result.exit_code == 0
    doc = json.loads(result.output)
    assert doc["summary"]["trajectories"] == 200
    # 50 tasks x 4 trials; 7 tasks expect no action, so 43 x 4 = 172 reference matches
    n_no_action = sum(1 for s in specs.values() if not s.reference)
    assert n_no_action == 7
    assert doc["summary"]["checks"]["reference_match"]["runs"] == 172
    by_id = {r["trajectory_id"]: r for r in doc["reports"]}
    ref = next(c for c in by_id["6-0"]["results"] if c["check"] == "reference_match")
    assert ref["passed"] is True


def test_check_without_keeping_reports_counts_the_same(db_url: str) -> None:
    """The streamed summary (reports not kept, as `trajudge check` runs without --json) is
    the summary of the kept reports, and the same results are stored."""
    from trajudge.rules import check_stored_dataset, summarize_reports

    _store_small(db_url)
    store = Store(db_url)
    kept = check_stored_dataset(store, "small")
    stored_kept = store.rule_results("small")
    streamed = check_stored_dataset(store, "small", keep_reports=False)
    assert len(kept.reports) == 3 and streamed.reports == []
    assert streamed.summary == kept.summary == summarize_reports(kept.reports)
    assert store.rule_results("small") == stored_kept
    # by hand: b-0's failed search is no gate here, so no trajectory fails a gate
    assert streamed.summary.trajectories == 3 and streamed.summary.gate_failures == 0


def test_gate_results_are_the_stored_gates(db_url: str, tmp_path: Path) -> None:
    _store_small(db_url)
    spec = tmp_path / "spec.yaml"
    spec.write_text("defaults:\n  forbidden_tools: [rm]\n", encoding="utf-8")
    assert run("small", "--spec", str(spec), "--db", db_url).exit_code == 0
    store = Store(db_url)
    # a-1 calls rm, forbidden by a gate; the other two do not
    assert store.gate_results("small") == {"a-0": True, "a-1": False, "b-0": True}
    assert store.gate_results("small") == {
        k: v["gates_passed"] for k, v in store.rule_results("small").items()
    }
    assert store.gate_results("other") == {}
