"""The core layer of `trajudge run`: one core set, from `layers.core_tasks` and from the eval
set's core cases (`trajudge add-case --core`).

Before: the `core` flag of eval cases was never read by `trajudge run` (only
`layers.core_tasks` gated a run), and the core layer was skipped entirely without judges.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from fake_llm import FakeLLM
from typer.testing import CliRunner

import trajudge.cli._commands  # noqa: F401
from trajudge.cli import app
from trajudge.store import Store
from trajudge.trajectories import Step, Trajectory, write_jsonl

# task -> per trial: the judge says good? ("b-1" is bad: a core set holding task b fails)
PLAN = {"a": [True, True], "b": [True, False], "c": [True, True]}
GATED = "c-1"  # calls a forbidden tool: fails a rule gate


def _trajectories() -> list[Trajectory]:
    out = []
    for task, trials in PLAN.items():
        for trial, good in enumerate(trials):
            tid = f"{task}-{trial}"
            marker = "GOOD-RUN" if good else "BAD-RUN"
            out.append(
                Trajectory(
                    id=tid,
                    task_id=task,
                    trial=trial,
                    input=f"[{tid}] please help ({marker})",
                    steps=[Step(tool="drop_database" if tid == GATED else "search")],
                    final_answer=marker,
                    outcome=good,
                )
            )
    return out


def _project(tmp: Path, fake: FakeLLM | None, layers: dict[str, Any]) -> tuple[Path, str]:
    write_jsonl(tmp / "runs.jsonl", _trajectories())
    (tmp / "specs.yaml").write_text(
        yaml.safe_dump({"defaults": {"forbidden_tools": ["drop_database"]}})
    )
    cfg: dict[str, Any] = {
        "dataset": {"path": "runs.jsonl", "name": "new"},
        "specs": {"path": "specs.yaml"},
        "cache": "cache.db",
        "layers": layers,
        "report": {"out": "out", "formats": ["json"], "ks": [1], "n_boot": 20},
    }
    if fake is not None:
        fake.decide = lambda user, v: {**v, "score": 5 if "GOOD-RUN" in user else 1}
        cfg["judges"] = [
            {"name": "fake", "model": "openai/fake", "api_base": fake.api_base,
             "rubric": "trajectory_reasonableness", "swap": False, "max_retries": 0}
        ]  # fmt: skip
    path = tmp / "trajudge.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path, f"sqlite:///{tmp / 's.db'}"


def _add_cases(tmp: Path, db: str, *cases: tuple[str, bool]) -> Path:
    """Eval cases made with the real command from an older dataset of the same tasks."""
    Store(db).import_dataset("old", _trajectories())
    evalset = tmp / "cases.jsonl"
    for tid, core in cases:
        args = ["add-case", "old", tid, "--to", str(evalset), "--db", db]
        result = CliRunner().invoke(app, [*args, "--core"] if core else args)
        assert result.exit_code == 0, result.output
    return evalset


def _run(config: Path, db: str) -> Any:
    return CliRunner().invoke(app, ["run", str(config), "--db", db])


def _judged(fake: FakeLLM) -> list[str]:
    """The trajectory ids the judge was asked about, in order."""
    out = []
    for req in fake.requests:
        text = " ".join(str(m.get("content")) for m in req["messages"])
        out += re.findall(r"\[([a-c]-\d)\]", text)[:1]
    return out


def test_a_core_case_that_fails_stops_the_run(tmp_path: Path, fake_llm: FakeLLM) -> None:
    db = f"sqlite:///{tmp_path / 's.db'}"
    evalset = _add_cases(tmp_path, db, ("b-0", True), ("a-0", False))
    config, db = _project(tmp_path, fake_llm, {"evalset": evalset.name})
    result = _run(config, db)
    assert result.exit_code == 1, result.output
    assert "core tasks: b" in result.output
    assert "core set failed: 1 of 2 passed (50%, need 100%); failed: b-1" in result.output
    # only the core task was judged (case b-0 names task b: both of its trials in "new")
    assert sorted(_judged(fake_llm)) == ["b-0", "b-1"]
    assert not (tmp_path / "out").exists()  # no report: the run stopped at the core layer


def test_core_tasks_and_core_cases_form_one_core_set(tmp_path: Path, fake_llm: FakeLLM) -> None:
    db = f"sqlite:///{tmp_path / 's.db'}"
    evalset = _add_cases(tmp_path, db, ("a-1", True))
    layers = {"core_tasks": ["c"], "evalset": str(evalset), "min_pass_rate": 0.5}
    config, db = _project(tmp_path, fake_llm, layers)
    result = _run(config, db)
    # core set = task c (core_tasks) + task a (core case): c-1 fails its gate, 3 of 4 pass
    assert "core tasks: c, a" in result.output
    assert "core set passed: 3 of 4 (75%, need 50%)" in result.output
    assert result.exit_code == 0, result.output
    judged = _judged(fake_llm)
    # the core set first (the gated c-1 is never judged), then the rest
    assert sorted(judged[:3]) == ["a-0", "a-1", "c-0"]
    assert sorted(judged[3:]) == ["b-0", "b-1"]


def test_non_core_cases_do_not_gate(tmp_path: Path, fake_llm: FakeLLM) -> None:
    db = f"sqlite:///{tmp_path / 's.db'}"
    evalset = _add_cases(tmp_path, db, ("b-1", False))
    config, db = _project(tmp_path, fake_llm, {"evalset": str(evalset)})
    result = _run(config, db)
    assert result.exit_code == 0, result.output
    assert "core layer" not in result.output
    assert len(_judged(fake_llm)) == 5  # every trajectory but the gated one


def test_the_core_layer_gates_a_run_without_judges(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 's.db'}"
    evalset = _add_cases(tmp_path, db, ("c-0", True))
    config, db = _project(tmp_path, None, {"evalset": str(evalset)})
    result = _run(config, db)
    assert result.exit_code == 1, result.output
    assert "core set failed: 1 of 2 passed (50%, need 100%); failed: c-1" in result.output


def test_a_core_task_missing_from_the_dataset_is_refused(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 's.db'}"
    old = [Trajectory(id="z-0", task_id="z", steps=[Step(tool="search")], outcome=False)]
    Store(db).import_dataset("old", old)
    evalset = tmp_path / "cases.jsonl"
    args = ["add-case", "old", "z-0", "--to", str(evalset), "--core", "--db", db]
    assert CliRunner().invoke(app, args).exit_code == 0
    config, db = _project(tmp_path, None, {"evalset": str(evalset)})
    result = _run(config, db)
    assert result.exit_code == 2, result.output
    line = " ".join(result.output.split())
    assert f"layers.evalset ({evalset}: case 'old/z-0')" in line
    assert "core task 'z' has no trajectory in dataset 'new'" in line
    assert "Traceback" not in result.output
