"""Which item an annotator labels next.

The queue of an annotator is a deterministic order of the dataset's trajectories:

* ``overlap`` — a share of the items, chosen from a hash of the item id alone, is labeled by
  every annotator (for inter-annotator agreement). Growing the share only adds items.
* every other item goes to ``reviewers`` annotators of the pool (one by default; the
  annotators who have labeled so far, plus the one asking) by rendezvous hashing: the
  annotators with the highest hashes of (annotator, item) own it. A newcomer takes over about
  1/n of the unlabeled items and no item changes hands between the others. An item that
  ``reviewers`` other annotators already labeled is never handed to another one, whatever the
  pool says.
* the order: ``random`` (a permutation seeded by the annotator's name), ``stratified``
  (round-robin over intents, each intent in that random order), ``disagreement`` (items
  where judges disagree or a judge flipped under swapped order first, the most contested
  first, then the rest in random order) or ``escalated`` (the items an aligned judge
  escalated to people, ``trajudge align``, the least confident first, then the rest in
  random order) or ``active`` (only the items the frozen active design drew, in the order
  the draws walk: ``trajudge.calibration.active``; each label is weighted by one over the
  probability its item was drawn with, so the estimates stay unbiased).

Hashes are 64-bit BLAKE2b digests of the ids mixed with per-purpose salts by SplitMix64, so
building the queue for 100,000 items takes a few tens of milliseconds.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from trajudge.judges import Rubric
from trajudge.labeling_app._config import Strategy
from trajudge.store import Store

_U64 = np.uint64


def _digest64(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little")


def id_hashes(ids: Sequence[str]) -> np.ndarray:
    """64-bit hashes of the item ids (uint64 array)."""
    return np.fromiter((_digest64(i) for i in ids), dtype=np.uint64, count=len(ids))


def _mix(h: np.ndarray, purpose: str) -> np.ndarray:
    """SplitMix64 of ``h`` XOR a salt derived from ``purpose``: independent uniform 64-bit keys."""
    with np.errstate(over="ignore"):
        z = h ^ _U64(_digest64(purpose))
        z = z + _U64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> _U64(30))) * _U64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> _U64(27))) * _U64(0x94D049BB133111EB)
        return z ^ (z >> _U64(31))


def overlap_mask(hashes: np.ndarray, share: float) -> np.ndarray:
    """Which items every annotator labels: a uniform value from the id below ``share``."""
    u = (_mix(hashes, "overlap") >> _U64(11)).astype(np.float64) / float(2**53)
    return u < share


def owned_by(hashes: np.ndarray, pool: Sequence[str], member: int, reviewers: int) -> np.ndarray:
    """Whether ``pool[member]`` is among the ``reviewers`` owners of each item (the highest
    rendezvous hashes; one reviewer: :func:`owners`)."""
    if reviewers <= 1:
        mask: np.ndarray = owners(hashes, pool) == member
        return mask
    scores = np.stack([_mix(hashes, f"owner\x00{a}") for a in pool])
    above = (scores > scores[member]).sum(axis=0)
    result: np.ndarray = above < reviewers
    return result


def owners(hashes: np.ndarray, pool: Sequence[str]) -> np.ndarray:
    """Index into ``pool`` of each item's owner (rendezvous hashing)."""
    if not pool:
        raise ValueError("the annotator pool is empty")
    scores = np.stack([_mix(hashes, f"owner\x00{a}") for a in pool])
    best: np.ndarray = np.argmax(scores, axis=0)
    return best


def order(
    hashes: np.ndarray,
    annotator: str,
    strategy: Strategy,
    *,
    intents: Sequence[str | None] | None = None,
    disagreement: np.ndarray | None = None,
) -> np.ndarray:
    """The positions of the items in the annotator's order for ``strategy``."""
    key = _mix(hashes, f"order\x00{annotator}")
    if strategy == "random":
        return np.argsort(key, kind="stable")
    if strategy == "stratified":
        names = pd.Series(["" if x is None else x for x in (intents or [""] * len(hashes))])
        by_key = np.argsort(key, kind="stable")
        intent_code = pd.factorize(names, sort=True)[0]
        rank = pd.Series(intent_code[by_key]).groupby(intent_code[by_key]).cumcount().to_numpy()
        # round-robin: the first item of every intent, then the second of every intent, ...
        return by_key[np.lexsort((intent_code[by_key], rank))]
    if disagreement is None:
        disagreement = np.zeros(len(hashes))
    return np.lexsort((key, -disagreement))


