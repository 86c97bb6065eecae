"""A command that reads a dataset never creates a store: a mistyped --db is one line, exit 2,
and no file (nor folder) appears where it points."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EXE = shutil.which("trajudge", path=str(Path(sys.executable).parent)) or "trajudge"

# every command that reads a stored dataset, with the arguments it needs besides --db
READING = {
    "check": ["check", "ds"],
    "reliability": ["reliability", "ds"],
    "report": ["report", "ds"],
    "judge": ["judge", "ds"],
    "align": ["align", "ds", "--judge", "j"],
    "label": ["label", "--dataset", "ds"],
    "labels export": ["labels", "export", "ds", "--out", "{tmp}/l.csv"],
    "labels import": ["labels", "import", "{tmp}/labels.csv", "--dataset", "ds"],
    "add-case": ["add-case", "ds", "t-0", "--to", "{tmp}/set.yaml"],
    "evalset rotate": ["evalset", "rotate", "{tmp}/set.yaml", "--from", "ds"],
    "evalset sample": ["evalset", "sample", "ds", "--to", "{tmp}/set.yaml", "--n", "4"],
    "evalset fingerprint": ["evalset", "fingerprint", "ds"],
}


@pytest.mark.parametrize("where", ["missing-dir", "missing-file"])
@pytest.mark.parametrize("name", sorted(READING))
def test_a_reading_command_creates_no_store(name: str, where: str, tmp_path: Path) -> None:
    (tmp_path / "labels.csv").write_text("trajectory_id,annotator,label\nt-0,a,1\n")
    target = tmp_path / "no" / "such" / "x.db" if where == "missing-dir" else tmp_path / "x.db"
    url = f"sqlite:///{target}"
    args = [a.replace("{tmp}", str(tmp_path)) for a in READING[name]]
    run = subprocess.run(
        [EXE, *args, "--db", url],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert run.returncode == 2, (run.stdout, run.stderr)
    assert "Traceback" not in run.stderr
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "no store here" in lines[0] and str(target) in lines[0], lines
    assert not target.exists()
    assert not (tmp_path / "no").exists()
