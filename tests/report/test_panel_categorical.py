"""The report's Dawid-Skene jury for nominal and pairwise judges (each category a class),
checked against scikit-learn's kappa on the holdout tasks, from files written here."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import typer.testing
from sklearn.metrics import cohen_kappa_score

import trajudge.cli._commands  # noqa: F401 - registers the commands
from trajudge.cli import app
from trajudge.evalset import split_of

runner = typer.testing.CliRunner()


def _files(tmp_path: Path, classes: list[str], judges: dict[str, float], seed: int):
    """Judges right with their own chance (else another class at random), three annotators
    right 90% of the time; 120 tasks of 2 items. Returns the files and the tables."""
    rng = np.random.default_rng(seed)
    items = [f"t{t:03d}-{i}" for t in range(120) for i in range(2)]
    truth = {i: classes[rng.integers(len(classes))] for i in items}

    def say(item: str, p_right: float) -> str:
        if rng.random() < p_right:
            return truth[item]
        return str(rng.choice([c for c in classes if c != truth[item]]))

    verdicts = {j: {i: say(i, p) for i in items} for j, p in judges.items()}
    labels = {a: {i: say(i, 0.9) for i in items} for a in ("h1", "h2", "h3")}
    j, lab = tmp_path / "j.csv", tmp_path / "l.csv"
    j.write_text(
        "item,judge,order,sample,verdict,task_id\n"
        + "".join(
            f"{i},{name},ab,0,{v},{i.split('-')[0]}\n" for name, vs in verdicts.items()
            for i, v in vs.items()
        )
    )  # fmt: skip
    lab.write_text(
        "item,annotator,label\n"
        + "".join(f"{i},{a},{v}\n" for a, vs in labels.items() for i, v in vs.items())
    )
    return j, lab, items, verdicts, labels


def _gold(labels: dict[str, dict[str, str]], item: str) -> str | None:
    said = [labels[a][item] for a in labels]
    top = [c for c in set(said) if said.count(c) >= 2]
    return top[0] if top else None  # three different labels: no gold


@pytest.mark.parametrize(
    ("scale", "classes"),
    [("nominal", ["billing", "refund", "shipping"]), ("pairwise", ["A", "B", "tie"])],
)
def test_the_jury_of_categorical_judges(tmp_path: Path, scale: str, classes: list[str]) -> None:
    judges = {"good": 0.85, "fair": 0.7, "poor": 0.5}
    j, lab, items, verdicts, labels = _files(tmp_path, classes, judges, seed=3)
    out = tmp_path / "o"
    args = ["calibrate", "--judgments", str(j), "--labels", str(lab), "--out", str(out)]
    extra = ["--scale", scale, "--n-boot", "50", "--format", "json,md"]
    if scale == "pairwise":
        extra.append("--ba-mapped")
    result = runner.invoke(app, [*args, *extra])
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    (panel,) = report["panel"].values()
    jury = panel["jury"]
    assert jury is not None, panel["notes"]
    assert jury["dawid_skene"]["classes"] == classes
    holdout = [i for i in items if split_of(i.split("-")[0]) == "holdout"]
    test = [i for i in holdout if _gold(labels, i) is not None]
    assert jury["n_holdout"] == len(test)
    truth = [_gold(labels, i) for i in test]
    for name in judges:
        want = cohen_kappa_score(truth, [verdicts[name][i] for i in test])
        assert jury["kappa"][name]["value"] == pytest.approx(want)
    assert "mean" not in jury["kappa"]
    assert jury["best_single_judge"] == "good"
    # the jury's accuracy per rater orders them as their true chances of being right
    acc = {r: v["accuracy"] for r, v in jury["dawid_skene"]["raters"].items()}
    assert acc["good"] > acc["fair"] > acc["poor"]
    text = (out / "report.md").read_text()
    assert "Jury: whom to trust (Dawid-Skene)" in text
    assert f"classes: {', '.join(classes)}" in text
