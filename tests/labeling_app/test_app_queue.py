"""Annotator queues: strategies, overlap, the split of the rest, and the next open item."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import pytest
from labeling_helpers import DATASET

from trajudge.judges import load_rubric
from trajudge.labeling_app import (
    build_queue,
    disagreement_scores,
    next_item,
    overlap_mask,
    progress,
    progress_after_save,
)
from trajudge.labeling_app.queue._queue import id_hashes
from trajudge.store import Store

IDS = [f"item-{i}" for i in range(2000)]
ITEMS = [(i, None) for i in IDS]


def test_random_is_seeded_per_annotator() -> None:
    a1 = build_queue(ITEMS, "ann", overlap=1.0)
    a2 = build_queue(ITEMS, "ann", overlap=1.0)
    b = build_queue(ITEMS, "bob", overlap=1.0)
    assert a1.ids == a2.ids
    assert sorted(a1.ids) == sorted(IDS) and sorted(b.ids) == sorted(IDS)
    assert a1.ids != b.ids
    assert a1.ids != IDS  # shuffled, not import order


def test_overlap_share_is_deterministic_and_monotone() -> None:
    h = id_hashes(IDS)
    m20 = overlap_mask(h, 0.2)
    # 2000 Bernoulli(0.2) draws: sd = sqrt(2000 * 0.2 * 0.8) = 17.9, so 3 sd = 54 items
    assert abs(int(m20.sum()) - 400) < 54
    assert np.array_equal(m20, overlap_mask(id_hashes(IDS), 0.2))
    m10 = overlap_mask(h, 0.1)
    assert not (m10 & ~m20).any()  # a bigger share only adds items
    assert not overlap_mask(h, 0.0).any() and overlap_mask(h, 1.0).all()


def test_overlap_items_go_to_everyone_and_the_rest_to_exactly_one() -> None:
    pool = ["ann", "bob", "cy"]
    queues = {a: build_queue(ITEMS, a, overlap=0.2, pool=pool) for a in pool}
    shared = {i for q in queues.values() for i, o in zip(q.ids, q.overlap, strict=True) if o}
    for q in queues.values():
        assert shared <= set(q.ids)
        assert len(q.ids) == len(set(q.ids))  # nobody gets an item twice
    counts = Counter(i for q in queues.values() for i in q.ids if i not in shared)
    assert set(counts) == set(IDS) - shared  # every other item is assigned ...
    assert set(counts.values()) == {1}  # ... to exactly one annotator
    per = [sum(1 for i in q.ids if i not in shared) for q in queues.values()]
    assert min(per) > (2000 - len(shared)) / 3 * 0.8  # roughly even split


def test_a_newcomer_only_takes_items_no_one_else_loses_to_another() -> None:
    before = {
        a: set(build_queue(ITEMS, a, overlap=0.0, pool=["ann", "bob"]).ids) for a in ["ann", "bob"]
    }
    after = {
        a: set(build_queue(ITEMS, a, overlap=0.0, pool=["ann", "bob", "cy"]).ids)
        for a in ["ann", "bob", "cy"]
    }
    assert after["ann"] <= before["ann"] and after["bob"] <= before["bob"]
    assert after["cy"] == (before["ann"] - after["ann"]) | (before["bob"] - after["bob"])
    assert 0.2 < len(after["cy"]) / 2000 < 0.45  # about a third


def test_stratified_is_round_robin_over_intents() -> None:
    items = [(f"a{i}", "A") for i in range(5)] + [(f"b{i}", "B") for i in range(2)]
    items += [(f"c{i}", "C") for i in range(3)] + [("n0", None)]
    q = build_queue(items, "ann", strategy="stratified", overlap=1.0)
    intent = {i: t for i, t in items}
    # rounds in intent-name order ("" for no intent first):
    # ("", A, B, C), (A, B, C), (A, C), (A,), (A,)
    got = [intent[i] or "" for i in q.ids]
    assert got == ["", "A", "B", "C", "A", "B", "C", "A", "C", "A", "A"]
    within_a = [i for i in q.ids if i.startswith("a")]
    assert within_a == [i for i in build_queue(items, "ann", overlap=1.0).ids if i.startswith("a")]


def test_disagreement_first() -> None:
    scores = {"item-5": 2.0, "item-9": 1.25, "item-7": 0.5}
    q = build_queue(ITEMS, "ann", strategy="disagreement", overlap=1.0, disagreement=scores)
    assert q.ids[:3] == ["item-5", "item-9", "item-7"]
    rest = [i for i in build_queue(ITEMS, "ann", overlap=1.0).ids if i not in scores]
    assert q.ids[3:] == rest  # then the annotator's random order


def test_disagreement_scores_from_judgments() -> None:
    rubric = load_rubric("trajectory_reasonableness")  # ordinal 1..5, pass >= 4
    rows = [
        # t1: j1 says 5 (pass), j2 says 1 (fail): 1 + (5 - 1) / 4 = 2.0
        ("t1", None, "j1", "ab", 0, 5.0, None),
        ("t1", None, "j2", "ab", 0, 1.0, None),
        # t2: both pass, spread 1: 0 + 1/4 = 0.25
        ("t2", None, "j1", "ab", 0, 4.0, None),
        ("t2", None, "j2", "ab", 0, 5.0, None),
        # t3 vs t9 pairwise, j1 flips: ab 5 (pass), ba 2 (fail); one judge: 1.0
        ("t3", "t9", "j1", "ab", 0, 5.0, None),
        ("t3", "t9", "j1", "ba", 0, 2.0, None),
        # t4: the failing judge errored; only j1 counts: 0
        ("t4", None, "j1", "ab", 0, 5.0, None),
        ("t4", None, "j2", "ab", 0, None, "timeout"),
    ]
    cols = ["trajectory_id", "other_id", "judge", "order", "sample", "score", "error"]
    frame = pd.DataFrame(rows, columns=cols).assign(rubric_id=rubric.id)
    got = disagreement_scores(frame, rubric)
    assert got == pytest.approx({"t1": 2.0, "t2": 0.25, "t3": 1.0, "t4": 0.0})
    assert disagreement_scores(frame.assign(rubric_id="other"), rubric) == {}


def test_next_item_skips_done_and_taken(store: Store) -> None:
    items = store.trajectory_keys(DATASET)
    q = build_queue(items, "ann", overlap=0.0, pool=["ann"])  # everything is ann's
    first = q.ids[0]
    assert next_item(store, DATASET, "r", q) == (0, first)
    store.save_label(DATASET, first, "r", "ann", 3.0)
    assert next_item(store, DATASET, "r", q) == (1, q.ids[1])
    # a non-overlap item someone else labeled is taken; one they skipped is not
    store.save_label(DATASET, q.ids[1], "r", "bob", 2.0)
    store.save_label(DATASET, q.ids[2], "r", "cy", None, skipped=True)
    assert next_item(store, DATASET, "r", q) == (2, q.ids[2])
    assert next_item(store, DATASET, "r", q, exclude=frozenset([q.ids[2]])) == (3, q.ids[3])
    # overlap items stay open for everyone
    shared = build_queue(items, "dee", overlap=1.0)
    store.save_label(DATASET, shared.ids[0], "r", "bob", 2.0)
    assert next_item(store, DATASET, "r", shared) == (0, shared.ids[0])
    for tid in q.ids:
        store.save_label(DATASET, tid, "r", "ann", 1.0)
    assert next_item(store, DATASET, "r", q) is None


def test_progress_moved_on_by_saves_equals_a_recount(store: Store) -> None:
    """The label page keeps the progress and moves it on by each of the annotator's saves;
    after every kind of save it must equal what counting the store again gives."""
    items = store.trajectory_keys(DATASET)
    q = build_queue(items, "ann", overlap=1.0, pool=["ann"])
    t = q.ids
    # earlier work: bob labeled t[1], an adjudication on t[3], a non-human label on t[4]
    store.save_label(DATASET, t[1], "r", "bob", 2.0)
    store.save_label(DATASET, t[3], "r", "lead", 4.0, adjudication=True)
    store.save_label(DATASET, t[4], "r", "env", 1.0, source="env_reward")
    kept = progress(store, DATASET, "r", q, len(items))
    assert (kept.mine_labeled, kept.items_labeled) == (0, 1)
    saves = [
        (t[0], 3.0, False),  # a new item
        (t[1], 5.0, False),  # an item bob labeled: not a newly labeled item
        (t[2], None, True),  # a skip
        (t[2], 2.0, False),  # the skip becomes a label
        (t[0], None, True),  # a label becomes a skip
        (t[0], None, True),  # the same skip again
        (t[3], 1.0, False),  # only an adjudication before: a newly labeled item
        (t[4], 1.0, False),  # only a non-human label before: a newly labeled item
    ]
    for tid, value, skipped in saves:
        before = store.item_labels(DATASET, tid, "r")
        store.save_label(DATASET, tid, "r", "ann", value, skipped=skipped)
        kept = progress_after_save(kept, before, "ann", skipped=skipped)
        assert kept == progress(store, DATASET, "r", q, len(items)), (tid, value)
    # by hand: ann labeled t1, t2, t3, t4 and skipped t0; items with a human label (a skip is
    # none): t1 (bob's and ann's), t2, t3, t4
    assert (kept.mine_labeled, kept.mine_skipped, kept.items_labeled) == (4, 1, 4)


def test_progress_counts_what_the_annotator_is_shown_and_skips_apart(store: Store) -> None:
    """12 items, no overlap, ann alone in the pool: all 12 are in her queue. Bob labeled 3 of
    them before: she is never shown those (next_item skips them), so 9 are hers. She labels
    8 and skips 1: her queue is done at "8 / 9 labeled, 1 skipped", not "9 / 12 done"."""
    items = store.trajectory_keys(DATASET)
    q = build_queue(items, "ann", overlap=0.0, pool=["ann"])
    assert len(q) == 12
    for tid in q.ids[:3]:
        store.save_label(DATASET, tid, "r", "bob", 2.0)
    shown = []
    while (found := next_item(store, DATASET, "r", q)) is not None:
        shown.append(found[1])
        store.save_label(DATASET, found[1], "r", "ann", 4.0, skipped=len(shown) == 1)
        before = progress(store, DATASET, "r", q, len(items))
        assert before.mine_assigned == 9
    assert len(shown) == 9
    done = progress(store, DATASET, "r", q, len(items))
    assert (done.mine_labeled, done.mine_skipped, done.mine_assigned) == (8, 1, 9)
    assert done.mine_text == "You: 8 / 9 labeled, 1 skipped · your queue is done"
    assert done.items_labeled == 11  # bob's 3 and ann's 8; her skip labels nothing
