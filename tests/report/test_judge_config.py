"""The report says which judge configuration produced each figure and never mixes two."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from sklearn.metrics import cohen_kappa_score

from trajudge.report import build_report, render_markdown

sys.path.insert(0, str(Path(__file__).parent))
import report_helpers as h

NEW = "a" * 64
NEW_CONFIG = {"model": "openai/gpt-4o-mini", "api_base": "https://gateway.example/v1"}
# the new configuration of judge alpha judged tasks T2..T4 only, and always agrees with the
# outcome (the old alpha was wrong on T3-0 and T4-0, and on T1-3 outside these tasks)
NEW_ITEMS = [t for t in h.all_ids() if t[:2] in ("T2", "T3", "T4")]


def test_the_newest_configuration_is_reported_alone_and_named(db_url: str) -> None:
    store = h.make_store(db_url)  # alpha and beta judged before configurations were stored
    for t in NEW_ITEMS:
        store.add_judgment(
            "ds",
            {
                "trajectory_id": t, "judge": "alpha", "rubric_id": h.RUBRIC,
                "rubric_version": "v1", "model": "openai/gpt-4o-mini", "mode": "pointwise",
                "order": "ab", "sample": 0, "score": float(h.outcome(t)),
                "config_sha256": NEW, "judge_config": json.dumps(NEW_CONFIG),
            },
        )  # fmt: skip
    report = build_report(store, "ds", ks=[1], n_boot=30, seed=0)
    alpha = next(j for j in report.judges if j.name == "alpha")
    beta = next(j for j in report.judges if j.name == "beta")
    assert alpha.config == {"sha256": NEW, **NEW_CONFIG}
    assert beta.config == {"sha256": None, "model": "gpt-4o-mini", "api_base": None}
    # only the new configuration's judgments: 12 rows, none of the 24 older ones
    assert alpha.calibration.n_rows == len(NEW_ITEMS) == 12
    assert alpha.models == ["openai/gpt-4o-mini"]
    # kappa against the consensus on the labelled items of T2..T4, recomputed with sklearn
    truth = {i: v for i, v in h.consensus().items() if i in NEW_ITEMS}
    assert set(truth.values()) == {0, 1}
    expected = cohen_kappa_score(list(truth.values()), [h.outcome(i) for i in truth])
    assert alpha.calibration.kappa.value == pytest.approx(expected, abs=1e-12)
    assert any(
        "judge 'alpha'" in n and "2 configurations" in n and "aaaaaaaaaaaa" in n
        and "leaves out 24 judgments of unrecorded" in n
        for n in report.notes
    )  # fmt: skip
    md = render_markdown(report)
    assert "Judge configurations" in md
    assert "https://gateway.example/v1" in md and "aaaaaaaaaaaa" in md and "unrecorded" in md
    row = next(j for j in report.to_dict()["judges"] if j["name"] == "alpha")
    assert row["config"]["api_base"] == "https://gateway.example/v1"
