"""The report's "Labels" section under an active design: how the labels were drawn, the
weighted estimates with their intervals, the learning phase, the labels left out and why."""

from __future__ import annotations

from typing import Any

from trajudge.report._model import Report
from trajudge.report.sections._numbers import fmt
from trajudge.report.sections._section import Section


def _estimate_text(e: dict[str, Any]) -> str:
    if e["value"] is None:
        return "n/a"
    if e["low"] is None:
        return fmt(e["value"])
    return f"{fmt(e['value'])} [{fmt(e['low'])}, {fmt(e['high'])}]"


def _learning_text(le: dict[str, Any]) -> str:
    return (
        f"learning phase: the first {le['labels']} draws uniform (probability "
        f"{fmt(le['probability'], 3)}, {le['items']} items), then "
        + ("probabilities fitted on their labels" if le["fitted"] else "waiting for their labels")
    )


def _excluded_text(ex: dict[str, int]) -> str:
    return (
        f"not weighted (no known probability): {ex['not_drawn']} labelled items the design did "
        f"not draw (labelled under another queue), {ex['outside_design']} outside the design"
    )


def _labels_drawn(report: Report) -> Section | None:
    """How the labels were drawn (``--strategy active``), the weights, the stopping status."""
    if not report.labels_drawn:
        return None
    lines: list[str] = []
    rows: list[list[str]] = []
    top = max(report.ks, default=1)  # the strictest pass^k, the one shown
    for d in report.labels_drawn:
        w = d["weights"]
        lines.append(
            f"rubric {d['rubric_id']}: drawn by the judges' uncertainty ({d['n_drawn']} of "
            f"{d['n_items']} items, probabilities {fmt(d['min_probability'], 3)} to "
            f"{fmt(d['max_probability'], 3)}); each label weighted by 1 / probability"
            + (f" ({fmt(w['min'])} to {fmt(w['max'])}, mean {fmt(w['mean'])})" if w["min"] else "")
        )
        lines.append(
            f"considered: the first {d['n_considered']} items of the draw order, "
            f"{d['n_labeled']} labels among them"
            + (
                f"; {d['n_labeled_beyond']} labels further on wait for the drawn items before them"
                if d["n_labeled_beyond"]
                else ""
            )
        )
        if d.get("learning"):
            lines.append(_learning_text(d["learning"]))
        ex = d.get("excluded", {})
        if ex.get("not_drawn") or ex.get("outside_design"):  # "beyond" is said just above
            lines.append(_excluded_text(ex))
        for judge, entry in d["judges"].items():
            if "estimates" not in entry:
                rows.append([d["rubric_id"], judge, *["n/a"] * 5, "no labels yet"])
                continue
            e = entry["estimates"]
            pass_k = entry.get("pass_k", {}).get("estimates", {}).get(str(top))
            rows.append(
                [d["rubric_id"], judge, _estimate_text(e["pass_rate"])]
                + ["n/a" if pass_k is None else _estimate_text(pass_k)]
                + [_estimate_text(e[s]) for s in ("tpr", "tnr", "kappa")]
                + [entry["stop"]["message"]]
            )
        lines.append(f"stop rule: {d.get('stop_when', 'kappa>=0.6@95%')}")
    lines.append(
        "estimates: active inference (Zrnic & Candès 2024), normal intervals; pass^k: "
        "Horvitz-Thompson within a task, Hajek over tasks, task-clustered, over each task's "
        "judged runs (every k in report.json); stop: a betting confidence sequence "
        "(Waudby-Smith & Ramdas 2024), valid however often it is read"
    )
    header = ["rubric", "judge", "pass rate", f"pass^{top}", "TPR", "TNR", "κ", "stop"]
    return Section("Labels", lines, header, rows)
