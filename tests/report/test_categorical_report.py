"""Pairwise judges in ``trajudge calibrate`` and ``trajudge report``: every figure worked out
by hand (or with scikit-learn) from the rows written here."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import typer.testing
from scipy.stats import binomtest
from sklearn.metrics import cohen_kappa_score

import trajudge.cli._commands  # noqa: F401 - registers the commands
from trajudge.cli import app
from trajudge.report import build_report, render_html, render_markdown
from trajudge.store import Store
from trajudge.trajectories import Trajectory

sys.path.insert(0, str(Path(__file__).parent))
import report_helpers as h

runner = typer.testing.CliRunner()

# one judge, verdicts of order ba AS SHOWN (A = the side shown first = the pair's B)
JUDGMENTS = """item,judge,order,sample,verdict,task_id,system_a,system_b
p1,j,ab,0,A,t1,x,y
p1,j,ba,0,B,t1,x,y
p2,j,ab,0,A,t2,x,y
p2,j,ba,0,A,t2,x,y
p3,j,ab,0,tie,t3,x,y
p3,j,ba,0,B,t3,x,y
"""
# p2's two labels disagree: no gold, left out of every figure against the labels
LABELS = """item,annotator,label
p1,h,A
p2,h,A
p3,h,b
p1,g,A
p2,g,B
p3,g,B
"""


def _pair_judgment(store: Store, a: str, b: str, judge: str, order: str, verdict: str) -> None:
    """One stored pairwise judgment of (a, b) under trajectory_preference, ``verdict`` in the
    pair's original numbering (order ba mapped back, as the store keeps it)."""
    store.add_judgment(
        "ds",
        {
            "trajectory_id": a,
            "other_id": b,
            "judge": judge,
            "rubric_id": "trajectory_preference",
            "rubric_version": "v1",
            "model": "m",
            "mode": "pairwise",
            "order": order,
            "sample": 0,
            "verdict": verdict,
        },
    )


def _calibrate(tmp_path: Path, *extra: str) -> typer.testing.Result:
    j, lab = tmp_path / "j.csv", tmp_path / "l.csv"
    j.write_text(JUDGMENTS)
    lab.write_text(LABELS)
    args = ["calibrate", "--judgments", str(j), "--labels", str(lab), "--out", str(tmp_path / "o")]
    return runner.invoke(app, [*args, "--n-boot", "50", *extra])


def test_calibrate_pairwise_by_hand(tmp_path: Path) -> None:
    result = _calibrate(tmp_path, "--ba-as-shown")
    assert result.exit_code == 0, result.output
    assert "pairwise verdicts (inferred" in result.output  # the kind is said, not guessed silently
    d = json.loads((tmp_path / "o" / "report.json").read_text())
    assert d["judges"] == []  # no pass/fail judge in these tables
    [row] = d["categorical_judges"]
    c = row["calibration"]
    # mapped back, ba is p1 A, p2 B, p3 A: p1 consistent (A), p2 and p3 flip -> tie
    assert c["accuracy"]["ab"]["count"] == 1 and c["accuracy"]["ab"]["n"] == 2  # p1 of p1, p3
    assert c["accuracy"]["ba"]["count"] == 1 and c["accuracy"]["ba"]["n"] == 2  # p1 of p1, p3
    assert c["consistency"]["count"] == 1 and c["consistency"]["n"] == 3
    assert c["flip_rate"]["value"] == pytest.approx(2 / 3)
    # decisive verdicts as shown: ab A, A (both first); ba B, A, B -> first only for p2
    assert c["first_position"]["value"] == pytest.approx(3 / 5)
    assert c["agreement"]["value"] == pytest.approx(1 / 2)
    want = cohen_kappa_score(["A", "B"], ["A", "tie"], labels=["A", "B", "tie"])
    assert c["kappa"]["aggregate"]["value"] == pytest.approx(want, abs=1e-12)
    assert c["confusion"] == [[1, 0, 0], [0, 0, 1], [0, 0, 0]]  # rows gold A, B, tie
    wins = {w["system"]: w for w in c["win_rates"]}
    assert (wins["x"]["wins"], wins["x"]["ties"], wins["x"]["losses"]) == (1, 2, 0)
    assert wins["x"]["win_rate"]["value"] == pytest.approx(2 / 3)  # (1 + 2/2) / 3
    assert wins["y"]["win_rate"]["value"] == pytest.approx(1 / 3)
    html = (tmp_path / "o" / "report.html").read_text()
    assert "Pairwise and categorical judges" in html and "Confusion: j" in html
    md = (tmp_path / "o" / "report.md").read_text()
    assert "| j | x | 1 | 2 | 0 |" in md  # the win-rate row


