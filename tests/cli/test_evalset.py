"""`trajudge add-case` and `trajudge evalset ...` in process, on a temporary store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer.testing

import trajudge.cli._commands  # noqa: F401  (registers the commands)
from trajudge.cli import app
from trajudge.evalset import Fingerprint, read_evalset, write_fingerprint
from trajudge.store import Store
from trajudge.trajectories import Step, Trajectory, from_tau_bench

runner = typer.testing.CliRunner()


def run(*args: str) -> typer.testing.Result:
    return runner.invoke(app, list(args))


@pytest.fixture
def small_db(db_url: str) -> str:
    runs = [
        Trajectory(
            id=f"t{i}-0",
            task_id=f"t{i}",
            outcome=i % 3 != 0,
            intent="x" if i < 7 else "y",
            steps=[Step(tool="search", output="[]" if i == 1 else "ok")],
            metadata={"model": "m1"},
        )
        for i in range(10)
    ]
    Store(db_url).import_dataset("ds", runs)
    return db_url


def test_add_case_then_refuse_the_duplicate(small_db: str, tmp_path: Path) -> None:
    path = tmp_path / "evalsets" / "set.jsonl"
    first = run("add-case", "ds", "t0-0", "--to", str(path), "--db", small_db)
    assert first.exit_code == 0, first.output
    assert "added ds/t0-0" in first.stdout and "label fail" in first.stdout
    again = run("add-case", "ds", "t0-0", "--to", str(path), "--db", small_db)
    assert again.exit_code == 2
    assert "already case 'ds/t0-0'; not added twice" in again.stderr
    assert len(read_evalset(path)) == 1


def test_add_case_options(small_db: str, tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    r = run(
        "add-case",
        "ds",
        "t1-0",
        "--to",
        str(path),
        "--label",
        "fail",
        "--reason",
        "[wrong]",
        "--stratum",
        "long_tail",
        "--tag",
        "ambiguous_request",
        "--core",
        "--db",
        small_db,
    )
    assert r.exit_code == 0, r.output
    (c,) = read_evalset(path)
    assert (c.label.verdict, c.label.reason, c.stratum, c.core) == (
        "fail",
        "[wrong]",
        "long_tail",
        True,
    )
    assert c.tags == ["empty_result", "ambiguous_request"]
    assert "[wrong]" in r.stdout  # printed as text, not rich markup
    bad = run("add-case", "ds", "t2-0", "--to", str(path), "--tag", "slow", "--db", small_db)
    assert bad.exit_code == 2 and "tags: unknown value 'slow'" in bad.stderr
    assert "Traceback" not in bad.output


def test_split_show_and_rotate(small_db: str, tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    for i in range(5):
        assert run("add-case", "ds", f"t{i}-0", "--to", str(path), "--db", small_db).exit_code == 0
    r = run("evalset", "split", str(path), "--dev-share", "1")
    assert r.exit_code == 0 and "5 dev cases (5 tasks), 0 holdout cases" in r.stdout
    show = run("evalset", "show", str(path))
    assert show.exit_code == 0, show.output
    assert "dev 5, holdout 0" in show.stdout
    assert "boundary cases: 1 of 5 (20%)" in show.stdout
    assert "warning" not in show.stdout
    rot = run(
        "evalset",
        "rotate",
        str(path),
        "--from",
        "ds",
        "--share",
        "0.4",
        "--seed",
        "3",
        "--db",
        small_db,
    )
    assert rot.exit_code == 0, rot.output
    out = [line for line in rot.stdout.splitlines() if line.startswith(("- out", "+ in"))]
    assert sum(line.startswith("- out") for line in out) == sum(
        line.startswith("+ in") for line in out
    )
    assert rot.stdout.strip().endswith("5 cases")
    ids = [c.id for c in read_evalset(path)]
    assert len(ids) == 5 == len(set(ids))


def test_show_warns_under_ten_percent_and_bad_files_exit_2(small_db: str, tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    for i in (0, 2, 3):
        run("add-case", "ds", f"t{i}-0", "--to", str(path), "--db", small_db)
    show = run("evalset", "show", str(path), "--k", "1")
    assert "warning: boundary cases are 0% of the set (0 of 3)" in show.stdout
    path.write_text('{"id": 1}\n', encoding="utf-8")
    bad = run("evalset", "show", str(path))
    assert bad.exit_code == 2 and f"{path}: line 1: id:" in bad.stderr
    assert run("evalset", "show", str(tmp_path / "none.jsonl")).exit_code == 2


def test_fingerprint_exits_1_when_the_agent_changed(small_db: str, tmp_path: Path) -> None:
    saved = tmp_path / "fp.json"
    r = run("evalset", "fingerprint", "ds", "--save", str(saved), "--db", small_db)
    assert r.exit_code == 0 and "model: m1" in r.stdout
    assert json.loads(saved.read_text())["model"] == "m1"
    same = run("evalset", "fingerprint", "ds", "--baseline", str(saved), "--db", small_db)
    assert same.exit_code == 0 and "no change from the baseline" in same.stdout
    write_fingerprint(saved, Fingerprint(model="m0"))
    moved = run("evalset", "fingerprint", "ds", "--baseline", str(saved), "--db", small_db)
    assert moved.exit_code == 1
    assert "model changed (m0 → m1): a full re-run is due" in moved.stdout


def test_tau_bench_failed_run_becomes_a_case(
    tau_bench_file: Path, db_url: str, tmp_path: Path
) -> None:
    trajectories, specs = from_tau_bench(tau_bench_file)
    Store(db_url).import_dataset("airline", trajectories, specs)
    path = tmp_path / "airline.jsonl"
    failed = next(t for t in trajectories if t.outcome is False)
    r = run("add-case", "airline", failed.id, "--to", str(path), "--db", db_url)
    assert r.exit_code == 0, r.output
    (c,) = read_evalset(path)
    assert c.label.verdict == "fail"
    assert c.expectations == specs[failed.task_id]
    assert c.intent == failed.intent
    assert run("add-case", "airline", failed.id, "--to", str(path), "--db", db_url).exit_code == 2


def test_evalset_sample_draws_by_intent_share_and_reports_shortfall(
    db_url: str, tmp_path: Path
) -> None:
    # 12 runs: intents book x6, cancel x4, refund x2 (one trial per task, all with an outcome)
    intents = ["book"] * 6 + ["cancel"] * 4 + ["refund"] * 2
    runs = [
        Trajectory(
            id=f"t{i}", task_id=f"k{i}", intent=it, outcome=i % 2 == 0,
            steps=[Step(tool="search", output="x")],
        )
        for i, it in enumerate(intents)
    ]  # fmt: skip
    Store(db_url).import_dataset("ds", runs)
    out = tmp_path / "set.jsonl"
    # --by intent without shares: the proportions 6:4:2 of n=6 -> 3, 2, 1 (hand-worked)
    res = run("evalset", "sample", "ds", "--to", str(out), "--n", "6", "--by", "intent",
              "--db", db_url)  # fmt: skip
    assert res.exit_code == 0, res.output
    cases = read_evalset(out)
    assert sorted(c.intent or "" for c in cases) == ["book"] * 3 + ["cancel"] * 2 + ["refund"]
    # a second draw only takes runs not yet in the set; refund has 1 left for a target of 2
    res = run("evalset", "sample", "ds", "--to", str(out), "--n", "6", "--by", "intent",
              "--share", "book=1", "--share", "cancel=1", "--share", "refund=1",
              "--db", db_url)  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "refund: asked for 2, only 1 available" in res.output
    cases = read_evalset(out)
    assert len(cases) == 6 + 5 and len({c.id for c in cases}) == 11
    bad = run("evalset", "sample", "ds", "--to", str(out), "--share", "x", "--db", db_url)
    assert bad.exit_code == 2 and "--share" in bad.output
