"""build_report against numbers recomputed independently (sklearn, math.comb by hand)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from trajudge.report import build_report, calibrate_report
from trajudge.store import Store

sys.path.insert(0, str(Path(__file__).parent))
import report_helpers as h

KS = [1, 2, 3, 4]


@pytest.fixture(scope="module")
def report_dict(tmp_path_factory: pytest.TempPathFactory) -> dict:
    url = f"sqlite:///{tmp_path_factory.mktemp('build') / 'store.db'}"
    return build_report(h.make_store(url), "ds", ks=KS, n_boot=60, seed=1).to_dict()


def _judge(d: dict, name: str) -> dict:
    return next(j for j in d["judges"] if j["name"] == name)


def test_kappa_and_rates_match_sklearn(report_dict: dict) -> None:
    cons = h.consensus()
    items = sorted(cons)
    y_h = [cons[i] for i in items]
    y_a = [h.alpha_verdict(i) for i in items]
    alpha = _judge(report_dict, "alpha")
    assert alpha["kappa"]["value"] == pytest.approx(cohen_kappa_score(y_h, y_a), abs=1e-12)
    assert alpha["n_items"] == len(items)
    tn, fp, fn, tp = confusion_matrix(y_h, y_a, labels=[0, 1]).ravel()
    assert alpha["tpr"]["value"] == pytest.approx(tp / (tp + fn))
    assert alpha["tnr"]["value"] == pytest.approx(tn / (tn + fp))
    assert alpha["agreement"]["value"] == pytest.approx((tp + tn) / len(items))
    assert alpha["cost_per_1k"] == pytest.approx(2.0)  # $0.002 per call
    low, high = alpha["kappa"]["low"], alpha["kappa"]["high"]
    assert low <= alpha["kappa"]["value"] <= high


def test_errors_are_counted_not_scored(report_dict: dict) -> None:
    beta = _judge(report_dict, "beta")
    assert beta["n_errors"] == len(h.BETA_ERRORS)
    assert beta["n_judgments"] == len(h.all_ids())
    # beta always says pass: kappa is exactly 0 (po == pe) on the items it judged
    cons = {i: v for i, v in h.consensus().items() if i not in h.BETA_ERRORS}
    assert beta["kappa"]["value"] == pytest.approx(
        cohen_kappa_score(list(cons.values()), [1] * len(cons)), abs=1e-12
    )
    assert beta["n_items"] == len(cons)


def test_no_better_than_chance_is_said(report_dict: dict) -> None:
    line = next(s for s in report_dict["summary"] if s.startswith("judge alpha"))
    assert "no better than chance" in line and "human labels" in line
    # beta (always pass) has kappa 0, but the labelled fails all sit in task T3: a third of
    # the task resamples ((5/6)^6) leave no fail, so its interval is undefined and said so
    beta = next(s for s in report_dict["summary"] if s.startswith("judge beta"))
    assert "κ = 0.00 against human labels" in beta and "without an interval" in beta
    assert "agrees" not in beta


@pytest.mark.parametrize("k", KS)
def test_pass_hat_per_source(report_dict: dict, k: int) -> None:
    src = report_dict["sources"]
    ids = h.all_ids()
    outcome = {t: h.outcome(t) for t in ids}
    rules = {t: int(t not in h.GATE_FAILED) for t in ids}
    # the gate rule: a failed gate is a fail for every source but the raw outcome
    alpha = {t: h.alpha_verdict(t) * rules[t] for t in ids}
    beta = {t: (None if t in h.BETA_ERRORS else 1) for t in ids}
    beta = {t: (0 if t in h.GATE_FAILED else v) for t, v in beta.items()}
    human = {t: v * rules[t] for t, v in h.consensus().items()}
    expected = {
        "outcome": outcome,
        "rules": rules,
        "judge:alpha": alpha,
        "judge:beta": beta,
        "human": human,
    }
    for key, success in expected.items():
        want = h.pass_hat(success, k)
        got = src[key]["pass^k"][str(k)]["value"]
        if math.isnan(want):
            assert got is None, key
        else:
            assert got == pytest.approx(want, abs=1e-12), key
            lo, hi = src[key]["pass^k"][str(k)]["low"], src[key]["pass^k"][str(k)]["high"]
            if lo is None:
                # one usable task (the labels: T3 alone has 3 known trials): too many task
                # resamples miss it for an interval (more than 10% undefined)
                assert src[key]["n_tasks"][str(k)] == 1, key
                continue
            assert lo <= got + 1e-12 and got - 1e-12 <= hi, key
        want_at = h.pass_hat(success, k, at=True)
        got_at = src[key]["pass@k"][str(k)]["value"]
        if not math.isnan(want_at):
            assert got_at == pytest.approx(want_at, abs=1e-12), key
    assert src["outcome"]["gated"] is False and src["judge:alpha"]["gated"] is True


def test_summary_and_ceiling(report_dict: dict) -> None:
    assert report_dict["primary_source"] == "judge:alpha"
    cons = h.consensus()
    want = cohen_kappa_score(list(cons.values()), [h.alpha_verdict(i) for i in cons])
    first = report_dict["summary"][0]
    # 2 of 12 labelled items wrong: kappa 0.56 (sklearn) but the interval reaches below 0
    assert first.startswith(
        f"judge alpha is no better than chance against human labels: κ = {want:.2f} ["
    )
    assert "its pass^4 is" in first and "by the environment outcome" in first
    # h1 and h2 share 12 items and disagree on one: kappa computed by sklearn
    shared = [(item, v) for item, a, v in h.human_labels() if a == "h2"]
    h1 = {item: v for item, a, v in h.human_labels() if a == "h1"}
    ceiling = report_dict["ceilings"][0]
    assert ceiling["n_items"] == len(shared)
    assert ceiling["mean_kappa"] == pytest.approx(
        cohen_kappa_score([h1[i] for i, _ in shared], [v for _, v in shared]), abs=1e-12
    )
    assert report_dict["n_gate_failed"] == len(h.GATE_FAILED)
    assert report_dict["tied_items"] == sorted(h.HUMAN_DISAGREE)
    assert report_dict["usage"]["cost_usd"] == pytest.approx(0.01)


def test_reference_labels_are_never_called_human(db_url: str) -> None:
    store = h.make_store(db_url, label_source="env_reward")
    report = build_report(store, "ds", label_source="env_reward", ks=[1, 2], n_boot=30)
    text = " ".join(report.summary)
    assert "reference labels (env_reward)" in text
    assert "human" not in text.lower()
    d = report.to_dict()
    assert "env_reward" in d["sources"] and "human" not in d["sources"]
    from trajudge.report import render_html, render_markdown

    assert "human" not in render_markdown(report).lower()
    assert "human" not in render_html(report, {}).lower()
    # and the human source of the same store is empty: nothing was labelled by people
    human = build_report(store, "ds", ks=[1, 2], n_boot=30)
    assert human.n_labeled_items == 0
    assert math.isnan(human.judges[0].calibration.kappa.value)


def test_missing_dataset_is_an_input_error(db_url: str) -> None:
    from trajudge.core import InputError

    with pytest.raises(InputError, match="no dataset 'nope'"):
        build_report(Store(db_url), "nope", n_boot=10)


def test_calibrate_report_from_csv_files(tmp_path: Path) -> None:
    cons = h.consensus()
    j_rows = ["item,judge,order,sample,verdict,task_id"]
    for t in h.all_ids():
        j_rows.append(f"{t},alpha,ab,0,{'pass' if h.alpha_verdict(t) else 'fail'},{t[:2]}")
    (tmp_path / "j.csv").write_text("\n".join(j_rows) + "\n")
    lab = ["item,annotator,label"] + [f"{i},{a},{v}" for i, a, v in h.human_labels()]
    (tmp_path / "l.csv").write_text("\n".join(lab) + "\n")
    out = ["item,outcome"] + [f"{t},{h.outcome(t)}" for t in h.all_ids()]
    (tmp_path / "o.csv").write_text("\n".join(out) + "\n")
    report = calibrate_report(
        tmp_path / "j.csv", tmp_path / "l.csv", outcomes=tmp_path / "o.csv", ks=[1, 2], n_boot=30
    )
    d = report.to_dict()
    items = sorted(cons)
    want = cohen_kappa_score([cons[i] for i in items], [h.alpha_verdict(i) for i in items])
    assert d["judges"][0]["kappa"]["value"] == pytest.approx(want, abs=1e-12)
    # no rule results here: nothing is gated
    alpha = {t: h.alpha_verdict(t) for t in h.all_ids()}
    assert d["sources"]["judge:alpha"]["pass^k"]["2"]["value"] == pytest.approx(
        h.pass_hat(alpha, 2), abs=1e-12
    )
    assert d["sources"]["outcome"]["pass^k"]["2"]["value"] == pytest.approx(
        h.pass_hat({t: h.outcome(t) for t in h.all_ids()}, 2), abs=1e-12
    )


def test_adjudication_stands_for_the_consensus(db_url: str) -> None:
    store = h.make_store(db_url)
    (tied,) = h.HUMAN_DISAGREE
    store.save_label("ds", tied, h.RUBRIC, "lead", 1.0, adjudication=True)
    report = build_report(store, "ds", ks=[1], n_boot=20)
    cons = {**h.consensus(), tied: 1}  # the tie is now decided as a pass
    items = sorted(cons)
    want = cohen_kappa_score([cons[i] for i in items], [h.alpha_verdict(i) for i in items])
    alpha = report.judges[0].calibration
    assert alpha.kappa.value == pytest.approx(want, abs=1e-12)
    assert alpha.n_items == len(items)
    assert report.tied_items == []
    # the ceiling still compares h1 and h2 on their own labels, disagreement included
    assert report.ceilings[0].agreement.n_items == 2 * len(h.OUTCOMES)
    assert any("1 adjudicated items" in n for n in report.notes)


def test_fingerprint_change_against_baseline(db_url: str) -> None:
    store = h.make_store(db_url)
    now = build_report(store, "ds", ks=[1], n_boot=20).to_dict()
    assert now["fingerprint"]["model"] == "gpt-4o" and now["fingerprint_changes"] == []
    base = {**now, "fingerprint": {**now["fingerprint"], "model": "gpt-4o-mini"}}
    report = build_report(store, "ds", ks=[1], n_boot=20, baseline=base)
    assert report.fingerprint_changes == [
        "model changed (gpt-4o-mini → gpt-4o): a full re-run is due"
    ]
    assert report.gate_failures == []  # a changed agent is news, not a failure


def test_rubric_thresholds_come_from_the_rubric_files() -> None:
    from trajudge.report.inputs._rubrics import rubric_threshold

    # shipped rubrics state their pass thresholds in their YAML: 4 and 3
    assert rubric_threshold("trajectory_reasonableness") == 4.0
    assert rubric_threshold("policy_compliance") == 3.0
    assert rubric_threshold("answer_faithfulness") is None  # binary: nothing to cut
    assert rubric_threshold("my_own_rubric") is None  # unknown: no threshold is invented
