"""The report's "Alignment" sections, summary lines and reliability diagram.

Everything here renders an aligned judge's record (``Store.aligned_judge``; built by
``trajudge align``): per method, kappa, agreement, TPR and TNR before and after ON THE
HOLDOUT with their intervals and the interval of the difference; Brier score and ECE; the
optional stack's weights; trust or escalate; and the pass rate four ways per source. A
difference whose interval includes 0 is reported as "no measurable gain", never as a gain.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from trajudge.report._model import Report, labels_phrase
from trajudge.report.sections._alignment_choice import choice_section, holdout_disagrees
from trajudge.report.sections._numbers import fmt
from trajudge.report.sections._section import Section

METRICS = (("kappa", "κ"), ("agreement", "agreement"), ("tpr", "TPR"), ("tnr", "TNR"))
ORDER = ("threshold", "calibrate", "fewshot", "stack")
WORDS = {"gain": "gain", "loss": "loss", "no measurable gain": "no measurable gain"}


def _est(d: dict[str, Any] | None, digits: int = 2) -> str:
    if not d or d.get("value") is None:
        return "n/a"
    if d.get("low") is None or d.get("high") is None:
        return fmt(d["value"], digits)
    return f"{fmt(d['value'], digits)} [{fmt(d['low'], digits)}, {fmt(d['high'], digits)}]"


def _method_name(m: str, r: dict[str, Any]) -> str:
    return f"{m} (optional)" if r.get("optional") else m


def _rule_text(rec: dict[str, Any]) -> str:
    rule = rec["rule"]
    text = _rule_only(rec)
    return f"{text}: {rule['flag']}" if rule.get("flag") else text


def _rule_only(rec: dict[str, Any]) -> str:
    rule = rec["rule"]
    feature = "mean expected score" if rule.get("feature") == "expected_score" else "mean score"
    threshold = fmt(rule.get("threshold"))
    if rule["method"] == "threshold":
        return f"{feature} >= {threshold} (the threshold fitted on dev)"
    if rule["method"] == "calibrate":
        cal = rule.get("calibrator") or {}
        same = (
            f", the same as {feature} >= {threshold}" if rule.get("threshold") is not None else ""
        )
        return (
            f"calibrated probability of pass >= 0.5 ({cal.get('method', '')} on the "
            f"{feature}){same}"
        )
    n = len((rec.get("rubric") or {}).get("examples", [])) or rec.get("n_examples", 0)
    return (
        f"the few-shot rubric (version {rec.get('rubric_version')}, {n} examples from dev "
        f"disagreements), {feature} >= {threshold}"
    )


def _comparison(rec: dict[str, Any], phrase: str) -> Section:
    split = rec["split"]
    saved = "not saved" if rec.get("version") is None else f"version {rec['version']}"
    when = f" ({rec['created_at']})" if rec.get("created_at") else ""
    verdict = "Its verdict" if rec.get("version") is not None else "Its verdict would have been"
    lines = [
        f"Aligned judge {rec['name']} ({saved}) of judge "
        f"{rec['base_judge']}, fitted on dataset {rec['dataset']}{when} "
        f"against {phrase}: {split['n_dev_items']} labelled dev items ({split['n_dev_tasks']} "
        f"tasks) for fitting, {split['n_holdout_items']} labelled holdout items "
        f"({split['n_holdout_tasks']} tasks) for every figure below (tasks split by a hash "
        f"of the task id: dev_share {split['dev_share']}, salt {split['salt']!r}).",
        f"{verdict}: {_rule_text(rec)}.",
        f"Before = the judge as it stands (mean score >= {fmt(rec.get('threshold'))}); after = "
        "the method's verdicts. 95% intervals resample tasks; the difference (after - before) "
        "is bootstrapped on the same draws. A difference whose interval includes 0 is 'no "
        "measurable gain'.",
    ]
    methods = rec.get("methods", {})
    fs = methods.get("fewshot")
    if fs is not None:
        p = fs["params"]
        lines.append(
            f"fewshot: {len(p['examples'])} dev disagreements became examples; the new rubric "
            f"(version {p['rubric_version']}, {p['rubric_path']}) re-scored "
            f"{len(p['tasks'])} labelled holdout tasks: {fs['calls']} calls stored "
            f"({fs['errors']} errors, never scored); compared on the {fs['n_items']} labelled "
            "holdout items both judges scored."
        )
    rows = []
    for m in ORDER:
        r = methods.get(m)
        if r is None:
            continue
        v = r.get("verdicts")
        if v is None:
            rows.append([_method_name(m, r), "—", "n/a", "n/a", "n/a", "no holdout item", "0"])
            continue
        for key, label in METRICS:
            c = v[key]
            rows.append(
                [
                    _method_name(m, r),
                    label,
                    _est(c["before"]),
                    _est(c["after"]),
                    _est(c["difference"]),
                    WORDS.get(c["verdict"], c["verdict"]),
                    str(v["n_items"]),
                ]
            )
    header = ["method", "metric", "before", "after", "difference", "verdict", "items"]
    return Section(f"Alignment: {rec['name']}", lines, header, rows)


def _probabilities(rec: dict[str, Any]) -> Section | None:
    rows = []
    for m in ORDER:
        r = rec.get("methods", {}).get(m)
        if r is None or r.get("probabilities") is None:
            continue
        p = r["probabilities"]
        for key, label in (("brier", "Brier score"), ("ece", "ECE")):
            c = p[key]
            rows.append(
                [
                    _method_name(m, r),
                    label,
                    _est(c["before"], 3),
                    _est(c["after"], 3),
                    _est(c["difference"], 3),
                    WORDS.get(c["verdict"], c["verdict"]),
                ]
            )
    if not rows:
        return None
    lines = [
        "Probability of pass on the holdout (lower is better). Before: the share of the "
        "judge's calls that pass; after: the fitted probability. ECE over 10 equal-width "
        "bins (biased upward on few items: compare before and after, not with 0). The "
        "reliability diagram is under Figures."
    ]
    header = ["method", "metric", "before", "after", "difference", "verdict"]
    return Section(f"Calibration: {rec['name']}", lines, header, rows)


def _stack(rec: dict[str, Any]) -> Section | None:
    r = rec.get("methods", {}).get("stack")
    if r is None:
        return None
    weights = r["params"].get("weights", [])
    rows = [
        [
            w["name"],
            fmt(w["coefficient"]),
            f"{fmt(w['importance'], 4)} ± {fmt(w['importance_sd'], 4)}",
        ]
        for w in weights
    ]
    lines = [
        "stack is optional (off by default) and never gives the aligned judge's verdicts: a "
        "logistic regression on the judge's outputs and the rule checks, fitted on dev. "
        "Coefficient: log-odds per standard deviation on dev; importance: rise of the "
        "out-of-fold Brier score when the input is shuffled (0: unused), largest first."
    ]
    return Section(
        f"Stack inputs (optional): {rec['name']}",
        lines,
        ["input", "coefficient", "importance ± sd"],
        rows,
    )


def _trust(rec: dict[str, Any]) -> Section | None:
    t = rec.get("trust")
    if t is None:
        return None
    th = t["threshold"]
    source = (
        "calibrated probability p (confidence max(p, 1 - p))"
        if t.get("source") == "calibrate"
        else "agreement of the judge's calls across orders and samples"
    )
    lines = [
        f"Confidence per item: {source}. The threshold is chosen on dev so that agreement with "
        f"the labels on kept items is >= {fmt(th['target'])} with risk {fmt(th['alpha'])} "
        "(fixed-sequence exact binomial tests, Jung et al. 2024).",
    ]
    if th["certified"]:
        lines.append(
            f"Threshold: confidence >= {fmt(th['value'], 3)}; on dev it keeps {th['n_kept']} of "
            f"{th['n_dev']} items at agreement {fmt(th['agreement'])} (exact lower bound "
            f"{fmt(th['lower_bound'])})."
        )
    else:
        n_min = math.ceil(math.log(th["alpha"]) / math.log(th["target"]))
        lines.append(
            f"No threshold certified on the {th['n_dev']} dev items (the first test needs at "
            f"least {n_min} kept dev items, nearly all agreeing): every item is escalated."
        )
    lines.append(
        f"Holdout: coverage (share the judge keeps) {_est(t['coverage'])}, achieved agreement "
        f"on kept items {_est(t['agreement'])} over {t['n_kept']} of {t['n_items']} items."
    )
    n_esc = len(rec.get("escalated", []))
    lines.append(
        f"{n_esc} items outside the labelled dev set are escalated to people: "
        "`trajudge label --strategy escalated` queues them first, least confident first."
    )
    return Section(f"Trust or escalate: {rec['name']}", lines)


def _pass_rates(rec: dict[str, Any], ks: Sequence[int]) -> Section | None:
    est = rec.get("estimates") or {}
    rows = []
    names = {"judge": f"judge {rec['base_judge']}", "aligned": f"aligned {rec['name']}"}

    def cell(d: dict[str, Any] | None) -> str:
        if not d:
            return "n/a"
        w = d.get("width")
        return _est(d) + ("" if w is None else f" (width {fmt(w)})")

    for key, title in names.items():
        s = est.get(key)
        if not s or not s.get("rate"):
            continue
        by = {r["estimator"]: r for r in s["rate"]}
        n = f"{s['n_labelled']} / {s['n_trajectories']}"
        rows.append(
            [
                title,
                "pass rate",
                fmt(by["judge"]["value"]),
                cell(by["labels_only"]),
                cell(by["rogan_gladen"]),
                cell(by["ppi"]),
                n,
            ]
        )
        for k in ks:
            e = s.get("pass_k", {}).get(str(k))
            if e is None:
                continue
            tasks = f"{e['n_labelled_tasks']} / {e['n_labelled_tasks'] + e['n_unlabelled_tasks']}"
            rows.append(
                [
                    title,
                    f"pass^{k}",
                    fmt(e["judge"]),
                    cell(e["labels_only"]),
                    cell(e["rogan_gladen"]),
                    cell(e["ppi"]),
                    f"{tasks} tasks",
                ]
            )
    if not rows:
        return None
    lines = [
        "On the holdout trajectories: the judge's verdicts alone; the labels alone; the "
        "judge corrected with its TPR/TNR on the labelled ones (Rogan-Gladen); and "
        "prediction-powered (PPI++: the judge on every trajectory, its bias measured on the "
        "labelled ones, valid when those are a random sample). A narrower PPI interval than "
        "the labels-only one is what the judge buys; with every trajectory labelled there is "
        "nothing to buy and PPI equals the labels alone.",
    ]
    header = ["source", "estimand", "judge only", "labels only", "Rogan-Gladen", "PPI", "labelled"]
    return Section(f"Pass rates with judges and labels: {rec['name']}", lines, header, rows)


def alignment_sections(records: Sequence[dict[str, Any]], ks: Sequence[int]) -> list[Section]:
    """The alignment sections of aligned-judge records (``Report.alignment``), in order."""
    out: list[Section] = []
    for rec in records:
        phrase = labels_phrase(rec["label_source"], rec["label_source"] == "human")
        out.append(_comparison(rec, phrase))
        parts = (choice_section(rec), _probabilities(rec), _stack(rec), _trust(rec),
                 _pass_rates(rec, ks))  # fmt: skip
        out += [s for s in parts if s is not None]
        if rec.get("notes"):
            out.append(Section(f"Alignment notes: {rec['name']}", list(rec["notes"])))
    return out


def alignment_summary(report: Report) -> list[str]:
    """One line per aligned judge: kappa on the holdout before -> after, in plain words."""
    lines = []
    for rec in report.alignment:
        m = rec["rule"]["method"]
        v = (rec.get("methods", {}).get(m) or {}).get("verdicts")
        if v is None:
            continue
        k = v["kappa"]
        word = WORDS.get(k["verdict"], k["verdict"])
        cv = (rec.get("choice") or {}).get("dev_cv") or {}
        chosen = ""
        if m in cv.get("kappa", {}):
            chosen = (
                f", chosen on dev by CV κ {fmt(cv['kappa'][m])} against the judge's "
                f"{fmt(cv['judge_kappa'])}"
            )
        flag = f" (its threshold {rec['rule']['flag']})" if rec["rule"].get("flag") else ""
        lines.append(
            f"aligned judge {rec['name']} ({m}{chosen}){flag}: κ on {v['n_items']} holdout "
            f"items {fmt(k['before']['value'])} -> {fmt(k['after']['value'])}, difference "
            f"{_est(k['difference'])}: {word}."
            + (" The holdout disagrees with dev." if holdout_disagrees(rec) else "")
        )
    return lines


def reliability_figure(report: Report) -> bytes | None:
    """Reliability diagrams on the holdout: observed pass rate against predicted probability
    per bin, before and after, for every method with probabilities."""
    panels = []
    for rec in report.alignment:
        for m in ORDER:
            r = rec.get("methods", {}).get(m)
            if r is not None and r.get("probabilities") is not None:
                panels.append((f"{rec['name']}: {m}", r["probabilities"]))
    if not panels:
        return None
    fig = Figure(figsize=(4.2 * len(panels), 4.0))
    for i, (title, p) in enumerate(panels):
        ax = fig.add_subplot(1, len(panels), i + 1)
        ax.plot([0, 1], [0, 1], color="#999999", lw=0.8, ls="--")
        for key, color, label in (
            ("diagram_before", "#c0392b", "before"),
            ("diagram_after", "#1f5f8b", "after"),
        ):
            bins = [b for b in p[key] if b.get("count")]
            xs = [b["mean_predicted"] for b in bins]
            ys = [b["observed_rate"] for b in bins]
            sizes = [20 + 4 * b["count"] for b in bins]
            ax.plot(xs, ys, "-", color=color, lw=1)
            ax.scatter(xs, ys, s=sizes, color=color, label=label, alpha=0.8)
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlabel("predicted probability of pass")
        ax.set_ylabel("observed pass rate (holdout)")
        ax.set_title(title, fontsize=9)
        ax.legend(fontsize=8, loc="upper left")
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
    return buf.getvalue()
