"""`trajudge judge`: judges from --judge or --config, progress and summary, clean errors."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.testing

import trajudge.cli._commands  # noqa: F401  (registers the commands)
from trajudge.cli import app
from trajudge.store import Store
from trajudge.trajectories import Step, TaskSpec, Trajectory

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
pytestmark = pytest.mark.timeout(300)
runner = typer.testing.CliRunner()


def _load_fake() -> Any:
    path = Path(__file__).resolve().parents[1] / "judges" / "fake_llm.py"
    spec = importlib.util.spec_from_file_location("trajudge_tests_fake_llm", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def fake() -> Iterator[Any]:
    server = _load_fake().FakeLLM().start()
    yield server
    server.stop()


def _dataset(db_url: str, name: str = "ds") -> None:
    trajectories = [
        Trajectory(
            id=f"{task}-{trial}",
            task_id=task,
            trial=trial,
            input="help",
            steps=[Step(tool="delete_account" if (task, trial) == ("b", 0) else "search")],
        )
        for task in ("a", "b")
        for trial in (0, 1)
    ]
    Store(db_url).import_dataset(
        name, trajectories, {"b": TaskSpec(forbidden_tools=["delete_account"])}
    )


def run(*args: str) -> typer.testing.Result:
    return runner.invoke(app, ["judge", *args])


def test_judge_command_scores_and_prints_a_summary(fake: Any, db_url: str, tmp_path: Path) -> None:
    fake.reset()
    _dataset(db_url)
    cache = str(tmp_path / "cache.db")
    args = ["--judge", "f=openai/fake:trajectory_reasonableness", "--api-base", fake.api_base]
    result = run("ds", *args, "--db", db_url, "--cache", cache)
    assert result.exit_code == 0, result.output
    out = " ".join(result.output.split())
    # 4 trajectories, b-0 fails the forbidden_tools gate: 3 calls
    assert "judged 3 of 3 calls this run; 0 already stored (of 3 planned)" in out
    assert "gate-skipped 1 trajectories" in out
    assert "cache hits 0; errors 0; cost $0.0000; tokens 300 prompt + 60 completion" in out
    assert fake.calls == 3
    frame = Store(db_url).judgments_frame("ds")
    assert len(frame) == 3 and set(frame["judge"]) == {"f"}

    # same dataset again: resumes, no call; a copy of it: served from the cache
    again = run("ds", *args, "--db", db_url, "--cache", cache)
    assert "3 already stored" in " ".join(again.output.split()) and fake.calls == 3
    _dataset(db_url, "copy")
    copy = run("copy", *args, "--db", db_url, "--cache", cache)
    assert copy.exit_code == 0, copy.output
    assert "cache hits 3" in " ".join(copy.output.split()) and fake.calls == 3


@pytest.mark.parametrize(
    ("elapsed_s", "shown"), [(0.0314, "; 31 ms"), (4.4126, "; 4,413 ms"), (361.2, "; 361,200 ms")]
)
def test_the_summary_gives_the_batch_time_in_milliseconds(
    elapsed_s: float, shown: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A cached re-run takes tens of milliseconds: tenths of a second printed it as 0.0 s."""
    from trajudge.cli._cmd_judge import print_summary
    from trajudge.judges import BatchSummary

    print_summary(BatchSummary(dataset="ds", judges=["j"], elapsed_s=elapsed_s))
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("cache hits"))
    assert line.endswith(shown), line


def test_judges_samples_and_limits_from_config(fake: Any, db_url: str, tmp_path: Path) -> None:
    fake.reset()
    _dataset(db_url)
    config = tmp_path / "trajudge.yaml"
    config.write_text(
        "dataset: {name: ds}\n"
        "judges:\n"
        f"  - {{name: cfg, model: openai/fake, api_base: '{fake.api_base}',"
        " rubric: trajectory_reasonableness}\n"
        "limits: {tasks: ['a']}\n",
        encoding="utf-8",
    )
    result = run("--config", str(config), "--samples", "2", "--db", db_url, "--no-cache")
    assert result.exit_code == 0, result.output
    frame = Store(db_url).judgments_frame("ds")
    # task a only (2 trials) x 2 samples
    assert len(frame) == 4 and set(frame["trajectory_id"]) == {"a-0", "a-1"}
    assert sorted(frame["sample"]) == [0, 0, 1, 1] and fake.calls == 4


