"""Published pairwise-judge tables reproduced by ``trajudge calibrate`` on plain tables.

The tables are written here from the raw upstream files (../shared/data, not copied into the
project: Auto-J and PandaLM carry no data licence) in the plain CSV a user would write, and
go through the CLI. The expected numbers come from the upstream statistics files (LLMBar) or
from the published metric definitions computed here from the raw files (Auto-J's
``pairwise_eval.py`` as described in its SOURCE.md, PandaLM's annotators with
scikit-learn and ``krippendorff``).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import krippendorff
import numpy as np
import pandas as pd
import pytest
import typer.testing
from sklearn.metrics import cohen_kappa_score

import trajudge.cli._commands  # noqa: F401 - registers the commands
from _shared import SHARED_DATA, require_shared
from trajudge.cli import app

pytestmark = pytest.mark.shared
runner = typer.testing.CliRunner()
LLMBAR = SHARED_DATA / "llmbar" / "Dataset"
LLMBAR_SETS = [
    "LLMBar/Natural",
    "LLMBar/Adversarial/Neighbor",
    "LLMBar/Adversarial/GPTInst",
    "LLMBar/Adversarial/GPTOut",
    "LLMBar/Adversarial/Manual",
    "Processed/FairEval",
    "Processed/LLMEval^2",
    "Processed/MT-Bench",
]
_WINNER = {"1": "A", "2": "B"}


def _calibrate(tmp_path: Path, judgments: pd.DataFrame, labels: pd.DataFrame, *extra: str) -> Any:
    j, lab, out = tmp_path / "j.csv", tmp_path / "l.csv", tmp_path / "out"
    judgments.to_csv(j, index=False)
    labels.to_csv(lab, index=False)
    args = ["calibrate", "--judgments", str(j), "--labels", str(lab), "--out", str(out)]
    result = runner.invoke(app, [*args, "--format", "json", "--n-boot", "100", *extra])
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    return result.output, {c["name"]: c["calibration"] for c in report["categorical_judges"]}


def _llmbar_tables(set_dir: Path) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Path]]:
    """Every evaluator of a set as one judge; a winner that is not "1" or "2" (null in the
    files) is written as an empty verdict, which the product reads as a missing verdict."""
    rows, labels, files = [], None, {}
    for result in sorted(set_dir.glob("evaluators/*/*/result.json")):
        judge = f"{result.parent.parent.name}/{result.parent.name}"
        files[judge] = result.parent
        records = json.loads(result.read_text())
        if labels is None:
            labels = pd.DataFrame(
                {
                    "item": [f"i{i}" for i in range(len(records))],
                    "annotator": "gold",
                    "label": [_WINNER[str(r["label"])] for r in records],
                }
            )
        for i, rec in enumerate(records):
            res = rec["results"][-1]
            # swap = True winners are already in the original numbering (evaluate.py)
            for order, key in (("ab", "swap = False"), ("ba", "swap = True")):
                verdict = _WINNER.get(str(res[key]["winner"]))
                rows.append(
                    {
                        "item": f"i{i}",
                        "judge": judge,
                        "order": order,
                        "sample": 0,
                        "verdict": verdict,
                    }
                )
    assert labels is not None
    return pd.DataFrame(rows), labels, files


def _count(text: str) -> int:
    return int(text.split(" / ")[0])


@pytest.mark.parametrize("set_name", LLMBAR_SETS)
def test_llmbar_statistics_through_calibrate(set_name: str, tmp_path: Path) -> None:
    set_dir = require_shared(LLMBAR / set_name)
    judgments, labels, files = _llmbar_tables(set_dir)
    _, found = _calibrate(tmp_path, judgments, labels, "--scale", "pairwise", "--ba-mapped")
    assert set(found) == set(files)
    for judge, folder in files.items():
        published = json.loads((folder / "statistics.json").read_text())
        c = found[judge]
        n = len(labels)
        assert c["accuracy"]["ab"]["count"] == _count(published["correct_False"]), judge
        assert c["accuracy"]["ba"]["count"] == _count(published["correct_True"]), judge
        assert c["accuracy"]["ab"]["n"] == n and c["consistency"]["n"] == n
        assert c["consistency"]["count"] == _count(published["equal"]), judge
        # "95.5%": the mean of the two accuracies, in percent
        assert c["accuracy_average"] * 100 == pytest.approx(
            float(published["correct_average"].rstrip("%")), abs=1e-9
        )
        n_missing = int(judgments.query("judge == @judge")["verdict"].isna().sum())
        assert sum(c["n_missing"].values()) == n_missing


def test_llmbar_has_missing_winners_somewhere() -> None:
    # the definition of a missing verdict is exercised: 101 null winners over the files
    require_shared(LLMBAR)
    nulls = 0
    for result in LLMBAR.glob("**/evaluators/*/*/result.json"):
        for rec in json.loads(result.read_text()):
            res = rec["results"][-1]
            nulls += sum(res[k]["winner"] is None for k in ("swap = False", "swap = True"))
    assert nulls == 101


def test_llmbar_natural_gpt4_vanilla_kappa(tmp_path: Path) -> None:
    set_dir = require_shared(LLMBAR / "LLMBar/Natural")
    judgments, labels, _ = _llmbar_tables(set_dir)
    judgments = judgments[judgments["judge"] == "GPT-4/Vanilla"]
    _, found = _calibrate(tmp_path, judgments, labels, "--ba-mapped")  # kind inferred
    records = json.loads((set_dir / "evaluators/GPT-4/Vanilla/result.json").read_text())
    gold = [str(r["label"]) for r in records]
    first = [str(r["results"][-1]["swap = False"]["winner"]) for r in records]
    want = cohen_kappa_score(gold, first)  # no null winner in this file
    kappa = found["GPT-4/Vanilla"]["kappa"]["ab"]
    assert kappa["value"] == pytest.approx(want, abs=1e-12)
    assert kappa["low"] <= kappa["value"] <= kappa["high"]
    # the upstream file's "kappa_False" is not this statistic: it is not to be trusted
    published = json.loads((set_dir / "evaluators/GPT-4/Vanilla/statistics.json").read_text())
    assert abs(published["kappa_False"] - want) > 0.3


_AUTOJ = {0: "A", 1: "B", 2: "tie"}  # label / output: 0 first better, 1 second, 2 tie


def test_autoj_agreement_and_consistency(tmp_path: Path) -> None:
    root = require_shared(SHARED_DATA / "auto_j")

    def read(name: str) -> list[dict[str, Any]]:
        return [json.loads(x) for x in (root / name).read_text().splitlines() if x]

    test = read("data/test/testdata_pairwise.jsonl")
    orig = [r["output"] for r in read("data/outputs/pairwise_example_output.jsonl")]
    swap = [r["output"] for r in read("data/outputs/pairwise_exchange_example_output.jsonl")]
    rows = []
    for i, (o, s) in enumerate(zip(orig, swap, strict=True)):
        rows.append(
            {"item": f"p{i}", "judge": "auto-j", "order": "ab", "sample": 0, "verdict": _AUTOJ[o]}
        )
        # the exchanged output names the side as shown: --ba-as-shown maps it back
        rows.append(
            {"item": f"p{i}", "judge": "auto-j", "order": "ba", "sample": 0, "verdict": _AUTOJ[s]}
        )
    labels = pd.DataFrame(
        {"item": [f"p{i}" for i in range(len(test))], "annotator": "human",
         "label": [_AUTOJ[r["label"]] for r in test]}
    )  # fmt: skip
    _, found = _calibrate(
        tmp_path, pd.DataFrame(rows), labels, "--ba-as-shown", "--inconsistent-as", "inconsistent"
    )
    c = found["auto-j"]
    # pairwise_eval.py (SOURCE.md): exchanged outputs mapped back by 0 <-> 1, 2 kept
    back = [{0: 1, 1: 0, 2: 2}[s] for s in swap]
    human = [r["label"] for r in test]
    n = len(test)
    agreement = sum(o == b == h for o, b, h in zip(orig, back, human, strict=True)) / n
    consistency = 1 - sum(o != b for o, b in zip(orig, back, strict=True)) / n
    # Auto-J's Agreement: right in both orders; ours: the aggregate (a flip is never right)
    assert c["agreement"]["value"] == pytest.approx(agreement, abs=1e-12)
    assert c["consistency"]["value"] == pytest.approx(consistency, abs=1e-12)
    assert c["flip_rate"]["value"] == pytest.approx(1 - consistency, abs=1e-12)
    # agreement with the human labels, ties included, as Cohen's kappa per order
    orig_l = [_AUTOJ[o] for o in orig]
    hum_l = [_AUTOJ[h] for h in human]
    want = cohen_kappa_score(hum_l, orig_l, labels=["A", "B", "tie"])
    assert c["kappa"]["ab"]["value"] == pytest.approx(want, abs=1e-12)
    assert c["accuracy"]["ab"]["count"] == sum(a == b for a, b in zip(orig_l, hum_l, strict=True))


_PANDA = {1: "A", 2: "B", 0: "tie"}  # annotators: 1 first better, 2 second, 0 tie
_PANDA_GPT = {"1": "A", "2": "B", "Tie": "tie"}


def test_pandalm_annotators_and_gpt35(tmp_path: Path) -> None:
    root = require_shared(SHARED_DATA / "pandalm")
    test = json.loads((root / "data/testset-v1.json").read_text())
    gpt = {
        r["idx"]: r["gpt_result"]
        for r in json.loads((root / "data/gpt-3.5-turbo-testset-v1.json").read_text())
    }
    rows, labels = [], []
    for rec in test:
        item = f"x{rec['idx']}"
        # an answer that is not 1, 2 or Tie is written as it is: an error the product counts
        v = _PANDA_GPT.get(gpt[rec["idx"]])
        row = {"item": item, "judge": "gpt-3.5-turbo", "order": "ab", "sample": 0, "verdict": v}
        rows.append({**row, "error": None if v else f"unparsed answer {gpt[rec['idx']]!r}"})
        for a in ("annotator1", "annotator2", "annotator3"):
            labels.append({"item": item, "annotator": a, "label": _PANDA[rec[a]]})
    lab = pd.DataFrame(labels)
    output, found = _calibrate(tmp_path, pd.DataFrame(rows), lab, "--scale", "pairwise")
    c = found["gpt-3.5-turbo"]
    assert c["n_errors"] == 25
    wide = lab.pivot(index="item", columns="annotator", values="label")
    # the annotators among themselves: from the report.json's ceiling
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    [ceiling] = report["ceilings"]
    got = {(p["a"], p["b"]): p["kappa"] for p in ceiling["pairs"]}
    for a, b in itertools.combinations(wide.columns, 2):
        assert got[(a, b)] == pytest.approx(cohen_kappa_score(wide[a], wide[b]), abs=1e-12)
    codes = {"A": 0, "B": 1, "tie": 2}
    alpha = krippendorff.alpha(
        reliability_data=wide.T.map(codes.get).to_numpy(float), level_of_measurement="nominal"
    )
    assert ceiling["alpha"] == pytest.approx(alpha, abs=1e-12)
    # the judge against the annotators' majority (items where all three differ: no majority)
    majority = {}
    for item, r in wide.iterrows():
        top = r.value_counts()
        if top.iloc[0] >= 2:
            majority[item] = top.index[0]
    judged = {r["item"]: r["verdict"] for r in rows if r["verdict"]}
    both = [i for i in majority if i in judged]
    assert c["n_items"] == len(both)
    want = np.mean([judged[i] == majority[i] for i in both])
    assert c["agreement"]["value"] == pytest.approx(want, abs=1e-12)
    assert "25" in output  # the errors are said in the terminal
