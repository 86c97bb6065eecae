"""CI gates: ``--fail-under`` expressions and regressions against a baseline report.

An expression is ``METRIC[.BOUND][QUALIFIER] OP NUMBER``:

* judge metrics ``kappa``, ``ac1``, ``agreement``, ``tpr``, ``tnr``, ``flip_rate`` (use
  ``<=``) and ``cost_per_1k`` (dollars per 1,000 judgments); unqualified, the gate applies to
  every judge; ``kappa[NAME]`` to one judge.
* pairwise and nominal judges have ``kappa`` (of the aggregated verdict, every category),
  ``agreement`` (accuracy of the aggregated verdict), ``flip_rate``, and, without interval,
  ``accuracy`` (the mean of the two orders' accuracies, LLMBar's "Acc") and ``consistency``
  (the same outcome in both orders, LLMBar's "Agr"). A metric that does not exist for a
  judge's kind (``tpr`` of a pairwise judge, ``consistency`` of a pass/fail one) is refused
  (:class:`InputError`) when the gate names that judge, or when no judge of the report has it;
  an unqualified gate otherwise applies to the judges that have it.
* ``pass^K`` and ``pass@K`` (K among the report's k); unqualified, the gate applies to the
  primary source (the first judge if any, else the environment outcome); ``pass^4[outcome]``,
  ``pass^4[rules]``, ``pass^4[human]`` (or the label source) or ``pass^4[NAME]`` for a judge.
* ``BOUND`` is ``lo`` or ``hi``: the gate compares the lower or upper end of the figure's 95%
  interval instead of its point estimate (``kappa.lo>=0.4``, ``kappa[gpt4o].lo>=0.4``,
  ``flip_rate.hi<=0.1``, ``pass^4.lo[outcome]>=0.3``; before or after the qualifier). Every
  gated figure but ``cost_per_1k`` (a measured cost, not an estimate) has an interval.

A point gate passes when the estimate clears the bar, however few labels back it. A bound
gate asks for confidence: ``kappa.lo>=0.4`` passes only when the data show kappa is at
least 0.4 at the 95% level, so it fails on too few labels; ``flip_rate.hi<=0.1`` passes only
when the flip rate is shown to be at most 0.1. A metric or bound that is undefined (NaN, e.g.
kappa with one class only, or an interval the resamples cannot pin down) fails every gate that
uses it, with the reason "undefined". A metric that does not apply to a judge (``flip_rate``
of a judge never run in both orders) is skipped by an unqualified gate and fails a gate that
names the judge; an unqualified gate that applies to no judge at all fails as undefined.
"""

from __future__ import annotations

import json
import math
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trajudge.calibration.active._stop import STATISTICS as STOP_STATISTICS
from trajudge.calibration.active._stop import StopRule
from trajudge.core import InputError
from trajudge.report._model import REPORT_FORMAT
from trajudge.trajectories import load_json

OPTION = "--fail-under"
POINTWISE_METRICS = ("kappa", "ac1", "agreement", "tpr", "tnr", "flip_rate", "cost_per_1k")
#: the measures of a pairwise or nominal judge's row (``report["categorical_judges"]``)
CATEGORICAL_METRICS = ("kappa", "agreement", "flip_rate", "accuracy", "consistency")
JUDGE_METRICS = (*POINTWISE_METRICS, "accuracy", "consistency")
#: cost, tokens or turns per trajectory above this multiple of the baseline fail
USAGE_TOLERANCE = 1.5
_OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    ">": operator.gt,
    "<": operator.lt,
    "==": operator.eq,
}
_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_GATE = re.compile(
    r"^\s*(?P<metric>[a-z_1]+|pass\^(?P<hat>\d+)|pass@(?P<at>\d+))"
    r"(?:\.(?P<bound1>[a-z]+))?"
    r"\s*(?:\[(?P<qual>[^\]]+)\])?(?:\.(?P<bound2>[a-z]+))?"
    r"\s*(?P<op>>=|<=|==|>|<)\s*(?P<value>" + _NUMBER + r")\s*$"
)
BOUNDS = {"lo": "low", "hi": "high"}
#: gated figures without an interval, and why
_NO_INTERVAL = {
    "cost_per_1k": "is measured, not estimated",
    "accuracy": "is a count of items (use agreement.lo for the aggregated verdict)",
    "consistency": "is a count of items (use flip_rate.hi)",
}


