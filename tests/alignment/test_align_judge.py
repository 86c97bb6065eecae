"""``align_judge`` on a store: fitted on dev, measured on holdout, saved as a version.

The project (align_project.py) knows every trajectory's kind, so the expected figures are
recomputed here from the kinds and the task split (scikit-learn for kappa), not read from
the code under test.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from align_project import DATASET, LABEL, RUBRIC, build, kind, spec
from fake_llm import FakeLLM
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from trajudge.alignment import AlignOptions, align_judge, select_examples
from trajudge.calibration import Calibrator, item_means
from trajudge.core import InputError
from trajudge.evalset import split_of
from trajudge.judges import load_rubric_file
from trajudge.report import build_report, render_json, render_markdown, write_demo_dataset
from trajudge.store import Store

BOOT = 200
IDS = re.compile(r"t\d\d-\d")


def _store(tmp_path: Path) -> Store:
    return Store(f"sqlite:///{tmp_path / 's.db'}")


def _side(tid: str, share: float = 0.5) -> str:
    return split_of(tid.split("-")[0], share)


def test_threshold_cannot_fix_what_the_scores_do_not_separate(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    store = _store(tmp_path)
    trajs = build(store, fake_llm)
    opts = AlignOptions(judge="fake", methods=["threshold", "calibrate"], dev_share=0.5)
    run = align_judge(store, DATASET, opts, spec=spec(fake_llm), n_boot=BOOT)
    hold = [t for t in trajs if _side(t.id) == "holdout"]
    y = [int(LABEL[kind(t.input or "")] >= 4) for t in hold]
    before = [int(kind(t.input or "") != "BAD") for t in hold]  # GOOD and TRICKY score 5
    v = run.record["methods"]["threshold"]["verdicts"]
    assert v["n_items"] == len(hold) == run.record["split"]["n_holdout_items"]
    assert v["kappa"]["before"]["value"] == pytest.approx(cohen_kappa_score(y, before))
    # TRICKY and GOOD both score 5: no cut separates them, the best dev cut is 5
    assert run.record["methods"]["threshold"]["params"]["value"] == 5.0
    assert v["kappa"]["difference"]["value"] == 0.0
    assert v["kappa"]["verdict"] == "no measurable gain"
    # calibrate: P(pass | 5) on dev is the share of GOOD among GOOD + TRICKY there
    dev = [kind(t.input or "") for t in trajs if _side(t.id) == "dev"]
    p5 = dev.count("GOOD") / (dev.count("GOOD") + dev.count("TRICKY"))
    cal = Calibrator.from_dict(run.record["methods"]["calibrate"]["params"])
    assert cal.predict_proba([1.0, 5.0]).tolist() == pytest.approx([0.0, p5])
    # the aligned judge's verdict is p >= 0.5, as a cut on the mean score
    assert run.record["rule"]["method"] == "calibrate"
    assert run.record["rule"]["threshold"] == pytest.approx(1 + 4 * 0.5 / p5)
    assert run.version == 1
    again = align_judge(store, DATASET, opts, spec=spec(fake_llm), n_boot=BOOT)
    assert again.version == 1  # the same alignment is not saved twice
    assert [r["version"] for r in store.aligned_judges()] == [1]


def test_fewshot_examples_come_from_dev_and_the_holdout_is_rescored(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    store = _store(tmp_path)
    trajs = build(store, fake_llm, notes=True)
    fake_llm.reset()
    fake_llm.decide = __import__("align_project").fake_judge
    opts = AlignOptions(judge="fake", methods=["threshold", "fewshot"], use="fewshot",
                        dev_share=0.5, max_examples=2, rubric_out=tmp_path / "rubrics")  # fmt: skip
    run = align_judge(store, DATASET, opts, spec=spec(fake_llm), n_boot=BOOT)
    dev_ids = {t.id for t in trajs if _side(t.id) == "dev"}
    hold = [t for t in trajs if _side(t.id) == "holdout"]
    assert dev_ids and hold
    # one new call per holdout trajectory (pointwise rubric), and no other
    assert len(fake_llm.requests) == len(hold)
    for body in fake_llm.requests:
        user = body["messages"][-1]["content"]
        examples = re.findall(r"<example>(.*?)</example>", user, re.S)
        assert len(examples) == 2
        for ex in examples:
            assert set(IDS.findall(ex)) <= dev_ids  # no holdout item is ever an example
            assert "[TRICKY-RUN]" in ex and "Annotator's note: looks fine but" in ex
        shown = re.search(r'<trajectory label="candidate">(.*?)</trajectory>', user, re.S)
        assert shown is not None and set(IDS.findall(shown.group(1))) <= {t.id for t in hold}
    # the new rubric: a file with its own version, the examples scored as labelled (TRICKY: 2)
    path = Path(run.record["rubric_path"])
    rubric = load_rubric_file(path)
    assert path.parent == tmp_path / "rubrics" and path.name == f"{RUBRIC}.{rubric.version}.yaml"
    assert (
        rubric.version
        == run.record["rubric_version"]
        != load_rubric_file(
            Path(__file__).parents[2] / "src/trajudge/rubrics" / f"{RUBRIC}.yaml"
        ).version
    )
    assert [e.score for e in rubric.examples] == [LABEL["TRICKY"]] * 2
    # its calls are a new configuration, stored under the aligned judge's name
    rows = store.judgments_frame(DATASET)
    base_cfg = set(rows.loc[rows["judge"] == "fake", "config_sha256"])
    mine = rows[rows["judge"] == "fake-aligned"]
    assert len(mine) == len(hold) and set(mine["config_sha256"]) == {run.record["config_sha256"]}
    assert run.record["config_sha256"] not in base_cfg
    # the fake judge learnt from its TRICKY examples: every holdout verdict now agrees
    y = [int(LABEL[kind(t.input or "")] >= 4) for t in hold]
    after = mine.set_index("trajectory_id").loc[[t.id for t in hold], "score"].ge(4).astype(int)
    v = run.record["methods"]["fewshot"]["verdicts"]
    assert v["kappa"]["after"]["value"] == pytest.approx(cohen_kappa_score(y, after.tolist()))
    assert v["kappa"]["after"]["value"] == 1.0 and v["kappa"]["verdict"] == "gain"
    assert v["kappa"]["difference"]["low"] > 0
    # a second run changes nothing: every call resumed, the same version
    n = len(fake_llm.requests)
    again = align_judge(store, DATASET, opts, spec=spec(fake_llm), n_boot=BOOT)
    assert len(fake_llm.requests) == n and again.version == run.version == 1
    # the report: the aligned judge (holdout only) beside the judge, and the Alignment section
    report = build_report(store, DATASET, n_boot=BOOT)
    rows_by = {j.name: j for j in report.judges}
    assert rows_by["fake-aligned"].calibration.n_items == len(hold)
    assert rows_by["fake-aligned"].calibration.kappa.value == 1.0
    text = render_markdown(report)
    assert "## Alignment: fake-aligned" in text and "| fewshot | κ |" in text
    data = json.loads(render_json(report))
    assert [a["name"] for a in data["alignment"]] == ["fake-aligned"]
    assert "rubric" not in data["alignment"][0]  # the examples' text stays in the store


def test_no_holdout_label_reaches_a_fit(tmp_path: Path, fake_llm: FakeLLM) -> None:
    store = _store(tmp_path)
    trajs = build(store, fake_llm)
    opts = dict(judge="fake", methods=["threshold", "calibrate", "fewshot", "stack"],
                dev_share=0.5, max_examples=2, rubric_out=tmp_path / "r")  # fmt: skip

    def fitted(r: dict[str, object]) -> dict[str, object]:
        methods = r["methods"]
        assert isinstance(methods, dict)
        return {
            "rule": r["rule"],
            "threshold": methods["threshold"]["params"],
            "calibrate": methods["calibrate"]["params"],
            "stack": methods["stack"]["params"],
            "examples": methods["fewshot"]["params"]["examples"],
            "rubric": r["rubric_version"],
            "trust": (r["trust"] or {})["threshold"],  # type: ignore[index]
        }

    first = align_judge(store, DATASET, AlignOptions(**opts, name="a1"), spec=spec(fake_llm),
                        n_boot=BOOT).record  # fmt: skip
    for t in trajs:  # every holdout label turned to its opposite
        if _side(t.id) == "holdout":
            lab = LABEL[kind(t.input or "")]
            store.save_label(DATASET, t.id, RUBRIC, "ann", 1.0 if lab >= 4 else 5.0)
    second = align_judge(store, DATASET, AlignOptions(**opts, name="a2"), spec=spec(fake_llm),
                         n_boot=BOOT).record  # fmt: skip
    assert fitted(second) == fitted(first)
    k1 = first["methods"]["threshold"]["verdicts"]["kappa"]["before"]["value"]
    k2 = second["methods"]["threshold"]["verdicts"]["kappa"]["before"]["value"]
    assert k2 < k1 - 1.0  # the change reached the holdout figures
    # ... and a change on dev moves the fits: the test above could fail
    dev = [t for t in trajs if _side(t.id) == "dev" and kind(t.input or "") == "TRICKY"]
    for t in dev:
        store.save_label(DATASET, t.id, RUBRIC, "ann", 5.0)
    opts["methods"] = ["threshold", "calibrate"]  # no dev disagreement is left for fewshot
    third = align_judge(store, DATASET, AlignOptions(**opts, name="a3"), n_boot=BOOT).record
    assert third["methods"]["calibrate"]["params"] != fitted(first)["calibrate"]


def test_select_examples_reads_labelled_dev_rows_only() -> None:
    items = pd.DataFrame(
        {
            "item": ["d1", "d2", "d3", "d4", "h1", "h2", "u1"],
            "split": ["dev"] * 4 + ["holdout"] * 2 + ["dev"],
            "label": [0.0, 1.0, 0.0, 1.0, 0.0, 1.0, np.nan],
            "verdict": [1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0],
            "vote_share": [1.0, 0.0, 0.5, 1.0, 1.0, 0.0, 1.0],
        }
    )
    # dev disagreements: d1, d3 (false passes; d1 surer) and d2 (a false fail); h1, h2 and
    # the unlabelled u1 are never candidates. Kinds alternate, the larger kind first.
    assert select_examples(items, max_examples=5)["item"].tolist() == ["d1", "d2", "d3"]
    assert select_examples(items, max_examples=2)["item"].tolist() == ["d1", "d2"]
    agree = items.assign(verdict=items["label"])
    assert select_examples(agree, max_examples=3).empty


def test_report_applies_the_calibrated_rule_on_the_holdout_only(tmp_path: Path) -> None:
    store = _store(tmp_path)
    write_demo_dataset(store, "demo", n_tasks=40, trials=4, seed=3)
    opts = AlignOptions(judge="hasty", methods=["calibrate"], dev_share=0.5)
    record = align_judge(store, "demo", opts, n_boot=BOOT).record
    cal = Calibrator.from_dict(record["rule"]["calibrator"])
    # recompute the aligned judge's holdout confusion from the raw rows
    rows = store.judgments_frame("demo")
    rows = rows[rows["judge"] == "hasty"].rename(columns={"trajectory_id": "item"})
    means = item_means(rows, ordinal=True)
    labels = store.labels_frame("demo")
    task = {t.id: t.task_id for t in store.trajectories("demo")}
    votes = labels.assign(p=labels["value"] >= 4).groupby("trajectory_id")["p"].agg(["sum", "size"])
    votes = votes[votes["sum"] * 2 != votes["size"]]  # a tie is no consensus
    truth = (votes["sum"] * 2 > votes["size"]).astype(int)
    hold = [i for i in truth.index if split_of(task[i], 0.5) == "holdout" and i in means.index]
    p = cal.predict_proba(means.loc[hold].to_numpy())
    expected = confusion_matrix(truth.loc[hold], (p >= 0.5).astype(int), labels=[0, 1])
    report = build_report(store, "demo", n_boot=BOOT)
    row = next(j for j in report.judges if j.name == "hasty-aligned")
    assert row.calibration.confusion == expected.tolist()
    assert row.calibration.n_items == len(hold)
    assert row.calibration.threshold.value == record["rule"]["threshold"]
    assert any("measured on its holdout tasks only" in n for n in report.notes)


def test_what_the_data_cannot_support_is_one_clear_error(tmp_path: Path, fake_llm: FakeLLM) -> None:
    store = _store(tmp_path)
    build(store, fake_llm, n_tasks=6)
    with pytest.raises(InputError, match="no judgments of judge 'nobody'"):
        align_judge(store, DATASET, AlignOptions(judge="nobody"))
    with pytest.raises(InputError, match="fewshot re-scores the holdout: give the judge's spec"):
        align_judge(store, DATASET, AlignOptions(judge="fake", methods=["fewshot"]))
    with pytest.raises(InputError, match=r"no labelled dev items|one class"):
        align_judge(store, DATASET, AlignOptions(judge="fake", dev_share=0.01))
