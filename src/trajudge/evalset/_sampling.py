"""Strata and stratified sampling: an eval set that mirrors traffic, yet keeps its rare cases.

A set drawn at random from production runs is mostly the few most common intents; one drawn by
hand drifts towards whatever broke last week. Stratifying keeps both in view: a fixed share of
common intents, of the long tail and of tasks known to be hard.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from trajudge.evalset._case import EvalCase, case_frame

STRATUM_SHARES: dict[str, float] = {"common": 0.6, "long_tail": 0.3, "known_hard": 0.1}
NO_GROUP = "(none)"


def largest_remainder(n: int, weights: Mapping[str, float]) -> dict[str, int]:
    """Split ``n`` into integer counts proportional to ``weights`` that sum to ``n``.

    Each group first gets the floor of its quota ``n * w / sum(w)``; the units left over go to
    the largest fractional parts (ties: the larger weight, then the group name).

    Examples
    --------
    >>> largest_remainder(7, {"common": 0.6, "long_tail": 0.3, "known_hard": 0.1})
    {'common': 4, 'long_tail': 2, 'known_hard': 1}

    Quotas 4.2, 2.1 and 0.7 floor to 4, 2 and 0; the one unit left goes to the largest
    remainder, 0.7.
    """
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    if any(w < 0 or math.isnan(w) for w in weights.values()):
        raise ValueError("weights must be non-negative numbers")
    total = float(sum(weights.values()))
    if total <= 0:
        raise ValueError("weights must not all be zero")
    quotas = {g: n * w / total for g, w in weights.items()}
    counts = {g: math.floor(q) for g, q in quotas.items()}
    left = n - sum(counts.values())
    order = sorted(weights, key=lambda g: (-(quotas[g] - counts[g]), -weights[g], g))
    for g in order[:left]:
        counts[g] += 1
    return counts


@dataclass
class Sample:
    """The result of :func:`stratified_sample`.

    Attributes
    ----------
    ids:
        The chosen ids, in input order.
    frame:
        The chosen rows (a case frame when cases were given).
    cases:
        The chosen cases, in input order (empty when a frame was given).
    targets, counts, available:
        Per group: the count asked for (largest remainder), the count drawn, and how many
        the input had.
    shortfall:
        Per group, ``targets - counts`` where the group had too few; empty when none did.
    """

    ids: list[str]
    frame: pd.DataFrame
    cases: list[EvalCase] = field(default_factory=list)
    targets: dict[str, int] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    available: dict[str, int] = field(default_factory=dict)
    shortfall: dict[str, int] = field(default_factory=dict)

    @property
    def warnings(self) -> list[str]:
        """One line per group that could not give its target."""
        return [
            f"{g}: asked for {self.targets[g]}, only {self.available.get(g, 0)} available "
            f"(short by {s})"
            for g, s in self.shortfall.items()
        ]


def stratified_sample(
    cases_or_frame: Sequence[EvalCase] | pd.DataFrame,
    n: int,
    *,
    by: str = "stratum",
    shares: Mapping[str, float] | None = None,
    seed: int = 0,
) -> Sample:
    """Draw ``n`` items so that each group gets its share (largest-remainder rounding).

    Parameters
    ----------
    cases_or_frame:
        Eval cases, or a frame with an ``id`` (or ``trajectory_id``) column and the ``by``
        column.
    n:
        How many to draw in all.
    by:
        The grouping column: ``"stratum"`` (default shares :data:`STRATUM_SHARES`),
        ``"intent"``, or any other column. Missing values form the group ``"(none)"``.
    shares:
        Group -> weight (normalised, so counts work too). Default for ``by="stratum"``:
        60 / 30 / 10; for any other column: the group proportions of the input.
    seed:
        Draws are reproducible for a seed, and do not depend on the input order.

    Notes
    -----
    A group with fewer items than its target gives all it has; the gap is in ``shortfall``
    and ``warnings`` and is not filled from other groups, so the shares stay honest.

    Examples
    --------
    >>> df = pd.DataFrame({"id": [f"c{i}" for i in range(20)],
    ...                    "stratum": ["common"] * 14 + ["long_tail"] * 6})
    >>> s = stratified_sample(df, 10)  # targets 6 / 3 / 1; no known_hard case exists
    >>> s.counts, s.shortfall
    ({'common': 6, 'long_tail': 3, 'known_hard': 0}, {'known_hard': 1})
    """
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    cases: list[EvalCase] = []
    if isinstance(cases_or_frame, pd.DataFrame):
        frame = cases_or_frame.reset_index(drop=True)
    else:
        cases = list(cases_or_frame)
        frame = case_frame(cases)
    ids = _ids(frame)
    if by not in frame.columns:
        raise ValueError(f"no column {by!r} to stratify by")
    groups = [NO_GROUP if _missing(v) else str(v) for v in frame[by]]
    if shares is None:
        if by == "stratum":
            shares = STRATUM_SHARES
        else:
            shares = {g: float(groups.count(g)) for g in dict.fromkeys(groups)}
    if not shares:
        raise ValueError("shares is empty")
    targets = largest_remainder(n, shares) if n else {g: 0 for g in shares}
    members: dict[str, list[int]] = {}
    for i, g in enumerate(groups):
        members.setdefault(g, []).append(i)
    chosen: list[int] = []
    counts: dict[str, int] = {}
    available: dict[str, int] = {}
    shortfall: dict[str, int] = {}
    for g, target in targets.items():
        pool = sorted(members.get(g, []), key=lambda i: ids[i])
        available[g] = len(pool)
        take = min(target, len(pool))
        if take < target:
            shortfall[g] = target - take
        rng = np.random.default_rng([seed, _group_seed(g)])
        picked = rng.choice(len(pool), size=take, replace=False).tolist() if take else []
        chosen.extend(pool[int(j)] for j in picked)
        counts[g] = take
    chosen.sort()
    return Sample(
        ids=[ids[i] for i in chosen],
        frame=frame.iloc[chosen].reset_index(drop=True),
        cases=[cases[i] for i in chosen] if cases else [],
        targets=targets,
        counts=counts,
        available=available,
        shortfall=shortfall,
    )


def assign_strata(
    frame: pd.DataFrame,
    *,
    common_share: float = 0.6,
    hard_threshold: float = 0.0,
    min_trials: int = 1,
    success: str = "success",
) -> pd.DataFrame:
    """Add a ``stratum`` column: ``common``, ``long_tail`` or ``known_hard``.

    The rule:

    1. Count runs (rows) per intent; a missing intent is the group ``"(none)"``.
    2. Walk the intents from most to least frequent (ties by name) and call them
       ``common`` while the runs counted so far are under ``common_share`` of all runs; the
       intent that crosses the line is common too, and so is every intent with as many runs
       as the last common one (ties are never split). Every other intent is ``long_tail``.
    3. A task with at least ``min_trials`` known verdicts whose pass rate (the mean of the
       ``success`` column over those) is at most ``hard_threshold`` is ``known_hard``,
       whatever its intent. The default 0.0 means: every trial failed. Without a ``success``
       column no task is known hard.

    Parameters
    ----------
    frame:
        One row per run, with ``task_id`` and ``intent`` (and ``success`` for known_hard).

    Returns
    -------
    pandas.DataFrame
        A copy of ``frame`` with the ``stratum`` column.

    Examples
    --------
    >>> df = pd.DataFrame({"task_id": list("aaaaabbbcd"), "intent": list("AAAAABBBCD"),
    ...                    "success": [1, 1, 0, 1, 1, 1, 1, 1, 0, 1]})
    >>> assign_strata(df)["stratum"].tolist()[4:]  # A: 50% < 60%, + B: 80%; c: 0 of 1 passed
    ['common', 'common', 'common', 'common', 'known_hard', 'long_tail']
    """
    if not 0 <= common_share <= 1:
        raise ValueError(f"common_share must be in [0, 1], got {common_share}")
    for col in ("task_id", "intent"):
        if col not in frame.columns:
            raise ValueError(f"assign_strata needs a column {col!r}")
    out = frame.copy()
    intents = [NO_GROUP if _missing(v) else str(v) for v in out["intent"]]
    common = common_intents(intents, common_share=common_share)
    strata = ["common" if i in common else "long_tail" for i in intents]
    if success in out.columns:
        hard = hard_tasks(
            out, success=success, hard_threshold=hard_threshold, min_trials=min_trials
        )
        strata = [
            "known_hard" if str(t) in hard else s
            for t, s in zip(out["task_id"], strata, strict=True)
        ]
    out["stratum"] = strata
    return out


def common_intents(intents: Sequence[str], *, common_share: float = 0.6) -> set[str]:
    """The intents that together cover the most frequent ``common_share`` of runs.

    See :func:`assign_strata` for the rule.
    """
    total = len(intents)
    if not total:
        return set()
    counts: dict[str, int] = {}
    for i in intents:
        counts[i] = counts.get(i, 0) + 1
    common: set[str] = set()
    covered = 0
    last = None
    for intent, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        if covered / total < common_share or c == last:
            common.add(intent)
            covered += c
            last = c
        else:
            break
    return common


def hard_tasks(
    frame: pd.DataFrame,
    *,
    success: str = "success",
    hard_threshold: float = 0.0,
    min_trials: int = 1,
) -> set[str]:
    """Tasks whose pass rate over known verdicts is at most ``hard_threshold``."""
    known = frame[frame[success].notna()]
    hard: set[str] = set()
    for task, sub in known.groupby(known["task_id"].astype(str)):
        verdicts = sub[success].astype(bool)
        if len(verdicts) >= min_trials and float(verdicts.mean()) <= hard_threshold:
            hard.add(str(task))
    return hard


def _ids(frame: pd.DataFrame) -> list[str]:
    for col in ("id", "trajectory_id"):
        if col in frame.columns:
            return [str(v) for v in frame[col]]
    return [str(v) for v in frame.index]


def _group_seed(group: str) -> int:
    return int.from_bytes(hashlib.sha256(group.encode()).digest()[:4], "big")


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))
