"""The lead's page: agreement so far (checked against scikit-learn), the page only for a
lead, and a disabled annotator's open items passing to the others."""

from __future__ import annotations

import threading

import numpy as np
import pandas as pd
from labeling_helpers import DATASET, PASSWORD, sign_in_as
from sklearn.metrics import cohen_kappa_score
from streamlit.testing.v1 import AppTest

from trajudge.judges import load_rubric
from trajudge.labeling_app import AppConfig, Queue, build_queue, next_item, progress
from trajudge.labeling_app import _state as S
from trajudge.labeling_app.auth._manage import add_account
from trajudge.labeling_app.auth._signin import sign_in
from trajudge.labeling_app.lead import judge_agreement, pairwise_agreement
from trajudge.labeling_app.queue._queue import labeling_pool
from trajudge.store import Store

RUBRIC = "trajectory_reasonableness"  # ordinal 1..5, pass at 4
ANN = [5, 4, 4, 3, 2, 1, 5, 3, 4, 2]
BOB = [5, 3, 4, 3, 1, 1, 4, 3, 5, 2]
CAROL = [1, 2, 3]  # on the first three items only


def _seed(store: Store) -> None:
    for i, (a, b) in enumerate(zip(ANN, BOB, strict=True)):
        tid = f"t{i + 1:03d}" if i else "xss"
        store.save_label(DATASET, tid, RUBRIC, "ann", float(a))
        store.save_label(DATASET, tid, RUBRIC, "bob", float(b))
    for i, c in enumerate(CAROL):
        store.save_label(DATASET, f"t{i + 1:03d}" if i else "xss", RUBRIC, "carol", float(c))
    store.save_label(DATASET, "t011", RUBRIC, "carol", None, skipped=True)  # not a label


def test_pairwise_kappa_is_scikit_learns(store: Store) -> None:
    _seed(store)
    rubric = load_rubric(RUBRIC)
    table = pairwise_agreement(store.labels_frame(DATASET), rubric).set_index(
        ["annotator_a", "annotator_b"]
    )
    ab = table.loc[("ann", "bob")]
    assert ab["items"] == 10
    assert ab["kappa"] == cohen_kappa_score(ANN, BOB, weights="quadratic")
    assert ab["low"] <= ab["kappa"] <= ab["high"] and ab["high"] - ab["low"] > 0
    ac = table.loc[("ann", "carol")]
    assert ac["items"] == 3
    assert np.isclose(ac["kappa"], cohen_kappa_score(ANN[:3], CAROL, weights="quadratic"))


def test_judge_against_humans_is_kappa_on_pass_fail(store: Store) -> None:
    _seed(store)
    judge = [5, 5, 2, 2, 2, 4, 5, 1, 4, 1]
    for i, score in enumerate(judge):
        store.add_judgment(
            DATASET,
            {"trajectory_id": f"t{i + 1:03d}" if i else "xss", "judge": "j", "rubric_id": RUBRIC,
             "rubric_version": "v", "model": "m", "mode": "pointwise", "order": "ab",
             "sample": 0, "score": float(score)},
        )  # fmt: skip
    rubric = load_rubric(RUBRIC)
    got = judge_agreement(store.labels_frame(DATASET), store.judgments_frame(DATASET), rubric)
    # by hand: the humans' mean per item (carol too on the first three) against 4
    means = [
        np.mean([a, b] + ([CAROL[i]] if i < 3 else []))
        for i, (a, b) in enumerate(zip(ANN, BOB, strict=True))
    ]
    human_pass = [m >= 4 for m in means]
    judge_pass = [s >= 4 for s in judge]
    (row,) = got.to_dict(orient="records")
    assert row["judge"] == "j" and row["items"] == 10
    assert np.isclose(row["kappa"], cohen_kappa_score(human_pass, judge_pass))


def test_only_a_lead_sees_the_lead_page(store_url: str, store: Store) -> None:
    _seed(store)
    add_account(store, "ann", password=PASSWORD)
    sign_in(store, "ann", "wrong password", "10.9.8.7", ttl_s=60)
    page = "from trajudge.labeling_app.lead._page_lead import page_lead\npage_lead()"
    runs = {}
    for name, role in [("ann", "annotator"), ("cho", "lead")]:
        at = AppTest.from_string(page, default_timeout=120)
        at.session_state[S.CONFIG] = AppConfig(db_url=store_url, dataset=DATASET, overlap=1.0)
        at.session_state[S.DATASET] = DATASET
        sign_in_as(at, store_url, name, role)
        runs[name] = at.run()
    assert [e.value for e in runs["ann"].error] == ["Only a lead sees this page."]
    assert not runs["ann"].dataframe
    lead = runs["cho"]
    assert not lead.exception
    frames = [d.value for d in lead.dataframe]
    accounts, pairs, log = frames[0], frames[1], frames[-1]
    assert set(accounts["name"]) == {"ann", "cho"}
    assert accounts.set_index("name").loc["ann", "labeled"] == 10
    assert ("ann", "bob") in set(zip(pairs["annotator_a"], pairs["annotator_b"], strict=True))
    assert list(log.columns) == ["at", "name", "client", "event", "detail"]
    assert ("ann", "10.9.8.7", "failed") in set(
        zip(log["name"], log["client"], log["event"], strict=True)
    )
    assert PASSWORD not in pd.concat(frames, axis=0).to_string()


