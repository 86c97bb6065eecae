"""Execute the notebooks with nbclient on the venv's python3 kernel and check their outputs."""

from __future__ import annotations

import copy
import json
import os
import re
import signal
import sys
from pathlib import Path
from typing import Any

import nbformat
import pandas as pd
import pytest
from nbclient import NotebookClient
from sklearn.metrics import cohen_kappa_score

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "judge_comparison.ipynb"
DEMO_NOTEBOOK = ROOT / "notebooks" / "tau_bench_demo.ipynb"
DEMO_REPORT = ROOT / "examples" / "tau_airline" / "demo_report.json"

pytestmark = pytest.mark.slow


def _execute(
    tmp_path: Path, notebook: Path = NOTEBOOK, cwd: Path | None = None
) -> nbformat.NotebookNode:
    nb = nbformat.read(notebook, as_version=4)
    nb = copy.deepcopy(nb)
    # one extra cell, in the executed copy only: which interpreter ran the kernel
    nb.cells.append(nbformat.v4.new_code_cell("import sys; print('KERNEL', sys.executable)"))
    client = NotebookClient(
        nb,
        kernel_name="python3",
        timeout=300,
        resources={"metadata": {"path": str(cwd or tmp_path)}},
    )
    _run_client(client)
    return nb


def _run_client(client: NotebookClient) -> None:
    """Run the notebook as a user's Jupyter would, leaving this process as it was."""
    # importing streamlit (the labeling app's tests do) sets MPLBACKEND=Agg for the whole
    # process; a kernel that inherits it draws no inline figures, as a user's would
    saved = os.environ.pop("MPLBACKEND", None)
    # the kernel manager sets this process's SIGINT handler; a later test's child processes
    # would inherit what it leaves
    sigint = signal.getsignal(signal.SIGINT)
    try:
        client.execute()
    finally:
        if saved is not None:
            os.environ["MPLBACKEND"] = saved
        if sigint is not None:
            signal.signal(signal.SIGINT, sigint)


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


LLMBAR = ROOT / "examples" / "llmbar"
_CHECK = re.compile(
    r"^(\S+) +(\S+) +Acc +([\d.]+)% \(published +[\d.]+%\) +Agr (\d+)/(\d+) "
    r"\(published \d+\) +kappa (-?[\d.]+)$",
    re.MULTILINE,
)


def _published() -> dict[tuple[str, str], dict[str, Any]]:
    """LLMBar's statistics.json per (set, MODEL/STRATEGY), as copied into examples/llmbar."""
    out = {}
    for f in sorted((LLMBAR / "statistics").glob("*/*/*.json")):
        out[(f.parent.parent.name, f"{f.parent.name}/{f.stem}")] = json.loads(f.read_text())
    return out


def _sklearn_kappas() -> dict[tuple[str, str], float]:
    """Cohen's kappa (scikit-learn) of the aggregated verdict (both orders agree, else tie)
    against gold, for every evaluator file without an unparsed verdict."""
    j = pd.read_csv(LLMBAR / "judgments.csv", keep_default_na=False, na_values=[""])
    gold = pd.read_csv(LLMBAR / "labels.csv").set_index("item")["label"]
    wide = j.pivot_table(
        index=["judge", "item"], columns="order", values="verdict", aggfunc="first"
    ).reset_index()
    out = {}
    for (judge, s), g in wide.groupby(["judge", wide["item"].str.split("/").str[0]]):
        if g[["ab", "ba"]].isna().any().any():
            continue
        agg = g["ab"].where(g["ab"] == g["ba"], "tie")
        out[(s, judge)] = cohen_kappa_score(gold.loc[g["item"]], agg, labels=["A", "B", "tie"])
    return out


def _check_figures(texts: str) -> None:
    published = _published()
    found = {(m[1], m[2]): m for m in _CHECK.finditer(texts)}
    assert set(found) == set(published) and len(found) == 25
    for key, stats in published.items():
        m = found[key]
        # Acc: the published "correct_average", to the 4 decimals printed
        assert float(m[3]) == pytest.approx(float(stats["correct_average"].rstrip("%")), abs=5e-5)
        # Agr: the published "equal" count of its n
        count, n = (int(x) for x in stats["equal"].split(" = ")[0].split(" / "))
        assert (int(m[4]), int(m[5])) == (count, n), key
    kappas = _sklearn_kappas()
    assert len(kappas) >= 20  # every file but the few with unparsed winners
    for key, want in kappas.items():
        assert float(found[key][6]) == pytest.approx(want, abs=5e-5), key
    assert "25 of 25 evaluator files match LLMBar's published Acc and Agr exactly" in texts


def test_judge_comparison_compares_the_llmbar_judges(tmp_path: Path) -> None:
    # executed from its own folder, as a reader opens it
    nb = _execute(tmp_path, NOTEBOOK, cwd=NOTEBOOK.parent)
    texts = "\n".join(_texts(nb))
    assert f"KERNEL {sys.executable}" in texts  # the venv's interpreter, not another python
    assert "419 pairs in 5 sets, 5 evaluators, 4190 verdicts (17 unparsed)" in texts
    _check_figures(texts)
    # the pooled table: GPT-4 with rules first, and every evaluator listed
    pooled = next(t for t in _texts(nb) if "first position" in t and "flip rate" in t)
    assert pooled.index("GPT-4/Vanilla ") < pooled.index("ChatGPT/Vanilla_NoRules")
    assert _images(nb) == 4  # accuracy-consistency, kappa intervals, first position, strategy


def test_judge_comparison_is_committed_with_its_outputs() -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.get("outputs") for c in code), "every code cell has its saved output"
    _check_figures("\n".join(_texts(nb)))
    assert _images(nb) == 4


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
    _run_client(client)
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
