"""Gate expressions and baseline regressions, on report dicts written out by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajudge.core import InputError
from trajudge.report import baseline_regressions, check_gates, parse_gate, read_baseline


def _est(value: float | None, low: float | None = None, high: float | None = None) -> dict:
    return {"value": value, "low": low, "high": high, "n": 10, "level": 0.95}


def _report(**over: object) -> dict:
    d = {
        "ks": [1, 4],
        "primary_source": "judge:good",
        "judges": [
            {
                "name": "good",
                "judge": "good",
                "kappa": _est(0.8, 0.7, 0.9),
                "ac1": 0.85,
                "agreement": 0.9,
                "tpr": 0.9,
                "tnr": 0.8,
                "flip_rate": _est(0.05, 0.0, 0.1),
                "cost_per_1k": 2.0,
            },
            {
                "name": "flat",
                "judge": "flat",
                "kappa": _est(None),
                "ac1": None,
                "agreement": 0.5,
                "tpr": None,
                "tnr": None,
                "flip_rate": None,
                "cost_per_1k": 0.5,
            },
        ],
        "sources": {
            "judge:good": {
                "pass^k": {"1": _est(0.7, 0.6, 0.8), "4": _est(0.4, 0.3, 0.5)},
                "pass@k": {"1": _est(0.7, 0.6, 0.8), "4": _est(0.9, 0.8, 1.0)},
            },
            "outcome": {
                "pass^k": {"1": _est(0.6, 0.5, 0.7), "4": _est(0.3, 0.2, 0.4)},
                "pass@k": {"1": _est(0.6, 0.5, 0.7), "4": _est(0.8, 0.7, 0.9)},
            },
        },
        "usage": {"cost_usd": 0.02, "tokens": 1000.0, "turns": 4.0},
    }
    d.update(over)
    return d


def _fails(*exprs: str, report: dict | None = None) -> list[str]:
    return check_gates(report or _report(), [parse_gate(e) for e in exprs])


def test_parse_gate_forms() -> None:
    g = parse_gate("pass^4[outcome] >= 0.5")
    assert (g.metric, g.k, g.qualifier, g.op, g.value) == ("pass^k", 4, "outcome", ">=", 0.5)
    g = parse_gate("flip_rate<=.1")
    assert (g.metric, g.k, g.op, g.value) == ("flip_rate", None, "<=", 0.1)
    assert parse_gate("pass@1>=1e-1").metric == "pass@k"


@pytest.mark.parametrize(
    "bad",
    [
        "kappa",
        "kappa>=",
        "kapa>=0.6",
        "pass^0>=0.5",
        "kappa=>0.6",
        "pass^x>=1",
        "kappa>=0.6 and ac1>=0.5",
    ],
)
def test_bad_expressions_name_the_option(bad: str) -> None:
    with pytest.raises(InputError, match=r"^--fail-under: "):
        parse_gate(bad)


def test_judge_gates_pass_and_fail() -> None:
    assert _fails("kappa[good]>=0.6", "ac1[good]>=0.8", "tpr[good]>0.85") == []
    assert _fails("agreement>=0.5", "cost_per_1k<=2") == []  # every judge passes these
    (reason,) = _fails("kappa[good]>=0.85")
    assert reason.startswith("kappa[good] = 0.8 [0.7, 0.9], needs >= 0.85")


def test_undefined_metric_fails_with_reason() -> None:
    (reason,) = _fails("kappa>=0.6")  # good passes; flat's kappa is NaN (null)
    assert "kappa[flat] is undefined" in reason


def test_flip_rate_that_does_not_apply() -> None:
    assert _fails("flip_rate<=0.1") == []  # flat never ran in both orders: skipped
    (reason,) = _fails("flip_rate[flat]<=0.1")  # named explicitly: cannot be checked
    assert "undefined" in reason


def test_a_gate_no_judge_has_fails_as_undefined() -> None:
    report = _report()
    report["judges"][0]["flip_rate"] = None  # now neither judge ran in both orders
    (reason,) = _fails("flip_rate.hi<=0.1", report=report)
    assert reason == ("flip_rate is undefined: no judge of the report has one (flip_rate.hi<=0.1)")


def test_pass_k_primary_and_qualified() -> None:
    assert _fails("pass^4>=0.4") == []  # primary source: judge good, 0.4
    (reason,) = _fails("pass^4>=0.5")
    assert reason.startswith("pass^4[judge:good] = 0.4")
    assert _fails("pass^4[outcome]>=0.3", "pass@4[good]>=0.9") == []
    assert len(_fails("pass^4[outcome]>0.3")) == 1


def test_unknown_names_and_k_are_input_errors() -> None:
    with pytest.raises(InputError, match="no judge named 'nobody'"):
        _fails("kappa[nobody]>=0.5")
    with pytest.raises(InputError, match="no verdict source 'rules'"):
        _fails("pass^1[rules]>=0.5")
    with pytest.raises(InputError, match="k=3 was not computed"):
        _fails("pass^3>=0.5")


def test_no_judge_fails_a_kappa_gate() -> None:
    (reason,) = _fails("kappa>=0.1", report=_report(judges=[]))
    assert "no judge" in reason


def test_baseline_same_report_passes() -> None:
    assert baseline_regressions(_report(), _report()) == []


def test_baseline_usage_above_tolerance() -> None:
    base = _report(usage={"cost_usd": 0.01, "tokens": 1000.0, "turns": 2.0})
    reasons = baseline_regressions(_report(), base)
    # cost 0.02 > 1.5 x 0.01; tokens equal; turns 4 > 1.5 x 2
    assert len(reasons) == 2
    assert reasons[0].startswith("cost per trajectory 0.02 is above 1.5x the baseline's 0.01")
    assert reasons[1].startswith("turns per trajectory 4")
    ok = _report(usage={"cost_usd": 0.014, "tokens": 700.0, "turns": 3.0})  # 0.02 <= 0.021
    assert baseline_regressions(_report(), ok) == []


def test_baseline_latency_and_a_chosen_tolerance() -> None:
    now = _report(usage={"cost_usd": 0.02, "tokens": 1000.0, "turns": 4.0, "latency_s": 9.0})
    base = _report(usage={"cost_usd": 0.02, "tokens": 1000.0, "turns": 4.0, "latency_s": 3.0})
    # latency 9 s is 3x the baseline's 3 s: above 1.5x, and above 2.5x, not above 3x
    (reason,) = baseline_regressions(now, base)
    assert reason.startswith("latency per trajectory 9 is above 1.5x the baseline's 3")
    (reason,) = baseline_regressions(now, base, tolerance=2.5)
    assert "above 2.5x" in reason
    assert baseline_regressions(now, base, tolerance=3.0) == []


def test_baseline_pass_k_without_an_interval_compares_the_estimate() -> None:
    now = _report()
    now["sources"]["outcome"]["pass^k"]["4"] = _est(0.0)  # 0 tasks pass, no interval
    assert baseline_regressions(now, now) == []  # a report is no regression of itself
    base = _report()
    base["sources"]["outcome"]["pass^k"]["4"] = _est(0.2)
    (reason,) = baseline_regressions(now, base)
    assert reason == "pass^4[outcome] dropped: 0 (no interval) is below the baseline's 0.2"
    now["sources"]["outcome"]["pass^k"]["4"] = _est(None)
    (reason,) = baseline_regressions(now, base)
    assert reason == "pass^4[outcome] is undefined now (baseline 0.2)"


def test_baseline_pass_k_drop_beyond_interval() -> None:
    base = _report()
    base["sources"]["outcome"]["pass^k"]["4"] = _est(0.45, 0.4, 0.5)  # current high 0.4
    (reason,) = baseline_regressions(_report(), base)
    assert reason.startswith("pass^4[outcome] dropped: 0.3 [0.2, 0.4]")
    base["sources"]["outcome"]["pass^k"]["4"] = _est(0.4, 0.3, 0.5)  # within the interval
    assert baseline_regressions(_report(), base) == []


def test_read_baseline_rejects_other_json(tmp_path: Path) -> None:
    p = tmp_path / "x.json"
    p.write_text(json.dumps({"hello": 1}))
    with pytest.raises(InputError, match=r"not a trajudge report\.json"):
        read_baseline(p)
    p.write_text("{nope")
    with pytest.raises(InputError, match="not a JSON report"):
        read_baseline(p)


@pytest.mark.parametrize("fmt", [2, "1", -1, 1.0, True])
def test_read_baseline_refuses_an_unknown_report_format(tmp_path: Path, fmt: object) -> None:
    p = tmp_path / "report.json"
    p.write_text(json.dumps({"report_format": fmt, "sources": {}}))
    with pytest.raises(InputError) as refused:
        read_baseline(p)
    assert str(refused.value) == (
        f"{p}: report_format: {json.dumps(fmt)} is not a report format this trajudge reads "
        "(0 to 1): a report written by a newer trajudge?"
    )
    # a report from before the format was written, and one of this format, are read
    for known in ({"sources": {}}, {"report_format": 1, "sources": {}}):
        p.write_text(json.dumps(known))
        assert read_baseline(p) == known


def test_bound_gates_compare_an_end_of_the_interval() -> None:
    for text in ("kappa.lo[good]>=0.6", "kappa[good].lo>=0.6"):
        g = parse_gate(text)
        assert (g.metric, g.bound, g.qualifier, g.label) == (
            "kappa",
            "lo",
            "good",
            "kappa.lo[good]",
        )
    # good: kappa 0.8 [0.7, 0.9]: its point passes 0.75, its lower bound does not
    assert _fails("kappa[good]>=0.75") == []
    (reason,) = _fails("kappa.lo[good]>=0.75")
    assert reason == (
        "kappa.lo[good] = 0.7 (estimate 0.8 [0.7, 0.9]), needs >= 0.75 (kappa.lo[good]>=0.75)"
    )
    assert _fails("kappa.hi[good]>=0.85", "flip_rate.hi[good]<=0.1") == []
    (reason,) = _fails("flip_rate.hi[good]<=0.05")  # 0.05 [0.0, 0.1]
    assert reason.startswith("flip_rate.hi[good] = 0.1 (estimate 0.05")
    assert _fails("pass^4.lo>=0.3", "pass^4.hi[outcome]<=0.4") == []
    (reason,) = _fails("pass^4.lo[outcome]>=0.3")  # 0.3 [0.2, 0.4]
    assert reason.startswith("pass^4.lo[outcome] = 0.2")


def test_bound_gates_fail_without_an_interval() -> None:
    # flat's kappa is undefined; good's ac1 is written as a bare number (no interval)
    (reason,) = _fails("kappa.lo>=0.1")
    assert reason.startswith("kappa.lo[flat] is undefined")
    (reason,) = _fails("ac1.lo[good]>=0.1")
    assert reason == "ac1.lo[good] is undefined (no interval), needs >= 0.1 (ac1.lo[good]>=0.1)"
    with_interval = _report()
    with_interval["judges"][0]["ac1"] = _est(0.85, 0.5, 0.95)
    assert _fails("ac1.lo[good]>=0.5", report=with_interval) == []


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        ("kappa.mid>=0.4", "unknown bound .mid"),
        ("kappa.lo[good].hi>=0.4", "one bound"),
        ("cost_per_1k.hi<=2", "no interval"),
    ],
)
def test_bad_bounds_are_refused(bad: str, why: str) -> None:
    with pytest.raises(InputError, match=why):
        parse_gate(bad)


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("kappa>=0.7", ("kappa", 0.7, 0.95)),
        (" tpr >= 0.8 @ 90% ", ("tpr", 0.8, 0.9)),
        ("pass_rate>=0.5@0.99", ("pass_rate", 0.5, 0.99)),
        ("kappa>=-0.2@97.5%", ("kappa", -0.2, 0.975)),
    ],
)
def test_stop_rules_read_by_the_gate_grammar(text: str, want: tuple[str, float, float]) -> None:
    from trajudge.report import parse_stop_rule

    rule = parse_stop_rule(text)
    assert (rule.statistic, rule.target, rule.level) == pytest.approx(want)
    assert parse_stop_rule(rule.text) == rule  # the canonical text reads back the same


@pytest.mark.parametrize(
    "text", ["kappa.lo>=0.6", "kappa[j]>=0.6", "pass^2>=0.5", "tnr<=0.9", "tnr>=-0.1", "kappa>="]
)
def test_stop_rules_that_are_no_rule(text: str) -> None:
    from trajudge.report import parse_stop_rule

    with pytest.raises(InputError) as info:
        parse_stop_rule(text, "report.stop_when")
    assert info.value.file == "report.stop_when"