def test_ba_orientation_must_be_said(tmp_path: Path) -> None:
    result = _calibrate(tmp_path)
    assert result.exit_code == 2
    assert "line 3: order" in result.output and "--ba-mapped" in result.output
    assert not (tmp_path / "o").exists()


def test_mapped_tables_read_differently(tmp_path: Path) -> None:
    # the same rows read as already mapped: p2 is consistent A, p1 and p3 flip
    result = _calibrate(tmp_path, "--ba-mapped", "--format", "json")
    assert result.exit_code == 0, result.output
    c = json.loads((tmp_path / "o" / "report.json").read_text())["categorical_judges"][0]
    assert c["calibration"]["inconsistent_items"] == ["p1", "p3"]


def test_inconsistent_as_option(tmp_path: Path) -> None:
    result = _calibrate(tmp_path, "--ba-as-shown", "--inconsistent-as", "inconsistent")
    assert result.exit_code == 0, result.output
    c = json.loads((tmp_path / "o" / "report.json").read_text())["categorical_judges"][0]
    assert c["calibration"]["inconsistent_as"] == "inconsistent"
    bad = _calibrate(tmp_path, "--ba-as-shown", "--inconsistent-as", "maybe")
    assert bad.exit_code == 2 and "--inconsistent-as" in bad.output


def test_bad_scale_is_refused(tmp_path: Path) -> None:
    result = _calibrate(tmp_path, "--ba-as-shown", "--scale", "likert")
    assert result.exit_code == 2 and "likert" in result.output


def test_stored_pairwise_judge_gets_its_own_measures(db_url: str) -> None:
    store = h.make_store(db_url)
    # pair (T0-0, T0-1): ab says A, ba (mapped back, as stored) says B: a flip -> tie
    # pair (T1-0, T1-1): both orders A
    calls = [("T0-0", "T0-1", "ab", "A"), ("T0-0", "T0-1", "ba", "B")]
    calls += [("T1-0", "T1-1", "ab", "A"), ("T1-0", "T1-1", "ba", "A")]
    for t, o, order, v in calls:
        _pair_judgment(store, t, o, "pair", order, v)
    # the pair (T1-1, T1-0) labelled the other way round: read as A for (T1-0, T1-1)
    store.save_pair_label("ds", "T1-1", "T1-0", "trajectory_preference", "ann", "B")
    store.save_pair_label("ds", "T0-0", "T0-1", "trajectory_preference", "ann", "tie")
    report = build_report(store, "ds", ks=[1], n_boot=20)
    assert [j.name for j in report.judges] == ["alpha", "beta"]  # pointwise judges as before
    [row] = report.categorical
    c = row.calibration
    assert c.n_items == 2 and c.n_flipped == 1
    assert c.agreement.value == 1.0  # T0 pair: tie = tie; T1 pair: A = A
    assert c.consistency.correct == 1 and c.consistency.n == 2
    # T1 systems: the trajectory's trial is its system when no metadata.system is given
    assert {w.system for w in c.win_rates or []} == {"trial 0", "trial 1"}
    assert "Pairwise and categorical judges" in render_markdown(report)
    assert "Confusion: pair" in render_html(report, {})


