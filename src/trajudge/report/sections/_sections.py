"""The report as titled sections of text lines and tables, shared by every renderer.

Cells are plain strings (user data included, unescaped): each renderer escapes for its own
format (Rich markup off, Markdown pipes, HTML through Jinja2's autoescape).
"""

from __future__ import annotations

import math

from trajudge.calibration import Estimate
from trajudge.core import counted
from trajudge.report._model import Report, SourceResult
from trajudge.report.inputs._rubrics import threshold_text
from trajudge.report.panel._sections import panel_sections
from trajudge.report.sections._alignment import alignment_sections
from trajudge.report.sections._numbers import fmt, fmt_est
from trajudge.report.sections._section import Section
from trajudge.report.sections._sections_categorical import categorical_sections
from trajudge.report.sections._sections_labels import _labels_drawn

DASH = "—"
_MAX_IDS = 12


def _ids(ids: list[str]) -> str:
    head = ", ".join(ids[:_MAX_IDS])
    return head + (f" … (+{len(ids) - _MAX_IDS})" if len(ids) > _MAX_IDS else "")


def _cost(value: float | None) -> str:
    return "n/a" if value is None or math.isnan(value) else f"${value:.3f}"


def _pass_cells(
    src: SourceResult | None, ks: list[int], intervals: bool, table: str = "hat"
) -> list[str]:
    """``src``'s pass^k (``table`` "hat") or pass@k ("at") for each k."""
    cells = []
    for k in ks:
        est: Estimate | None = None
        if src is not None:
            est = (src.pass_hat if table == "hat" else src.pass_at).get(k)
        cells.append(fmt_est(est) if intervals else fmt(None if est is None else est.value))
    return cells


def main_table(report: Report, *, intervals: bool = True) -> Section:
    """One row per judge and per other source: the headline figures, κ against the labels
    beside pass^k (the rest is in :func:`details_table`, so this one fits a laptop screen)."""
    header = [
        "source",
        "κ [95% CI]",
        "TPR",
        "TNR",
        "errors",
        *(f"pass^{k}" for k in report.ks),
    ]
    rows = []
    for j in report.judges:
        cal = j.calibration
        rows.append(
            [
                f"judge {j.name}",
                fmt_est(cal.kappa),
                fmt(cal.tpr.value),
                fmt(cal.tnr.value),
                f"{cal.n_errors} / {cal.n_rows + cal.n_errors}",
                *_pass_cells(j.source, report.ks, intervals),
            ]
        )
    for src in report.sources:
        rows.append([src.title, *([DASH] * 4), *_pass_cells(src, report.ks, intervals)])
    lines = [
        f"κ, TPR and TNR: each judge against {report.labels_phrase}, one verdict per "
        "trajectory (its calls averaged over orders and samples; an ordinal mean score against "
        "the pass threshold).",
        "pass^k: all k trials of a task pass (unbiased estimator, averaged over tasks). Every "
        "95% bootstrap interval resamples tasks (items when task ids are unknown).",
    ]
    if report.n_gate_failed is not None:
        lines.append(report.gate_rule)
    return Section("Judges and verdict sources", lines, header, rows)


def details_table(report: Report, *, intervals: bool = True, pass_at: bool = True) -> Section:
    """The same rows as :func:`main_table` with the other figures: chance-robust agreement,
    position flips, cost and latency, and pass@k."""
    header = [
        "source",
        "AC1",
        "agreement",
        "flip rate",
        "$ / 1k judgments",
        "median latency (s)",
        *(f"pass@{k}" for k in report.ks if pass_at),
    ]
    at = report.ks if pass_at else []
    rows = []
    for j in report.judges:
        cal = j.calibration
        rows.append(
            [
                f"judge {j.name}",
                fmt(cal.ac1.value),
                fmt(cal.agreement.value),
                fmt_est(cal.flip_rate) if cal.flip_rate is not None else DASH,
                _cost(cal.cost_per_1k),
                fmt(cal.median_latency_s),
                *_pass_cells(j.source, at, intervals, "at"),
            ]
        )
    for src in report.sources:
        rows.append([src.title, *([DASH] * 5), *_pass_cells(src, at, intervals, "at")])
    lines = [
        "AC1: Gwet's agreement coefficient (robust when one verdict dominates); flip rate: "
        "the share of items whose verdict changes with the presentation order."
        + (" pass@k: at least one of k trials passes." if pass_at else "")
    ]
    return Section("Agreement details, cost and pass@k", lines, header, rows)


