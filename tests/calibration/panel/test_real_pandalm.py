"""The PandaLM example tables are the upstream files' verdicts, and the alt-test on them is
the leave-one-annotator-out computation written here with plain loops."""

from __future__ import annotations

import csv
import runpy
import shutil
from pathlib import Path

import pandas as pd
import pytest

from _shared import SHARED_DATA, require_shared
from trajudge.calibration.panel import alt_test

EXAMPLE = Path(__file__).parents[3] / "examples" / "pandalm"


def test_the_example_tables_are_made_from_the_upstream_files(tmp_path: Path) -> None:
    data = require_shared(SHARED_DATA / "pandalm" / "data")
    shutil.copy(EXAMPLE / "make_tables.py", tmp_path / "make_tables.py")
    runpy.run_path(str(tmp_path / "make_tables.py"), run_name="tables")["main"](data, tmp_path)
    for name in ("judgments.csv", "labels.csv"):
        assert (tmp_path / name).read_bytes() == (EXAMPLE / name).read_bytes(), name
    assert "Copyright 2023 Yidong Wang, Zhuohao Yu" in (EXAMPLE / "LICENSE.pandalm").read_text()


def test_the_alt_test_on_pandalm_by_hand() -> None:
    with (EXAMPLE / "labels.csv").open(encoding="utf-8") as f:
        labels = list(csv.DictReader(f))
    with (EXAMPLE / "judgments.csv").open(encoding="utf-8") as f:
        gpt = {r["item"]: r["verdict"] for r in csv.DictReader(f) if r["judge"] == "gpt-3.5-turbo"}
    gpt = {i: v for i, v in gpt.items() if v}  # the 25 unparsed answers are no verdict
    by_item: dict[str, dict[str, str]] = {}
    for r in labels:
        by_item.setdefault(r["item"], {})[r["annotator"]] = r["label"]
    got = alt_test(judge=pd.Series(gpt), annotators=pd.DataFrame(labels))
    for trial in got.trials:
        wins_j = wins_h = n = 0
        for item, said in by_item.items():
            if item not in gpt:
                continue
            others = [v for a, v in said.items() if a != trial.annotator]
            s_h = sum(v == said[trial.annotator] for v in others) / len(others)
            s_j = sum(v == gpt[item] for v in others) / len(others)
            wins_j += s_j >= s_h
            wins_h += s_h >= s_j
            n += 1
        assert trial.n == n == 974
        assert trial.rho_judge == pytest.approx(wins_j / n)
        assert trial.rho_human == pytest.approx(wins_h / n)
    # what the README shows: GPT-3.5 cannot replace any of the three annotators
    assert got.omega == 0.0 and round(got.advantage, 2) == 0.76
