"""The plain-language lines on top of the report."""

from __future__ import annotations

import math

from trajudge.core import counted
from trajudge.judges.calls._local import LOCAL_DESCRIPTIONS, LOCAL_PREFIX
from trajudge.report._model import JudgeRow, Report, SourceResult
from trajudge.report.panel._sections import panel_summary
from trajudge.report.sections._alignment import alignment_summary
from trajudge.report.sections._numbers import fmt, fmt_est


def _pass(src: SourceResult | None, k: int) -> str:
    if src is None or k not in src.pass_hat:
        return "n/a"
    return fmt(src.pass_hat[k].value)


#: The two lines of trajudge.yaml that put a hosted judge in place of the embedded one.
REAL_JUDGE = "model: openai/gpt-4o-mini` and `api_key_env: OPENAI_API_KEY"


def _guidance(row: JudgeRow) -> list[str]:
    """What a judge's figures mean when they are degenerate, and what to do next: a judge
    that gives one verdict to everything has κ = 0 whatever the labels (more labels cannot
    narrow what is not there), and the embedded model is a stand-in, not a judge to trust."""
    cal, out = row.calibration, []
    tpr, tnr = cal.tpr.value, cal.tnr.value
    if {tpr, tnr} == {0.0, 1.0}:
        every = "fails" if tpr == 0.0 else "passes"
        out.append(
            f"judge {row.name} {every} every item it judged (TPR {fmt(tpr)}, TNR {fmt(tnr)}): "
            "its κ is 0 whatever the labels, so more labels cannot make it agree (the label "
            "budget's 'more labels needed' is n/a); change the judge, not the label count."
        )
    for model in sorted({m for m in row.models if m.startswith(LOCAL_PREFIX)}):
        what = LOCAL_DESCRIPTIONS.get(model.removeprefix(LOCAL_PREFIX), "a small model")
        out.append(
            f"judge {row.name} runs {model}, the embedded offline model ({what}), kept so the "
            "loop runs without a key or network: a stand-in, not a judge to trust. "
            f"For a real judge, put `{REAL_JUDGE}` under `judges:` in trajudge.yaml (the key "
            "stays in the environment) and run again."
        )
    return out


def summary_lines(report: Report) -> list[str]:
    """What a reader should take away, in sentences (judge by judge, then sources, flags)."""
    lines: list[str] = []
    phrase = report.labels_phrase
    k = max(report.ks)
    by_key = {s.key: s for s in report.sources}
    anchor = by_key.get("outcome") or by_key.get(report.label_source)
    for row in report.judges:
        cal = row.calibration
        kappa = cal.kappa
        tail = ""
        if row.source is not None:
            tail = f"; its pass^{k} is {_pass(row.source, k)}"
            if anchor is not None:
                tail += f" vs {_pass(anchor, k)} by the {anchor.title}"
        if math.isnan(kappa.value):
            errors = f"; {cal.n_errors} calls failed" if cal.n_errors else ""
            lines.append(
                f"judge {row.name}: agreement with {phrase} is undefined "
                f"({cal.n_items} items with both a verdict and a label{errors}){tail}."
            )
        elif math.isnan(kappa.low):
            lines.append(
                f"judge {row.name}: κ = {fmt(kappa.value)} against {phrase} over {cal.n_items} "
                f"items, without an interval (resamples of its {kappa.n} clusters too often "
                f"lack passes or fails: label more tasks){tail}."
            )
        elif kappa.low <= 0 <= kappa.high:
            lines.append(
                f"judge {row.name} is no better than chance against {phrase}: "
                f"κ = {fmt_est(kappa)} over {cal.n_items} items (the interval includes 0){tail}."
            )
        else:
            lines.append(
                f"judge {row.name} agrees with {phrase} at κ = {fmt_est(kappa)} "
                f"over {cal.n_items} items{tail}."
            )
        lines += _guidance(row)
        if row.corrected_pass_hat is not None and k in row.corrected_pass_hat.corrected:
            est = row.corrected_pass_hat.corrected[k]
            if not math.isnan(est.value):
                lines.append(
                    f"judge {row.name}: pass^{k} corrected for its errors is {fmt_est(est)}."
                )
    for crow in report.categorical:
        c = crow.calibration
        agg = c.kappa.get("aggregate")
        flips = (
            ""
            if c.flip_rate is None
            else f"; its verdict flips with the order on {c.flip_rate.value:.0%} of items"
        )
        first = (
            ""
            if c.first_position is None or math.isnan(c.first_position.value)
            else f", the side shown first is picked {c.first_position.value:.0%} of the time"
        )
        lines.append(
            f"{crow.kind} judge {crow.name}: agreement {fmt_est(c.agreement)} and κ = "
            f"{fmt_est(agg)} with {phrase} over {c.n_items} items{flips}{first}."
        )
    for ceiling in report.ceilings:
        who = "annotators" if report.labels_are_human else f"reference labellers ({phrase})"
        where = f" on rubric {ceiling.rubric_id}" if ceiling.rubric_id not in (None, "None") else ""
        lines.append(
            f"ceiling: {who} agree with each other at mean κ = "
            f"{fmt(ceiling.agreement.mean_kappa)} over {ceiling.agreement.n_items} items{where}."
        )
    for src in report.sources:
        if k in src.pass_hat:
            lines.append(f"{src.title}: pass^{k} = {fmt_est(src.pass_hat[k])}.")
    if report.n_gate_failed is not None:
        lines.append(
            f"{counted(report.n_gate_failed, 'trajectory')} failed a rule gate: they count as "
            "fails for every source except the raw environment outcome."
        )
    for flag in report.flags:
        lines.append(
            f"judge {flag.judge}: {flag.probe.replace('_', ' ')} bias flagged "
            f"({fmt_est(flag.estimate)}; {flag.rule})."
        )
    lines += panel_summary(report.panel)
    lines += report.fingerprint_changes
    lines += alignment_summary(report)
    if report.gates:
        if report.gate_failures:
            lines.append(f"CI gates: {len(report.gate_failures)} failed.")
        else:
            lines.append(f"CI gates: all {len(report.gates)} passed.")
    return lines
