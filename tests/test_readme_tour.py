"""The README's "A 5-minute tour" runs as written, right after ``make demo``.

Each ``$`` command of the section runs in order, in a workspace on which ``make demo`` ran
(tests/_demo.py: the real embedded judge, no mocks), through bash as a reader would paste it;
what it prints (stdout and stderr, as a terminal shows them) must be what the README shows
(tests/_readme_blocks.py says how ``...`` and table borders are compared). A command that does
not echo its exit status must exit 0. ``trajudge label`` is a server: it is started on a free
port, must print the address the README shows and answer Streamlit's health check, and is
stopped. A README that drifts from the code fails here.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from _demo import ROOT, Workspace
from _readme_blocks import Command, commands, contains, matches, section, sections

pytestmark = [pytest.mark.local_llm, pytest.mark.slow, pytest.mark.timeout(3600)]
SERVER_WAIT_S = 300.0  # a deadline for a hung start only: the test waits on the health check


def _tour() -> list[Command]:
    first, text = section((ROOT / "README.md").read_text(encoding="utf-8"), "A 5-minute tour")
    return commands(text, first)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _where(cmd: Command) -> str:
    return f"README.md line {cmd.line}: $ {cmd.text}"


def _run(cmd: Command, ws: Workspace) -> str:
    done = subprocess.run(
        ["bash", "-c", cmd.text],
        cwd=ws.path,
        env=ws.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=1800,
        check=False,
    )
    if "exit $?" not in cmd.text:
        assert done.returncode == 0, f"{_where(cmd)}\nexit {done.returncode}\n{done.stdout}"
    return done.stdout


def _serve(cmd: Command, ws: Workspace) -> str:
    """Start the server command on a free port; its first line once it answers its health
    check; then stop it."""
    port = _free_port()
    proc = subprocess.Popen(
        ["bash", "-c", f"{cmd.text} --port {port}"],
        cwd=ws.path,
        env=ws.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # bash and the server it starts are stopped together
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        deadline = time.monotonic() + SERVER_WAIT_S
        while True:
            assert proc.poll() is None, f"{_where(cmd)}\nexited: {first}{proc.stdout.read()}"
            try:
                url = f"http://127.0.0.1:{port}/_stcore/health"
                with urllib.request.urlopen(url, timeout=5) as answer:
                    if answer.read().decode().strip() == "ok":
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline, f"{_where(cmd)}: no health answer"
            time.sleep(0.2)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(60)
    return first.replace(f":{port}", ":8501")  # the README shows the default port


def test_make_demo_prints_what_the_readme_shows(demo_workspace: Workspace) -> None:
    first, text = section((ROOT / "README.md").read_text(encoding="utf-8"), "`make demo`")
    (cmd,) = commands(text, first)
    assert cmd.text == "make demo"
    got = demo_workspace.demo_output
    assert matches(cmd.output, got), f"{_where(cmd)}\nREADME:\n{cmd.output}\ngot:\n{got}"


def test_the_tour_runs_as_written(demo_workspace: Workspace) -> None:
    tour = _tour()
    assert len(tour) >= 8, [c.text for c in tour]
    for cmd in tour:
        server = cmd.text.split()[:2] == ["trajudge", "label"] or " trajudge label " in cmd.text
        got = _serve(cmd, demo_workspace) if server else _run(cmd, demo_workspace)
        if server:
            assert matches(cmd.output.split("\n")[0], got), f"{_where(cmd)}\ngot:\n{got}"
            continue
        assert matches(cmd.output, got), f"{_where(cmd)}\nREADME:\n{cmd.output}\ngot:\n{got}"
        for excerpt in cmd.excerpts:
            assert contains(excerpt, got), f"{_where(cmd)}\nnot in the output:\n{excerpt}"


def test_the_tour_is_read_as_sessions() -> None:
    """The reader of the README's sessions finds the tour's commands, their continuation
    lines and the excerpts of a long output (so a parsing slip cannot empty the tour test)."""
    tour = _tour()
    texts = [c.text for c in tour]
    assert texts[:2] == [
        "source .venv/bin/activate",
        "trajudge import examples/tau_airline/gpt-4o-airline.json",
    ]
    assert any(t.startswith("trajudge report ") and "--fail-under" in t for t in texts)
    assert all("\\" not in t for t in texts)
    assert sum(len(c.excerpts) for c in tour) >= 2
    assert all(c.output.strip() for c in tour[1:])  # activating the venv prints nothing
    assert not matches("exit 2", "exit 1") and matches("a ... c", "a b c")
    assert matches("┏━━┓\n│ x │", "┏━━━━━━┓\n│    x │")
    assert contains("b\nc", "a\nb\nc\nd") and not contains("c\nb", "a\nb\nc\nd")
    assert Path(ROOT / "examples" / "demo.sh").is_file()


#: The README's other sessions that this file does not run, and why (a new session must be
#: run here or listed with its reason: none is left out silently).
NOT_RUN = {
    "trajudge calibrate --judgments natural_judgments.csv": "its CSVs are written from "
    "../shared/data/llmbar; tests/calibration/test_real_pairwise.py checks those figures",
    "trajudge run examples/tau_airline/pairwise.yaml": "23 minutes of CPU judging; "
    "tests/pipeline/test_pairwise_local.py runs this config and checks its figures",
    "trajudge label --dataset tau_airline --rubric trajectory_preference": "needs the store "
    "of the pairwise run above",
    "trajudge labels export tau_airline --pairs": "needs the store of the pairwise run above",
    "trajudge labels import pairs.csv": "needs the file the export above writes",
    "LITELLM_LOCAL_MODEL_COST_MAP=True PYTHONPATH=src .venv/bin/python benchmarks/": "a "
    "benchmark: minutes of measurement, its figures are what it printed",
    "PYTHONPATH=src .venv/bin/python benchmarks/": "a benchmark: minutes of measurement, its "
    "figures are what it printed",
    "git archive ": "the first step of a benchmark's recipe",
    "make demo": "test_make_demo_prints_what_the_readme_shows checks it on the tour's workspace",
    "trajudge import phoenix+": "needs a running Phoenix server with the traced run; "
    "tests/backends/test_phoenix_pull.py checks these lines on a real one",
    "trajudge export airline": "needs that server and a judged dataset; "
    "tests/backends/test_phoenix_export.py checks these lines on a real one",
    "trajudge import mlflow+": "needs a running MLflow tracking server with the traced runs; "
    "tests/backends/test_mlflow_pull.py checks these lines on a real one",
    "trajudge export support": "needs that server and a judged dataset; "
    "tests/backends/test_mlflow_export.py checks these lines on a real one",
    "trajudge export chat": "needs a running OTLP/HTTP receiver and a judged dataset; "
    "tests/backends/test_otlp_export.py checks these lines on a real one",
}


def test_the_other_pasted_sessions_run_as_written(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ran = 0
    (tmp_path / "examples").symlink_to(ROOT / "examples", target_is_directory=True)
    ws = Workspace(tmp_path, "")
    for title, first, text in sections(readme):
        if title == "A 5-minute tour":
            continue
        for cmd in commands(text, first):
            if any(cmd.text.startswith(prefix) for prefix in NOT_RUN):
                continue
            got = _run(cmd, ws)
            assert matches(cmd.output, got), f"{_where(cmd)}\nREADME:\n{cmd.output}\ngot:\n{got}"
            ran += 1
    assert ran >= 1