def _configs(report: Report) -> Section | None:
    """Which judge configuration produced each judge's figures (model, endpoint, hash)."""
    rows = []
    for j in report.judges:
        c = j.config or {}
        sha = c.get("sha256")
        rows.append(
            [
                j.name,
                str(c.get("model") or ", ".join(j.models) or DASH),
                str(c.get("api_base") or DASH),
                sha[:12] if sha else "unrecorded",
            ]
        )
    if not any(j.config is not None for j in report.judges):
        return None
    lines = [
        "Every figure of a judge comes from one configuration: the hash covers the model, "
        "api_base, request parameters, rubric, prompt and response schema (never a key); "
        "'unrecorded' = judged before trajudge stored configurations."
    ]
    return Section("Judge configurations", lines, ["judge", "model", "api_base", "config"], rows)


def _flags(report: Report) -> Section:
    rows = [
        [f.judge, f.probe.replace("_", " "), fmt_est(f.estimate), f.rule, f.detail]
        for f in report.flags
    ]
    lines = [] if rows else ["No bias probe fired."]
    return Section(
        "Bias flags",
        lines,
        ["judge", "probe", "estimate [95% CI]", "rule", "evidence"] if rows else [],
        rows,
    )


def _ceiling(report: Report) -> Section:
    who = "Human ceiling" if report.labels_are_human else f"Ceiling ({report.labels_phrase})"
    rows = [
        [
            str(c.rubric_id),
            str(c.agreement.n_annotators),
            str(c.agreement.n_items),
            fmt(c.agreement.mean_kappa),
            fmt(c.agreement.alpha),
        ]
        for c in report.ceilings
    ]
    lines = [] if rows else ["No item has labels from two labellers: no ceiling to show."]
    header = ["rubric", "labellers", "items with 2+ labels", "mean pairwise κ", "α"]
    return Section(who, lines, header if rows else [], rows)


def _budget(report: Report) -> Section:
    rows = []
    for j in report.judges:
        b = j.calibration.budget
        rows.append(
            [
                j.name,
                str(b.n),
                fmt(b.half_width),
                fmt(b.target),
                "n/a" if math.isnan(b.n_more) else str(int(b.n_more)),
            ]
        )
    lines = [
        f"{report.n_labeled_items} items with a consensus of {report.labels_phrase}; "
        f"{report.n_skipped_labels} skipped labels; {len(report.tied_items)} tied items"
        + (f" ({_ids(report.tied_items)})" if report.tied_items else "")
        + "."
    ]
    header = ["judge", "labelled items", "κ half-width", "target", "more labels needed"]
    return Section("Label budget", lines, header if rows else [], rows)


def _corrected(report: Report) -> Section:
    rows = []
    for j in report.judges:
        rate = j.corrected_rate
        cells = [j.name]
        if rate is None:
            cells += ["n/a"] * 5
        else:
            gated = rate.n_gated / rate.n if rate.n else math.nan
            cells += [fmt_est(rate.raw), fmt(rate.tpr), fmt(rate.tnr), fmt(gated)]
            cells.append(fmt_est(rate.corrected))
        ck = j.corrected_pass_hat
        cells += [fmt_est(ck.corrected.get(k)) if ck is not None else "n/a" for k in report.ks]
        rows.append(cells)
    header = [
        "judge",
        "raw pass rate",
        "TPR",
        "TNR",
        "gated share g",
        "corrected pass rate",
        *(f"corrected pass^{k}" for k in report.ks),
    ]
    lines = [
        "Rogan-Gladen corrected pass rate: corrected = (1 - g)·(p + TNR - 1) / (TPR + TNR - 1) "
        "with p = raw / (1 - g) the judge's pass rate on the trajectories that passed their "
        f"gates, TPR and TNR its rates against {report.labels_phrase} (the main table's) and "
        "g the share that failed a rule gate (certain fails). Judge-corrected pass^k carries "
        "the same error rates into each task's trials. 95% intervals resample tasks."
    ]
    return Section("Corrected pass rates", lines, header if rows else [], rows)


