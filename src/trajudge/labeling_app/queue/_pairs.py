"""Pair labeling: which pairs, in which order, on which side, and the label mapped back.

The pairs of a dataset under a pairwise rubric are the pairs its pairwise judges compared
(the distinct ``(trajectory_id, other_id)`` of the stored judgments of that rubric: what
``trajudge judge`` planned, its ``max_pairs`` cap included), or, when no pairwise judge of the
rubric ran, every pair of trials of each task (or with ``max_pairs`` the seeded sample a judge
with that cap and seed draws: :func:`trajudge.judges.task_pairs`). A pair is always named in
its ORIGINAL numbering: ``a`` (A) is the lower trial, ``b`` (B) the other, as the judge stores
it.

Which trajectory an annotator sees on the left is drawn from a hash of (annotator, pair):
random across annotators and pairs, the same on every reload. The annotator's choice on the
screen (left better, right better, tie) is mapped back to ``A`` / ``B`` / ``tie`` in the
original numbering before it is stored, with the side shown on the left (``left_id``).

Pure code (no Streamlit): the pages and the tests share it.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import pandas as pd

from trajudge.judges import task_pairs
from trajudge.labeling_app._config import Strategy
from trajudge.labeling_app.queue._progress import Progress, queue_progress
from trajudge.labeling_app.queue._queue import (
    Queue,
    _digest64,
    build_queue,
    next_open,
    reserver,
)
from trajudge.store import Store
from trajudge.trajectories import Trajectory

Pair = tuple[str, str]  # (A, B) in the original numbering
Side = Literal["left", "right", "tie"]
SIDES: tuple[Side, ...] = ("left", "right", "tie")


def pair_key(a: str, b: str) -> str:
    """The queue id of the pair (A, B): unambiguous whatever characters the ids hold."""
    return json.dumps([a, b], ensure_ascii=False)


def pair_of(key: str) -> Pair:
    """The pair named by :func:`pair_key`."""
    a, b = json.loads(key)
    return str(a), str(b)


def pair_title(key: str) -> str:
    """``"A vs B"``: how a pair is named in lists."""
    a, b = pair_of(key)
    return f"{a} vs {b}"


def left_id(annotator: str, a: str, b: str) -> str:
    """The trajectory ``annotator`` sees on the left for the pair (A, B): ``a`` or ``b``, from
    a 64-bit hash of the three (the same on every reload, independent across annotators)."""
    h = _digest64(f"layout\x00{annotator}\x00{a}\x00{b}")
    return a if h & 1 else b


def stored_category(side: Side, left: str, a: str, b: str) -> str:
    """The label to store for a choice on the screen: ``A`` / ``B`` / ``tie`` in the
    original numbering, given ``left`` (the trajectory shown on the left)."""
    if left not in (a, b):
        raise ValueError(f"{left!r} is not one of the pair ({a!r}, {b!r})")
    if side == "tie":
        return "tie"
    if side not in ("left", "right"):
        raise ValueError(f"{side!r} is not left, right or tie")
    better = left if side == "left" else (b if left == a else a)
    return "A" if better == a else "B"


def shown_side(category: str, left: str, a: str, b: str) -> Side | None:
    """Where a stored verdict (``A`` / ``B`` / ``tie``, original numbering) points on this
    annotator's screen; None for anything else (an error, an unknown value)."""
    if category == "tie":
        return "tie"
    if category not in ("A", "B"):
        return None
    better = a if category == "A" else b
    return "left" if better == left else "right"


def _heads(store: Store, dataset: str) -> list[Trajectory]:
    """Trajectories naming only id, task and trial (what pairing needs), without parsing any:
    a shallow copy of one blank trajectory each (``model_construct`` costs far more)."""
    blank = Trajectory(id="-", task_id="-")
    return [
        blank.model_copy(update={"id": tid, "task_id": task, "trial": trial})
        for tid, task, trial, _ in store.trajectory_heads(dataset)
    ]


def judged_pairs(judgments: pd.DataFrame, rubric_id: str) -> list[Pair]:
    """The distinct pairs the pairwise judgments of ``rubric_id`` compare, in stored order."""
    if judgments.empty:
        return []
    j = judgments[
        (judgments["rubric_id"] == rubric_id)
        & (judgments["mode"] == "pairwise")
        & judgments["other_id"].notna()
    ]
    pairs = zip(j["trajectory_id"].astype(str), j["other_id"].astype(str), strict=True)
    return list(dict.fromkeys(pairs))


