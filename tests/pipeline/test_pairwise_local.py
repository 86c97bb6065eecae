"""A pairwise judge on the τ-bench example, end to end with the real embedded model.

`examples/tau_airline/pairwise.yaml` as shipped (its own store and cache moved to tmp): two
trials of the same task side by side, both orders, for task 0's trials 0-0 and 0-1 (the pair
whose prompt once overflowed the local server's 8,192-token slot: 8,657 tokens) and task 13's
trials 0 and 1. Every figure of the report checked here is recomputed from the stored rows.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from trajudge.judges.calls._local import DEFAULT_N_CTX, DEFAULT_N_PARALLEL
from trajudge.pipeline import run_pipeline
from trajudge.store import Store

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "tau_airline"
PAIRS = {("0-0", "0-1"), ("13-0", "13-1")}


# 4 CPU inferences of 7,283- and 6,563-token prompts (the server's counts): 23.5 min measured
# with the machine's load at 14-16 (two at a time, 436-912 s each). The test waits on the
# calls, never on a clock; the timeout only stops a hung run.
@pytest.mark.local_llm
@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_pairwise_judge_on_tau_bench_with_the_local_model(tmp_path: Path) -> None:
    pytest.importorskip("xllamacpp")
    cfg = yaml.safe_load((EXAMPLE / "pairwise.yaml").read_text())
    cfg["db"] = f"sqlite:///{tmp_path / 'pairwise.db'}"
    cfg["cache"] = str(tmp_path / "cache.db")  # a fresh cache: every call reaches the model
    cfg["dataset"]["path"] = str(EXAMPLE / cfg["dataset"]["path"])
    cfg["report"].update(out=str(tmp_path / "out"), n_boot=200)
    config = tmp_path / "pairwise.yaml"
    config.write_text(yaml.safe_dump(cfg))

    summary = run_pipeline(config)
    assert summary.exit_code == 0
    assert summary.errors == 0 and summary.judge_calls == 4  # 2 pairs x 2 orders

    rows = Store(cfg["db"]).judgments_frame(cfg["dataset"]["name"])
    assert len(rows) == 4 and rows["error"].isna().all()
    assert set(zip(rows["trajectory_id"], rows["other_id"], strict=True)) == PAIRS
    assert sorted(rows["order"]) == ["ab", "ab", "ba", "ba"]
    assert set(rows["verdict"]) <= {"A", "B", "tie"}
    # the server's own count: the long pair was elided to fit its slot, with the verdict's room
    long = rows[rows["trajectory_id"] == "0-0"]
    slot = DEFAULT_N_CTX // DEFAULT_N_PARALLEL
    assert (long["prompt_tokens"] > 5000).all()
    assert (long["prompt_tokens"] + cfg["judges"][0]["max_tokens"] <= slot).all()

    report = json.loads((tmp_path / "out" / "report.json").read_text())
    [row] = [r for r in report["categorical_judges"] if r["judge"] == "gemma-270m-pair"]
    assert row["kind"] == "pairwise" and row["n_errors"] == 0 and row["n_judgments"] == 4
    # stored verdicts are in the original numbering: a pair is consistent when they agree
    by_pair = {
        pair: dict(zip(g["order"], g["verdict"], strict=True))
        for pair, g in rows.groupby(["trajectory_id", "other_id"])
    }
    flips = sum(v["ab"] != v["ba"] for v in by_pair.values())
    assert row["consistency"]["count"] == 2 - flips and row["consistency"]["n"] == 2
    assert row["flip_rate"]["value"] == pytest.approx(flips / 2)
    # win rates: each pair is trial 0 (A) against trial 1 (B); a flip counts as a tie
    points = {"trial 0": 0.0, "trial 1": 0.0}
    for v in by_pair.values():
        verdict = v["ab"] if v["ab"] == v["ba"] else "tie"
        points["trial 0"] += {"A": 1.0, "tie": 0.5, "B": 0.0}[verdict]
        points["trial 1"] += {"A": 0.0, "tie": 0.5, "B": 1.0}[verdict]
    wins = {w["system"]: w for w in row["calibration"]["win_rates"]}
    assert set(wins) == {"trial 0", "trial 1"}
    for system, total in points.items():
        assert wins[system]["n"] == 2
        assert wins[system]["win_rate"]["value"] == pytest.approx(total / 2)