@dataclass(frozen=True)
class Queue:
    """An annotator's items in order; ``overlap[i]`` says whether ``ids[i]`` is shared (with
    everyone); every other item is shared by ``reviewers`` annotators."""

    annotator: str
    strategy: Strategy
    ids: list[str]
    overlap: list[bool]
    reviewers: int = 1

    def __len__(self) -> int:
        return len(self.ids)


def build_queue(
    items: Sequence[tuple[str, str | None]],
    annotator: str,
    *,
    strategy: Strategy = "random",
    overlap: float = 0.2,
    pool: Sequence[str] = (),
    disagreement: Mapping[str, float] | None = None,
    drawn: Sequence[str] | None = None,
    reviewers: int = 1,
) -> Queue:
    """The annotator's queue over ``items`` (``(id, intent)`` pairs).

    ``pool`` is the set of annotators that share the non-overlap items (the annotator is
    added when missing), each item among ``reviewers`` of them; ``disagreement`` scores items
    for the ``disagreement`` and ``escalated`` strategies (higher first; see
    :func:`escalation_scores`); ``drawn`` is the ``active`` strategy's items in the order of
    the draws (the queue keeps that order).
    """
    if strategy == "active":
        wanted = list(drawn or ())
        known = {i for i, _ in items}
        items = [(i, None) for i in wanted if i in known]
    ids = [i for i, _ in items]
    h = id_hashes(ids)
    shared = overlap_mask(h, overlap)
    members = sorted({*pool, annotator})
    mine = shared | owned_by(h, members, members.index(annotator), reviewers)
    dis = None
    if strategy in ("disagreement", "escalated"):
        scores = disagreement or {}
        dis = np.array([scores.get(i, 0.0) for i in ids], dtype=np.float64)
    if strategy == "active":  # the design's order, the same for everyone
        pos = np.arange(len(ids))
    else:
        pos = order(h, annotator, strategy, intents=[t for _, t in items], disagreement=dis)
    pos = pos[mine[pos]]
    return Queue(annotator, strategy, [ids[p] for p in pos], shared[pos].tolist(), reviewers)


def labeling_pool(store: Store, names: Sequence[str]) -> tuple[str, ...]:
    """The pool that shares the non-overlap items: ``names`` (the annotators who labeled)
    without the disabled accounts. A disabled annotator's open items thereby pass to the
    others (rendezvous hashing moves only hers); what she labeled stays hers."""
    disabled = {a.name for a in store.accounts() if a.disabled}
    return tuple(n for n in names if n not in disabled)


def disagreement_scores(judgments: pd.DataFrame, rubric: Rubric) -> dict[str, float]:
    """How contested each trajectory is among the judges, from ``Store.judgments_frame``.

    One point when the judges' mean scores fall on different sides of the rubric's pass
    threshold, one point when a judge's score (mapped back to the candidate, as stored) lands
    on different sides of the threshold in the (A, B) and (B, A) orders of one comparison,
    plus the spread of the judges' mean scores as a share of the scale (a tie-break). Items
    with a score above 0 come first in the ``disagreement`` strategy.
    """
    if judgments.empty:
        return {}
    j = judgments[
        (judgments["rubric_id"] == rubric.id)
        & judgments["error"].isna()
        & judgments["score"].notna()
    ]
    if j.empty:
        return {}
    span = float(rubric.scale.max - rubric.scale.min) or 1.0
    threshold = rubric.scale.pass_threshold  # Scale.passed(score) is score >= threshold
    assert threshold is not None  # the Scale validator always sets it
    per_judge = j.groupby(["trajectory_id", "judge"])["score"].mean().reset_index()
    per_judge["pass"] = per_judge["score"].astype(float) >= threshold
    g = per_judge.groupby("trajectory_id").agg(
        smax=("score", "max"), smin=("score", "min"), pmax=("pass", "max"), pmin=("pass", "min")
    )
    total = (g["pmax"] != g["pmin"]).astype(float) + (g["smax"] - g["smin"]).astype(float) / span
    both = j[j["order"].isin(["ab", "ba"])].assign(
        other_id=lambda f: f["other_id"].fillna(""),
        side=lambda f: f["score"].astype(float) >= threshold,
    )
    keys = ["trajectory_id", "other_id", "judge", "sample"]
    flips = both.groupby(keys).agg(orders=("order", "nunique"), sides=("side", "nunique"))
    flipped = flips[(flips["orders"] == 2) & (flips["sides"] > 1)].reset_index()["trajectory_id"]
    total = total.add(pd.Series(1.0, index=pd.Index(flipped.unique())), fill_value=0.0)
    return {str(k): float(v) for k, v in total.items()}


