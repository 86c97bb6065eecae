"""Result objects of the categorical measures: plain dataclasses with ``to_dict()``."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from trajudge.calibration._estimate import Estimate, num
from trajudge.calibration.agreement._raters import HumanAgreement


def _opt(obj: Any) -> Any:
    return None if obj is None else obj.to_dict()


@dataclass(frozen=True)
class Count:
    """A share as its counts: ``correct`` (or consistent) of ``n``; NaN without items."""

    correct: int
    n: int

    @property
    def value(self) -> float:
        return self.correct / self.n if self.n else math.nan

    def to_dict(self) -> dict[str, Any]:
        return {"count": self.correct, "n": self.n, "value": num(self.value)}


@dataclass(frozen=True)
class WinRate:
    """A system's wins, ties and losses over its pairs and ``(wins + ties / 2) / pairs``."""

    system: str
    wins: int
    ties: int
    losses: int
    rate: Estimate

    @property
    def n(self) -> int:
        return self.wins + self.ties + self.losses

    def to_dict(self) -> dict[str, Any]:
        return {
            "system": self.system,
            "wins": self.wins,
            "ties": self.ties,
            "losses": self.losses,
            "n": self.n,
            "win_rate": self.rate.to_dict(),
        }


@dataclass(frozen=True)
class CategoricalReport:
    """Everything measured about one pairwise or nominal judge against gold labels.

    ``accuracy`` per order (``ab``, ``ba``; a missing verdict is never correct), their mean
    in :attr:`accuracy_average`; ``consistency``: the same outcome in both orders (two
    missing verdicts agree; over every item judged in both orders, labelled or not, as is
    ``flip_rate``); ``flip_rate``: share of items with a verdict in both orders
    whose verdicts differ (those become ``inconsistent_as``); ``first_position``: share of
    decisive pairwise verdicts that picked the side shown first; ``kappa`` (nominal Cohen's
    kappa, every category, ties included) per order and for the ``aggregate`` verdict, with
    clustered bootstrap intervals; ``agreement``: accuracy of the aggregate verdict;
    ``confusion``: rows gold ``labels``, columns the judge's aggregate verdicts.
    """

    judge: str
    kind: str
    inconsistent_as: str
    n_rows: int
    n_errors: int
    n_items: int
    accuracy: dict[str, Count]
    n_missing: dict[str, int]
    consistency: Count
    flip_rate: Estimate | None
    first_position: Estimate | None
    kappa: dict[str, Estimate]
    agreement: Estimate
    labels: list[str]
    confusion: list[list[int]]
    win_rates: list[WinRate] | None = None
    n_flipped: int = 0
    inconsistent_items: list[str] = field(default_factory=list)
    categories: list[str] = field(default_factory=list)

    @property
    def accuracy_average(self) -> float:
        """The mean of the per-order accuracies (LLMBar's "Acc")."""
        values = [c.value for c in self.accuracy.values()]
        return sum(values) / len(values) if values else math.nan

    def to_dict(self) -> dict[str, Any]:
        return {
            "judge": self.judge,
            "kind": self.kind,
            "inconsistent_as": self.inconsistent_as,
            "n_rows": self.n_rows,
            "n_errors": self.n_errors,
            "n_items": self.n_items,
            "accuracy": {o: c.to_dict() for o, c in self.accuracy.items()},
            "accuracy_average": num(self.accuracy_average),
            "n_missing": self.n_missing,
            "consistency": self.consistency.to_dict(),
            "flip_rate": _opt(self.flip_rate),
            "n_flipped": self.n_flipped,
            "first_position": _opt(self.first_position),
            "kappa": {k: e.to_dict() for k, e in self.kappa.items()},
            "agreement": self.agreement.to_dict(),
            "labels": self.labels,
            "confusion": self.confusion,
            "win_rates": None if self.win_rates is None else [w.to_dict() for w in self.win_rates],
            "inconsistent_items": self.inconsistent_items,
        }


@dataclass(frozen=True)
class CategoricalResult:
    """Every categorical judge of one rubric against the gold labels, and the labellers'
    agreement among themselves (pairwise Cohen's kappas and Krippendorff's alpha, nominal)."""

    kind: str
    judges: dict[str, CategoricalReport]
    human: HumanAgreement | None
    n_labeled_items: int
    tied_items: list[str]
    n_skipped_labels: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "judges": {k: v.to_dict() for k, v in self.judges.items()},
            "human": _opt(self.human),
            "n_labeled_items": self.n_labeled_items,
            "tied_items": self.tied_items,
            "n_skipped_labels": self.n_skipped_labels,
        }
