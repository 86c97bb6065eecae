"""The notebook tables of a report.json: any report, with or without pass^k, old or new."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest
from sklearn.metrics import cohen_kappa_score

from trajudge.report import build_report, corrected_table, judge_table, pass_k_table
from trajudge.report.render._frames import JUDGE_COLUMNS, PASS_K_COLUMNS

sys.path.insert(0, str(Path(__file__).parent))
import report_helpers as h


def test_tables_of_a_full_report(db_url: str) -> None:
    d = json.loads(
        json.dumps(build_report(h.make_store(db_url), "ds", ks=[1, 2], n_boot=40).to_dict())
    )
    judges = judge_table(d).set_index("judge")
    cons = h.consensus()
    want = cohen_kappa_score(list(cons.values()), [h.alpha_verdict(i) for i in cons])
    assert judges.loc["alpha", "kappa"] == pytest.approx(want, abs=1e-12)
    assert judges.loc["beta", "errors"] == len(h.BETA_ERRORS)
    passes = pass_k_table(d)
    outcome = passes[(passes["source"] == "environment outcome") & (passes["k"] == 2)]
    assert outcome["pass^k"].item() == pytest.approx(
        h.pass_hat({t: h.outcome(t) for t in h.all_ids()}, 2), abs=1e-12
    )
    corrected = corrected_table(d)
    assert set(corrected["judge"]) == {"alpha", "beta"} and set(corrected["k"]) == {1, 2}


def test_tables_of_reports_missing_parts() -> None:
    # an older report (bare numbers), a judge without figures, no sources at all
    old = {
        "judges": [
            {"name": "z", "kappa": {"value": 0.5, "low": 0.3, "high": 0.7}, "ac1": 0.6,
             "tpr": 0.9, "flip_rate": None, "cost_per_1k": 1.25, "n_errors": 3, "flags": []},
            {"name": "dead", "kappa": {"value": None, "low": None, "high": None}},
        ],
    }  # fmt: skip
    judges = judge_table(old).set_index("judge")
    assert judges.loc["z", "ac1"] == 0.6 and judges.loc["z", "tpr"] == 0.9
    assert math.isnan(judges.loc["z", "tnr"]) and math.isnan(judges.loc["dead", "kappa"])
    assert judges.loc["z", "flags"] == "-"
    assert pass_k_table(old).empty and list(pass_k_table(old).columns) == PASS_K_COLUMNS
    assert corrected_table(old).empty
    assert judge_table({}).empty and list(judge_table({}).columns) == JUDGE_COLUMNS