def _unstable(report: Report) -> Section:
    lines = []
    for src in report.all_sources():
        if src.unstable_tasks:
            lines.append(
                f"{src.title}: {counted(len(src.unstable_tasks), 'unstable task')} (some trials "
                f"pass, some fail): {_ids(src.unstable_tasks)}"
            )
    for j in report.judges:
        items = j.calibration.unstable_items
        if items:
            lines.append(
                f"judge {j.name}: {counted(len(items), 'unstable item')} (verdict changes across "
                f"samples or orders): {_ids(items)}"
            )
    return Section("Unstable tasks and items", lines or ["None."])


def _coverage(report: Report) -> Section | None:
    cov = report.coverage
    if cov is None:
        return None
    share = cov["boundary_share"]
    lines = [
        f"{cov['n_boundary']} of {counted(cov['n_cases'], 'trajectory')} run into a boundary case "
        f"({fmt(None if share is None else share * 100, 0)}%); pass^k by the environment outcome.",
        *cov["warnings"],
    ]
    ks = [c for c in (cov["table"][0] if cov["table"] else {}) if c.startswith("pass^")]
    rows = [
        [str(r["kind"]), str(r["cases"]), fmt(r["share"]), *(fmt(r[c]) for c in ks)]
        for r in cov["table"]
    ]
    return Section("Boundary coverage", lines, ["kind", "cases", "share", *ks], rows)


def _usage(report: Report) -> Section:
    u = report.usage
    names = {
        "cost_usd": "cost ($)",
        "tokens": "tokens",
        "turns": "turns",
        "steps": "steps",
        "latency_s": "latency (s)",
    }
    rows = [[names[k], fmt(v, 4) if v is not None else "n/a"] for k, v in u.items() if k in names]
    fp = report.fingerprint
    lines = []
    if fp is not None:
        lines.append("agent fingerprint: " + ", ".join(f"{k}={v}" for k, v in fp.items()))
    lines += report.fingerprint_changes
    return Section("Agent usage per trajectory", lines, ["mean per trajectory", "value"], rows)


def _gates(report: Report) -> Section | None:
    if not report.gates and not report.gate_failures:
        return None
    lines = [f"checked: {', '.join(report.gates)}" if report.gates else "checked: baseline"]
    lines += [f"FAILED: {r}" for r in report.gate_failures] or ["every gate passed"]
    return Section("CI gates", lines)


def _notes(report: Report) -> Section:
    lines = [f"labels: {report.labels_phrase}"]
    for rubric, threshold in report.label_thresholds.items():
        where = "" if rubric == "None" else f" (rubric {rubric})"
        if threshold["value"] is not None:
            lines.append(
                f"label >= {fmt(threshold['value'])} is a pass{where}: {threshold['source']}"
            )
    for j in report.judges:
        t = j.calibration.threshold
        if t.value is not None:
            lines.append(
                f"judge {j.name}: mean score >= {fmt(t.value)} is a pass "
                f"({threshold_text(t, j.rubric_id)})"
            )
    lines += report.notes
    lines.append(f"bootstrap: {report.n_boot} resamples, seed {report.seed}")
    return Section("Notes", lines)


def sections(report: Report, *, compact: bool = False) -> list[Section]:
    """Every section in reading order (the summary lines come first, outside).

    ``compact`` (the terminal) drops the intervals of pass^k and the pass@k columns.
    """
    if report.categorical and not report.judges and not report.sources:
        # only pairwise / nominal judges: no pass/fail, no pass^k, no agent runs to show
        out = categorical_sections(report, intervals=not compact)
        out += [_ceiling(report), _budget(report)]
        out += panel_sections(report.panel, compact=compact)
        return out + [s for s in (_gates(report),) if s is not None] + [_notes(report)]
    out = [
        main_table(report, intervals=not compact),
        details_table(report, intervals=not compact, pass_at=not compact),
    ]
    out += [s for s in (_configs(report),) if s is not None]
    out += categorical_sections(report, intervals=not compact)
    out += [
        _flags(report),
        _ceiling(report),
        _budget(report),
        _corrected(report),
        _unstable(report),
    ]
    out += [s for s in (_coverage(report), _gates(report), _labels_drawn(report)) if s]

    out += panel_sections(report.panel, compact=compact)
    out += alignment_sections(report.alignment, report.ks)
    out += [_usage(report), _notes(report)]
    return out
