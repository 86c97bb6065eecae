"""The result of :func:`trajudge.calibration.analyze`: plain dataclasses with ``to_dict()``.

``to_dict()`` gives JSON-ready values: NaN becomes null, a statistic that does not apply is
null as a whole (a probe that needs lengths when none were logged, weighted kappa on a binary
scale, pass^k without task ids).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from trajudge.calibration._estimate import Estimate, num
from trajudge.calibration.agreement._agreement import BinaryRates
from trajudge.calibration.agreement._raters import HumanAgreement
from trajudge.calibration.bias._bias import Probe
from trajudge.calibration.intervals._budget import LabelBudget
from trajudge.calibration.rates._corrected import CorrectedRate
from trajudge.calibration.rates._corrected_k import CorrectedPassK
from trajudge.calibration.rates._reliability import ReliabilityResult
from trajudge.calibration.verdicts._verdicts import Threshold

__all__ = ["CalibrationResult", "JudgeReport", "Threshold"]


def _opt(obj: Any) -> Any:
    return None if obj is None else obj.to_dict()


@dataclass(frozen=True)
class JudgeReport:
    """Everything measured about one judge against the human consensus.

    Every agreement figure compares the judge's ONE verdict per item (aggregated over orders
    and samples by :func:`trajudge.calibration.item_verdicts`) with the item's consensus:
    kappa, AC1, agreement, TPR and TNR come from the same 2x2 table (``confusion``,
    ``rates``), with intervals from the same resamples (clustered by task when task ids are
    known). A judge whose every call failed has NaN figures and ``n_errors`` calls.
    """

    judge: str
    n_rows: int  # judgments without error
    n_errors: int  # errored judgments: counted here, left out of every score
    n_items: int  # items with a human consensus and a verdict of this judge
    threshold: Threshold
    kappa: Estimate  # binary, per item: the judge's aggregated verdict vs the consensus
    kappa_linear: Estimate | None  # ordinal scales only: every call, each item weighing one
    kappa_quadratic: Estimate | None
    ac1: Estimate
    agreement: Estimate
    tpr: Estimate
    tnr: Estimate
    rates: BinaryRates  # the 2x2 counts behind kappa, AC1, agreement, TPR and TNR
    confusion: list[list[int]]  # rows: human fail, pass; columns: judge fail, pass
    cost_per_1k: float | None
    median_latency_s: float | None
    probes: dict[str, Probe | None]
    corrected_rate: CorrectedRate | None
    corrected_pass_hat: CorrectedPassK | None
    budget: LabelBudget
    unstable_items: list[str] = field(default_factory=list)

    @property
    def flip_rate(self) -> Estimate | None:
        """Share of (item, sample) pairs whose verdict changes when the order is swapped."""
        position = self.probes.get("position")
        return None if position is None else position.extra.get("flip_rate")

    @property
    def flags(self) -> list[str]:
        return [name for name, p in self.probes.items() if p is not None and p.flagged]

    def to_dict(self) -> dict[str, Any]:
        return {
            "judge": self.judge,
            "n_rows": self.n_rows,
            "n_errors": self.n_errors,
            "n_items": self.n_items,
            "threshold": self.threshold.to_dict(),
            "kappa": self.kappa.to_dict(),
            "kappa_linear": _opt(self.kappa_linear),
            "kappa_quadratic": _opt(self.kappa_quadratic),
            "ac1": self.ac1.to_dict(),
            "agreement": self.agreement.to_dict(),
            "tpr": self.tpr.to_dict(),
            "tnr": self.tnr.to_dict(),
            "rates": self.rates.to_dict(),
            "confusion": self.confusion,
            "flip_rate": _opt(self.flip_rate),
            "cost_per_1k": num(self.cost_per_1k),
            "median_latency_s": num(self.median_latency_s),
            "probes": {k: _opt(p) for k, p in self.probes.items()},
            "flags": self.flags,
            "corrected_rate": _opt(self.corrected_rate),
            "corrected_pass_hat": _opt(self.corrected_pass_hat),
            "budget": self.budget.to_dict(),
            "unstable_items": self.unstable_items,
        }


@dataclass(frozen=True)
class CalibrationResult:
    """Judges against humans, the human ceiling, and pass@k / pass^k per verdict source.

    ``reliability`` is keyed by source: ``"judge:<name>"`` for each judge's verdicts,
    ``"human"`` for the human consensus and ``"outcome"`` for the environment outcome; it is
    empty without task ids.
    """

    judges: dict[str, JudgeReport]
    human: HumanAgreement | None
    n_labeled_items: int
    tied_items: list[str]
    n_skipped_labels: int
    reliability: dict[str, ReliabilityResult]
    ks: list[int]
    n_boot: int
    seed: int
    n_dev_items: int = 0
    label_threshold: Threshold | None = None  # how labels became pass/fail

    def to_dict(self) -> dict[str, Any]:
        return {
            "judges": {k: v.to_dict() for k, v in self.judges.items()},
            "human": _opt(self.human),
            "n_labeled_items": self.n_labeled_items,
            "tied_items": self.tied_items,
            "n_skipped_labels": self.n_skipped_labels,
            "reliability": {k: v.to_dict() for k, v in self.reliability.items()},
            "ks": self.ks,
            "n_boot": self.n_boot,
            "seed": self.seed,
            "n_dev_items": self.n_dev_items,
            "label_threshold": _opt(self.label_threshold),
        }