def test_errors_are_reported_not_counted_as_verdicts(fake: Any, db_url: str) -> None:
    fake.reset()
    fake.default = "500"
    _dataset(db_url)
    config_free = [
        "ds",
        "--judge",
        "f=openai/fake:answer_faithfulness",
        "--api-base",
        fake.api_base,
        "--no-cache",
        "--db",
        db_url,
    ]
    result = run(*config_free, "--max-retries", "1")
    fake.default = "ok"
    assert result.exit_code == 0, result.output
    out = " ".join(result.output.split())
    assert fake.calls == 3 * 2  # each call tried twice
    assert "errors 3" in out and "stored as errors (never a pass or a fail)" in out
    frame = Store(db_url).judgments_frame("ds")
    assert frame["score"].isna().all() and frame["error"].notna().all()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["ds", "--judge", "nocolon"], "--judge: nocolon: expected NAME=MODEL:RUBRIC"),
        # the model keeps its own ':'; the rubric is what follows the last one
        (["ds", "--judge", "b=ollama/llama3:8b:no_such_rubric"], "no_such_rubric: rubric: unknown"),
        (["missing", "--judge", "f=openai/x:trajectory_reasonableness"], "no dataset 'missing'"),
        ([], "give a dataset name"),
        # an option that would change nothing is refused, with the reason
        (["ds", "-j", "f=openai/x:trajectory_reasonableness", "--swap"], "every judge here is"),
        (["ds", "--api-base", "http://127.0.0.1:1/v1"], "does not apply to 'local/gemma-3-270m'"),
        (["ds", "--cache", "c.db"], "--cache and --no-cache contradict each other"),
        (["ds", "--engine", "batch", "--concurrency", "2"], "has no calls in flight to limit"),
    ],
)
def test_user_errors_are_one_red_line_and_exit_2(
    db_url: str, args: list[str], message: str
) -> None:
    _dataset(db_url)
    result = run(*args, "--db", db_url, "--no-cache")
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and message in lines[0], result.output
    assert "Traceback" not in result.output


def test_spec_file_adds_gates_over_the_stored_specs(fake: Any, db_url: str, tmp_path: Path) -> None:
    fake.reset()
    _dataset(db_url)
    specs = tmp_path / "specs.yaml"
    specs.write_text("defaults:\n  forbidden_tools: [search]\n", encoding="utf-8")
    args = ["--judge", "f=openai/fake:trajectory_reasonableness", "--api-base", fake.api_base]
    result = run("ds", *args, "--specs", str(specs), "--db", db_url, "--no-cache")
    assert result.exit_code == 0, result.output
    # file defaults sit under the stored spec of task b, whose forbidden_tools list replaces
    # them: a-0 and a-1 (search) and b-0 (delete_account) are gated, b-1 is judged
    assert "gate-skipped 3 trajectories" in " ".join(result.output.split())
    frame = Store(db_url).judgments_frame("ds")
    assert fake.calls == 1 and list(frame["trajectory_id"]) == ["b-1"]


def _config(tmp_path: Path, fake: Any, db: str, **judge: object) -> Path:
    spec = {
        "name": "cfg",
        "model": "openai/fake",
        "api_base": fake.api_base,
        "rubric": "trajectory_reasonableness",
        **judge,
    }
    config = tmp_path / "trajudge.yaml"
    config.write_text(
        f"db: {db}\ndataset: {{name: ds}}\njudges: [{json.dumps(spec)}]\n", encoding="utf-8"
    )
    return config