@dataclass(frozen=True)
class Gate:
    """One parsed ``--fail-under`` expression."""

    text: str
    metric: str  # a judge metric, "pass^k" or "pass@k"
    k: int | None
    qualifier: str | None
    op: str
    value: float
    bound: str | None = None  # "lo" or "hi": an end of the 95% interval

    @property
    def name(self) -> str:
        """The metric as written, with its k and bound: ``pass^4``, ``kappa.lo``."""
        name = self.metric.replace("k", str(self.k)) if self.k is not None else self.metric
        return f"{name}.{self.bound}" if self.bound else name

    @property
    def label(self) -> str:
        return f"{self.name}[{self.qualifier}]" if self.qualifier else self.name


def parse_gate(text: str) -> Gate:
    """Parse ``"kappa>=0.6"``, ``"kappa.lo>=0.4"``, ``"pass^4[outcome]>=0.5"``,
    ``"flip_rate.hi<=0.1"``.

    Raises
    ------
    InputError
        Naming ``--fail-under`` and the expression when it cannot be read.

    >>> parse_gate("kappa[gpt4o] >= 0.6").qualifier
    'gpt4o'
    >>> parse_gate("kappa[gpt4o].lo >= 0.4").bound
    'lo'
    """
    m = _GATE.match(text)
    if m is None:
        raise InputError(
            OPTION, reason=f"cannot read {text!r}: expected METRIC[.lo|.hi][NAME]>=NUMBER"
        )
    if m["bound1"] is not None and m["bound2"] is not None:
        raise InputError(OPTION, reason=f"{text!r}: give one bound (.lo or .hi)")
    bound = m["bound1"] or m["bound2"]
    if bound is not None and bound not in BOUNDS:
        raise InputError(OPTION, reason=f"{text!r}: unknown bound .{bound} (.lo or .hi)")
    metric = m["metric"]
    k: int | None = None
    if m["hat"] is not None or m["at"] is not None:
        k = int(m["hat"] or m["at"])
        metric = "pass^k" if m["hat"] is not None else "pass@k"
        if k < 1:
            raise InputError(OPTION, reason=f"{text!r}: k must be >= 1")
    elif metric not in JUDGE_METRICS:
        known = ", ".join((*JUDGE_METRICS, "pass^K", "pass@K"))
        raise InputError(OPTION, reason=f"{text!r}: unknown metric {metric!r} ({known})")
    if bound is not None and metric in _NO_INTERVAL:
        raise InputError(
            OPTION, reason=f"{text!r}: {metric} {_NO_INTERVAL[metric]}: it has no interval to bound"
        )
    qual = m["qual"].strip() if m["qual"] else None
    return Gate(text, metric, k, qual or None, m["op"], float(m["value"]), bound)


STOP_OPTION = "--stop-when"
_LEVEL = re.compile(r"^\s*(?P<value>" + _NUMBER + r")\s*(?P<pct>%)?\s*$")


def parse_stop_rule(text: str, option: str = STOP_OPTION) -> StopRule:
    """When labelling may stop: ``STATISTIC>=NUMBER[@LEVEL]``, read by the gates' grammar
    (``kappa>=0.7``, ``tpr>=0.8@90%``, ``pass_rate>=0.5@0.99``); the level defaults to 95%.
    The statistic is one of kappa, tpr, tnr, pass_rate; the certificate is always a lower
    bound, so the operator is ``>=``, without ``.lo``/``.hi`` or a judge (every judge gets
    the status).

    Raises
    ------
    InputError
        Naming ``option`` and the expression when it cannot be read.

    >>> parse_stop_rule("kappa>=0.7").text
    'kappa>=0.7@95%'
    >>> parse_stop_rule("tnr >= 0.8 @ 90%").level
    0.9
    """
    rule, _, level_text = text.partition("@")
    m = _GATE.match(rule)
    known = ", ".join(STOP_STATISTICS)
    if m is None or m["hat"] is not None or m["at"] is not None:
        raise InputError(
            option, reason=f"cannot read {text!r}: expected STATISTIC>=NUMBER[@LEVEL] ({known})"
        )
    if m["metric"] not in STOP_STATISTICS:
        raise InputError(option, reason=f"{text!r}: unknown statistic {m['metric']!r} ({known})")
    if m["op"] != ">=" or m["qual"] or m["bound1"] or m["bound2"]:
        raise InputError(
            option, reason=f"{text!r}: the rule is STATISTIC>=NUMBER (no judge, bound or other op)"
        )
    level = 0.95
    if level_text:
        lm = _LEVEL.match(level_text)
        if lm is None:
            raise InputError(option, reason=f"{text!r}: the level after @ is 95% or 0.95")
        level = float(lm["value"]) / (100.0 if lm["pct"] else 1.0)
    try:
        return StopRule(m["metric"], float(m["value"]), level)
    except ValueError as exc:
        raise InputError(option, reason=f"{text!r}: {exc}") from None