def test_a_disabled_annotators_open_items_pass_to_the_others(store: Store) -> None:
    for name in ("alice", "bob"):
        add_account(store, name, password=PASSWORD)
        store.save_label(DATASET, "t001", RUBRIC, name, 3.0)
    items = store.trajectory_keys(DATASET)
    pool = labeling_pool(store, store.label_annotators(DATASET, RUBRIC))
    assert pool == ("alice", "bob")
    before = set(build_queue(items, "bob", overlap=0.0, pool=pool).ids)
    alices = set(build_queue(items, "alice", overlap=0.0, pool=pool).ids)
    assert before and alices and not before & alices
    store.set_account_disabled("alice", True)
    pool = labeling_pool(store, store.label_annotators(DATASET, RUBRIC))
    assert pool == ("bob",)
    after = set(build_queue(items, "bob", overlap=0.0, pool=pool).ids)
    assert after == before | alices == {i for i, _ in items}


def test_reservations_keep_two_annotators_off_one_item(store_url: str, store: Store) -> None:
    ids = [i for i, _ in store.trajectory_keys(DATASET)]
    # two views of who shares the items that differ for a moment (a newcomer not yet in the
    # other's cached pool): both queues hand out the same items in the same order
    x = Queue("x", "random", ids, [False] * len(ids))
    y = Queue("y", "random", ids, [False] * len(ids))
    assert next_item(store, DATASET, RUBRIC, y) == (0, ids[0])  # without reservations: both
    assert next_item(store, DATASET, RUBRIC, x, reserve_s=600) == (0, ids[0])
    assert next_item(store, DATASET, RUBRIC, y, reserve_s=600) == (1, ids[1])
    assert next_item(store, DATASET, RUBRIC, x, reserve_s=600) == (0, ids[0])  # hers, renewed
    # an overlap item is everyone's: never reserved
    shared = Queue("y", "random", ids, [True] * len(ids))
    assert next_item(store, DATASET, RUBRIC, shared, reserve_s=600) == (0, ids[0])
    # a skip lets it go; a lapsed reservation is taken over; a disabled account's lapse
    store.release_reservations("x", ids[0])
    assert next_item(store, DATASET, RUBRIC, y, reserve_s=600) == (0, ids[0])
    assert store.reserve(DATASET, RUBRIC, ids[2], "x", ttl_s=0.0)  # lapses at once
    assert store.reserve(DATASET, RUBRIC, ids[2], "y", ttl_s=600)
    add_account(store, "y", password=PASSWORD)
    store.set_account_disabled("y", True)
    assert store.reserve(DATASET, RUBRIC, ids[1], "x", ttl_s=600)
    # two app processes asking for the same items at the same moment: one wins each
    stores = [Store(store_url), Store(store_url)]
    wins: dict[str, list[bool]] = {"a": [], "b": []}

    def grab(who: str, s: Store) -> None:
        wins[who] = [s.reserve(DATASET, "race", i, who, ttl_s=600) for i in ids]

    threads = [
        threading.Thread(target=grab, args=(w, s)) for w, s in zip("ab", stores, strict=True)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [a + b for a, b in zip(wins["a"], wins["b"], strict=True)] == [1] * len(ids)


def test_reviewers_per_item_hands_each_item_to_that_many(store: Store) -> None:
    items = store.trajectory_keys(DATASET)
    pool = ["x", "y", "z"]
    for n in (1, 2, 3):
        queues = {a: build_queue(items, a, overlap=0.0, pool=pool, reviewers=n) for a in pool}
        # counted over the three queues: every item is in exactly n of them
        counts = {i: sum(i in q.ids for q in queues.values()) for i, _ in items}
        assert set(counts.values()) == {n}, (n, counts)
    # one reviewer: the same queues as before reviewers existed (rendezvous, one owner)
    assert build_queue(items, "x", overlap=0.0, pool=pool).ids == (
        build_queue(items, "x", overlap=0.0, pool=pool, reviewers=1).ids
    )
    x = build_queue(items, "x", overlap=0.0, pool=pool, reviewers=3)
    first = x.ids[0]
    store.save_label(DATASET, first, RUBRIC, "y", 3.0)
    assert next_item(store, DATASET, RUBRIC, x) == (0, first)  # one of three reviewers so far
    store.save_label(DATASET, first, RUBRIC, "z", 4.0)
    assert next_item(store, DATASET, RUBRIC, x) == (0, first)  # two of three: x is the third
    two = Queue("x", "random", x.ids, x.overlap, reviewers=2)
    assert next_item(store, DATASET, RUBRIC, two) == (1, x.ids[1])  # two of two: passed over
    assert progress(store, DATASET, RUBRIC, two, len(items)).mine_assigned == len(items) - 1
    assert progress(store, DATASET, RUBRIC, x, len(items)).mine_assigned == len(items)
    # reservations: one slot per reviewer; asking again renews, never takes a second slot
    item = x.ids[2]
    assert store.reserve(DATASET, RUBRIC, item, "x", ttl_s=600, slots=2)
    assert store.reserve(DATASET, RUBRIC, item, "x", ttl_s=600, slots=2)
    assert store.reserve(DATASET, RUBRIC, item, "y", ttl_s=600, slots=2)
    assert not store.reserve(DATASET, RUBRIC, item, "z", ttl_s=600, slots=2)
    store.release_reservations("x", item)  # a skip
    assert store.reserve(DATASET, RUBRIC, item, "z", ttl_s=600, slots=2)
    cfg = AppConfig(db_url="sqlite://", reviewers=3)
    assert AppConfig.from_env(cfg.to_env()).reviewers == 3
