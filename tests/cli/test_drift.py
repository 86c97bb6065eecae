"""`trajudge drift` in process: the paired figures against a hand computation, the anchor
set of an eval set, the CI gate and its exit codes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import typer.testing
from sklearn.metrics import cohen_kappa_score

import trajudge.cli._commands  # noqa: F401 - registers the commands
from trajudge.cli import app

sys.path.insert(0, str(Path(__file__).parents[1] / "report"))
import report_helpers as h

runner = typer.testing.CliRunner()


@pytest.fixture(scope="module")
def store_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('drift') / 'store.db'}"
    h.make_store(url).close()
    return url


def _drift(url: str, out: Path, *extra: str) -> typer.testing.Result:
    args = ["drift", "ds", "--judge", "alpha", "--judge", "beta", "--db", url]
    return runner.invoke(app, [*args, "--out", str(out), "--n-boot", "200", *extra])


def test_drift_against_the_store_labels_matches_a_hand_computation(
    store_url: str, tmp_path: Path
) -> None:
    result = _drift(store_url, tmp_path / "d", "--k", "1,2")
    assert result.exit_code == 0, result.output
    d = json.loads((tmp_path / "d" / "drift.json").read_text())
    both = [t for t in h.all_ids() if t not in h.BETA_ERRORS]  # beta errored on two items
    cons = h.consensus()
    labelled = [t for t in both if t in cons]
    k_alpha = cohen_kappa_score([cons[t] for t in labelled], [h.alpha_verdict(t) for t in labelled])
    k_beta = cohen_kappa_score([cons[t] for t in labelled], [1] * len(labelled))
    drift = d["drift"]
    assert drift["n_items"] == len(both) and drift["n_labeled"] == len(labelled)
    assert drift["kappa"]["old"]["value"] == pytest.approx(k_alpha)
    assert drift["kappa"]["new"]["value"] == pytest.approx(k_beta)
    assert drift["kappa"]["diff"]["value"] == pytest.approx(k_beta - k_alpha)
    down = sum(h.alpha_verdict(t) == 1 for t in both)  # beta passes everything
    assert (drift["n_down"], drift["n_up"]) == (0, len(both) - down)
    assert d["fingerprints"]["alpha"]["models"] == ["claude-3-haiku"]
    assert d["fingerprints"]["beta"]["models"] == ["gpt-4o-mini"]
    assert d["fingerprints"]["beta"]["n_calls"] == 24
    assert "Drift: alpha -> beta" in result.output and "Judge fingerprints" in result.output
    assert (tmp_path / "d" / "drift.md").read_text().startswith("# trajudge drift: dataset ds")


def test_the_gate_fails_a_drifted_judge_with_exit_1(store_url: str, tmp_path: Path) -> None:
    # beta passes everything: its pass rate is up by the share alpha failed
    gates = ["drift.pass_rate.hi<=0.05", "drift.kappa.lo>=-0.05"]
    result = _drift(store_url, tmp_path / "d", "--fail-under", gates[0], "--fail-under", gates[1])
    assert result.exit_code == 1, result.output
    failed = [line for line in result.output.splitlines() if line.startswith("gate failed:")]
    assert failed[0].startswith("gate failed: drift.pass_rate.hi = ")
    # six tasks, and a judge that always passes: in many resamples its kappa against the
    # labels is undefined (one label class drawn), so the bound is undefined and fails
    assert failed[1].startswith("gate failed: drift.kappa.lo is undefined")
    d = json.loads((tmp_path / "d" / "drift.json").read_text())
    assert d["passed"] is False and d["gates"] == gates
    # a gate the drift clears passes: the share of changed verdicts is below 1
    ok = _drift(store_url, tmp_path / "e", "--fail-under", "drift.changed<=0.9")
    assert ok.exit_code == 0, ok.output


def test_an_eval_set_pins_the_anchor_items_and_their_labels(store_url: str, tmp_path: Path) -> None:
    cases = tmp_path / "anchor.jsonl"
    core = ["T0-0", "T1-3", "T3-0", "T4-0", "T4-1"]  # alpha is wrong on three of them
    for t in [*core, "T5-0"]:
        args = ["add-case", "ds", t, "--to", str(cases), "--db", store_url]
        label = "pass" if h.outcome(t) else "fail"
        extra = ["--core"] if t in core else []
        res = runner.invoke(app, [*args, "--label", label, *extra])
        assert res.exit_code == 0, res.output
    result = _drift(store_url, tmp_path / "d", "--evalset", str(cases))
    assert result.exit_code == 0, result.output
    d = json.loads((tmp_path / "d" / "drift.json").read_text())
    assert d["anchor"]["n_items"] == len(core) and "core layer" in d["anchor"]["source"]
    truth = [h.outcome(t) for t in core]
    k_alpha = cohen_kappa_score(truth, [h.alpha_verdict(t) for t in core])
    assert d["drift"]["kappa"]["old"]["value"] == pytest.approx(k_alpha)


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--fail-under", "drift.kapa>=0"], "--fail-under: cannot read 'drift.kapa>=0'"),
        (["--fail-under", "drift.pass^3.lo>=0"], "k=3 was not computed"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    store_url: str, tmp_path: Path, extra: list[str], needle: str
) -> None:
    result = _drift(store_url, tmp_path / "d", *extra)
    assert result.exit_code == 2, result.output
    assert needle in result.output and "Traceback" not in result.output
    assert not (tmp_path / "d").exists()  # nothing half-written


def test_an_unknown_judge_is_named(store_url: str, tmp_path: Path) -> None:
    args = ["drift", "ds", "--judge", "alpha", "--judge", "gamma", "--db", store_url]
    result = runner.invoke(app, [*args, "--out", str(tmp_path / "d")])
    assert result.exit_code == 2
    assert "--judge: no pass/fail or ordinal judgments of 'gamma'" in result.output
    assert "alpha, beta" in result.output
