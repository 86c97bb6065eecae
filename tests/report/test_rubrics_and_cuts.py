"""Reports on stores with several rubrics, ordinal scales, both orders and a dead judge.

Expected numbers are worked out here by hand or with scikit-learn from the rows written to
the store, never read back from trajudge.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest
import typer.testing
from sklearn.metrics import cohen_kappa_score, confusion_matrix

import trajudge.cli._commands  # noqa: F401 - registers the commands
from trajudge.cli import app
from trajudge.core import InputError
from trajudge.report import build_report, calibrate_report, render_markdown
from trajudge.store import Store
from trajudge.trajectories import Step, Trajectory

sys.path.insert(0, str(Path(__file__).parent))
import report_helpers as h

ORDINAL = "trajectory_reasonableness"  # shipped, 1..5, pass_threshold 4 (its YAML)
BOOT = {"n_boot": 60, "seed": 0}
runner = typer.testing.CliRunner()


def _judgment(t: str, judge: str, rubric: str, order: str, score: float | None, **kw) -> dict:
    return {
        "trajectory_id": t,
        "judge": judge,
        "rubric_id": rubric,
        "rubric_version": "v1",
        "model": kw.pop("model", "m"),
        "mode": "pointwise",
        "order": order,
        "sample": 0,
        "score": score,
        "verdict": None if score is None else ("pass" if score >= 4 else "fail"),
        **kw,
    }


# --- issue 10: one aggregate per item, the ordinal mean against the threshold -----------

# per trajectory: (score in order ab, score in order ba, human label 1..5)
SWAPPED = {
    "T0-0": (5, 3, 5), "T0-1": (3, 3, 2), "T0-2": (4, 5, 4),
    "T1-0": (1, 5, 2), "T1-1": (5, 4, 4), "T1-2": (2, 2, 1),
    "T2-0": (5, 3, 2), "T2-1": (4, 4, 5), "T2-2": (3, 5, 5),
}  # fmt: skip


def _swapped_store(url: str) -> Store:
    store = Store(url)
    trajs = [
        Trajectory(id=t, task_id=t[:2], trial=int(t[-1]), input="x",
                   steps=[Step(tool="search", args={}, output="ok")], outcome=True)
        for t in SWAPPED
    ]  # fmt: skip
    store.import_dataset("ds", trajs)
    for t, (ab, ba, label) in SWAPPED.items():
        store.add_judgment("ds", _judgment(t, "j", ORDINAL, "ab", ab))
        store.add_judgment("ds", _judgment(t, "j", ORDINAL, "ba", ba))
        store.save_label("ds", t, ORDINAL, "h", float(label))
    return store


def test_a_pair_scored_5_and_3_is_a_pass_in_every_figure(db_url: str) -> None:
    report = build_report(_swapped_store(db_url), "ds", ks=[1, 2], **BOOT)
    (row,) = report.judges
    ids = list(SWAPPED)
    # by hand: mean of the two orders >= 4 (T0-0: (5 + 3) / 2 = 4, a pass)
    judge = [int((ab + ba) / 2 >= 4) for ab, ba, _ in SWAPPED.values()]
    human = [int(label >= 4) for _, _, label in SWAPPED.values()]
    assert judge == [1, 0, 1, 0, 1, 0, 1, 1, 1]
    tn, fp, fn, tp = confusion_matrix(human, judge, labels=[0, 1]).ravel()
    cal = row.calibration
    assert cal.kappa.value == pytest.approx(cohen_kappa_score(human, judge), abs=1e-12)
    assert (cal.tpr.value, cal.tnr.value) == (tp / (tp + fn), tn / (tn + fp))
    assert cal.confusion == [[tn, fp], [fn, tp]]
    assert row.corrected_rate is not None
    assert row.corrected_rate.raw.value == pytest.approx(sum(judge) / len(judge))
    assert row.source is not None
    per_task = {task: [v for t, v in zip(ids, judge, strict=True) if t[:2] == task]
                for task in ("T0", "T1", "T2")}  # fmt: skip
    want = np.mean([sum(v) / len(v) for v in per_task.values()])
    assert row.source.pass_hat[1].value == pytest.approx(want)
    # the notes say where the cut came from: the rubric, not "(given)"
    text = render_markdown(report)
    assert f"judge j: mean score >= 4.00 is a pass (the pass threshold of rubric {ORDINAL})" in text
    assert "given" not in text


# --- item 8: labels under two rubrics, matched to each judge's rubric --------------------


def test_labels_under_two_rubrics_are_matched_by_rubric(db_url: str) -> None:
    store = h.make_store(db_url)  # alpha and beta judge answer_faithfulness (binary)
    # the same annotators label every item again under policy_compliance (1..5, passes at 3)
    for item, annotator, value in h.human_labels():
        store.save_label("ds", item, "policy_compliance", annotator, 1.0 if value else 5.0)
    report = build_report(store, "ds", ks=[1, 2], **BOOT)
    cons = h.consensus()
    want = cohen_kappa_score(list(cons.values()), [h.alpha_verdict(i) for i in cons])
    alpha = next(j for j in report.judges if j.name == "alpha")
    assert alpha.calibration.kappa.value == pytest.approx(want, abs=1e-12)  # its own rubric's
    d = report.to_dict()
    assert set(d["sources"]) >= {"human:answer_faithfulness", "human:policy_compliance"}
    # policy_compliance labels are cut at its threshold 3: the reversed labels pass^1 by hand
    reversed_pass = {i: 1 - v for i, v in cons.items()}
    gated = {i: 0 if i in h.GATE_FAILED else v for i, v in reversed_pass.items()}
    got = d["sources"]["human:policy_compliance"]["pass^k"]["1"]["value"]
    assert got == pytest.approx(h.pass_hat(gated, 1), abs=1e-12)
    assert d["label_thresholds"]["policy_compliance"] == {
        "value": 3.0,
        "source": "the pass threshold of rubric policy_compliance",
    }
    # --rubric picks one rubric's judges and labels
    only = build_report(store, "ds", ks=[1], rubric="policy_compliance", **BOOT)
    assert only.judges == [] and [s.key for s in only.sources][-1] == "human"
    with pytest.raises(InputError, match="no judgments or labels of rubric 'nope'"):
        build_report(store, "ds", ks=[1], rubric="nope", **BOOT)


def _tables(tmp_path: Path, *, rubric_column: bool) -> tuple[Path, Path]:
    j = ["item,judge,order,sample,verdict,task_id"]
    j += [f"{t},alpha,ab,0,{h.alpha_verdict(t)},{t[:2]}" for t in h.all_ids()]
    lab = ["item,annotator,label,rubric_id" if rubric_column else "item,annotator,label"]
    for item, annotator, value in h.human_labels():
        extra = ",answer_faithfulness" if rubric_column else ""
        lab.append(f"{item},{annotator},{value}{extra}")
        if rubric_column:
            lab.append(f"{item},{annotator},{5 - 4 * value},policy_compliance")
    (tmp_path / "j.csv").write_text("\n".join(j) + "\n")
    (tmp_path / "l.csv").write_text("\n".join(lab) + "\n")
    return tmp_path / "j.csv", tmp_path / "l.csv"


def test_calibrate_asks_for_rubric_when_ambiguous(tmp_path: Path) -> None:
    j, lab = _tables(tmp_path, rubric_column=True)
    out = tmp_path / "out"
    result = runner.invoke(
        app, ["calibrate", "--judgments", str(j), "--labels", str(lab), "--out", str(out)]
    )
    assert result.exit_code == 2
    assert "2 rubrics (answer_faithfulness, policy_compliance)" in result.output
    assert "--rubric" in result.output and "Traceback" not in result.output
    result = runner.invoke(
        app,
        ["calibrate", "--judgments", str(j), "--labels", str(lab), "--out", str(out),
         "--rubric", "answer_faithfulness", "--n-boot", "30", "--k", "1"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    d = json.loads((out / "report.json").read_text())
    cons = h.consensus()
    want = cohen_kappa_score(list(cons.values()), [h.alpha_verdict(i) for i in cons])
    assert d["judges"][0]["kappa"]["value"] == pytest.approx(want, abs=1e-12)


# --- item 13: cuts from the rubric, never from other judges ------------------------------

MY_RUBRIC = """\
id: my_scale
description: How good is the trajectory?
mode: pointwise
scale:
  kind: ordinal
  pass_threshold: 4
  levels:
    - {value: 1, label: bad, anchor: nothing works}
    - {value: 2, label: poor, anchor: mostly wrong}
    - {value: 3, label: fair, anchor: partly right}
    - {value: 4, label: good, anchor: done with detours}
    - {value: 5, label: ideal, anchor: done cleanly}
