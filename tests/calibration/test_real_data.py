"""Validation on real public data (../shared/data): published numbers and definitions.

* LLMBar: every ``correct_average`` (Acc) and ``equal`` (positional agreement) in the
  statistics.json files is recomputed from its result.json, exactly as the file prints it.
* LLMBar, Auto-J, PandaLM and JudgeBench go through ``calibrate_files``; the judge-vs-human
  kappa must equal scikit-learn's on vectors built here from the raw files, and the flip rate
  must equal the share of items whose two orders disagree, counted here from the raw files.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import sys
from pathlib import Path
from typing import Any

import krippendorff
import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from _shared import SHARED_DATA, require_shared
from trajudge.calibration import calibrate_files, percent_agreement


def _load_helpers() -> object:
    # by path, under a unique name: "datasets" alone could clash with another module
    name = "trajudge_tests_calibration_datasets"
    spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name("datasets.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


datasets: Any = _load_helpers()

pytestmark = pytest.mark.shared
LLMBAR = SHARED_DATA / "llmbar" / "Dataset"
BOOT = {"n_boot": 200, "seed": 0}


def _stat_files() -> list[Path]:
    return sorted(LLMBAR.glob("**/evaluators/*/*/statistics.json"))


def test_llmbar_has_every_evaluator_set_pair() -> None:
    require_shared(LLMBAR)
    # SOURCE.md: 4 evaluators x 8 sets (Vanilla_NoRules) + GPT-4/Vanilla on the 5 LLMBar sets
    assert len(_stat_files()) == 37


@pytest.mark.parametrize("stat_file", _stat_files(), ids=lambda p: str(p.relative_to(LLMBAR)))
def test_llmbar_statistics_reproduced_exactly(stat_file: Path) -> None:
    require_shared(LLMBAR)
    published = json.loads(stat_file.read_text())
    records = json.loads((stat_file.parent / "result.json").read_text())
    gold = np.array([str(r["label"]) for r in records], dtype=object)
    # evaluate.py compares the winner strings; an unparsed winner is None (never correct, and
    # equal to another None)
    w_false = np.array([str(r["results"][-1]["swap = False"]["winner"]) for r in records])
    w_true = np.array([str(r["results"][-1]["swap = True"]["winner"]) for r in records])
    n = len(records)
    correct_false = round(percent_agreement(w_false, gold) * n)
    correct_true = round(percent_agreement(w_true, gold) * n)
    equal = round(percent_agreement(w_false, w_true) * n)
    assert published["correct_average"] == f"{(correct_false + correct_true) / 2 / n * 100}%"
    assert published["equal"] == f"{equal} / {n} = {equal / n * 100}%"
    assert published["correct_False"] == f"{correct_false} / {n} = {correct_false / n * 100}%"


def _write(frame: pd.DataFrame, path: Path) -> Path:
    if path.suffix == ".csv":
        frame.to_csv(path, index=False)
    elif path.suffix == ".jsonl":
        frame.to_json(path, orient="records", lines=True)
    else:
        frame.to_parquet(path, index=False)
    return path


def _expected_rows(
    judgments: pd.DataFrame, labels: pd.DataFrame, judge: str, top: float | None = None
) -> pd.DataFrame:
    """One row per item with a verdict of this judge and the (single-annotator) label: the
    judge's verdict is the mean of its non-errored scores over the two orders, a pass when
    it reaches the top level (both orders say "the first-listed is better"; with one order
    errored, that order alone); the label is a pass at the top level."""
    top = labels["label"].max() if top is None else top
    rows = judgments[(judgments["judge"] == judge) & judgments["score"].notna()]
    mean = rows.groupby("item")["score"].mean().rename("mean").reset_index()
    merged = mean.merge(labels[["item", "label"]], on="item")
    return merged.assign(j=(merged["mean"] >= top).astype(int), h=(merged["label"] >= top))


def _flip_share(judgments: pd.DataFrame, judge: str, top: float) -> float:
    rows = judgments[(judgments["judge"] == judge) & judgments["score"].notna()]
    wide = rows.pivot(index="item", columns="order", values="score").dropna()
    return float(((wide["ab"] >= top) != (wide["ba"] >= top)).mean())


@pytest.mark.parametrize("set_name", datasets.LLMBAR_SETS)
def test_llmbar_through_calibrate_files(set_name: str, tmp_path: Path) -> None:
    set_dir = require_shared(LLMBAR / set_name)
    judgments, labels = datasets.llmbar_tables(set_dir)
    result = calibrate_files(
        _write(judgments, tmp_path / "j.jsonl"), _write(labels, tmp_path / "l.csv"), **BOOT
    )
    assert set(result.judges) == {
        f"{p.parent.name}/{p.name}" for p in datasets.llmbar_evaluators(set_dir)
    }
    for judge, report in result.judges.items():
        rows = _expected_rows(judgments, labels, judge)
        assert report.kappa.value == pytest.approx(
            cohen_kappa_score(rows["h"].astype(int), rows["j"]), abs=1e-12
        )
        assert report.n_errors == int(judgments.query("judge == @judge")["score"].isna().sum())
        # accuracy of the per-item verdict (both orders must pick the gold answer)
        assert report.agreement.value == pytest.approx(float((rows["h"] == rows["j"]).mean()))
        assert report.flip_rate is not None
        assert report.flip_rate.value == pytest.approx(_flip_share(judgments, judge, 1))
        assert report.flip_rate.low <= report.flip_rate.value <= report.flip_rate.high


def test_autoj_kappa_and_consistency(tmp_path: Path) -> None:
    root = require_shared(SHARED_DATA / "auto_j")
    judgments, labels = datasets.autoj_tables(root)
    # pass = "the first-listed response is better" (2 on the 0..2 scale): given, since these
    # tables carry no rubric
    result = calibrate_files(
        _write(judgments, tmp_path / "j.parquet"),
        _write(labels, tmp_path / "l.parquet"),
        threshold=2,
        **BOOT,
    )
    report = result.judges["auto-j"]
    assert report.threshold.value == 2 and report.threshold.source == "given"
    rows = _expected_rows(judgments, labels, "auto-j")
    assert report.kappa.value == pytest.approx(
        cohen_kappa_score(rows["h"].astype(int), rows["j"]), abs=1e-12
    )
    # weighted kappa: every call against the label, each item weighing one
    calls = judgments[judgments["score"].notna()].merge(labels[["item", "label"]], on="item")
    weight = 1.0 / calls.groupby("item")["item"].transform("size")
    assert report.kappa_quadratic is not None
    assert report.kappa_quadratic.value == pytest.approx(
        cohen_kappa_score(
            calls["label"], calls["score"], weights="quadratic", labels=[0, 1, 2],
            sample_weight=weight,
        ),
        abs=1e-12,
    )  # fmt: skip
    # Auto-J's "consistency" counts a change of the 3-way output; ours counts a change of
    # pass/fail, so it is at most the 3-way share
    flip = report.flip_rate
    assert flip is not None and flip.value == pytest.approx(_flip_share(judgments, "auto-j", 2))
    wide = judgments.pivot(index="item", columns="order", values="score")
    assert flip.value <= float((wide["ab"] != wide["ba"]).mean())


def test_pandalm_three_annotators(tmp_path: Path) -> None:
    root = require_shared(SHARED_DATA / "pandalm")
    judgments, labels = datasets.pandalm_tables(root)
    result = calibrate_files(
        _write(judgments, tmp_path / "j.csv"), _write(labels, tmp_path / "l.jsonl"), threshold=2,
        **BOOT,
    )  # fmt: skip
    # the gpt-3.5 file has 25 "garbage" verdicts: errors, counted, not scored
    assert result.judges["gpt-3.5-turbo"].n_errors == 25
    assert result.judges["pandalm-7b"].n_errors == 0
    wide = labels.pivot(index="item", columns="annotator", values="label")
    passes = (wide >= 2).sum(axis=1)  # 3 annotators: majority pass iff >= 2 vote pass
    human = (passes >= 2).astype(int)
    for judge in ("gpt-3.5-turbo", "pandalm-7b"):
        rows = judgments[(judgments["judge"] == judge) & judgments["score"].notna()]
        h = rows["item"].map(human)
        report = result.judges[judge]
        assert report.kappa.value == pytest.approx(
            cohen_kappa_score(h, (rows["score"] >= 2).astype(int)), abs=1e-12
        )
        assert report.probes["position"] is None  # one order only: does not apply
        assert report.flip_rate is None
    ceiling = result.human
    assert ceiling is not None and ceiling.n_annotators == 3
    binary = (wide >= 2).astype(int)
    pairs = [cohen_kappa_score(binary[a], binary[b]) for a, b in itertools.combinations(wide, 2)]
    assert ceiling.mean_kappa == pytest.approx(np.mean(pairs), abs=1e-12)
    expected_alpha = krippendorff.alpha(
        reliability_data=binary.T.to_numpy(float), level_of_measurement="nominal"
    )
    assert ceiling.alpha == pytest.approx(expected_alpha, abs=1e-12)


def test_judgebench_both_judges(tmp_path: Path) -> None:
    root = require_shared(SHARED_DATA / "judgebench")
    judgments, labels = datasets.judgebench_tables(root)
    result = calibrate_files(
        _write(judgments, tmp_path / "j.csv"), _write(labels, tmp_path / "l.csv"), threshold=2,
        **BOOT,
    )  # fmt: skip
    # SOURCE.md: the claude-3-haiku file has 13 null decisions out of 540
    assert result.judges["claude-3-haiku"].n_errors == 13
    assert result.judges["o1-mini"].n_errors == int(
        judgments.query("judge == 'o1-mini'")["score"].isna().sum()
    )
    for judge, report in result.judges.items():
        rows = _expected_rows(judgments, labels, judge)
        assert report.kappa.value == pytest.approx(
            cohen_kappa_score(rows["h"].astype(int), rows["j"]), abs=1e-12
        )
        assert report.flip_rate is not None
        assert report.flip_rate.value == pytest.approx(_flip_share(judgments, judge, 2))
        # gpt-4o answers judged by o1-mini (openai), claude-3.5 answers by claude-3-haiku
        # (anthropic): every row is own-family, so the gap has no other-family baseline
        own = report.probes["self_preference"]
        assert own is not None and "no other-family items" in own.detail
        assert own.estimate.value == pytest.approx(float((rows["j"] - rows["h"]).mean()))
