"""`trajudge report` and `trajudge calibrate` in process: files, exit codes 0 / 1 / 2."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import typer.testing
from scipy.stats import binomtest
from sklearn.metrics import cohen_kappa_score

import trajudge.cli._commands  # noqa: F401 - registers the commands
from trajudge.cli import app

sys.path.insert(0, str(Path(__file__).parents[1] / "report"))
import report_helpers as h

runner = typer.testing.CliRunner()


@pytest.fixture(scope="module")
def store_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('cli') / 'store.db'}"
    h.make_store(url)
    return url


def _run(url: str, out: Path, *extra: str) -> typer.testing.Result:
    args = ["report", "ds", "--db", url, "--out", str(out), "--n-boot", "20", "--k", "1,2"]
    return runner.invoke(app, [*args, *extra])


def test_report_writes_files_and_exits_0(store_url: str, tmp_path: Path) -> None:
    result = _run(store_url, tmp_path / "r", "--fail-under", "pass^2[outcome]>=0.3")
    assert result.exit_code == 0, result.output
    for name in ("report.md", "report.html", "report.json"):
        assert f"wrote {tmp_path / 'r' / name}" in result.output
        assert (tmp_path / "r" / name).is_file()
    assert "judge alpha" in result.output and "Judges and verdict sources" in result.output
    d = json.loads((tmp_path / "r" / "report.json").read_text())
    assert d["passed"] is True and d["gates"] == ["pass^2[outcome]>=0.3"]


def test_failing_gates_exit_1_with_every_reason(store_url: str, tmp_path: Path) -> None:
    cons = h.consensus()
    kappa = cohen_kappa_score(list(cons.values()), [h.alpha_verdict(i) for i in cons])
    result = _run(
        store_url,
        tmp_path / "r",
        "--fail-under",
        f"kappa[alpha]>={kappa + 0.01:.3f}",
        "--fail-under",
        "pass^2[outcome]>=0.99",
        "--fail-under",
        f"kappa[alpha]>={kappa - 0.01:.3f}",  # passes
    )
    assert result.exit_code == 1, result.output
    failed = [line for line in result.output.splitlines() if line.startswith("gate failed:")]
    assert len(failed) == 2
    assert failed[0].startswith(f"gate failed: kappa[alpha] = {kappa:.4g}")
    assert "pass^2[outcome]" in failed[1]
    # the files are written all the same, for the CI artifact
    assert json.loads((tmp_path / "r" / "report.json").read_text())["passed"] is False


def test_undefined_kappa_fails_the_gate(store_url: str, tmp_path: Path) -> None:
    # beta always says pass: its kappa is 0; with env_reward labels nobody labelled: undefined
    result = _run(
        store_url, tmp_path / "r", "--labels", "env_reward", "--fail-under", "kappa[alpha]>=0"
    )
    assert result.exit_code == 1
    assert "kappa[alpha] is undefined" in result.output


@pytest.mark.parametrize("expr", ["kappa>0.6x", "kapa>=0.6", "pass^2[nobody]>=0.5"])
def test_bad_gate_exits_2_naming_the_option(store_url: str, tmp_path: Path, expr: str) -> None:
    result = _run(store_url, tmp_path / "r", "--fail-under", expr)
    assert result.exit_code == 2
    assert "--fail-under" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("expr", "reason"),
    [
        ("kappa>0.7", "no judge, bound or other op"),
        ("recall>=0.7", "unknown statistic 'recall'"),
        ("tpr>=0.7@150%", "the level must be in (0, 1)"),
        ("kappa>=0.7@often", "the level after @ is 95% or 0.95"),
        ("pass_rate>=2", "the target of pass_rate must be in [0, 1]"),
    ],
)
def test_bad_stop_rule_is_one_line_exit_2(
    store_url: str, tmp_path: Path, expr: str, reason: str
) -> None:
    result = _run(store_url, tmp_path / "r", "--stop-when", expr)
    assert result.exit_code == 2
    line = " ".join(result.output.split())
    assert line.startswith("error: --stop-when:") and reason in line, line
    assert not (tmp_path / "r").exists()


def test_bad_format_and_dataset_exit_2(store_url: str, tmp_path: Path) -> None:
    assert _run(store_url, tmp_path / "r", "--format", "pdf").exit_code == 2
    result = runner.invoke(app, ["report", "nope", "--db", store_url, "--out", str(tmp_path)])
    assert result.exit_code == 2 and "no dataset 'nope'" in result.output
    # a store that does not exist: one line, and no empty store left behind
    missing = tmp_path / "none.db"
    result = runner.invoke(app, ["report", "ds", "--db", f"sqlite:///{missing}"])
    assert result.exit_code == 2 and "no store here" in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1 and not missing.exists()
    result = runner.invoke(app, ["report", "--db", store_url])  # no dataset, no config
    assert result.exit_code == 2 and "give a dataset name or --config" in result.output


def test_baseline_regression_detected(store_url: str, tmp_path: Path, db_url: str) -> None:
    assert _run(store_url, tmp_path / "base").exit_code == 0
    baseline = tmp_path / "base" / "report.json"
    # same data against itself: no regression
    assert _run(store_url, tmp_path / "same", "--baseline", str(baseline)).exit_code == 0
    # the agent now costs 3x as much per trajectory (0.03 vs 0.01)
    h.make_store(db_url, cost=0.03)
    result = _run(db_url, tmp_path / "costly", "--baseline", str(baseline))
    assert result.exit_code == 1
    assert "cost per trajectory 0.03 is above 1.5x the baseline's 0.01" in result.output
    # a baseline whose outcome pass^2 was far above the current interval
    d = json.loads(baseline.read_text())
    d["sources"]["outcome"]["pass^k"]["2"]["value"] = 0.99
    raised = tmp_path / "raised.json"
    raised.write_text(json.dumps(d))
    result = _run(store_url, tmp_path / "drop", "--baseline", str(raised))
    assert result.exit_code == 1
    assert "pass^2[outcome] dropped" in result.output


def test_calibrate_command_on_jsonl(tmp_path: Path) -> None:
    j = tmp_path / "j.jsonl"
    j.write_text(
        "".join(
            json.dumps(
                {
                    "item": t,
                    "judge": "alpha",
                    "order": "ab",
                    "sample": 0,
                    "verdict": "pass" if h.alpha_verdict(t) else "fail",
                    "task_id": t[:2],
                }
            )
            + "\n"
            for t in h.all_ids()
        )
    )
    lab = tmp_path / "l.csv"
    lab.write_text(
        "item,annotator,label\n" + "".join(f"{i},{a},{v}\n" for i, a, v in h.human_labels())
    )
    cons = h.consensus()
    kappa = cohen_kappa_score(list(cons.values()), [h.alpha_verdict(i) for i in cons])
    out = tmp_path / "cal"
    result = runner.invoke(
        app,
        [
            "calibrate",
            "--judgments",
            str(j),
            "--labels",
            str(lab),
            "--out",
            str(out),
            "--format",
            "json",
            "--n-boot",
            "20",
            "--fail-under",
            f"kappa>={kappa - 0.01:.3f}",
        ],
    )
    assert result.exit_code == 0, result.output
    d = json.loads((out / "report.json").read_text())
    assert d["judges"][0]["kappa"]["value"] == pytest.approx(kappa, abs=1e-12)
    assert not (out / "report.html").exists()


def test_calibrate_bad_file_exits_2(tmp_path: Path) -> None:
    j = tmp_path / "j.csv"
    j.write_text("item,judge,order,sample,verdict\nx,a,sideways,0,pass\n")
    lab = tmp_path / "l.csv"
    lab.write_text("item,annotator,label\nx,h,1\n")
    result = runner.invoke(
        app,
        ["calibrate", "--judgments", str(j), "--labels", str(lab), "--out", str(tmp_path / "o")],
    )
    assert result.exit_code == 2
    assert "line 2: order" in result.output
    assert not (tmp_path / "o").exists()


def test_bound_gate_asks_for_confidence(store_url: str, tmp_path: Path) -> None:
    cons = h.consensus()
    kappa = cohen_kappa_score(list(cons.values()), [h.alpha_verdict(i) for i in cons])
    point = f"kappa[alpha]>={kappa - 0.05:.3f}"
    assert _run(store_url, tmp_path / "a", "--fail-under", point).exit_code == 0
    # the same bar on the lower end of the 95% interval: 12 labelled items in 6 tasks do
    # not show it
    result = _run(store_url, tmp_path / "b", "--fail-under", f"kappa.lo[alpha]>={kappa - 0.05:.3f}")
    assert result.exit_code == 1
    (line,) = [x for x in result.output.splitlines() if x.startswith("gate failed:")]
    assert line.startswith("gate failed: kappa.lo[alpha] = ")
    assert f"(estimate {kappa:.4g} [" in line


def test_report_baseline_tolerance_option(tmp_path: Path) -> None:
    # the same store reported twice: usage equal to the baseline's, so only a tolerance below
    # 1 can flag it (cost/tokens/turns of 1.0x the baseline are above 0.5x)
    url = f"sqlite:///{tmp_path / 'b.db'}"
    h.make_store(url).close()
    out = tmp_path / "r"
    first = typer.testing.CliRunner().invoke(
        app, ["report", "ds", "--db", url, "--out", str(out), "--format", "json", "--n-boot", "20"]
    )
    assert first.exit_code == 0, first.output
    base = tmp_path / "base.json"
    base.write_text((out / "report.json").read_text())
    args = ["report", "ds", "--db", url, "--out", str(out), "--format", "json", "--n-boot", "20"]
    same = typer.testing.CliRunner().invoke(app, [*args, "--baseline", str(base)])
    assert same.exit_code == 0, same.output
    strict = typer.testing.CliRunner().invoke(
        app, [*args, "--baseline", str(base), "--baseline-tolerance", "0.5"]
    )
    assert strict.exit_code == 1, strict.output
    assert "above 0.5x the baseline's" in strict.output
    bad = typer.testing.CliRunner().invoke(
        app, [*args, "--baseline", str(base), "--baseline-tolerance", "0"]
    )
    assert bad.exit_code == 2


def test_calibrate_a_judge_that_agrees_on_every_label(tmp_path: Path) -> None:
    # 48 items in 12 tasks (6 all pass, 6 all fail), the judge agrees on every one: κ was
    # 1.00 [1.00, 1.00] and a gate on its lower end passed; 12 tasks cannot show κ >= 0.9
    items = [(f"t{t:02d}-{i}", f"t{t:02d}", t % 2) for t in range(12) for i in range(4)]
    j = tmp_path / "j.jsonl"
    j.write_text("".join(json.dumps({"item": item, "judge": "ok", "order": "ab", "sample": 0,
                                     "verdict": "pass" if y else "fail", "task_id": task}) + "\n"
                         for item, task, y in items))  # fmt: skip
    lab = tmp_path / "l.csv"
    lab.write_text("item,annotator,label\n" + "".join(f"{i},h,{y}\n" for i, _, y in items))
    out = tmp_path / "cal"
    args = ["calibrate", "--judgments", str(j), "--labels", str(lab), "--out", str(out),
            "--format", "json,md", "--n-boot", "50", "--fail-under", "kappa.lo>=0.9"]  # fmt: skip
    result = runner.invoke(app, args)
    assert result.exit_code == 1, result.output
    # κ = (p_o - p_e) / (1 - p_e), p_o at the exact lower bound for 12 of 12 tasks, p_e = 1/2
    low = (binomtest(12, 12).proportion_ci(method="exact").low - 0.5) / 0.5
    kappa = json.loads((out / "report.json").read_text())["judges"][0]["kappa"]
    assert (kappa["value"], kappa["low"], kappa["high"]) == (1.0, pytest.approx(low), 1.0)
    md = (out / "report.md").read_text()
    assert f"agrees with human labels at κ = 1.00 \\[{low:.2f}, 1.00\\] over 48 items" in md
    assert "gate failed: kappa.lo[ok]" in result.output