def parse_gates(texts: Sequence[str]) -> list[Gate]:
    return [parse_gate(t) for t in texts]


def _fmt(value: float) -> str:
    return f"{value:.4g}" if abs(value) < 1000 else f"{value:,.0f}"


def _value(obj: Any, bound: str | None = None) -> tuple[float, str]:
    """A metric value from the JSON (a number or an estimate object) and how to show it.

    With ``bound`` ("lo" / "hi") the value is that end of the interval (NaN when the figure
    has no interval), shown beside the estimate and its interval.
    """
    if isinstance(obj, Mapping):
        v = obj.get("value")
        lo, hi = obj.get("low"), obj.get("high")
        shown = "" if lo is None or hi is None else f" [{_fmt(lo)}, {_fmt(hi)}]"
        if bound is not None:
            end = obj.get(BOUNDS[bound])
            point = "n/a" if v is None else _fmt(float(v))
            return (math.nan if end is None else float(end)), f" (estimate {point}{shown})"
        return (math.nan if v is None else float(v)), shown
    if bound is not None:
        return math.nan, " (no interval)"
    return (math.nan if obj is None else float(obj)), ""


def _judges(report: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Every judge row: pass/fail and ordinal ones, then pairwise and nominal ones."""
    return [*(report.get("judges") or []), *(report.get("categorical_judges") or [])]


def _kind(row: Mapping[str, Any]) -> str:
    return str(row.get("kind") or "pass/fail")


def _has(row: Mapping[str, Any], metric: str) -> bool:
    """Whether ``metric`` exists for the kind of judge ``row`` is."""
    return metric in (CATEGORICAL_METRICS if "kind" in row else POINTWISE_METRICS)


def _judge(report: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    judges = _judges(report)
    for row in judges:
        if row["name"] == name:
            return dict(row)
    same = [row for row in judges if row["judge"] == name]
    if len(same) == 1:
        return dict(same[0])
    known = ", ".join(row["name"] for row in judges) or "none"
    raise InputError(OPTION, reason=f"no judge named {name!r} (judges: {known})")


def _source(report: Mapping[str, Any], gate: Gate) -> tuple[str, Mapping[str, Any]] | None:
    sources = report.get("sources") or {}
    name = gate.qualifier or report.get("primary_source")
    if name is None:
        return None
    for key in (name, f"judge:{name}"):
        if key in sources:
            return key, sources[key]
    known = ", ".join(sources) or "none"
    raise InputError(OPTION, reason=f"{gate.text!r}: no verdict source {name!r} ({known})")


def _check(gate: Gate, label: str, obj: Any) -> str | None:
    value, shown = _value(obj, gate.bound)
    want = f"needs {gate.op} {_fmt(gate.value)}"
    if math.isnan(value):
        return f"{label} is undefined{shown}, {want} ({gate.text})"
    if not _OPS[gate.op](value, gate.value):
        return f"{label} = {_fmt(value)}{shown}, {want} ({gate.text})"
    return None


def check_gates(report: Mapping[str, Any], gates: Sequence[Gate]) -> list[str]:
    """The reasons the report fails its gates (empty when every gate passes).

    ``report`` is :meth:`Report.to_dict` output. A gate naming a judge or source the report
    does not have, or a k it did not compute, raises :class:`InputError` (a typo must not
    pass CI quietly).
    """
    failures: list[str] = []
    ks = [int(k) for k in report.get("ks", [])]
    for gate in gates:
        if gate.k is not None:
            if gate.k not in ks:
                raise InputError(OPTION, reason=f"{gate.text!r}: k={gate.k} was not computed (--k)")
            found = _source(report, gate)
            if found is None:
                failures.append(f"{gate.label} is undefined: no verdict source ({gate.text})")
                continue
            key, src = found
            est = src[gate.metric].get(str(gate.k))
            reason = _check(gate, f"{gate.name}[{key}]", est)
            if reason:
                failures.append(reason)
            continue
        rows = [_judge(report, gate.qualifier)] if gate.qualifier else _judges(report)
        if not rows:
            failures.append(f"{gate.metric} is undefined: the report has no judge ({gate.text})")
        if rows and not any(_has(row, gate.metric) for row in rows):
            kinds = ", ".join(sorted({_kind(r) for r in rows}))
            which = f"judge {rows[0]['name']!r}" if gate.qualifier else "any judge of the report"
            raise InputError(
                OPTION,
                reason=f"{gate.text!r}: {gate.metric} does not exist for {which} ({kinds}; "
                f"a pairwise or nominal judge has {', '.join(CATEGORICAL_METRICS)})",
            )
        applies = [r for r in rows if _has(r, gate.metric) and r.get(gate.metric) is not None]
        if rows and not applies and gate.qualifier is None:
            # A gate that checked nothing must not pass: CI would be green on no evidence.
            failures.append(
                f"{gate.metric} is undefined: no judge of the report has one ({gate.text})"
            )
        for row in rows:
            if not _has(row, gate.metric):
                continue  # another kind of judge (an unqualified gate)
            if row.get(gate.metric) is None and gate.qualifier is None:
                continue  # does not apply (e.g. flip_rate of a judge never run in both orders)
            label = f"{gate.name}[{row['name']}]"
            if "kind" in row:
                label += f" ({row['kind']} judge)"
            reason = _check(gate, label, row.get(gate.metric))
            if reason:
                failures.append(reason)
    return failures


def read_baseline(path: str | Path) -> dict[str, Any]:
    """A previous ``report.json`` (InputError naming the file when it is not one)."""
    p = Path(path)
    if not p.is_file():
        raise InputError(str(p), reason="no such file")
    try:
        data = load_json(p.read_text(encoding="utf-8"), str(p))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(str(p), reason=f"not a JSON report: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("sources"), dict):
        raise InputError(str(p), field="sources", reason="not a trajudge report.json")
    # reports from before the format was written read as format 0: their keys are the same
    fmt = data.get("report_format", 0)
    if type(fmt) is not int or not 0 <= fmt <= REPORT_FORMAT:
        raise InputError(
            str(p),
            field="report_format",
            reason=f"{json.dumps(fmt)[:40]} is not a report format this trajudge reads "
            f"(0 to {REPORT_FORMAT}): a report written by a newer trajudge?",
        )
    return data


_USAGE_NAMES = {"cost_usd": "cost", "tokens": "tokens", "turns": "turns", "latency_s": "latency"}


def baseline_regressions(
    report: Mapping[str, Any],
    baseline: Mapping[str, Any],
    *,
    tolerance: float = USAGE_TOLERANCE,
) -> list[str]:
    """Regressions against a previous report.

    * cost, tokens, turns or latency per trajectory above ``tolerance`` x the baseline's;
    * a pass^k drop beyond its interval: the current upper bound is below the baseline's
      point estimate (for every source and k both reports have; an estimate without an
      interval: the estimate itself is below); an undefined current pass^k where the
      baseline had one also fails.
    """
    failures: list[str] = []
    now_usage, base_usage = report.get("usage") or {}, baseline.get("usage") or {}
    for key, name in _USAGE_NAMES.items():
        now, base = now_usage.get(key), base_usage.get(key)
        if now is None or base is None or base <= 0:
            continue
        if now > tolerance * base:
            failures.append(
                f"{name} per trajectory {_fmt(now)} is above {tolerance:g}x the "
                f"baseline's {_fmt(base)}"
            )
    sources = report.get("sources") or {}
    for key, base_src in (baseline.get("sources") or {}).items():
        if key not in sources:
            continue
        for k, base_est in (base_src.get("pass^k") or {}).items():
            now_est = sources[key]["pass^k"].get(k)
            if now_est is None or base_est is None or base_est.get("value") is None:
                continue
            b = float(base_est["value"])
            if now_est.get("value") is None:
                failures.append(f"pass^{k}[{key}] is undefined now (baseline {_fmt(b)})")
            elif now_est.get("high") is None:  # an estimate without an interval
                if now_est["value"] < b:
                    failures.append(
                        f"pass^{k}[{key}] dropped: {_fmt(now_est['value'])} (no interval) is "
                        f"below the baseline's {_fmt(b)}"
                    )
            elif now_est["high"] < b:
                failures.append(
                    f"pass^{k}[{key}] dropped: {_fmt(now_est['value'])} "
                    f"[{_fmt(now_est['low'])}, {_fmt(now_est['high'])}] is below the "
                    f"baseline's {_fmt(b)}"
                )
    return failures
