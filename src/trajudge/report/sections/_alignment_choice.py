"""The report's "Method choice" section: how the saved method was chosen on dev, and why not.

It renders the ``choice`` block of an aligned judge's record (``trajudge align``): each method's
cross-validated kappa on dev beside the judge's on the same items, its rule with what is wrong
with it (a threshold no score on the scale reaches, or one every score passes), and the decision.
When the holdout then says the opposite of dev, it says so: the choice is not revised on the
holdout, whose figures would otherwise be the best of several draws.
"""

from __future__ import annotations

from typing import Any

from trajudge.report.sections._numbers import fmt
from trajudge.report.sections._section import Section


def holdout_disagrees(rec: dict[str, Any]) -> str | None:
    """A sentence when the saved method, chosen on dev, shows a loss on the holdout."""
    choice = rec.get("choice") or {}
    m = choice.get("method")
    if m is None or m == "fewshot" or rec.get("version") is None:
        return None
    v = (rec.get("methods", {}).get(m) or {}).get("verdicts")
    if not v or v["kappa"]["verdict"] != "loss":
        return None
    k = v["kappa"]
    return (
        f"The holdout disagrees with dev: {m}'s κ there is {fmt(k['before']['value'])} -> "
        f"{fmt(k['after']['value'])}, a loss (difference {fmt(k['difference']['value'])} "
        f"[{fmt(k['difference']['low'])}, {fmt(k['difference']['high'])}]). It was chosen on "
        "dev and is not re-chosen on the holdout; align again with more labelled dev tasks."
    )


def choice_section(rec: dict[str, Any]) -> Section | None:
    """The "Method choice" section of a record (None for records saved before it existed)."""
    choice = rec.get("choice")
    if not choice:
        return None
    cv = choice.get("dev_cv")
    lines = []
    if cv:
        lines.append(
            f"Chosen on dev only: {cv['n_folds']}-fold cross-validation over the "
            f"{cv['n_tasks']} labelled dev tasks (whole tasks per fold): each method is fitted "
            "on the other folds and gives its verdicts on the fold left out; CV κ is Cohen's κ "
            f"of those verdicts on all {cv['n_items']} labelled dev items, beside the judge's "
            f"κ as it stands on the same items ({fmt(cv['judge_kappa'])}). The holdout figures "
            "above played no part in the choice."
        )
    if choice.get("refusal"):
        lines.append(str(choice["refusal"]).replace("not saved:", "Not saved:", 1))
    else:
        lines.append(f"Saved: {choice['reason']}.")
    disagrees = holdout_disagrees(rec)
    if disagrees:
        lines.append(disagrees)
    judge = fmt(cv["judge_kappa"]) if cv else "n/a"
    rows = []
    for r in choice.get("rows", []):
        rule = r.get("rule") or "—"
        if r.get("flag"):
            rule = f"{rule}: {r['flag']}"
        name = f"{r['method']} (optional)" if r["method"] == "stack" else r["method"]
        rows.append([name, rule, fmt(r.get("cv_kappa")), judge, r["decision"]])
    header = ["method", "rule (fitted on all of dev)", "CV κ", "judge κ", "decision"]
    return Section(f"Method choice: {rec['name']}", lines, header, rows)
