"""Worker processes and the calling script: spawn re-runs a script's top level in each child
unless trajudge's pool sets it aside. A script without the ``__main__`` guard (or a Streamlit
page, which Streamlit runs as ``__main__``) must run once and get the same summary as one
process; a custom check defined in the script itself still reaches the workers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from test_parquet_parallel import N, _check, data  # noqa: F401  (the module's data fixture)

from trajudge.trajectories import Trajectory

pytestmark = pytest.mark.timeout(600)

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}


def _run(script: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "job.py"
    path.write_text(textwrap.dedent(script))
    return subprocess.run(
        [sys.executable, str(path)], env=ENV, cwd=tmp_path, capture_output=True, text=True
    )


def test_a_script_without_the_guard_runs_once_and_gets_the_same_summary(
    data: tuple[Path, Path, list[Trajectory]],  # noqa: F811
    tmp_path: Path,
) -> None:
    runs, spec, _ = data
    marker = tmp_path / "ran.txt"
    done = _run(
        f"""
        import json
        from trajudge.rules import check_parquet, load_specs, resolve_specs

        with open({str(marker)!r}, "a") as f:  # the script's top level, no guard
            f.write("ran\\n")
        tasks, defaults = resolve_specs({{}}, load_specs({str(spec)!r}))
        summary = check_parquet({str(runs)!r}, tasks, defaults, workers=2)
        print(json.dumps(summary.to_dict(), sort_keys=True))
        """,
        tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert marker.read_text() == "ran\n"  # not once more per worker
    expected = _check(runs, spec, tmp_path / "one.parquet", workers=1)
    assert json.loads(done.stdout) == json.loads(json.dumps(expected, sort_keys=True))


def test_a_check_defined_in_the_script_still_reaches_the_workers(
    data: tuple[Path, Path, list[Trajectory]],  # noqa: F811
    tmp_path: Path,
) -> None:
    runs, _, _ = data
    spec = tmp_path / "spec.yaml"
    spec.write_text("defaults:\n  checks: [{name: mentions_pid}]\n")
    done = _run(
        f"""
        import json, os
        from trajudge.rules import CheckResult, check_parquet, load_specs, register_check
        from trajudge.rules import resolve_specs

        @register_check("mentions_pid")
        def mentions_pid(trajectory, spec):
            return CheckResult(check="mentions_pid", passed=True, data={{"pid": os.getpid()}})

        if __name__ == "__main__":
            tasks, defaults = resolve_specs({{}}, load_specs({str(spec)!r}))
            out = {str(tmp_path / "r.parquet")!r}
            summary = check_parquet({str(runs)!r}, tasks, defaults, workers=2, out=out)
            import pyarrow.parquet as pq
            pids = {{
                r["data"]["pid"]
                for doc in pq.read_table(out).column("data").to_pylist()
                for r in json.loads(doc)["results"] if r["check"] == "mentions_pid"
            }}
            print(json.dumps({{"runs": summary.to_dict()["checks"]["mentions_pid"]["runs"],
                              "pids": sorted(pids), "me": os.getpid()}}))
        """,
        tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout)
    assert got["runs"] == N
    assert got["pids"] and got["me"] not in got["pids"]  # checked in the worker processes
