"""The report object: plain dataclasses with ``to_dict()`` (JSON-ready: NaN becomes null)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

from trajudge.calibration import (
    CalibrationResult,
    CorrectedPassK,
    CorrectedRate,
    Estimate,
    HumanAgreement,
    JudgeReport,
)
from trajudge.report._categorical import CategoricalRow

# The layout of report.json, raised when a key is renamed or removed (added keys keep it), so
# that a reader (a --baseline, a dashboard) can refuse a report it does not know.
REPORT_FORMAT = 1

SourceKind = Literal["outcome", "rules", "judge", "labels"]


def _opt(obj: Any) -> Any:
    return None if obj is None else obj.to_dict()


def num(value: float | None) -> float | None:
    """A float for JSON: NaN and None become None."""
    if value is None or math.isnan(value):
        return None
    return float(value)


@dataclass(frozen=True)
class SourceResult:
    """pass^k and pass@k of one verdict source, each with a bootstrap interval over tasks.

    ``key`` names the source in gate qualifiers and in the JSON (``outcome``, ``rules``,
    ``judge:<name>``, or the label source such as ``human``); ``gated`` says whether a
    failed rule gate turned the trajectory into a fail.
    """

    key: str
    kind: SourceKind
    title: str
    gated: bool
    pass_hat: dict[int, Estimate]
    pass_at: dict[int, Estimate]
    n_tasks: dict[int, int]
    n_trajectories: int
    n_unknown: int
    unstable_tasks: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "kind": self.kind,
            "title": self.title,
            "gated": self.gated,
            "pass^k": {str(k): e.to_dict() for k, e in self.pass_hat.items()},
            "pass@k": {str(k): e.to_dict() for k, e in self.pass_at.items()},
            "n_tasks": {str(k): v for k, v in self.n_tasks.items()},
            "n_trajectories": self.n_trajectories,
            "n_unknown": self.n_unknown,
            "unstable_tasks": self.unstable_tasks,
        }


@dataclass(frozen=True)
class JudgeRow:
    """One judge: its calibration against the labels and the pass^k of its verdicts."""

    name: str  # the key used in gates: the judge name (plus ":rubric" when it is ambiguous)
    judge: str
    rubric_id: str | None
    models: list[str]
    calibration: JudgeReport
    source: SourceResult | None  # None without task ids
    corrected_rate: CorrectedRate | None
    corrected_pass_hat: CorrectedPassK | None
    # the judge configuration behind every figure of the row: sha256 (None: unrecorded,
    # judged before trajudge stored configurations), model and api_base
    config: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        cal = self.calibration
        full = cal.to_dict()
        return {
            "name": self.name,
            "judge": self.judge,
            "rubric_id": self.rubric_id,
            "models": self.models,
            "config": self.config,
            "kappa": full["kappa"],
            "ac1": full["ac1"],
            "agreement": full["agreement"],
            "tpr": full["tpr"],
            "tnr": full["tnr"],
            "flip_rate": full["flip_rate"],
            "cost_per_1k": full["cost_per_1k"],
            "median_latency_s": full["median_latency_s"],
            "n_judgments": cal.n_rows + cal.n_errors,
            "n_errors": cal.n_errors,
            "n_items": cal.n_items,
            "flags": cal.flags,
            "unstable_items": cal.unstable_items,
            "budget": cal.budget.to_dict(),
            "reliability": _opt(self.source),
            "corrected_rate": _opt(self.corrected_rate),
            "corrected_pass_hat": _opt(self.corrected_pass_hat),
            "calibration": full,
        }


@dataclass(frozen=True)
class Flag:
    """A bias probe that fired, with the evidence behind it."""

    judge: str
    probe: str
    estimate: Estimate
    rule: str
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "judge": self.judge,
            "probe": self.probe,
            "estimate": self.estimate.to_dict(),
            "rule": self.rule,
            "detail": self.detail,
        }


@dataclass(frozen=True)
class Ceiling:
    """Agreement among the labellers themselves on the items several of them labelled."""

    rubric_id: str | None
    agreement: HumanAgreement

    def to_dict(self) -> dict[str, Any]:
        return {"rubric_id": self.rubric_id, **self.agreement.to_dict()}


@dataclass
class Report:
    """Everything ``trajudge report`` shows, in one object.

    ``summary`` holds the plain-language lines printed on top; ``judges`` one row per judge;
    ``sources`` the non-judge verdict sources (environment outcome, rule gates, labels);
    ``gate_failures`` the reasons a CI gate failed (empty: every gate passed).
    """

    dataset: str | None
    created_at: str
    ks: list[int]
    label_source: str
    labels_are_human: bool
    primary_source: str | None
    summary: list[str]
    judges: list[JudgeRow]
    sources: list[SourceResult]
    ceilings: list[Ceiling]
    flags: list[Flag]
    label_thresholds: dict[str, dict[str, Any]]
    n_labeled_items: int
    n_skipped_labels: int
    tied_items: list[str]
    usage: dict[str, float | None]
    gate_rule: str
    n_gate_failed: int | None
    coverage: dict[str, Any] | None
    fingerprint: dict[str, Any] | None
    fingerprint_changes: list[str]
    gates: list[str]
    gate_failures: list[str]
    notes: list[str]
    n_boot: int
    seed: int
    calibration: dict[str, CalibrationResult] = field(default_factory=dict)
    # pairwise and nominal judges, each with its own measures (no pass/fail, no pass^k)
    categorical: list[CategoricalRow] = field(default_factory=list)
    # aligned judges fitted on this dataset (trajudge align): their records, see _alignment
    alignment: list[dict[str, Any]] = field(default_factory=list)
    # --strategy active: per rubric with a stored design, how its labels were drawn and the
    # weighted estimates and stopping status (trajudge.calibration.active.active_summary)
    labels_drawn: list[dict[str, Any]] = field(default_factory=list)
    # per rubric: agreement by slice, the Dawid-Skene jury, the alternative annotator test
    panel: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def labels_phrase(self) -> str:
        """How the labels are named everywhere: human labels or reference labels (source)."""
        return labels_phrase(self.label_source, self.labels_are_human)

    def all_sources(self) -> list[SourceResult]:
        """Judges' sources first, then outcome, rules and labels."""
        return [j.source for j in self.judges if j.source is not None] + self.sources

    def to_dict(self) -> dict[str, Any]:
        return {
            "report_format": REPORT_FORMAT,
            "dataset": self.dataset,
            "created_at": self.created_at,
            "ks": self.ks,
            "label_source": self.label_source,
            "labels_are_human": self.labels_are_human,
            "labels_phrase": self.labels_phrase,
            "primary_source": self.primary_source,
            "summary": self.summary,
            "judges": [j.to_dict() for j in self.judges],
            "sources": {s.key: s.to_dict() for s in self.all_sources()},
            "ceilings": [c.to_dict() for c in self.ceilings],
            "flags": [f.to_dict() for f in self.flags],
            "label_thresholds": self.label_thresholds,
            "n_labeled_items": self.n_labeled_items,
            "n_skipped_labels": self.n_skipped_labels,
            "tied_items": self.tied_items,
            "usage": self.usage,
            "gate_rule": self.gate_rule,
            "n_gate_failed": self.n_gate_failed,
            "coverage": self.coverage,
            "fingerprint": self.fingerprint,
            "fingerprint_changes": self.fingerprint_changes,
            "gates": self.gates,
            "gate_failures": self.gate_failures,
            "passed": not self.gate_failures,
            "notes": self.notes,
            "n_boot": self.n_boot,
            "seed": self.seed,
            "categorical_judges": [c.to_dict() for c in self.categorical],
            "alignment": [{k: v for k, v in a.items() if k != "rubric"} for a in self.alignment],
            "labels_drawn": self.labels_drawn,
            "panel": self.panel,
        }


def labels_phrase(source: str, human: bool) -> str:
    """``"human labels"``, or ``"reference labels (env_reward)"`` for any other source."""
    return "human labels" if human else f"reference labels ({source})"