@dataclass(frozen=True)
class PairSet:
    """The pairs to label and where they come from (``judged`` or ``all trials``)."""

    pairs: list[Pair]
    source: Literal["judged", "all trials"]


def labeling_pairs(
    store: Store,
    dataset: str,
    rubric_id: str,
    *,
    max_pairs: int | None = None,
    seed: int | None = None,
) -> PairSet:
    """The pairs of ``dataset`` to label under the pairwise rubric ``rubric_id`` (see the
    module docstring): the judged pairs when a pairwise judge of the rubric ran, else the
    pairs of trials of each task (``max_pairs`` / ``seed`` as a judge's)."""
    judged = judged_pairs(store.judgments_frame(dataset), rubric_id)
    if judged:
        return PairSet(judged, "judged")
    tasks: dict[str, list[Trajectory]] = defaultdict(list)
    for t in _heads(store, dataset):
        tasks[t.task_id].append(t)
    pairs: list[Pair] = []
    for task_id, group in tasks.items():
        pairs += [(x.id, y.id) for x, y in task_pairs(group, task_id, cap=max_pairs, seed=seed)]
    return PairSet(pairs, "all trials")


def pair_disagreement_scores(judgments: pd.DataFrame, rubric_id: str) -> dict[str, float]:
    """How contested each pair is among the pairwise judgments of ``rubric_id``: the number
    of distinct verdicts (over judges, orders and samples; errors left out) minus one, keyed
    by :func:`pair_key`. A pair whose verdict flips with the order scores at least 1."""
    if judgments.empty:
        return {}
    j = judgments[
        (judgments["rubric_id"] == rubric_id)
        & (judgments["mode"] == "pairwise")
        & judgments["other_id"].notna()
        & judgments["error"].isna()
        & judgments["verdict"].notna()
    ]
    if j.empty:
        return {}
    pairs = zip(j["trajectory_id"], j["other_id"], strict=True)
    keys = [pair_key(str(a), str(b)) for a, b in pairs]
    n = j["verdict"].groupby(keys).nunique()
    return {str(k): float(v) - 1.0 for k, v in n.items()}


def build_pair_queue(
    pairs: Sequence[Pair],
    intents: Mapping[str, str | None],
    annotator: str,
    *,
    strategy: Strategy = "random",
    overlap: float = 0.2,
    pool: Sequence[str] = (),
    disagreement: Mapping[str, float] | None = None,
    reviewers: int = 1,
) -> Queue:
    """The annotator's queue of pairs (ids are :func:`pair_key`): the item queue of
    :func:`trajudge.labeling_app.build_queue` over the pairs, the intent of a pair being its
    first trajectory's. ``escalated`` (aligned judges score single items) orders as
    ``disagreement``."""
    items = [(pair_key(a, b), intents.get(a)) for a, b in pairs]
    return build_queue(
        items,
        annotator,
        strategy=strategy,
        overlap=overlap,
        pool=pool,
        disagreement=disagreement,
        reviewers=reviewers,
    )


def next_pair(
    store: Store,
    dataset: str,
    rubric_id: str,
    queue: Queue,
    *,
    start: int = 0,
    exclude: frozenset[str] = frozenset(),
    reserve_s: float | None = None,
) -> tuple[int, str] | None:
    """The first queue position at or after ``start`` whose pair the annotator still has to
    label, as ``trajudge.labeling_app.next_item`` for items: skipped are pairs the annotator
    labeled or skipped, keys in ``exclude``, and non-overlap pairs another annotator labeled
    (or, with ``reserve_s``, holds). Returns ``(position, pair key)`` or None when the queue
    is done."""

    def labels_on(keys: list[str]) -> list[tuple[str, str, bool]]:
        rows = store.pair_labels_on(dataset, rubric_id, [pair_of(k) for k in keys])
        return [(pair_key(a, b), who, skipped) for a, b, who, skipped in rows]

    hold = reserver(store, dataset, rubric_id, queue.annotator, reserve_s, queue.reviewers)
    return next_open(queue, labels_on, start=start, exclude=exclude, reserve=hold)


def pair_progress(
    store: Store, dataset: str, rubric_id: str, queue: Queue, n_pairs: int
) -> Progress:
    """The annotator's progress through the pair queue and the share of pairs anyone
    labeled (as :func:`trajudge.labeling_app.progress` for items)."""
    rows = store.pair_label_marks(dataset, rubric_id)
    marks = [(pair_key(a, b), who, skipped) for a, b, who, skipped in rows]
    return queue_progress(queue, marks, n_pairs)