def test_jury_is_a_judge_of_its_own(tmp_path: Path) -> None:
    # two pass/fail judges; the jury's verdict is their majority, an even split a fail:
    # alpha 1 1 0 0, beta 1 0 1 0 -> jury 1 0 0 0, which is exactly the labels
    j, lab = tmp_path / "j.csv", tmp_path / "l.csv"
    rows = [("alpha", [1, 1, 0, 0]), ("beta", [1, 0, 1, 0])]
    j.write_text(
        "item,judge,order,sample,verdict,task_id\n"
        + "".join(f"i{i},{n},ab,0,{v},t{i}\n" for n, vs in rows for i, v in enumerate(vs))
    )
    lab.write_text(
        "item,annotator,label\n" + "".join(f"i{i},h,{v}\n" for i, v in enumerate([1, 0, 0, 0]))
    )
    out = tmp_path / "o"
    args = ["calibrate", "--judgments", str(j), "--labels", str(lab), "--out", str(out)]
    result = runner.invoke(app, [*args, "--format", "json", "--n-boot", "20", "--jury"])
    assert result.exit_code == 0, result.output
    judges = {r["name"]: r for r in json.loads((out / "report.json").read_text())["judges"]}
    assert set(judges) == {"alpha", "beta", "jury"}
    assert judges["jury"]["kappa"]["value"] == pytest.approx(1.0)
    want = cohen_kappa_score([1, 0, 0, 0], [1, 1, 0, 0])
    assert judges["alpha"]["kappa"]["value"] == pytest.approx(want, abs=1e-12)


def test_a_report_of_pairwise_judges_only_says_what_they_did(tmp_path: Path) -> None:
    result = _calibrate(tmp_path, "--ba-as-shown", "--format", "md")
    assert result.exit_code == 0, result.output
    md = (tmp_path / "o" / "report.md").read_text()
    # the summary line: agreement 1/2 on p1, p3; flips on p2, p3 of three; firsts 3 of 5
    assert "pairwise judge j: agreement 0.50" in md
    assert "flips with the order on 67% of items" in md and "picked 60% of the time" in md
    # no empty pass/fail table, no pass^k, no corrected rates: nothing of the sort was given
    assert "## Judges and verdict sources" not in md and "Corrected pass rates" not in md


def test_a_pairwise_judge_that_always_picks_the_first_shown_side_is_flagged(db_url: str) -> None:
    store = h.make_store(db_url)
    # One pair per task of the helper's store. In order ab the judge answers A (shown first);
    # in order ba it answers the side shown first too, which mapped back (as stored) is B:
    # every decisive verdict went to the first-shown side, every pair flips.
    for task in h.OUTCOMES:
        a, b = f"{task}-0", f"{task}-1"
        for order, v in (("ab", "A"), ("ba", "B")):
            _pair_judgment(store, a, b, "first", order, v)
    report = build_report(store, "ds", ks=[1], n_boot=50)
    [row] = report.categorical
    first = row.calibration.first_position
    assert first is not None and first.value == 1.0
    # 6 tasks of 6 picked first is what a judge picking first 55% of the time does in
    # 0.55 ** 6 = 2.8% of samples (a task's two verdicts counted as one): the exact 95%
    # interval, 0.025 ** (1/6) = 0.54 to 1, reaches into the innocent band, so no flag yet
    assert first.low == pytest.approx(binomtest(6, 6).proportion_ci(method="exact").low)
    assert not [f for f in report.flags if f.judge == "first"]
    # four more tasks judged the same way: 10 of 10 (0.025 ** (1/10) = 0.69) is flagged
    more = [f"T{i}" for i in range(6, 10)]
    store.import_dataset(
        "ds",
        [
            Trajectory(id=f"{t}-{i}", task_id=t, trial=i, input=t, steps=[], outcome=True)
            for t in more
            for i in (0, 1)
        ],
    )
    for task in more:
        for order, v in (("ab", "A"), ("ba", "B")):
            _pair_judgment(store, f"{task}-0", f"{task}-1", "first", order, v)
    report = build_report(store, "ds", ks=[1], n_boot=50)
    [flag] = [f for f in report.flags if f.judge == "first"]
    assert flag.probe == "position"
    assert "100.0%" in flag.detail


