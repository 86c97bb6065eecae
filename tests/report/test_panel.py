"""The report's panel: agreement by slice, the Dawid-Skene jury and the alt-test, checked
against independent computations on a store where one judge is bad on one task family."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from trajudge.evalset import split_of
from trajudge.report import build_report, write_report
from trajudge.store import Store
from trajudge.trajectories import Step, Trajectory

RUBRIC = "answer_faithfulness"  # shipped, binary
FAMILIES = ("refund", "billing", "login")


def _world() -> tuple[
    dict[str, int], dict[str, dict[str, int]], dict[str, dict[str, int]], dict[str, str]
]:
    """truth, judge verdicts, annotator labels and the task of each trajectory."""
    rng = np.random.default_rng(11)
    truth, task_of = {}, {}
    judges: dict[str, dict[str, int]] = {"alpha": {}, "beta": {}}
    humans: dict[str, dict[str, int]] = {"a1": {}, "a2": {}, "a3": {}}
    for fam in FAMILIES:
        for t in range(16):
            task = f"{fam}-{t:02d}"
            for trial in range(2):
                tid = f"{task}-t{trial}"
                y = int(rng.random() < 0.5)
                truth[tid], task_of[tid] = y, task
                # alpha is right 95% of the time, but only 55% on refunds; beta 80% everywhere
                right_a = 0.55 if fam == "refund" else 0.95
                judges["alpha"][tid] = y if rng.random() < right_a else 1 - y
                judges["beta"][tid] = y if rng.random() < 0.8 else 1 - y
                for h in humans:
                    humans[h][tid] = y if rng.random() < 0.9 else 1 - y
    return truth, judges, humans, task_of


def _store(url: str) -> Store:
    truth, judges, humans, task_of = _world()
    store = Store(url)
    trajs = [
        Trajectory(
            id=tid,
            task_id=task_of[tid],
            trial=int(tid[-1]),
            input="help",
            intent=task_of[tid].split("-")[0],
            steps=[Step(tool="lookup", args={}, output="ok")],
            outcome=bool(truth[tid]),
        )
        for tid in truth
    ]
    store.import_dataset("ds", trajs)
    for name, verdicts in judges.items():
        for tid, v in verdicts.items():
            store.add_judgment(
                "ds",
                {
                    "trajectory_id": tid, "judge": name, "rubric_id": RUBRIC,
                    "rubric_version": "v1", "model": f"model-{name}", "mode": "pointwise",
                    "order": "ab", "sample": 0, "score": float(v),
                    "verdict": "pass" if v else "fail", "error": None,
                },
            )  # fmt: skip
    for ann, labels in humans.items():
        for tid, v in labels.items():
            store.save_label("ds", tid, RUBRIC, ann, float(v))
    return store


def _consensus(humans: dict[str, dict[str, int]]) -> dict[str, int]:
    items = next(iter(humans.values()))
    return {i: int(sum(h[i] for h in humans.values()) >= 2) for i in items}


def test_the_panel_matches_independent_computations(db_url: str, tmp_path: Path) -> None:
    store = _store(db_url)
    report = build_report(store, "ds", ks=[1], n_boot=400)
    _, judges, humans, task_of = _world()
    cons = _consensus(humans)
    panel = report.to_dict()["panel"][RUBRIC]

    # slices: "intent" and "task family" both split refund / billing / login
    rows = {(r["judge"], r["dimension"], r["value"]): r for r in panel["slices"]}
    refund = [i for i in cons if i.startswith("refund")]
    other = [i for i in cons if not i.startswith("refund")]
    got = rows[("alpha", "task family", "refund")]
    assert got["n"] == len(refund)
    assert got["kappa"]["value"] == pytest.approx(
        cohen_kappa_score([cons[i] for i in refund], [judges["alpha"][i] for i in refund])
    )
    assert got["kappa_rest"]["value"] == pytest.approx(
        cohen_kappa_score([cons[i] for i in other], [judges["alpha"][i] for i in other])
    )
    assert got["flagged"] and rows[("alpha", "intent", "refund")]["flagged"]
    assert not any(r["flagged"] for r in panel["slices"] if r["judge"] == "beta")
    assert panel["slice_method"] == "holm"

    # the jury: dev and holdout by the eval-set split of each task
    jury = panel["jury"]
    holdout = [i for i in cons if split_of(task_of[i]) == "holdout"]
    assert jury["n_holdout"] == len(holdout) and jury["n_dev"] == len(cons) - len(holdout)
    for name in ("alpha", "beta"):
        want = cohen_kappa_score([cons[i] for i in holdout], [judges[name][i] for i in holdout])
        assert jury["kappa"][name]["value"] == pytest.approx(want)
    assert set(jury["dawid_skene"]["raters"]) == {
        "alpha",
        "beta",
        "human:a1",
        "human:a2",
        "human:a3",
    }

    # the alt-test: rho of the judge against a1 by hand
    alt = panel["alt_test"]["beta"]
    wins = []
    for i in cons:
        others = [humans["a2"][i], humans["a3"][i]]
        s_h = sum(o == humans["a1"][i] for o in others) / 2
        s_j = sum(o == judges["beta"][i] for o in others) / 2
        wins.append(s_j >= s_h)
    a1 = next(t for t in alt["annotators"] if t["annotator"] == "a1")
    assert a1["n"] == len(cons) and a1["rho_judge"] == pytest.approx(np.mean(wins))

    write_report(report, tmp_path / "r", ["md", "json"])
    md = (tmp_path / "r" / "report.md").read_text()
    for title in ("## Agreement by slice", "## Jury: whom to trust (Dawid-Skene)",
                  "## Alternative annotator test"):  # fmt: skip
        assert title in md
    assert "judge alpha is unreliable on task family = refund" in md
    assert any(
        line.startswith("judge alpha is unreliable on task family = refund: κ = ")
        for line in report.summary
    )
    assert (
        "judge beta can replace an annotator (alternative annotator test: winning rate 1.00 "
        "over 3 annotators, epsilon 0.20)." in report.summary
    )
    store.close()
