"""What ``trajudge run`` did: the counts its summary line prints."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trajudge.report import Report
from trajudge.store import ImportSummary
from trajudge.store.labels._label_files import LabelImportSummary

if TYPE_CHECKING:
    from trajudge.backends import PullSummary
    from trajudge.backends._export import ExportSummary


@dataclass
class RunSummary:
    """What ``trajudge run`` did, with the counts the summary line prints."""

    dataset: str
    trajectories: int = 0
    imported: ImportSummary | None = None
    pulled: PullSummary | None = None  # dataset.source: what the pull brought
    exported: list[ExportSummary] = field(default_factory=list)  # one per export: target
    gate_failures: int = 0
    judge_calls: int = 0  # calls that reached a model this run
    cache_hits: int = 0
    resumed: int = 0  # judgments already stored by an earlier (killed) run
    errors: int = 0
    no_reference: int = 0  # reference-mode items without a reference (not judged)
    dev_items: int = 0  # trajectories used only to tune thresholds
    cost_usd: float = 0.0
    labels: LabelImportSummary | None = None
    core: str | None = None  # the core layer's verdict line
    aligned: str | None = None  # the aligned judge saved by the align phase: "name vN"
    align_refused: str | None = None  # why the align phase saved nothing (dev said no)
    core_passed: bool = True
    report: Report | None = None
    paths: list[Path] = field(default_factory=list)
    phase_s: dict[str, float] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        if not self.core_passed:
            return 1
        return 1 if self.report is not None and self.report.gate_failures else 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "trajectories": self.trajectories,
            "gate_failures": self.gate_failures,
            "judge_calls": self.judge_calls,
            "cache_hits": self.cache_hits,
            "resumed": self.resumed,
            "errors": self.errors,
            "no_reference": self.no_reference,
            "dev_items": self.dev_items,
            "cost_usd": self.cost_usd,
            "core": self.core,
            "aligned": self.aligned,
            "align_refused": self.align_refused,
            "report": [str(p) for p in self.paths],
            "pulled": None if self.pulled is None else self.pulled.traces,
            "exported": {
                e.target: {"written": e.written, "unchanged": e.unchanged} for e in self.exported
            },
            "exit_code": self.exit_code,
            "phase_s": self.phase_s,
        }
