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

pytestmark = pytest.mark.slow


def _execute(tmp_path: Path) -> nbformat.NotebookNode:
    nb = nbformat.read(NOTEBOOK, as_version=4)
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
