"""The demo's own config, end to end with the real embedded judge (no mocks on this path).

``make demo`` runs once per session in a scratch checkout (tests/_demo.py; the README tour
test follows it on the same workspace). Every number checked here is recomputed from the raw
τ-bench file and the stored rows: scikit-learn for kappa, math.comb for pass^k.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import yaml
from sklearn.metrics import cohen_kappa_score

from _demo import Workspace
from trajudge.pipeline import run_pipeline
from trajudge.store import Store

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "examples" / "tau_airline"


def pass_hat(counts: dict[str, list[bool]], k: int) -> float:
    return sum(math.comb(sum(v), k) / math.comb(len(v), k) for v in counts.values()) / len(counts)


# 40 real CPU inferences of ~4,000-token prompts (the demo's 20 trajectories x 2 orders): ~6 min
# on two idle cores, three times that with the machine's load at 4-6. The test waits on the
# calls' completion, never on a clock; the timeout only stops a hung run.
@pytest.mark.local_llm
@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_demo_config_with_the_real_local_judge(demo_workspace: Workspace) -> None:
    config = demo_workspace.path / "examples" / "tau_airline" / "trajudge.yaml"
    cfg = yaml.safe_load(config.read_text())
    tasks = cfg["limits"]["tasks"]
    assert "40/40 errors 0" in demo_workspace.demo_output  # 20 trajectories x 2 orders
    report = json.loads(
        (demo_workspace.path / "trajudge-report" / "tau_airline" / "report.json").read_text()
    )

    raw = json.loads((DEMO / "gpt-4o-airline.json").read_text())
    reward = {f"{r['task_id']}-{r['trial']}": abs(r["reward"] - 1) <= 1e-6 for r in raw}
    outcome = {t: [reward[f"{t}-{i}"] for i in range(4)] for t in tasks}
    for k in (1, 2, 3, 4):
        got = report["sources"]["outcome"]["pass^k"][str(k)]["value"]
        assert got == pytest.approx(pass_hat(outcome, k), abs=1e-12)

    store = Store(f"sqlite:///{demo_workspace.path / 'trajudge.db'}")
    rows = store.judgments_frame("tau_airline_demo")
    assert len(rows) == 40 and rows["error"].isna().all()
    assert sorted(set(rows["order"])) == ["ab", "ba"]
    assert rows["score"].between(1, 5).all() and rows["latency_s"].gt(0).all()
    assert rows["prompt_tokens"].gt(0).all()
    passed = rows["score"] >= 4  # the rubric's pass_threshold (its YAML)
    judge = next(j for j in report["judges"] if j["judge"] == "gemma-270m")
    labels = [int(reward[i]) for i in rows["trajectory_id"]]
    expected = cohen_kappa_score(labels, passed.astype(int))
    if math.isnan(expected):
        assert judge["kappa"]["value"] is None
    else:
        assert judge["kappa"]["value"] == pytest.approx(expected, abs=1e-12)
    # the judge's pass^k: a trajectory passes when more than half its rows pass
    by_traj = passed.groupby(rows["trajectory_id"]).mean() > 0.5
    verdicts = {t: [bool(by_traj[f"{t}-{i}"]) for i in range(4)] for t in tasks}
    for k in (1, 4):
        got = report["sources"]["judge:gemma-270m"]["pass^k"][str(k)]["value"]
        assert got == pytest.approx(pass_hat(verdicts, k), abs=1e-12)

    store.close()

    second = run_pipeline(config)  # the demo's second run: everything is stored already
    assert second.exit_code == 0 and second.judge_calls == 0 and second.resumed == 40


def _paths(value: object, at: str = "") -> set[str]:
    """Every key path of a JSON value (list elements share one path: ``judges[].kappa``)."""
    if isinstance(value, dict):
        out = {f"{at}.{k}" for k in value}
        for k, v in value.items():
            out |= _paths(v, f"{at}.{k}")
        return out
    if isinstance(value, list):
        return set().union(*(_paths(v, f"{at}[]") for v in value)) if value else set()
    return set()


@pytest.mark.local_llm
@pytest.mark.slow
def test_the_saved_demo_report_is_what_make_demo_writes(demo_workspace: Workspace) -> None:
    """``examples/tau_airline/demo_report.json`` (read by notebooks/tau_bench_demo.ipynb, shown
    in the README) is a saved ``make demo`` output: it has every key today's run writes and no
    other. Its figures are one run's: the local model's answers vary between runs (llama.cpp
    batches the slots' requests), e.g. the order-shift estimate 1.00 or 0.90."""
    fresh = json.loads(
        (demo_workspace.path / "trajudge-report" / "tau_airline" / "report.json").read_text()
    )
    saved = json.loads((DEMO / "demo_report.json").read_text())
    assert _paths(saved) == _paths(fresh), "regenerate demo_report.json from `make demo`"
    assert saved["report_format"] == fresh["report_format"]