"""


def _ordinal_store(url: str, *, with_b: bool) -> Store:
    store = h.make_store(url, judge_names=("x", "y"), rules=False)
    # judge A on the user's own rubric (1..5, passes at 4): label = outcome-driven level
    rng = np.random.default_rng(3)
    for t in h.all_ids():
        level = 5 if h.outcome(t) else 2
        label = int(np.clip(level + rng.integers(-1, 2), 1, 5))
        score = int(np.clip(level + rng.integers(-2, 2), 1, 5))
        store.add_judgment("ds", _judgment(t, "A", "my_scale", "ab", float(score)))
        store.save_label("ds", t, "my_scale", "h", float(label))
        if with_b:  # a verdict-only judge of another, binary rubric: scores 0/1
            store.add_judgment(
                "ds", _judgment(t, "B", "answer_faithfulness", "ab", float(h.outcome(t)))
            )
    return store


def test_another_judge_never_moves_the_cut(tmp_path: Path) -> None:
    folder = tmp_path / "rubrics"
    folder.mkdir()
    (folder / "my_scale.yaml").write_text(MY_RUBRIC)
    kappas = []
    for with_b in (False, True):
        store = _ordinal_store(f"sqlite:///{tmp_path / f'{with_b}.db'}", with_b=with_b)
        report = build_report(store, "ds", ks=[1], rubric_dirs=[folder], **BOOT)
        a = next(j for j in report.judges if j.name == "A")
        assert a.calibration.threshold.value == 4 and a.calibration.threshold.source == "rubric"
        assert report.label_thresholds["my_scale"]["value"] == 4
        kappas.append(a.calibration.kappa.value)
    # by hand from the store's rows: labels and scores both cut at 4
    frame = store.judgments_frame("ds")
    a_rows = frame[frame["judge"] == "A"].set_index("trajectory_id")["score"]
    labels = store.labels_frame("ds")
    mine = labels[labels["rubric_id"] == "my_scale"].set_index("trajectory_id")["value"]
    items = sorted(mine.index)
    want = cohen_kappa_score(
        [int(mine[i] >= 4) for i in items], [int(a_rows[i] >= 4) for i in items]
    )
    assert kappas[0] == kappas[1] == pytest.approx(want, abs=1e-12)
    # without the rubric's folder nobody states the cut: a clear error, not a guess
    with pytest.raises(InputError, match="need a pass threshold"):
        build_report(store, "ds", ks=[1], **BOOT)
    given = build_report(store, "ds", ks=[1], threshold=4, **BOOT)
    assert given.label_thresholds["my_scale"]["source"] == "given (--threshold)"


# --- item 14: the corrected rate is the table's TPR/TNR applied to the raw rate ----------


def _recomputed(rate) -> float:
    g = rate.n_gated / rate.n
    p = rate.raw.value / (1 - g)
    return (1 - g) * min(1.0, max(0.0, (p + rate.tnr - 1) / (rate.tpr + rate.tnr - 1)))


def test_table_rates_reproduce_the_corrected_rate(db_url: str) -> None:
    store = _swapped_store(db_url)
    # a second judge, lenient, in both orders; its ba call errors on one trajectory
    for t, (ab, ba, _) in SWAPPED.items():
        store.add_judgment("ds", _judgment(t, "lenient", ORDINAL, "ab", float(max(ab, 4))))
        err = t == "T2-2"
        store.add_judgment(
            "ds",
            _judgment(t, "lenient", ORDINAL, "ba", None if err else float(ba),
                      error="timeout" if err else None),
        )  # fmt: skip
    store.save_rule_results(
        "ds",
        [{"trajectory_id": t, "spec_sha256": "x", "gates_passed": t != "T1-1", "score": None,
          "data": {}} for t in SWAPPED],
    )  # fmt: skip
    report = build_report(store, "ds", ks=[1, 2], **BOOT)
    d = report.to_dict()
    for row in d["judges"]:
        rate = next(j for j in report.judges if j.name == row["name"]).corrected_rate
        assert rate is not None and rate.n_gated == 1
        # the table's TPR and TNR are the ones the correction used
        assert (rate.tpr, rate.tnr) == (row["tpr"]["value"], row["tnr"]["value"])
        assert rate.corrected.value == pytest.approx(_recomputed(rate), abs=1e-12)
    # and the table's TPR by hand for the lenient judge: verdict = mean over its orders
    lenient = next(r for r in d["judges"] if r["name"] == "lenient")
    verdict = {
        t: (max(ab, 4) + (ba if t != "T2-2" else max(ab, 4))) / 2 >= 4
        for t, (ab, ba, _) in SWAPPED.items()
    }
    human = {t: label >= 4 for t, (_, _, label) in SWAPPED.items()}
    tp = sum(verdict[t] and human[t] for t in SWAPPED)
    assert lenient["tpr"]["value"] == pytest.approx(tp / sum(human.values()))


# --- item 7: a judge whose every call failed -------------------------------------------


def test_a_dead_judge_is_reported_with_its_errors(db_url: str, tmp_path: Path) -> None:
    store = h.make_store(db_url)
    for t in h.all_ids():
        store.add_judgment(
            "ds",
            _judgment(t, "dead", h.RUBRIC, "ab", None, error="401 Unauthorized"),
        )
    report = build_report(store, "ds", ks=[1, 2], **BOOT)
    dead = next(j for j in report.judges if j.name == "dead")
    assert dead.calibration.n_errors == len(h.all_ids()) and dead.calibration.n_items == 0
    d = next(j for j in report.to_dict()["judges"] if j["name"] == "dead")
    assert d["kappa"]["value"] is None and d["tpr"]["value"] is None
    assert d["reliability"]["pass^k"]["1"]["value"] is None  # not "every gated one failed"
    assert d["corrected_rate"]["corrected"]["value"] is None
    line = next(s for s in report.summary if s.startswith("judge dead"))
    assert "undefined" in line and f"{len(h.all_ids())} calls failed" in line
    json.dumps(report.to_dict(), allow_nan=False)
    result = runner.invoke(
        app, ["report", "ds", "--db", db_url, "--out", str(tmp_path / "r"), "--n-boot", "20"]
    )
    assert result.exit_code == 0, result.output
    assert "judge dead" in result.output and "24 / 24" in result.output


def test_calibrate_report_without_task_ids_has_no_pass_hat(tmp_path: Path) -> None:
    j = tmp_path / "j.csv"
    j.write_text("item,judge,order,sample,verdict\n" + "".join(
        f"{t},alpha,ab,0,{h.alpha_verdict(t)}\n" for t in h.all_ids()))  # fmt: skip
    lab = tmp_path / "l.csv"
    lab.write_text("item,annotator,label\n" + "".join(
        f"{i},{a},{v}\n" for i, a, v in h.human_labels()))  # fmt: skip
    report = calibrate_report(j, lab, ks=[1, 2], **BOOT)
    assert report.judges[0].source is None and report.sources == []
    assert not math.isnan(report.judges[0].calibration.kappa.value)
