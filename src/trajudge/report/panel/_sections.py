"""The panel sections of ``trajudge report``: agreement by slice, the Dawid-Skene jury and
the alternative annotator test, from ``report.panel`` (plain data, as in report.json)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from trajudge.report.sections._numbers import fmt
from trajudge.report.sections._section import Section

_METHOD = {"holm": "Holm", "bh": "Benjamini-Hochberg", "by": "Benjamini-Yekutieli"}


def _est(obj: Mapping[str, Any] | None) -> str:
    if obj is None or obj.get("value") is None:
        return "n/a"
    if obj.get("low") is None or obj.get("high") is None:
        return fmt(obj["value"])
    return f"{fmt(obj['value'])} [{fmt(obj['low'])}, {fmt(obj['high'])}]"


def _p(value: float | None) -> str:
    return "—" if value is None else f"{value:.3g}"


def _where(rubric: str, many: bool) -> str:
    return f" [{rubric}]" if many and rubric != "None" else ""


def slice_section(
    rubric: str, panel: Mapping[str, Any], *, many: bool, compact: bool
) -> Section | None:
    rows = panel.get("slices") or []
    if not rows:
        return None
    flagged = [r for r in rows if r["flagged"]]
    short = [r for r in rows if not r["tested"]]
    method = _METHOD.get(panel.get("slice_method", "holm"), panel.get("slice_method"))
    lines = [
        f"{len(rows) - len(short)} slices tested (each against the rest of the labelled items, "
        f"kappa difference, task-clustered bootstrap), p-values adjusted by {method} over "
        "every slice and judge; flagged: adjusted p <= 0.05 and kappa below the rest's",
    ]
    lines += [
        f"judge {r['judge']} is unreliable on {r['dimension']} = {r['value']}: kappa "
        f"{_est(r['kappa'])} vs {_est(r['kappa_rest'])} elsewhere (adjusted p "
        f"{_p(r['p_adjusted'])})"
        for r in flagged
    ]
    if short:
        lines.append(
            f"{len(short)} slices have too few labels to be tested (20 labelled items with 5 "
            "of each class): the 'more labels' column says how many each needs"
        )
    show = flagged if compact else rows
    if compact and not show:
        lines.append("no slice flagged (report.md lists every slice)")
    table = [
        [
            r["judge"],
            f"{r['dimension']} = {r['value']}",
            str(r["n"]),
            _est(r["kappa"]),
            _est(r["tpr"]),
            _est(r["tnr"]),
            _est(r["delta"]),
            _p(r["p_adjusted"]),
            "yes" if r["flagged"] else "",
            str(r["n_more"]) if r["n_more"] else "",
        ]
        for r in show
    ]
    header = [
        "judge",
        "slice",
        "labels",
        "κ",
        "TPR",
        "TNR",
        "κ − rest",
        "adj. p",
        "flagged",
        "more labels",
    ]
    return Section(
        f"Agreement by slice{_where(rubric, many)}",
        lines,
        header if table else [],
        table,
    )


def jury_section(rubric: str, panel: Mapping[str, Any], *, many: bool) -> Section | None:
    jury = panel.get("jury")
    if not jury:
        return None
    ds = jury["dawid_skene"]
    best = jury["best_single_judge"]
    lines = [
        f"Dawid-Skene fitted on {jury['n_dev']} labelled dev items (judges and annotators), "
        f"scored on {jury['n_holdout']} holdout items from the judges alone, against the "
        "annotators' consensus",
        f"jury − best single judge ({best}, best on dev): κ {_est(jury['diff_vs_best'])}",
    ]
    rows = [[name, _est(k)] for name, k in jury["kappa"].items()]
    if len(ds["classes"]) == 2:
        weights = ", ".join(
            f"{r} {fmt(v['weight'])}"
            for r, v in ds["raters"].items()
            if v.get("weight") is not None
        )
        lines.append(f"weights (log diagnostic odds ratio): {weights}")
    else:  # categories: each rater's K x K confusion; its accuracy under the fitted prior
        accuracy = ", ".join(f"{r} {fmt(v['accuracy'])}" for r, v in ds["raters"].items())
        lines.append(
            f"classes: {', '.join(str(c) for c in ds['classes'])}; each rater's chance of "
            f"giving the true class (Dawid-Skene's confusion matrices and prior): {accuracy}"
        )
    return Section(
        f"Jury: whom to trust (Dawid-Skene){_where(rubric, many)}",
        lines,
        ["verdict of", "κ on holdout [95% CI]"],
        rows,
    )


def alt_test_section(rubric: str, panel: Mapping[str, Any], *, many: bool) -> Section | None:
    found = panel.get("alt_test") or {}
    if not found:
        return None
    first = next(iter(found.values()))
    lines = [
        "Can the judge replace an annotator? Leave one annotator out; the judge wins an item "
        "when it agrees with the others at least as well as the annotator does; tested with "
        f"epsilon = {fmt(first['epsilon'])} and Benjamini-Yekutieli at q = {fmt(first['q'])} "
        "(Calderon et al. 2025); the judge passes when it can replace at least half of them",
    ]
    rows = []
    for judge, t in found.items():
        tested = len(t["annotators"])
        humans = [a["rho_human"] for a in t["annotators"] if a["rho_human"] is not None]
        rows.append(
            [
                judge,
                str(tested),
                fmt(t["omega"]),
                fmt(t["advantage"]),
                fmt(sum(humans) / len(humans)) if humans else "n/a",
                "yes" if t["passed"] else "no",
                ", ".join(t["skipped"]) or "—",
            ]
        )
    return Section(
        f"Alternative annotator test{_where(rubric, many)}",
        lines,
        [
            "judge",
            "annotators tested",
            "winning rate ω",
            "judge's ρ",
            "annotators' ρ",
            "passes",
            "too few items",
        ],
        rows,
    )


def panel_sections(
    panel: Mapping[str, Mapping[str, Any]], *, compact: bool = False
) -> list[Section]:
    """Every panel section of every rubric that has one (notes go to report.json only)."""
    many = len(panel) > 1
    out: list[Section] = []
    for rubric, p in panel.items():
        for sec in (
            slice_section(rubric, p, many=many, compact=compact),
            jury_section(rubric, p, many=many),
            alt_test_section(rubric, p, many=many),
        ):
            if sec is not None:
                out.append(sec)
    return out


def panel_summary(panel: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The panel's take-aways for the report's summary: flagged slices, the alt-test."""
    lines = []
    for p in panel.values():
        for r in p.get("slices") or []:
            if r["flagged"]:
                lines.append(
                    f"judge {r['judge']} is unreliable on {r['dimension']} = {r['value']}: "
                    f"κ = {_est(r['kappa'])} there vs {_est(r['kappa_rest'])} elsewhere "
                    f"(adjusted p {_p(r['p_adjusted'])})."
                )
        for judge, t in (p.get("alt_test") or {}).items():
            if not t["annotators"]:
                continue
            verdict = "can" if t["passed"] else "cannot"
            lines.append(
                f"judge {judge} {verdict} replace an annotator (alternative annotator test: "
                f"winning rate {fmt(t['omega'])} over {len(t['annotators'])} annotators, "
                f"epsilon {fmt(t['epsilon'])})."
            )
    return lines
