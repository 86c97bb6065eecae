"""`trajudge run`: the whole job on a small dataset, judged by a fake server on loopback.

The report's numbers are recomputed here from the raw rows (scikit-learn for kappa,
math.comb for pass^k), not taken from the code under test.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml
from fake_llm import FakeLLM
from sklearn.metrics import cohen_kappa_score
from typer.testing import CliRunner

import trajudge.cli._commands  # noqa: F401
from trajudge.cli import app
from trajudge.store import Store
from trajudge.trajectories import Step, Trajectory, write_jsonl

ROOT = Path(__file__).resolve().parents[2]
# task -> per-trial (outcome, judge says good, human label)
PLAN = {
    "a": [(True, True, 1), (True, True, 1), (False, False, 0)],
    "b": [(True, True, 1), (False, True, 0), (False, False, 0)],
    "c": [(False, False, 0), (False, False, 1), (True, True, 1)],
}
GATED = "c-0"  # calls a forbidden tool: fails a gate, never judged


def write_project(tmp: Path, fake: FakeLLM, **overrides: Any) -> Path:
    trajs = []
    for task, trials in PLAN.items():
        for trial, (outcome, good, _) in enumerate(trials):
            tid = f"{task}-{trial}"
            tool = "drop_database" if tid == GATED else "search"
            marker = "GOOD-RUN" if good else "BAD-RUN"
            trajs.append(
                Trajectory(
                    id=tid,
                    task_id=task,
                    trial=trial,
                    input=f"please help with {tid} ({marker})",
                    steps=[Step(tool=tool, args={"q": marker}, output=marker)],
                    final_answer=marker,
                    outcome=outcome,
                )
            )
    write_jsonl(tmp / "runs.jsonl", trajs)
    (tmp / "specs.yaml").write_text(
        yaml.safe_dump({"defaults": {"forbidden_tools": ["drop_database"]}})
    )
    rows = [
        {"trajectory_id": f"{t}-{i}", "rubric_id": "trajectory_reasonableness",
         "annotator": "ann", "value": lab}
        for t, trials in PLAN.items() for i, (_, _, lab) in enumerate(trials)
    ]  # fmt: skip
    pd.DataFrame(rows).to_csv(tmp / "labels.csv", index=False)
    cfg: dict[str, Any] = {
        "dataset": {"path": "runs.jsonl", "name": "demo"},
        "specs": {"path": "specs.yaml"},
        "cache": "cache.db",
        "judges": [
            {"name": "fake", "model": "openai/fake", "api_base": fake.api_base,
             "rubric": "trajectory_reasonableness", "swap": False, "max_retries": 0}
        ],
        "labels": {"path": "labels.csv", "source": "human"},
        "report": {"out": "out", "formats": ["md", "html", "json"], "ks": [1, 2, 3],
                   "n_boot": 200},
    }  # fmt: skip
    for key, value in overrides.items():
        cfg[key] = value
    path = tmp / "trajudge.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def score_by_marker(user: str, verdict: dict[str, Any]) -> dict[str, Any]:
    return {**verdict, "score": 5 if "GOOD-RUN" in user else 1}


def invoke(config: Path, db: str) -> Any:
    return CliRunner().invoke(app, ["run", str(config), "--db", db])


def pass_hat(successes: dict[str, list[bool]], k: int) -> float:
    vals = [math.comb(sum(s), k) / math.comb(len(s), k) for s in successes.values()]
    return sum(vals) / len(vals)


def test_run_end_to_end_numbers_recomputed_and_second_run_makes_no_call(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.decide = score_by_marker
    config = write_project(tmp_path, fake_llm)
    db = f"sqlite:///{tmp_path / 's.db'}"
    result = invoke(config, db)
    assert result.exit_code == 0, result.output
    calls = len(fake_llm.requests)
    assert calls == 8  # 9 trajectories, one gated
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert (tmp_path / "out" / "report.html").exists()
    assert (tmp_path / "out" / "report.md").exists()

    store = Store(db)
    judg = store.judgments_frame("demo")
    assert GATED not in set(judg["trajectory_id"])
    # kappa: every judgment row against its item's human label, by scikit-learn
    labels = {f"{t}-{i}": lab for t, tr in PLAN.items() for i, (_, _, lab) in enumerate(tr)}
    row = next(r for r in report["judges"] if r["judge"] == "fake")
    thr = 4  # pass_threshold of the shipped trajectory_reasonableness rubric (its YAML)
    y_judge = [int(s >= thr) for s in judg["score"]]
    y_human = [labels[i] for i in judg["trajectory_id"]]
    assert row["kappa"]["value"] == pytest.approx(cohen_kappa_score(y_human, y_judge), abs=1e-12)

    # pass^k of the environment outcome (ungated) by hand
    outcome = {t: [o for o, _, _ in tr] for t, tr in PLAN.items()}
    src = report["sources"]
    for k in (1, 2, 3):
        assert src["outcome"]["pass^k"][str(k)]["value"] == pytest.approx(pass_hat(outcome, k))
    # the judge's pass^k: its verdict, failed where a gate failed
    judge_pass = {
        t: [(f"{t}-{i}" != GATED) and good for i, (_, good, _) in enumerate(tr)]
        for t, tr in PLAN.items()
    }
    for k in (1, 2, 3):
        assert src["judge:fake"]["pass^k"][str(k)]["value"] == pytest.approx(
            pass_hat(judge_pass, k)
        )

    # a second run: nothing new to ask, no request reaches the server
    again = invoke(config, db)
    assert again.exit_code == 0, again.output
    assert len(fake_llm.requests) == calls
    assert "judge calls made this run" in again.output


def test_failing_gate_exits_1_with_the_reason(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.decide = score_by_marker
    config = write_project(
        tmp_path,
        fake_llm,
        report={"out": "out", "formats": ["json"], "ks": [1, 2], "n_boot": 100,
                "fail_under": ["kappa>=0.99", "pass^1[outcome]>=0.1"]},
    )  # fmt: skip
    result = invoke(config, f"sqlite:///{tmp_path / 's.db'}")
    assert result.exit_code == 1
    assert "kappa" in result.output and "0.99" in result.output
    assert json.loads((tmp_path / "out" / "report.json").read_text())["passed"] is False


def test_core_layer_failure_stops_before_the_full_set(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.decide = score_by_marker
    # task b has a trial the judge calls bad, so a core set of b fails at min_pass_rate 1.0
    config = write_project(tmp_path, fake_llm, layers={"core_tasks": ["b"]})
    result = invoke(config, f"sqlite:///{tmp_path / 's.db'}")
    assert result.exit_code == 1
    assert "core set failed" in result.output
    assert len(fake_llm.requests) == 3  # only task b's trials were judged
    assert not (tmp_path / "out").exists()


def test_bad_config_is_one_line_and_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "trajudge.yaml"
    path.write_text("dataset:\n  path: runs.jsonl\nreport:\n  ks: [0]\n")
    result = CliRunner().invoke(app, ["run", str(path), "--db", f"sqlite:///{tmp_path}/s.db"])
    assert result.exit_code == 2
    assert "trajudge.yaml" in result.output and "ks" in result.output
    assert "Traceback" not in result.output


def test_dev_share_tunes_on_dev_and_reports_on_holdout(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.decide = score_by_marker
    # at dev_share 0.3 the hash puts task b in dev and a, c in holdout (split_of, by hand
    # from the sha256 of "trajudge:<task_id>"); b's three trials only tune the threshold
    from trajudge.evalset import split_of

    assert [split_of(t, 0.3) for t in "abc"] == ["holdout", "dev", "holdout"]
    config = write_project(
        tmp_path,
        fake_llm,
        report={"out": "out", "formats": ["json"], "ks": [1], "n_boot": 100, "dev_share": 0.3},
    )
    result = invoke(config, f"sqlite:///{tmp_path / 's.db'}")
    assert result.exit_code == 0, result.output
    assert "dev trajectories (threshold tuning only)" in result.output
    row = json.loads((tmp_path / "out" / "report.json").read_text())["judges"][0]
    # 8 judged trajectories (c-0 is gated), of which b-0, b-1, b-2 are dev: 5 holdout items
    assert row["n_items"] == 5
    assert row["calibration"]["threshold"]["source"] == "dev"


def test_trajudge_db_is_the_store_when_neither_db_option_nor_config_names_one(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    """In a real process TRAJUDGE_DB is set before the CLI is imported (the default of --db
    is read from it then), which a CliRunner in this process cannot reproduce."""
    config = write_project(tmp_path, fake_llm, report={"out": "out", "formats": ["json"]})
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    env = {
        **os.environ,
        "TRAJUDGE_DB": f"sqlite:///{tmp_path / 'env.db'}",
        "PYTHONPATH": str(ROOT / "src"),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }
    proc = subprocess.run(
        [sys.executable, "-c", "from trajudge.cli import main; main()", "run", str(config)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert Store(f"sqlite:///{tmp_path / 'env.db'}").count_trajectories("demo") == 9
    assert list(cwd.iterdir()) == []  # no trajudge.db beside the command


def test_limits_that_leave_out_stored_trajectories_are_refused(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    config = write_project(tmp_path, fake_llm, report={"out": "out", "formats": ["json"]})
    db = f"sqlite:///{tmp_path / 's.db'}"
    assert invoke(config, db).exit_code == 0  # the whole dataset: 9 trajectories stored
    calls = len(fake_llm.requests)
    limited = write_project(
        tmp_path, fake_llm, report={"out": "out", "formats": ["json"]}, limits={"tasks": ["a"]}
    )
    result = invoke(limited, db)
    assert result.exit_code == 2
    [line] = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert "limits: the limits select 3 of the 9 trajectories" in line
    assert "Traceback" not in result.output
    assert len(fake_llm.requests) == calls  # nothing judged
    # the same limits under a dataset name of their own: fine
    own = write_project(
        tmp_path,
        fake_llm,
        report={"out": "out", "formats": ["json"]},
        limits={"tasks": ["a"]},
        dataset={"path": "runs.jsonl", "name": "only_a"},
        labels={"path": "labels.csv", "source": "human", "only_dataset": True},
    )
    result = invoke(own, db)
    assert result.exit_code == 0, result.output
    assert Store(db).count_trajectories("only_a") == 3


def test_a_judge_whose_every_call_fails_is_reported_not_a_crash(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.decide = score_by_marker
    dead = FakeLLM().start()
    dead.default = "401"  # every call refused: the judge never gives a verdict
    try:
        config = write_project(tmp_path, fake_llm)
        cfg = yaml.safe_load(config.read_text())
        cfg["judges"].append(
            {"name": "dead", "model": "openai/dead", "api_base": dead.api_base,
             "rubric": "trajectory_reasonableness", "swap": False, "max_retries": 0}
        )  # fmt: skip
        config.write_text(yaml.safe_dump(cfg))
        result = invoke(config, f"sqlite:///{tmp_path / 's.db'}")
    finally:
        dead.stop()
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    row = next(r for r in report["judges"] if r["judge"] == "dead")
    assert row["n_errors"] == row["n_judgments"] == 8  # 9 trajectories, one gated
    assert row["n_items"] == 0 and row["kappa"]["value"] is None
    assert row["reliability"]["pass^k"]["1"]["value"] is None
    assert next(r for r in report["judges"] if r["judge"] == "fake")["kappa"]["value"] is not None


def _regression_specs(tmp: Path) -> None:
    """Task a requires `lookup`, which none of its trials calls: a failed REGRESSION check."""
    specs = {
        "defaults": {"forbidden_tools": ["drop_database"]},
        "tasks": {
            "a": {"required_tools": ["lookup"], "severities": {"required_tools": "regression"}}
        },
    }
    (tmp / "specs.yaml").write_text(yaml.safe_dump(specs))


def test_report_with_the_config_is_the_report_run_wrote(tmp_path: Path, fake_llm: FakeLLM) -> None:
    # `trajudge report -c trajudge.yaml` rebuilds what `trajudge run` reported: the config's
    # gates (here `regression` too), ks, bootstrap and labels; options given override it
    fake_llm.decide = score_by_marker
    config = write_project(tmp_path, fake_llm, gates=["gate", "regression"])
    _regression_specs(tmp_path)
    db = f"sqlite:///{tmp_path / 's.db'}"
    assert invoke(config, db).exit_code == 0
    ran = json.loads((tmp_path / "out" / "report.json").read_text())
    calls = len(fake_llm.requests)

    def report(*args: str) -> dict[str, Any]:
        out = tmp_path / f"report{len(list(tmp_path.glob('report*')))}"
        result = CliRunner().invoke(
            app, ["report", *args, "--db", db, "--out", str(out), "--format", "json"]
        )
        assert result.exit_code == 0, result.output
        return dict(json.loads((out / "report.json").read_text()))

    again = report("-c", str(config))
    assert again["n_gate_failed"] == ran["n_gate_failed"] == 4  # a-0..2 (regression) and c-0
    assert again["sources"] == ran["sources"] and again["judges"] == ran["judges"]
    assert sorted(again["sources"]["rules"]["pass^k"]) == ["1", "2", "3"]  # the config's ks
    # without the config only the severity `gate` gates: task a's unjudged trials are not
    # counted as gate failures (c-0 is)
    bare = report("demo", "--k", "1,2,3", "--n-boot", "200")
    assert bare["n_gate_failed"] == 1
    assert bare["sources"]["rules"]["pass^k"]["1"]["value"] == pytest.approx((1 + 1 + 2 / 3) / 3)
    # an option given on the command line replaces the config's value
    two = report("-c", str(config), "--k", "1,2")
    assert sorted(two["sources"]["rules"]["pass^k"]) == ["1", "2"]
    assert two["n_gate_failed"] == 4
    assert len(fake_llm.requests) == calls  # reports make no call


def test_configured_gates_are_the_gates_of_judging_the_report_and_the_core_layer(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    # with `gates: [gate, regression]` task a's trials skip the judges, so they are gate
    # failures in the report too (not passes the judge never saw), as c-0 (forbidden tool) is
    fake_llm.decide = score_by_marker
    config = write_project(tmp_path, fake_llm, gates=["gate", "regression"])
    _regression_specs(tmp_path)
    result = invoke(config, f"sqlite:///{tmp_path / 's.db'}")
    assert result.exit_code == 0, result.output
    gated = {"a-0", "a-1", "a-2", GATED}
    assert len(fake_llm.requests) == 9 - len(gated)  # judged: b-0..2, c-1, c-2
    assert f"{len(gated)} failed a gate (their judge calls are skipped)" in result.output
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["n_gate_failed"] == len(gated)
    # the rule-gate source: task a 0/3, b 3/3, c 2/3 pass their gates -> pass^1 = (0+1+2/3)/3
    rules = report["sources"]["rules"]["pass^k"]["1"]
    assert rules["value"] == pytest.approx((0 + 1 + 2 / 3) / 3)

    # the core layer reads the same gates: task a's trials fail it (they were not judged)
    config = write_project(
        tmp_path, fake_llm, gates=["gate", "regression"], layers={"core_tasks": ["a"]}
    )
    _regression_specs(tmp_path)
    result = invoke(config, f"sqlite:///{tmp_path / 's2.db'}")
    assert result.exit_code == 1 and "core set failed" in result.output, result.output
