"""Ids from a user's file are shown, never obeyed, on the terminal: an escape sequence in a
task id (clear screen, an OSC 8 hyperlink, a bell, a carriage return) is printed as visible
text by ``reliability``, ``check`` and ``report``, and Rich markup in it (``[red]``, a stray
``[/]``) is neither styled nor a crash. Real CLI processes; their output is not a terminal,
so Rich writes no escape of its own: any ESC or BEL in it would come from the data."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from trajudge.store import Store
from trajudge.trajectories import Step, Trajectory

CLEAR = "\x1b[2J"
LINK = "\x1b]8;;http://evil.example\x07click\x1b]8;;\x07"
TASKS = [f"t{CLEAR}1", f"t{LINK}", "t[red]x[/]", "t[/]\rcover"]


@pytest.fixture
def db(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'trajudge.db'}"
    items = [
        Trajectory(
            id=f"run-{i}-{trial}",
            task_id=task,
            trial=trial,
            input="hi",
            steps=[Step(tool="search")],
            outcome=float(trial == 0),  # trial 0 passes, trial 1 fails: every task unstable
        )
        for i, task in enumerate(TASKS)
        for trial in (0, 1)
    ]
    Store(url).import_dataset("ds", items)
    return url


@pytest.mark.parametrize(
    "command",
    [["reliability", "ds"], ["check", "ds"], ["report", "ds", "--format", "json"]],
    ids=["reliability", "check", "report"],
)
def test_control_characters_and_markup_in_ids_are_shown_as_text(
    db: str, tmp_path: Path, command: list[str]
) -> None:
    extra = ["--out", str(tmp_path / "out")] if command[0] == "report" else []
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "COLUMNS": "300"}
    cli = [sys.executable, "-c", "from trajudge.cli import main; main()"]
    out = subprocess.run(
        [*cli, *command, "--db", db, *extra], capture_output=True, text=True, env=env, timeout=180
    )
    assert out.returncode in (0, 1), out.stderr
    assert "Traceback" not in out.stderr
    for raw in ("\x1b", "\x07", "\r"):
        assert raw not in out.stdout and raw not in out.stderr, (raw, out.stdout)
    if command[0] != "check":  # check prints counts per check, no task id
        assert "t\\x1b[2J1" in out.stdout, out.stdout
        assert "t[red]x[/]" in out.stdout
        # Rich itself drops a carriage return (and a bell) from text it prints
        assert "t[/]cover" in out.stdout or "t[/]\\x0dcover" in out.stdout
