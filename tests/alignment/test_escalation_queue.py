"""Trust or escalate in the product: the items an aligned judge escalates come first in
``trajudge label --strategy escalated``.

The project (align_project.py) is built so the answer is known from the kinds alone: the judge
scores BAD runs 1 and GOOD and TRICKY runs 5, so the calibrated probability is 0 at score 1 (a
confident, always right fail) and the share of GOOD among GOOD + TRICKY at score 5 (about
2/3: not confident). The 25 BAD runs on dev are enough to certify agreement >= 0.85 at risk
0.05 (all right: exact lower bound 0.05 ** (1/25) = 0.887), so the cut keeps the BAD runs and
escalates every GOOD and TRICKY run outside the labelled dev set. (The order among escalated
items, least confident first, is build_queue's score order: test_app_queue.py.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
import typer.testing
from align_project import DATASET, build, kind
from fake_llm import FakeLLM

import trajudge.cli._commands  # noqa: F401  (registers the commands)
from trajudge.alignment import AlignOptions, align_judge
from trajudge.cli import app
from trajudge.evalset import split_of
from trajudge.labeling_app import build_queue, escalation_scores
from trajudge.store import Store

pytestmark = pytest.mark.timeout(600)


def test_escalated_items_are_queued_first(tmp_path: Path, fake_llm: FakeLLM) -> None:
    url = f"sqlite:///{tmp_path / 's.db'}"
    store = Store(url)
    # people have not labelled a third of the holdout tasks yet: those are what the queue is for
    tasks = [f"t{i:02d}" for i in range(100)]
    unlabelled = set([t for t in tasks if split_of(t, 0.5) == "holdout"][::3])
    trajs = build(store, fake_llm, n_tasks=100, unlabelled=unlabelled)
    opts = AlignOptions(judge="fake", methods=["calibrate"], dev_share=0.5, target=0.85)
    record = align_judge(store, DATASET, opts, n_boot=200).record
    cut = record["trust"]["threshold"]
    assert cut["certified"], record["trust"]  # the BAD runs (confidence 1, all right)
    # expected from the kinds: every non-BAD run outside the labelled dev set
    outside = [t for t in trajs if split_of(t.task_id, 0.5) == "holdout"]
    expected = {t.id for t in outside if kind(t.input or "") != "BAD"}
    assert {e["item"] for e in record["escalated"]} == expected
    # coverage on the labelled holdout: the BAD share, and every kept item agrees
    labelled = [t for t in outside if t.task_id not in unlabelled]
    n_bad = sum(kind(t.input or "") == "BAD" for t in labelled)
    assert record["trust"]["n_items"] == len(labelled)
    assert record["trust"]["n_kept"] == n_bad
    assert record["trust"]["agreement"]["value"] == 1.0

    # the pass rate four ways on the holdout (judge: score 5 passes, so every non-BAD run;
    # truth: GOOD), the PPI++ point estimate by its formula with the lambda it reports:
    # mean over labelled of (Y - lam f) + lam * mean over unlabelled of f
    rate = {r["estimator"]: r for r in record["estimates"]["judge"]["rate"]}
    f = {t.id: float(kind(t.input or "") != "BAD") for t in outside}
    y = {t.id: float(kind(t.input or "") == "GOOD") for t in labelled}
    unl = [i for i in f if i not in y]
    assert rate["judge"]["value"] == pytest.approx(sum(f.values()) / len(f))
    assert rate["labels_only"]["value"] == pytest.approx(sum(y.values()) / len(y))
    lam = rate["ppi"]["lam"]
    assert 0 <= lam <= 1
    ppi = sum(y[i] - lam * f[i] for i in y) / len(y) + lam * sum(f[i] for i in unl) / len(unl)
    assert rate["ppi"]["value"] == pytest.approx(ppi)
    for r in rate.values():  # every estimator's interval carries its width
        if r["low"] is not None:
            assert r["width"] == pytest.approx(r["high"] - r["low"])

    scores = escalation_scores(store, DATASET)
    assert set(scores) == expected and all(1.0 < s <= 1.5 for s in scores.values())
    queue = build_queue(store.trajectory_keys(DATASET), "ann", strategy="escalated",
                        overlap=1.0, disagreement=scores)  # fmt: skip
    assert len(queue.ids) == len(trajs)
    assert set(queue.ids[: len(expected)]) == expected  # escalated first, then the rest
    store.close()


def test_label_escalated_without_an_aligned_judge_is_one_clear_error(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    url = f"sqlite:///{tmp_path / 's.db'}"
    store = Store(url)
    build(store, fake_llm, n_tasks=4)
    store.close()
    args = ["label", "--dataset", DATASET, "--strategy", "escalated", "--db", url]
    result = typer.testing.CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert "no aligned judge escalated any item (run trajudge align first)" in result.output
    assert len([line for line in result.output.splitlines() if line.strip()]) == 1


def test_label_escalated_with_a_pairwise_rubric_is_refused(
    tmp_path: Path, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    # an aligned judge escalated trajectories of the dataset (the case that used to open a pair
    # queue ordered by something else); pairs are never escalated, so the app must not start
    url = f"sqlite:///{tmp_path / 's.db'}"
    store = Store(url)
    tasks = [f"t{i:02d}" for i in range(40)]
    build(store, fake_llm, n_tasks=40, unlabelled=set(tasks[::3]))
    opts = AlignOptions(judge="fake", methods=["calibrate"], dev_share=0.5, target=0.85)
    align_judge(store, DATASET, opts, n_boot=50)
    assert escalation_scores(store, DATASET)  # escalated items exist
    store.close()
    started: list[object] = []
    monkeypatch.setattr("trajudge.labeling_app.serve", lambda *a, **k: started.append(a) or 0)
    for extra in (["--dataset", DATASET], []):
        args = ["label", *extra, "--rubric", "trajectory_preference", "--strategy", "escalated"]
        result = typer.testing.CliRunner().invoke(app, [*args, "--db", url])
        assert result.exit_code == 2, result.output
        assert result.output.startswith(
            "error: --strategy escalated: rubric 'trajectory_preference' is pairwise"
        )
        assert len([line for line in result.output.splitlines() if line.strip()]) == 1
    assert started == []
    # the same rubric with another strategy still starts the app
    args = ["label", "--rubric", "trajectory_preference", "--strategy", "disagreement"]
    assert typer.testing.CliRunner().invoke(app, [*args, "--db", url]).exit_code == 0
    assert len(started) == 1
