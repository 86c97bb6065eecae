"""The report's sections for pairwise and nominal judges: their measures, confusion matrices
and the systems' win rates (each judge with its own measures; no pass/fail, no pass^k)."""

from __future__ import annotations

from trajudge.calibration import Count, Estimate
from trajudge.report._categorical import CategoricalRow
from trajudge.report._model import Report
from trajudge.report.sections._numbers import fmt, fmt_est
from trajudge.report.sections._section import Section

DASH = "—"


def _count(c: Count | None) -> str:
    return DASH if c is None else f"{fmt(c.value)} ({c.correct}/{c.n})"


def _est(e: Estimate | None, intervals: bool) -> str:
    if e is None:
        return DASH
    return fmt_est(e) if intervals else fmt(e.value)


def _measures(rows: list[CategoricalRow], intervals: bool) -> Section:
    header = [
        "judge", "rubric", "kind", "items", "acc ab", "acc ba", "acc mean", "consistency",
        "flip rate", "first-position", "κ ab", "κ ba", "κ aggregate", "agreement", "errors",
    ]  # fmt: skip
    table = []
    for r in rows:
        c = r.calibration
        table.append(
            [
                r.name,
                DASH if r.rubric_id is None else str(r.rubric_id),
                r.kind,
                str(c.n_items),
                _count(c.accuracy.get("ab")),
                _count(c.accuracy.get("ba")),
                fmt(c.accuracy_average),
                _count(c.consistency) if c.consistency.n else DASH,
                _est(c.flip_rate, intervals),
                _est(c.first_position, intervals),
                _est(c.kappa.get("ab"), False),
                _est(c.kappa.get("ba"), False),
                _est(c.kappa.get("aggregate"), intervals),
                _est(c.agreement, intervals),
                str(c.n_errors),
            ]
        )
    lines = [
        "Against the majority label of each item (ties of the labels left out). acc: share "
        "correct per presentation order, a missing verdict never correct; consistency: same "
        "verdict in both orders; flip rate: share judged in both orders whose verdicts "
        "differ (counted as the aggregate's inconsistent value); first-position: share of "
        "decisive verdicts that picked the side shown first (0.5 = no position bias); κ: "
        "Cohen's kappa over every category, ties included; aggregate = the verdict of both "
        "orders and samples, the one every other figure uses."
    ]
    for r in rows:
        if r.members:
            lines.append(f"{r.name}: the majority of {', '.join(r.members)}")
    return Section("Pairwise and categorical judges", lines, header, table)


def _confusion(r: CategoricalRow) -> Section:
    c = r.calibration
    rows = [
        [f"gold {g}", *(str(n) for n in counts)]
        for g, counts in zip(c.labels, c.confusion, strict=False)
    ]
    lines = [] if rows else ["No labelled item has a verdict of this judge."]
    return Section(f"Confusion: {r.name}", lines, ["", *c.labels] if rows else [], rows)


def _wins(rows: list[CategoricalRow], intervals: bool) -> Section | None:
    table = [
        [
            r.name,
            w.system,
            str(w.wins),
            str(w.ties),
            str(w.losses),
            _est(w.rate, intervals),
        ]
        for r in rows
        for w in r.calibration.win_rates or []
    ]
    if not table:
        return None
    lines = ["win rate = (wins + ties / 2) / pairs, from the aggregate verdict of each pair"]
    header = ["judge", "system", "wins", "ties", "losses", "win rate"]
    return Section("Win rates", lines, header, table)


def categorical_sections(report: Report, *, intervals: bool = True) -> list[Section]:
    """The categorical judges' sections (none when the report has no such judge)."""
    rows = report.categorical
    if not rows:
        return []
    out = [_measures(rows, intervals)]
    out += [_confusion(r) for r in rows]
    wins = _wins(rows, intervals)
    return out + ([wins] if wins is not None else [])
