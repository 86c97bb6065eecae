"""``make demo`` in a scratch checkout, for the tests that follow the README from there.

The workspace holds a copy of ``examples/`` and the interpreter's virtual environment as
``.venv`` (``examples/demo.sh`` runs ``.venv/bin/trajudge``), so the demo runs exactly as
``make demo`` runs it after the install, writing its store, cache and report inside the
workspace. Commands run with the virtual environment first on ``PATH``, no colour and a
terminal 120 columns wide, as the README's pasted outputs were printed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV = Path(sys.prefix)
WIDTH = 120


@dataclass(frozen=True)
class Workspace:
    path: Path
    demo_output: str  # what `make demo`'s script printed (stdout and stderr, interleaved)

    def env(self) -> dict[str, str]:
        return run_env()


def run_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRAJUDGE_", "FORCE_COLOR"))}
    env.update(
        PATH=f"{VENV / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        COLUMNS=str(WIDTH),
        NO_COLOR="1",
        TERM="dumb",
        LITELLM_LOCAL_MODEL_COST_MAP="True",
    )
    return env


def make_demo(where: Path) -> Workspace:
    """A workspace at ``where`` on which ``make demo`` has run (it must succeed)."""
    shutil.copytree(ROOT / "examples", where / "examples")
    (where / ".venv").symlink_to(VENV, target_is_directory=True)
    done = subprocess.run(
        ["bash", "examples/demo.sh"],
        cwd=where,
        env=run_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:]
    return Workspace(where, done.stdout)