def escalation_scores(store: Store, dataset: str) -> dict[str, float]:
    """How urgently people should label each item an aligned judge of ``dataset`` escalated
    (``trajudge align``: its confidence below the certified threshold): ``2 - confidence``, so the
    least confident come first and every escalated item before the others (0)."""
    scores: dict[str, float] = {}
    for record in store.aligned_judges(dataset):
        for e in record.get("escalated", []):
            item, score = str(e["item"]), 2.0 - float(e["confidence"])
            scores[item] = max(scores.get(item, 0.0), score)
    return scores


def next_item(
    store: Store,
    dataset: str,
    rubric_id: str,
    queue: Queue,
    *,
    start: int = 0,
    exclude: frozenset[str] = frozenset(),
    reserve_s: float | None = None,
) -> tuple[int, str] | None:
    """The first queue position at or after ``start`` the annotator still has to label.

    Skipped are items the annotator labeled or skipped, items in ``exclude``, and non-overlap
    items as many other annotators as the item has reviewers already labeled. With
    ``reserve_s``, the non-overlap item found
    is reserved for the annotator that long, and one another annotator holds is passed over
    (``Store.reserve``). Returns ``(position, trajectory id)`` or None when the queue is
    done. Reads the labels of a small window of the queue at a time.
    """
    return next_open(
        queue,
        lambda ids: store.labels_on_items(dataset, rubric_id, ids),
        start=start,
        exclude=exclude,
        reserve=reserver(store, dataset, rubric_id, queue.annotator, reserve_s, queue.reviewers),
    )


def reserver(
    store: Store,
    dataset: str,
    rubric_id: str,
    annotator: str,
    ttl_s: float | None,
    reviewers: int = 1,
) -> Callable[[str], bool] | None:
    """``key -> whether the annotator may have it`` through the store's reservations, one
    slot per reviewer of an item (None without a time: nothing is reserved)."""
    if ttl_s is None:
        return None
    return lambda key: store.reserve(
        dataset, rubric_id, key, annotator, ttl_s=ttl_s, slots=reviewers
    )


def next_open(
    queue: Queue,
    labels_on: Callable[[list[str]], Iterable[tuple[str, str, bool]]],
    *,
    start: int = 0,
    exclude: frozenset[str] = frozenset(),
    reserve: Callable[[str], bool] | None = None,
) -> tuple[int, str] | None:
    """The first queue position at or after ``start`` whose key the annotator still has to
    label (:func:`next_item` for items, ``next_pair`` for pairs).

    ``labels_on(keys)`` gives the ``(key, annotator, skipped)`` labels stored on ``keys``; it
    is asked for a small window of the queue at a time (32 keys, doubling up to 1,024).
    ``reserve(key)`` (when given) takes a non-overlap key for the annotator; a key it refuses
    (another annotator holds it) is passed over.
    """
    i, window = max(start, 0), 32
    while i < len(queue.ids):
        chunk = queue.ids[i : i + window]
        rows = list(labels_on(chunk))
        mine = {k for k, a, _ in rows if a == queue.annotator}
        others = Counter(k for k, a, skipped in rows if a != queue.annotator and not skipped)
        for j, key in enumerate(chunk):
            if key in mine or key in exclude:
                continue
            if not queue.overlap[i + j] and others[key] >= queue.reviewers:
                continue
            if reserve is not None and not queue.overlap[i + j] and not reserve(key):
                continue
            return i + j, key
        i += len(chunk)
        window = min(window * 2, 1024)
    return None