def test_the_configs_db_is_used_and_no_empty_store_is_left_behind(
    fake: Any, db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake.reset()
    _dataset(db_url)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.delenv("TRAJUDGE_DB", raising=False)
    config = _config(tmp_path, fake, db_url)
    result = run("--config", str(config), "--no-cache")
    assert result.exit_code == 0, result.output
    assert len(Store(db_url).judgments_frame("ds")) == 3
    assert list(cwd.iterdir()) == []  # no trajudge.db (nor anything else) in the cwd
    # TRAJUDGE_DB comes before the config's db (a team's shared store); --db before both
    other = f"sqlite:///{tmp_path / 'other.db'}"
    _dataset(other)
    result = runner.invoke(
        app, ["judge", "--config", str(config), "--no-cache"], env={"TRAJUDGE_DB": other}
    )
    assert result.exit_code == 0, result.output
    assert len(Store(other).judgments_frame("ds")) == 3
    assert len(Store(db_url).judgments_frame("ds")) == 3  # the config's store left alone
    other = f"sqlite:///{tmp_path / 'other2.db'}"
    _dataset(other)
    result = run("--config", str(config), "--no-cache", "--db", other)
    assert result.exit_code == 0, result.output
    assert "judged 3 of 3" in result.output, result.output
    assert len(Store(other).judgments_frame("ds")) == 3
    # no store where one is expected: a clear error, and no file created
    missing = tmp_path / "missing.db"
    result = run("ds", "--db", f"sqlite:///{missing}", "--no-cache")
    assert result.exit_code == 2 and "no store here" in result.output
    assert not missing.exists() and list(cwd.iterdir()) == []


def test_concurrency_option_raises_each_judges_limit(
    fake: Any, db_url: str, tmp_path: Path
) -> None:
    fake.reset()
    _dataset(db_url)
    fake.default = "hold:6"  # every answer waits until 6 requests are in flight at once
    config = _config(tmp_path, fake, db_url, samples=3, swap=False)  # 3 items x 3 samples
    result = run("--config", str(config), "--no-cache", "--concurrency", "6")
    assert result.exit_code == 0, result.output
    assert fake.max_in_flight == 6  # not the judge's default of 4
    fake.reset()
    # a third call would be in flight within the 2 s each answer is held; 60 s (the default
    # hold) made this test take two minutes for the same proof
    fake.default = "hold:3:2"
    result = run("--config", str(config), "--no-cache", "--concurrency", "2", "--samples", "4")
    assert result.exit_code == 0, result.output
    assert fake.max_in_flight == 2  # the option bounds calls in flight too


def test_timeout_option_reaches_the_judge_and_its_error_names_the_setting(
    fake: Any, db_url: str, tmp_path: Path
) -> None:
    fake.reset()
    _dataset(db_url)
    fake.default = "delay:5"
    config = _config(tmp_path, fake, db_url, max_retries=0)
    result = run("--config", str(config), "--no-cache", "--timeout", "1")
    assert result.exit_code == 0, result.output
    errors = Store(db_url).judgments_frame("ds")["error"].tolist()
    assert len(errors) == 3
    for error in errors:
        assert error.startswith("timed out after 1 s (1 attempt(s)): raise `timeout:` of judge")
        assert "'cfg' in trajudge.yaml or --timeout" in error


def test_engine_batch_from_the_option_or_the_config(fake: Any, db_url: str, tmp_path: Path) -> None:
    """--engine batch (or engine: batch) sends the calls as one provider batch; a second run
    submits nothing."""
    fake.reset()
    _dataset(db_url)
    args = ["--judge", "f=openai/fake:trajectory_reasonableness", "--api-base", fake.api_base]
    result = run("ds", *args, "--engine", "batch", "--db", db_url, "--no-cache")
    assert result.exit_code == 0, result.output
    out = " ".join(result.output.split())
    assert "submitted batch batch_1 (3 requests to openai/fake)" in out
    assert "judged 3 of 3 calls this run" in out
    assert len(fake.batches.created) == 1 and fake.calls == 3
    assert len(Store(db_url).provider_batches("ds")) == 1

    _dataset(db_url, "copy")
    config = tmp_path / "trajudge.yaml"
    config.write_text(
        "engine: batch\njudges:\n"
        f"  - {{name: f, model: openai/fake, api_base: '{fake.api_base}',"
        " rubric: trajectory_reasonableness}\n",
        encoding="utf-8",
    )
    copy = run("copy", "--config", str(config), "--db", db_url, "--no-cache")
    assert copy.exit_code == 0, copy.output
    assert len(fake.batches.created) == 2 and fake.calls == 6
    again = run("copy", "--config", str(config), "--db", db_url, "--no-cache")
    assert "3 already stored" in " ".join(again.output.split())
    assert len(fake.batches.created) == 2


@pytest.mark.parametrize("where", ["option", "config"])
def test_an_unknown_engine_is_one_red_line(db_url: str, tmp_path: Path, where: str) -> None:
    _dataset(db_url)
    config = tmp_path / "trajudge.yaml"
    config.write_text("engine: spark\n", encoding="utf-8")
    args = ["--engine", "spark"] if where == "option" else ["--config", str(config)]
    result = run("ds", *args, "--db", db_url, "--no-cache")
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert (
        len(lines) == 1
        and "unknown engine 'spark': choose local, processes, ray, batch" in lines[0]
    ), lines
    if where == "config":
        assert "trajudge.yaml" in lines[0] and "engine" in lines[0]


def test_a_scheduled_rejudge_of_the_anchor_set_and_its_drift(
    fake: Any, db_url: str, tmp_path: Path
) -> None:
    """The README's cron line: judge the anchor tasks again under a new name, then drift."""
    fake.reset()
    _dataset(db_url)
    anchor = tmp_path / "anchor.jsonl"
    # the core layer is task a (a-0 labelled pass, a-1 fail); b-1 is a case outside it
    for tid, label, core in (("a-0", "pass", True), ("a-1", "fail", True), ("b-1", "pass", False)):
        extra = ["--core"] if core else []
        case = ["add-case", "ds", tid, "--to", str(anchor), "--label", label, "--db", db_url]
        added = runner.invoke(app, [*case, *extra])
        assert added.exit_code == 0, added.output
    api = ["--api-base", fake.api_base, "--db", db_url, "--no-cache", "--evalset", str(anchor)]
    old = run("ds", "--judge", "old=openai/fake:trajectory_reasonableness", *api)
    assert old.exit_code == 0, old.output
    frame = Store(db_url).judgments_frame("ds")
    assert sorted(frame["trajectory_id"]) == ["a-0", "a-1"] and fake.calls == 2
    # the provider's model changes behind the name: every score drops from 5 to 1
    fake.choose = lambda name, values: values[0]
    new = run("ds", "--judge", "new=openai/fake:trajectory_reasonableness", *api)
    assert new.exit_code == 0, new.output and fake.calls == 4
    out = tmp_path / "drift"
    drift = runner.invoke(
        app,
        ["drift", "ds", "--judge", "old", "--judge", "new", "--evalset", str(anchor),
         "--db", db_url, "--out", str(out), "--n-boot", "100",
         "--fail-under", "drift.pass_rate.lo>=-0.05"],
    )  # fmt: skip
    assert drift.exit_code == 1, drift.output
    d = json.loads((out / "drift.json").read_text())
    # old passes both anchor items (score 5 >= 4), new fails both (score 1)
    assert d["drift"]["n_items"] == 2 and d["drift"]["n_down"] == 2
    assert d["drift"]["changed"]["value"] == 1.0
    assert d["drift"]["pass_rate"]["diff"]["value"] == -1.0
    assert d["fingerprints"]["new"]["n_cached"] == 0 and d["fingerprints"]["new"]["n_calls"] == 2
    assert "gate failed: drift.pass_rate.lo = " in drift.output
    bad = run("ds", "--judge", "x=openai/fake:trajectory_reasonableness", "--db", db_url,
              "--evalset", str(tmp_path / "missing.jsonl"))  # fmt: skip
    assert bad.exit_code == 2 and "missing.jsonl" in bad.output
