"""Execute the notebooks with nbclient on the venv's python3 kernel and check their outputs."""

from __future__ import annotations

import copy
import json
import os
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "judge_comparison.ipynb"
DEMO_NOTEBOOK = ROOT / "notebooks" / "tau_bench_demo.ipynb"
DEMO_REPORT = ROOT / "examples" / "tau_airline" / "demo_report.json"

pytestmark = pytest.mark.slow


def _execute(tmp_path: Path, notebook: Path = NOTEBOOK) -> nbformat.NotebookNode:
    nb = nbformat.read(notebook, as_version=4)
    nb = copy.deepcopy(nb)
    # one extra cell, in the executed copy only: which interpreter ran the kernel
    nb.cells.append(nbformat.v4.new_code_cell("import sys; print('KERNEL', sys.executable)"))
    client = NotebookClient(
        nb, kernel_name="python3", timeout=300, resources={"metadata": {"path": str(tmp_path)}}
    )
    # importing streamlit (the labeling app's tests do) sets MPLBACKEND=Agg for the whole
    # process; a kernel that inherits it draws no inline figures, as a user's would
    saved = os.environ.pop("MPLBACKEND", None)
    try:
        client.execute()
    finally:
        if saved is not None:
            os.environ["MPLBACKEND"] = saved
    return nb


def _texts(nb: nbformat.NotebookNode, mime: str = "text/plain") -> list[str]:
    out = []
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            if o.get("output_type") == "stream":
                out.append(o["text"])
            elif mime in o.get("data", {}):
                out.append(o["data"][mime])
    return out


def _images(nb: nbformat.NotebookNode) -> int:
    return sum("image/png" in o.get("data", {}) for c in nb.cells for o in c.get("outputs", []))


def test_notebook_runs_standalone_on_the_venv_kernel(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("TRAJUDGE_REPORT_JSON", raising=False)
    nb = _execute(tmp_path)
    texts = "\n".join(_texts(nb))
    assert f"KERNEL {sys.executable}" in texts  # the venv's interpreter, not another python
    assert "synthetic demo dataset" in texts
    # the judge table: one row per demo judge, with the kappa and flip-rate columns
    table = next(t for t in _texts(nb) if "kappa_low" in t)
    assert "careful" in table and "hasty" in table and "flip_rate" in table
    # the pass^k pivot names every source
    pivot = next(t for t in _texts(nb) if "environment outcome" in t and "rule gates" in t)
    assert "judge careful" in pivot and "human labels" in pivot
    assert _images(nb) == 2  # the kappa plot and the pass^k plot


def test_notebook_reads_a_report_json(tmp_path: Path, monkeypatch) -> None:
    report = {
        "dataset": "from-env",
        "ks": [1, 2],
        "labels_phrase": "reference labels (env_reward)",
        "summary": ["judge zeta agrees"],
        "ceilings": [],
        "judges": [
            {
                "name": "zeta",
                "kappa": {"value": 0.5, "low": 0.3, "high": 0.7},
                "ac1": 0.6,
                "flip_rate": None,
                "cost_per_1k": 1.25,
                "n_errors": 3,
                "n_items": 40,
                "flags": ["position"],
            }
        ],
        "sources": {
            "outcome": {
                "title": "environment outcome",
                "pass^k": {
                    "1": {"value": 0.8, "low": 0.7, "high": 0.9},
                    "2": {"value": 0.6, "low": 0.5, "high": 0.7},
                },
            }
        },
    }
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    monkeypatch.setenv("TRAJUDGE_REPORT_JSON", str(path))
    nb = _execute(tmp_path)
    texts = "\n".join(_texts(nb))
    assert f"report on from-env from {path}" in texts
    assert "labels: reference labels (env_reward)" in texts
    table = next(t for t in _texts(nb) if "kappa_low" in t)
    assert "zeta" in table and "1.25" in table and "position" in table
    assert _images(nb) == 2


def _report_without_task_ids(tmp_path: Path) -> Path:
    """A real report from `trajudge calibrate` tables without task ids (so without pass^k),
    with a second judge whose every call failed."""
    sys.path.insert(0, str(ROOT / "tests" / "report"))
    import report_helpers as h

    from trajudge.report import calibrate_report

    rows = ["item,judge,order,sample,verdict,error"]
    for t in h.all_ids():
        rows.append(f"{t},alpha,ab,0,{h.alpha_verdict(t)},")
        rows.append(f"{t},dead,ab,0,,401 Unauthorized")
    (tmp_path / "j.csv").write_text("\n".join(rows) + "\n")
    labels = ["item,annotator,label"] + [f"{i},{a},{v}" for i, a, v in h.human_labels()]
    (tmp_path / "l.csv").write_text("\n".join(labels) + "\n")
    report = calibrate_report(tmp_path / "j.csv", tmp_path / "l.csv", ks=[1, 2], n_boot=50)
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report.to_dict(), allow_nan=False))
    return path


def test_notebook_runs_on_a_report_without_pass_k(tmp_path: Path, monkeypatch) -> None:
    path = _report_without_task_ids(tmp_path)
    assert json.loads(path.read_text())["sources"] == {}  # no task ids: no pass^k at all
    monkeypatch.setenv("TRAJUDGE_REPORT_JSON", str(path))
    nb = _execute(tmp_path)
    texts = "\n".join(_texts(nb))
    assert "this report has no pass^k (no task ids were given)" in texts
    table = next(t for t in _texts(nb) if "kappa_low" in t)
    assert "alpha" in table and "dead" in table  # the dead judge is listed, with n/a figures
    assert _images(nb) == 1  # the kappa plot; no pass^k plot


def test_demo_notebook_runs_on_the_saved_demo_report(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("TRAJUDGE_REPORT_JSON", raising=False)
    report = json.loads(DEMO_REPORT.read_text())
    assert report["dataset"] == "tau_airline_demo"
    assert report["labels_phrase"] == "reference labels (env_reward)"
    # executed from its own folder, as a reader opens it
    nb = nbformat.read(DEMO_NOTEBOOK, as_version=4)
    client = NotebookClient(
        nb, kernel_name="python3", timeout=300,
        resources={"metadata": {"path": str(DEMO_NOTEBOOK.parent)}},
    )  # fmt: skip
    saved = os.environ.pop("MPLBACKEND", None)
    try:
        client.execute()
    finally:
        if saved is not None:
            os.environ["MPLBACKEND"] = saved
    texts = "\n".join(_texts(nb))
    assert "dataset tau_airline_demo; labels: reference labels (env_reward)" in texts
    for judge in report["judges"]:
        assert f"judge {judge['name']}: threshold" in texts
    assert "environment outcome" in texts
    assert _images(nb) == 1  # the pass^k plot


def test_demo_notebook_is_committed_with_its_outputs() -> None:
    nb = nbformat.read(DEMO_NOTEBOOK, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.get("outputs") for c in code), "every code cell has its saved output"
    texts = "\n".join(_texts(nb))
    report = json.loads(DEMO_REPORT.read_text())
    assert "dataset tau_airline_demo" in texts
    assert report["summary"][0] in texts  # the saved outputs are of the saved report
    assert _images(nb) == 1
