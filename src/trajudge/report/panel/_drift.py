"""`trajudge drift`: an old and a new judge on a pinned anchor set, paired, with CI gates.

The anchor set is an eval set (``trajudge evalset``): its core layer when it has one, else
every case; the cases' own labels are the reference, pinned with the items, so a re-judge
months later is measured against the same labels. Without an eval set the anchor is every
item of the dataset both judges judged, against the store's labels.

Gates read ``drift.METRIC[.lo|.hi] OP NUMBER``, METRIC one of ``kappa`` (new minus old),
``pass_rate`` (new minus old), ``changed`` (share of items whose verdict changed) or
``pass^K`` (new minus old), parsed with the operators and numbers of ``--fail-under``
(:mod:`trajudge.report._gates`).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from trajudge.calibration import item_verdicts, judge_threshold, label_threshold
from trajudge.calibration.panel import Drift, paired_drift
from trajudge.core import InputError, atomic_write_bytes, now_iso
from trajudge.evalset import read_evalset
from trajudge.report._gates import _NUMBER, OPTION, _check
from trajudge.report.inputs._labels import as_pass, consensus_pass
from trajudge.report.inputs._rubrics import rubric_threshold
from trajudge.report.inputs._sources import store_inputs
from trajudge.report.render._text import _md_cell, _md_table
from trajudge.report.sections._numbers import fmt_est
from trajudge.report.sections._section import Section

if TYPE_CHECKING:
    from trajudge.store import Store

DRIFT_METRICS = ("kappa", "pass_rate", "changed")
_GATE = re.compile(
    r"^\s*drift\.(?P<metric>kappa|pass_rate|changed|pass\^(?P<k>\d+))(?:\.(?P<bound>lo|hi))?"
    r"\s*(?P<op>>=|<=|==|>|<)\s*(?P<value>" + _NUMBER + r")\s*$"
)


@dataclass(frozen=True)
class DriftGate:
    """One ``drift.METRIC[.lo|.hi] OP NUMBER`` expression."""

    text: str
    metric: str  # kappa, pass_rate, changed or pass^k
    k: int | None
    bound: str | None
    op: str
    value: float


def parse_drift_gate(text: str) -> DriftGate:
    """Parse ``"drift.kappa.lo>=-0.05"``; InputError naming ``--fail-under`` otherwise.

    >>> parse_drift_gate("drift.pass^2.lo >= -0.1").k
    2
    """
    m = _GATE.match(text)
    if m is None:
        raise InputError(
            OPTION,
            reason=f"cannot read {text!r}: expected drift.METRIC[.lo|.hi]>=NUMBER, METRIC one "
            "of kappa, pass_rate, changed, pass^K",
        )
    k = int(m["k"]) if m["k"] is not None else None
    if k is not None and k < 1:
        raise InputError(OPTION, reason=f"{text!r}: k must be >= 1")
    metric = "pass^k" if k is not None else m["metric"]
    return DriftGate(text, metric, k, m["bound"], m["op"], float(m["value"]))


def _figure(drift: dict[str, Any], gate: DriftGate) -> Any:
    if gate.metric == "changed":
        return drift["changed"]
    if gate.metric == "pass^k":
        found = drift["pass^k"].get(str(gate.k))
        if found is None:
            raise InputError(OPTION, reason=f"{gate.text!r}: k={gate.k} was not computed (--k)")
        return found["diff"]
    return drift[gate.metric]["diff"]


def check_drift_gates(drift: dict[str, Any], gates: Sequence[DriftGate]) -> list[str]:
    """The reasons the drift fails its gates (an undefined figure fails, as in the report)."""
    out = []
    for g in gates:
        name = g.metric.replace("k", str(g.k)) if g.k is not None else g.metric
        name = f"{name}.{g.bound}" if g.bound else name
        # the report's gate check, read through the same Gate-like fields
        reason = _check(g, f"drift.{name}", _figure(drift, g))  # type: ignore[arg-type]
        if reason:
            out.append(reason)
    return out


@dataclass
class DriftReport:
    """Everything ``trajudge drift`` shows and writes."""

    dataset: str
    old: str
    new: str
    anchor: dict[str, Any]
    fingerprints: dict[str, dict[str, Any]]
    drift: Drift
    gates: list[str]
    gate_failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    n_boot: int = 2000
    seed: int = 0
    created_at: str = field(default_factory=now_iso)

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "created_at": self.created_at,
            "old": self.old,
            "new": self.new,
            "anchor": self.anchor,
            "fingerprints": self.fingerprints,
            "drift": self.drift.to_dict(),
            "gates": self.gates,
            "gate_failures": self.gate_failures,
            "passed": not self.gate_failures,
            "notes": self.notes,
            "n_boot": self.n_boot,
            "seed": self.seed,
        }


def judge_fingerprint(rows: pd.DataFrame) -> dict[str, Any]:
    """What identifies a judge's calls in the store: the configured model(s), rubric
    version(s), configuration hash(es), when the calls were made and how many came from the
    response cache (a cached call did not ask the provider again)."""

    def values(col: str) -> list[str]:
        return sorted({str(v) for v in rows[col].dropna()}) if col in rows else []

    created = rows["created_at"].dropna().astype(str) if "created_at" in rows else pd.Series()
    return {
        "models": values("model"),
        "rubric_id": values("rubric_id"),
        "rubric_versions": values("rubric_version"),
        "config_sha256": values("config_sha256"),
        "first_call": created.min() if len(created) else None,
        "last_call": created.max() if len(created) else None,
        "n_calls": len(rows),
        "n_cached": int(rows["cache_hit"].fillna(False).astype(bool).sum())
        if "cache_hit" in rows
        else 0,
    }


def _anchor(evalset: Path, dataset: str) -> tuple[pd.Series, str]:
    """Trajectory id -> 0/1 label of the anchor cases (the core layer, else every case)."""
    cases = [c for c in read_evalset(evalset) if c.source.dataset == dataset]
    if not cases:
        raise InputError(str(evalset), reason=f"no case of dataset {dataset!r}")
    core = [c for c in cases if c.core]
    which = "core layer" if core else "every case (no core layer)"
    chosen = core or cases
    labels = pd.Series(
        {c.source.trajectory_id: float(c.label.verdict == "pass") for c in chosen}, dtype=float
    )
    return labels, which


def drift_report(
    store: Store,
    dataset: str,
    *,
    old: str,
    new: str,
    evalset: Path | None = None,
    label_source: str = "human",
    threshold: float | None = None,
    rubric_dirs: Sequence[str | Path] = (),
    ks: Sequence[int] = (1,),
    n_boot: int = 2000,
    seed: int = 0,
    fail_under: Sequence[str] = (),
) -> DriftReport:
    """Compare judges ``old`` and ``new`` of ``dataset`` on the anchor set (module docstring)."""
    gates = [parse_drift_gate(t) for t in fail_under]
    if old == new:
        raise InputError("--judge", reason=f"old and new are the same judge {old!r}")
    inputs = store_inputs(store, dataset, label_source=label_source, aligned=())
    judged = inputs.judgments
    raw = store.judgments_frame(dataset)
    known = sorted(judged["judge"].unique()) if len(judged) else []
    for name in (old, new):
        if name not in known:
            raise InputError(
                "--judge",
                reason=f"no pass/fail or ordinal judgments of {name!r} in {dataset!r} "
                f"(judges: {', '.join(known) or 'none'})",
            )
    notes: list[str] = list(inputs.notes)
    dirs = [str(d) for d in rubric_dirs]
    verdicts, prints = {}, {}
    for name in (old, new):
        rows = judged[judged["judge"] == name]
        rubric = str(rows["rubric_id"].iloc[0])
        cut = judge_threshold(
            name, rows, threshold=threshold, rubric_threshold=rubric_threshold(rubric, dirs)
        )
        verdicts[name] = item_verdicts(rows, threshold=cut.value)
        prints[name] = judge_fingerprint(raw[raw["judge"] == name])
    trajs = inputs.trajectories.set_index("trajectory_id")["task_id"]
    if evalset is not None:
        labels, which = _anchor(evalset, dataset)
        anchor_ids = list(labels.index)
        source = f"{evalset} ({which})"
    else:
        rubric = prints[old]["rubric_id"][0]
        labs = inputs.labels[inputs.labels["rubric_id"] == rubric].dropna(subset=["label"])
        labs = labs.assign(label=pd.to_numeric(labs["label"]))
        level = None
        if len(labs):
            level = label_threshold(
                labs["label"], threshold=threshold, rubric_threshold=rubric_threshold(rubric, dirs)
            ).value
        labels = consensus_pass(as_pass(labs[["item", "annotator", "label"]], level))
        anchor_ids = sorted(set(verdicts[old].index) | set(verdicts[new].index))
        source = f"dataset {dataset}: every item either judge judged ({label_source} labels)"
    both = [i for i in anchor_ids if i in verdicts[old].index and i in verdicts[new].index]
    missing = len(anchor_ids) - len(both)
    if missing:
        notes.append(f"{missing} anchor items lack a verdict of one judge: left out")
    outside = [i for i in both if i not in trajs.index]
    if outside:
        raise InputError(
            str(evalset), reason=f"trajectory {outside[0]!r} is not in dataset {dataset!r}"
        )
    if not both:
        raise InputError("--judge", reason=f"no anchor item has verdicts of both {old} and {new}")
    drift = paired_drift(
        labels=labels.reindex(both).to_numpy(dtype=float),
        old=verdicts[old].reindex(both).to_numpy(),
        new=verdicts[new].reindex(both).to_numpy(),
        tasks=trajs.reindex(both).astype(str).to_numpy(),
        ks=ks,
        n_boot=n_boot,
        seed=seed,
    )
    digest = hashlib.sha256(json.dumps(sorted(both)).encode()).hexdigest()
    report = DriftReport(
        dataset=dataset,
        old=old,
        new=new,
        anchor={"source": source, "n_items": len(both), "items_sha256": digest},
        fingerprints=prints,
        drift=drift,
        gates=[g.text for g in gates],
        notes=notes,
        n_boot=n_boot,
        seed=seed,
    )
    for name in (old, new):
        if prints[name]["n_cached"]:
            notes.append(
                f"{prints[name]['n_cached']} of {name}'s calls came from the response cache: "
                "re-judge with --no-cache to ask the provider again"
            )
    report.gate_failures = check_drift_gates(report.to_dict()["drift"], gates)
    return report


def drift_sections(report: DriftReport) -> list[Section]:
    """The drift as sections: the paired table, the fingerprints, the anchor and gates."""
    d = report.drift
    rows = [
        ["kappa vs labels", fmt_est(d.kappa_old), fmt_est(d.kappa_new), fmt_est(d.kappa_diff)],
        [
            "pass rate",
            fmt_est(d.pass_rate_old),
            fmt_est(d.pass_rate_new),
            fmt_est(d.pass_rate_diff),
        ],
    ]
    rows += [
        [f"pass^{k}", fmt_est(o), fmt_est(n), fmt_est(diff)]
        for k, (o, n, diff) in d.pass_hat.items()
    ]
    table = Section(
        f"Drift: {report.old} -> {report.new}",
        [
            f"{d.n_items} anchor items of {d.n_tasks} tasks ({d.n_labeled} labelled); "
            f"verdict changed on {fmt_est(d.changed)} of items: {d.n_down} pass -> fail, "
            f"{d.n_up} fail -> pass",
            "intervals: 95%, paired task-clustered bootstrap (both judges on the same "
            f"resampled tasks), {report.n_boot} resamples, seed {report.seed}",
        ],
        ["figure", report.old, report.new, "new - old"],
        rows,
    )
    fp_rows = []
    for name in (report.old, report.new):
        f = report.fingerprints[name]
        fp_rows.append(
            [
                name,
                ", ".join(f["models"]),
                ", ".join(f["rubric_versions"]),
                ", ".join(s[:12] for s in f["config_sha256"]) or "—",
                f"{f['first_call']} .. {f['last_call']}",
                f"{f['n_calls']} ({f['n_cached']} cached)",
            ]
        )
    prints = Section(
        "Judge fingerprints",
        [],
        ["judge", "model", "rubric version", "config", "calls made", "calls"],
        fp_rows,
    )
    anchor = report.anchor
    digest = anchor["items_sha256"][:16]
    lines = [f"anchor: {anchor['source']}, {anchor['n_items']} items, sha256 {digest}"]
    lines += [f"gate: {g}" for g in report.gates]
    lines += [f"FAILED {r}" for r in report.gate_failures]
    lines += report.notes
    return [table, prints, Section("Anchor and gates", lines)]


def write_drift(report: DriftReport, out: Path) -> list[Path]:
    """drift.md and drift.json in ``out``, each written whole (temporary file, rename)."""
    if out.exists() and not out.is_dir():
        raise InputError(str(out), field="--out", reason="exists and is not a folder")
    md = [
        f"# trajudge drift: dataset {_md_cell(report.dataset)}",
        "",
        f"_created {report.created_at}_",
    ]
    for sec in drift_sections(report):
        md += ["", f"## {_md_cell(sec.title)}", ""]
        md += [_md_cell(line) + "  " for line in sec.lines]
        if sec.header:
            md += ["", *_md_table(sec.header, sec.rows)]
    body = json.dumps(report.to_dict(), indent=2, allow_nan=False, ensure_ascii=False) + "\n"
    files = {out / "drift.md": ("\n".join(md) + "\n").encode(), out / "drift.json": body.encode()}
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(str(out), field="--out", reason=f"cannot create folder: {exc}") from None
    for path, data in files.items():
        atomic_write_bytes(path, data)
    return list(files)
