"""``trajudge align`` end to end: the four methods, stack labelled optional, clean errors.

The project (align_project.py) knows every trajectory's kind, so what the command must print
is worked out from the kinds: GOOD and TRICKY both score 5, so no threshold separates them
(a difference of 0 on the holdout, with an interval around it: "no measurable gain"), while
the few-shot rubric, whose examples are dev TRICKY runs labelled fail, turns every holdout
TRICKY run into a fail (a gain).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import typer.testing
import yaml
from align_project import DATASET, LABEL, RUBRIC, build, fake_judge, kind
from fake_llm import FakeLLM
from scipy.stats import binomtest
from sklearn.metrics import cohen_kappa_score

import trajudge.cli._commands  # noqa: F401  (registers the commands)
from trajudge.cli import app
from trajudge.evalset import split_of
from trajudge.judges import Judgment
from trajudge.store import Store

pytestmark = pytest.mark.timeout(600)
runner = typer.testing.CliRunner()


def _config(tmp_path: Path, fake: FakeLLM) -> Path:
    path = tmp_path / "trajudge.yaml"
    judge = {"name": "fake", "model": "openai/fake", "api_base": fake.api_base,
             "rubric": RUBRIC, "max_retries": 0}  # fmt: skip
    path.write_text(yaml.safe_dump({"judges": [judge], "cache": str(tmp_path / "cache.db")}))
    return path


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_align_runs_the_four_methods_and_labels_stack_optional(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    url = f"sqlite:///{tmp_path / 's.db'}"
    store = Store(url)
    trajs = build(store, fake_llm)
    store.close()
    fake_llm.reset()
    fake_llm.decide = fake_judge  # reset() forgets it
    args = ["align", DATASET, "--judge", "fake", "--config", str(_config(tmp_path, fake_llm)),
            "--db", url, "--method", "threshold,calibrate,fewshot,stack", "--dev-share", "0.5",
            "--max-examples", "2", "--rubric-out", str(tmp_path / "rubrics"),
            "--n-boot", "200"]  # fmt: skip
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    out = _flat(result.output)
    hold = [t for t in trajs if split_of(t.task_id, 0.5) == "holdout"]
    assert len(fake_llm.requests) == len(hold)  # fewshot re-scored the holdout, nothing else
    # the table: method, metric, before, after, difference, verdict, items (holdout only)
    y = [int(LABEL[kind(t.input or "")] >= 4) for t in hold]
    before = [int(kind(t.input or "") != "BAD") for t in hold]
    k0 = f"{cohen_kappa_score(y, before):.2f}"
    agreement = re.search(r"threshold │ agreement │ ([\d.]+ \[[\d.]+, [\d.]+\]) │", out)
    assert agreement is not None, out
    agreement = agreement.group(1)
    n = len(hold)
    # the same verdicts before and after: a difference of 0, give or take what a share of
    # changed verdicts the holdout tasks could hide moves (the exact bound for 0 of them)
    q = binomtest(0, len({t.task_id for t in hold})).proportion_ci(method="exact").high
    assert re.search(rf"threshold │ κ │ {k0} \[[^]]+\] │ {k0} \[[^]]+\] │ 0\.00 \[-[\d.]+, "
                     rf"[\d.]+\] │ no measurable gain │ {n} │", out), out  # fmt: skip
    assert f"threshold │ agreement │ {agreement} │ {agreement} │ 0.00 [-{q:.2f}, {q:.2f}]" in out
    assert re.search(rf"fewshot │ κ │ {k0} \[[^]]+\] │ 1\.00 \[[^]]+\] │ [\d.]+ \[[\d.]+, "
                     rf"[\d.]+\] │ gain │ {n} │", out), out  # fmt: skip
    assert re.search(r"stack \(optional\) │ κ │", out)
    assert "Stack inputs (optional): fake-aligned" in out
    assert "stack is optional (off by default) and never gives the aligned judge's verdicts" in out
    assert "Calibration: fake-aligned" in out and "Trust or escalate: fake-aligned" in out
    assert "Pass rates with judges and labels: fake-aligned" in out
    assert "saved aligned judge fake-aligned version 1" in out
    # the record: stack fitted but never the verdict; calibrate is (the default use)
    store = Store(url)
    record = store.aligned_judge("fake-aligned")
    assert record is not None
    assert set(record["methods"]) == {"threshold", "calibrate", "fewshot", "stack"}
    assert record["methods"]["stack"]["optional"] is True
    assert not any(record["methods"][m]["optional"] for m in ("threshold", "calibrate"))
    assert record["rule"]["method"] == "calibrate"
    store.close()


def test_align_errors_are_one_line_and_exit_2(tmp_path: Path, fake_llm: FakeLLM) -> None:
    url = f"sqlite:///{tmp_path / 's.db'}"
    store = Store(url)
    build(store, fake_llm, n_tasks=8)
    store.close()
    cases = [
        (["--method", "threshold,magic"], "--method: unknown method magic"),
        (["--method", "stack"], "stack alone gives no aligned judge: add threshold or calibrate"),
        (["--judge", "nobody"], "no judgments of judge 'nobody'"),
        (["--dev-share", "1.5"], "dev_share"),
    ]
    for extra, message in cases:
        judge = [] if "--judge" in extra else ["--judge", "fake"]
        result = runner.invoke(app, ["align", DATASET, *judge, "--db", url, *extra])
        assert result.exit_code == 2, (extra, result.output)
        lines = [line for line in result.output.splitlines() if line.strip()]
        assert len(lines) == 1 and message in _flat(result.output), (extra, result.output)
    # a pairwise judge: no pass or fail to fit against the labels
    store = Store(url)
    pair = store.trajectory_heads(DATASET)[:2]
    first, second = (row[0] for row in pair)
    pref = Judgment(first, second, "pref", "trajectory_preference", "v1", "openai/fake",
                    "pairwise", "ab", 0, verdict="A")  # fmt: skip
    store.add_judgment(DATASET, pref.to_row())
    store.close()
    result = runner.invoke(app, ["align", DATASET, "--judge", "pref", "--db", url])
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1, result.output
    assert "judge 'pref' gives pairwise verdicts: alignment fits binary and ordinal" in _flat(
        result.output
    )
    missing = runner.invoke(app, ["align", DATASET, "--judge", "fake",
                                  "--db", f"sqlite:///{tmp_path / 'none.db'}"])  # fmt: skip
    assert missing.exit_code == 2 and "no store here" in missing.output
    assert not (tmp_path / "none.db").exists()  # nothing created by a failed command


def test_trajudge_judge_scores_with_the_aligned_judge_by_name(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    url = f"sqlite:///{tmp_path / 's.db'}"
    store = Store(url)
    trajs = build(store, fake_llm)
    store.close()
    fake_llm.reset()
    fake_llm.decide = fake_judge
    args = ["align", DATASET, "--judge", "fake", "--config", str(_config(tmp_path, fake_llm)),
            "--db", url, "--method", "threshold,fewshot", "--use", "fewshot",
            "--dev-share", "0.5", "--max-examples", "2",
            "--rubric-out", str(tmp_path / "rubrics"), "--n-boot", "100"]  # fmt: skip
    assert runner.invoke(app, args).exit_code == 0
    hold = {t.id for t in trajs if split_of(t.task_id, 0.5) == "holdout"}
    assert len(fake_llm.requests) == len(hold)
    # by name, no spec on the command line: the stored spec and the few-shot rubric; the
    # holdout calls align made are resumed, only the dev trajectories are new calls
    result = runner.invoke(app, ["judge", DATASET, "--judge", "fake-aligned", "--db", url,
                                 "--cache", str(tmp_path / "cache2.db")])  # fmt: skip
    assert result.exit_code == 0, result.output
    new = fake_llm.requests[len(hold) :]
    assert len(new) == len(trajs) - len(hold)
    for body in new:
        user = body["messages"][-1]["content"]
        assert len(re.findall(r"<example>", user)) == 2  # the aligned rubric's examples
        shown = re.search(r'<trajectory label="candidate">(.*?)</trajectory>', user, re.S)
        assert shown is not None and not set(re.findall(r"t\d\d-\d", shown.group(1))) & hold
    store = Store(url)
    rows = store.judgments_frame(DATASET)
    mine = rows[rows["judge"] == "fake-aligned"]
    assert sorted(mine["trajectory_id"]) == sorted(t.id for t in trajs)
    record = store.aligned_judge("fake-aligned")
    assert record is not None
    assert set(mine["rubric_version"]) == {record["rubric_version"]}
    store.close()