def test_jury_of_two_pairwise_judges_is_reported(db_url: str) -> None:
    store = h.make_store(db_url)
    # Three pairwise judges, one pair per task, both orders agreeing. p1 and p2 say A on
    # every pair, p3 says B on T0 and T1: the jury (majority) says A everywhere.
    tasks = list(h.OUTCOMES)
    for judge in ("p1", "p2", "p3"):
        for task in tasks:
            v = "B" if judge == "p3" and task in ("T0", "T1") else "A"
            for order in ("ab", "ba"):
                _pair_judgment(store, f"{task}-0", f"{task}-1", judge, order, v)
    # labels: A on T0..T3, B on the rest
    for i, task in enumerate(tasks):
        store.save_pair_label(
            "ds", f"{task}-0", f"{task}-1", "trajectory_preference", "ann", "A" if i < 4 else "B"
        )
    report = build_report(store, "ds", ks=[1], n_boot=20, jury=True)
    rows = {r.name: r for r in report.categorical}
    assert set(rows) == {"jury", "p1", "p2", "p3"}
    n = len(tasks)
    assert rows["jury"].calibration.agreement.value == pytest.approx(4 / n)  # A right on 4
    assert rows["p3"].calibration.agreement.value == pytest.approx(2 / n)  # T2, T3
    assert rows["jury"].members == ["p1", "p2", "p3"]


def test_a_pointwise_jury_is_not_flagged_for_its_members_disagreeing(tmp_path: Path) -> None:
    # alpha and beta disagree on half of 40 items; each is stable (one call per item). The
    # jury's calls are the two members: a stability probe over them would read 50% agreement.
    j, lab = tmp_path / "j.csv", tmp_path / "l.csv"
    a = [1, 0] * 20
    b = [1, 1, 0, 0] * 10
    j.write_text(
        "item,judge,order,sample,verdict,task_id\n"
        + "".join(f"i{i},alpha,ab,0,{v},t{i}\n" for i, v in enumerate(a))
        + "".join(f"i{i},beta,ab,0,{v},t{i}\n" for i, v in enumerate(b))
    )
    lab.write_text("item,annotator,label\n" + "".join(f"i{i},h,{v}\n" for i, v in enumerate(a)))
    out = tmp_path / "o"
    args = ["calibrate", "--judgments", str(j), "--labels", str(lab), "--out", str(out)]
    result = runner.invoke(app, [*args, "--format", "json", "--n-boot", "200", "--jury"])
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    judges = {r["name"]: r for r in report["judges"]}
    assert "stability" not in judges["jury"]["flags"]
    assert not [f for f in report["flags"] if f["judge"] == "jury"]


def test_report_of_a_pairwise_rubric_on_a_store_with_pointwise_judges_too(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'mixed.db'}"
    store = h.make_store(url)  # pointwise judges alpha and beta, rubric answer_faithfulness
    for task in h.OUTCOMES:
        for order in ("ab", "ba"):
            _pair_judgment(store, f"{task}-0", f"{task}-1", "pj", order, "A")
    store.close()
    out = tmp_path / "out"
    args = ["report", "ds", "--db", url, "--rubric", "trajectory_preference", "--out", str(out)]
    result = runner.invoke(app, [*args, "--format", "json", "--n-boot", "20"])
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    assert [r["name"] for r in report["categorical_judges"]] == ["pj"]
    assert report["judges"] == []  # alpha and beta judge another rubric
    # a rubric nobody used is still refused
    bad = runner.invoke(app, ["report", "ds", "--db", url, "--rubric", "policy_compliance"])
    assert bad.exit_code == 2 and "no judgments or labels of rubric" in bad.output
