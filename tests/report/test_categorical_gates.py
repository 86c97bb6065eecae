"""``--fail-under`` on pairwise judges: gates read their own measures, or refuse in one line.

The tables: 30 pairs, ten each of three patterns whose figures are worked out by hand:

* ``c`` (consistent, right): gold A, ab A, ba A;
* ``f`` (a flip): gold B, ab B, ba A -> the aggregate is ``tie`` (wrong);
* ``r`` (consistent, right): gold B, ab B, ba B.

Accuracy ab 30/30, ba 20/30, mean 5/6; consistency 20/30; flip rate 1/3; agreement of the
aggregate 2/3; kappa of the aggregate from scikit-learn.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import typer.testing
from sklearn.metrics import cohen_kappa_score

import trajudge.cli._commands  # noqa: F401 - registers the commands
from trajudge.cli import app
from trajudge.core import InputError
from trajudge.report import build_report

sys.path.insert(0, str(Path(__file__).parent))
import report_helpers as h

runner = typer.testing.CliRunner()
PATTERNS = {"c": ("A", "A", "A"), "f": ("B", "B", "A"), "r": ("B", "B", "B")}  # gold, ab, ba
GOLD = [g for g, _, _ in PATTERNS.values() for _ in range(10)]
AGGREGATE = [a if a == b else "tie" for _, a, b in PATTERNS.values() for _ in range(10)]


def _run(tmp_path: Path, *gates: str) -> tuple[typer.testing.Result, Path]:
    j, lab, out = tmp_path / "j.csv", tmp_path / "l.csv", tmp_path / "o"
    rows, labels = ["item,judge,order,sample,verdict"], ["item,annotator,label"]
    for p, (gold, ab, ba) in PATTERNS.items():
        for i in range(10):
            rows += [f"{p}{i},gpt,ab,0,{ab}", f"{p}{i},gpt,ba,0,{ba}"]
            labels.append(f"{p}{i},h,{gold}")
    j.write_text("\n".join(rows) + "\n")
    lab.write_text("\n".join(labels) + "\n")
    args = ["calibrate", "--judgments", str(j), "--labels", str(lab), "--out", str(out)]
    args += ["--ba-mapped", "--format", "json", "--n-boot", "200"]
    for g in gates:
        args += ["--fail-under", g]
    return runner.invoke(app, args), out


def test_gates_on_pairwise_measures_pass(tmp_path: Path) -> None:
    kappa = cohen_kappa_score(GOLD, AGGREGATE, labels=["A", "B", "tie"])
    result, out = _run(
        tmp_path,
        "accuracy>=0.83",  # 5/6 = 0.8333
        "consistency>=0.66",  # 2/3
        "flip_rate<=0.34",  # 1/3
        "agreement>=0.66",  # 2/3
        f"kappa[gpt]>={kappa - 1e-9}",
        "flip_rate.hi<=0.6",
    )
    assert result.exit_code == 0, result.output
    assert "gate failed" not in result.output
    row = json.loads((out / "report.json").read_text())["categorical_judges"][0]
    assert row["accuracy"] == pytest.approx(5 / 6) and row["consistency"]["count"] == 20


def test_gates_on_pairwise_measures_fail_naming_measure_and_judge(tmp_path: Path) -> None:
    kappa = cohen_kappa_score(GOLD, AGGREGATE, labels=["A", "B", "tie"])
    result, _ = _run(
        tmp_path, "consistency>=0.7", "accuracy>=0.84", "flip_rate<=0.3", f"kappa>={kappa + 0.01}"
    )
    assert result.exit_code == 1, result.output
    text = " ".join(result.output.split())  # rich wraps long lines
    assert "consistency[gpt] (pairwise judge) = 0.6667, needs >= 0.7" in text
    assert "accuracy[gpt] (pairwise judge) = 0.8333, needs >= 0.84" in text
    assert "flip_rate[gpt] (pairwise judge) = 0.3333" in text
    assert f"kappa[gpt] (pairwise judge) = {kappa:.4g}" in text


@pytest.mark.parametrize(
    ("gate", "says"),
    [
        ("tpr>=0.5", "tpr does not exist for any judge of the report (pairwise"),
        ("ac1[gpt]>=0.5", "ac1 does not exist for judge 'gpt' (pairwise"),
        ("consistency.lo>=0.5", "consistency is a count of items (use flip_rate.hi)"),
        ("accuracy.lo>=0.5", "use agreement.lo"),
    ],
)
def test_a_measure_the_kind_lacks_is_refused_in_one_line(
    tmp_path: Path, gate: str, says: str
) -> None:
    result, out = _run(tmp_path, gate)
    assert result.exit_code == 2, result.output
    assert says in " ".join(result.output.split())
    assert result.output.strip().count("\n") == 0 or "error:" in result.output.splitlines()[0]
    assert not out.exists()  # nothing written


def test_report_gates_apply_each_measure_to_the_judges_that_have_it(db_url: str) -> None:
    store = h.make_store(db_url)  # pass/fail judges alpha and beta
    for order, verdict in (("ab", "A"), ("ba", "B")):  # one pair, flipped
        store.add_judgment(
            "ds",
            {
                "trajectory_id": "T0-0", "other_id": "T0-1", "judge": "pair",
                "rubric_id": "trajectory_preference", "rubric_version": "v1", "model": "m",
                "mode": "pairwise", "order": order, "sample": 0, "verdict": verdict,
            },
        )  # fmt: skip
    store.save_pair_label("ds", "T0-0", "T0-1", "trajectory_preference", "ann", "A")
    report = build_report(
        store, "ds", ks=[1], n_boot=20, fail_under=["consistency>=0.5", "tpr>=0.0"]
    )
    # consistency only for the pairwise judge (0 of 1); tpr only for alpha and beta (passes)
    assert report.gate_failures == [
        "consistency[pair] (pairwise judge) = 0, needs >= 0.5 (consistency>=0.5)"
    ]
    with pytest.raises(InputError, match="tnr does not exist for judge 'pair'"):
        build_report(store, "ds", ks=[1], n_boot=20, fail_under=["tnr[pair]>=0.5"])
