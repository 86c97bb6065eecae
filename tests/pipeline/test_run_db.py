"""Which store `trajudge run` writes to: `--db` or `TRAJUDGE_DB`, else the config's `db:`.

A team exports TRAJUDGE_DB once (README, "A team store on PostgreSQL") and every command,
`trajudge run` included, must use it rather than a local SQLite file.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

import trajudge.cli._commands  # noqa: F401
from trajudge.cli import app
from trajudge.store import Store
from trajudge.trajectories import Step, Trajectory, write_jsonl

N = 3


def _project(tmp: Path, **cfg: object) -> Path:
    trials = [
        Trajectory(id=f"a-{i}", task_id="a", trial=i, steps=[Step(tool="s")]) for i in range(N)
    ]
    write_jsonl(tmp / "runs.jsonl", trials)
    config = {
        "dataset": {"path": "runs.jsonl", "name": "demo"},
        "report": {"out": "out", "formats": ["json"], "n_boot": 10},
        **cfg,
    }
    path = tmp / "trajudge.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def _stored(url: str) -> int:
    store = Store(url)
    try:
        return store.count_trajectories("demo")
    finally:
        store.close()


def _run_cli(config: Path, env: dict[str, str]) -> None:
    """`trajudge run` in a process of its own: the CLI reads TRAJUDGE_DB when it starts."""
    exe = shutil.which("trajudge", path=str(Path(sys.executable).parent)) or "trajudge"
    result = subprocess.run(
        [exe, "run", str(config)],
        cwd=config.parent,  # where the default sqlite:///trajudge.db would be created
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", **env},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_trajudge_db_names_the_store_like_db(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    team = f"sqlite:///{tmp_path / 'team.db'}"
    config = _project(tmp_path)
    _run_cli(config, {"TRAJUDGE_DB": team})
    assert _stored(team) == N
    assert not (tmp_path / "trajudge.db").exists()  # not the default store in the cwd
    # a config naming its own store yields to TRAJUDGE_DB, as it yields to --db
    config = _project(tmp_path, db="sqlite:///project.db")
    _run_cli(config, {"TRAJUDGE_DB": team})
    assert not (tmp_path / "project.db").exists()
    flag = f"sqlite:///{tmp_path / 'flag.db'}"
    monkeypatch.setenv("TRAJUDGE_DB", team)
    assert CliRunner().invoke(app, ["run", str(config), "--db", flag]).exit_code == 0
    assert _stored(flag) == N
    monkeypatch.delenv("TRAJUDGE_DB")
    monkeypatch.chdir(tmp_path)
    assert CliRunner().invoke(app, ["run", str(config)]).exit_code == 0
    assert _stored(f"sqlite:///{tmp_path / 'project.db'}") == N
