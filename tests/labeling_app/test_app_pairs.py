"""Pair labeling: the pairs, the per-annotator layout, the label mapped back, blindness, and
the pair page under AppTest."""

from __future__ import annotations

from typing import Any

import pytest
from labeling_helpers import DATASET, IMG, LINK, PASSWORD, SCRIPT, sign_in_as
from streamlit.testing.v1 import AppTest

from trajudge.judges import load_rubric, task_pairs
from trajudge.labeling_app import (
    AppConfig,
    NotAllowed,
    Viewer,
    build_pair_queue,
    labeling_pairs,
    left_id,
    next_pair,
    pair_key,
    pair_of,
    pair_review,
    shown_side,
    stored_category,
)
from trajudge.labeling_app import _state as S
from trajudge.labeling_app.auth._manage import add_account
from trajudge.labeling_app.queue._strategy import choose_strategy
from trajudge.store import Store
from trajudge.trajectories import Trajectory

RUBRIC = "trajectory_preference"
# make_trajectories(12): t{i} is task{i % 5}, trial i // 5 (and "xss" alone in its task), so
# the pairs of trials of each task, lower trial first, are these seven
ALL_PAIRS = [
    ("t001", "t006"),
    ("t001", "t011"),
    ("t006", "t011"),
    ("t002", "t007"),
    ("t003", "t008"),
    ("t004", "t009"),
    ("t005", "t010"),
]
JUDGE = {
    "judge": "pj",
    "rubric_id": RUBRIC,
    "rubric_version": "v",
    "model": "m",
    "mode": "pairwise",
    "sample": 0,
}


# --- the mapping, written out by hand ---------------------------------------------------


@pytest.mark.parametrize(
    ("side", "left", "expected"),
    [
        # shown in the original order (A on the left): the screen's choice is the label
        ("left", "x", "A"),
        ("right", "x", "B"),
        ("tie", "x", "tie"),
        # shown swapped (B on the left): left better means B, right better means A
        ("left", "y", "B"),
        ("right", "y", "A"),
        ("tie", "y", "tie"),
    ],
)
def test_a_choice_on_the_screen_is_stored_in_the_original_numbering(
    side: Any, left: str, expected: str
) -> None:
    assert stored_category(side, left, "x", "y") == expected
    # and a stored verdict reads back as the side it was given on
    assert shown_side(expected, left, "x", "y") == side


def test_mapping_refuses_what_is_not_a_side_or_not_of_the_pair() -> None:
    with pytest.raises(ValueError, match="not one of the pair"):
        stored_category("left", "z", "x", "y")
    with pytest.raises(ValueError, match="not left, right or tie"):
        stored_category("up", "x", "x", "y")  # type: ignore[arg-type]
    assert shown_side("inconsistent", "x", "x", "y") is None


def test_layout_is_fixed_per_annotator_and_pair_and_random_across_them() -> None:
    pairs = [(f"a{i}", f"b{i}") for i in range(400)]
    # the same on every call (a reload shows the same layout)
    assert [left_id("ann", a, b) for a, b in pairs] == [left_id("ann", a, b) for a, b in pairs]
    assert all(left_id("ann", a, b) in (a, b) for a, b in pairs)
    # about half the pairs are shown swapped to one annotator (400 fair coins: 200 +- 10)
    swapped = sum(left_id("ann", a, b) == b for a, b in pairs)
    assert 140 < swapped < 260, swapped
    # and two annotators see about half of the pairs the other way round
    differ = sum(left_id("ann", a, b) != left_id("bob", a, b) for a, b in pairs)
    assert 140 < differ < 260, differ
    # one pair: some annotators see it in each layout
    sides = {left_id(f"ann{k}", "x", "y") for k in range(40)}
    assert sides == {"x", "y"}


def test_pair_keys_round_trip_whatever_the_ids_hold() -> None:
    for a, b in [("a", "b"), ("a vs b", "c"), ('q"uote', "[x, y]"), ("é", "\x1f")]:
        assert pair_of(pair_key(a, b)) == (a, b)
    assert pair_key("a vs b", "c") != pair_key("a", "b vs c")


# --- which pairs -------------------------------------------------------------------------


def test_without_a_judge_every_pair_of_trials_of_a_task(store: Store) -> None:
    found = labeling_pairs(store, DATASET, RUBRIC)
    assert found.source == "all trials"
    assert found.pairs == ALL_PAIRS


def test_max_pairs_draws_the_sample_a_judge_with_that_cap_draws(store: Store) -> None:
    found = labeling_pairs(store, DATASET, RUBRIC, max_pairs=2, seed=7)
    # task1 has three pairs, capped to two; every other task keeps its one pair
    task1 = [p for p in found.pairs if p[0] in ("t001", "t006")]
    assert len(task1) == 2 and set(task1) < set(ALL_PAIRS[:3])
    assert set(found.pairs) - set(task1) == set(ALL_PAIRS[3:])
    # the judges' own pairing, on the full trajectories, picks the same two
    trials = [t for t in store.iter_trajectories(DATASET) if t.task_id == "task1"]
    assert task1 == [(x.id, y.id) for x, y in task_pairs(trials, "task1", cap=2, seed=7)]


def test_with_a_pairwise_judge_only_the_pairs_it_compared(store: Store) -> None:
    for order, verdict in (("ab", "A"), ("ba", "B")):
        row = {**JUDGE, "trajectory_id": "t006", "other_id": "t011", "order": order}
        store.add_judgment(DATASET, {**row, "verdict": verdict})
    store.add_judgment(DATASET, {**JUDGE, "trajectory_id": "t002", "other_id": "t007",
                                 "order": "ab", "verdict": "tie"})  # fmt: skip
    # a pointwise judgment and a pairwise one of another rubric do not make pairs here
    pointwise = {**JUDGE, "mode": "pointwise", "trajectory_id": "t003", "order": "ab"}
    store.add_judgment(DATASET, {**pointwise, "score": 1.0})
    other = {**JUDGE, "rubric_id": "other", "trajectory_id": "t004", "other_id": "t009"}
    store.add_judgment(DATASET, {**other, "order": "ab", "verdict": "A"})
    found = labeling_pairs(store, DATASET, RUBRIC)
    assert found.source == "judged"
    assert found.pairs == [("t006", "t011"), ("t002", "t007")]


def test_next_pair_skips_own_labels_and_others_non_overlap_pairs(store: Store) -> None:
    queue = build_pair_queue(ALL_PAIRS, {}, "ann", overlap=0.0, pool=["ann"])
    assert sorted(map(pair_of, queue.ids)) == sorted(ALL_PAIRS)
    first = next_pair(store, DATASET, RUBRIC, queue)
    assert first is not None and first[0] == 0
    a, b = pair_of(first[1])
    store.save_pair_label(DATASET, a, b, RUBRIC, "ann", "A", left_id=a)
    second = next_pair(store, DATASET, RUBRIC, queue)
    assert second is not None and second[0] == 1
    # a pair only ann owns (no overlap), labeled by bob meanwhile: not handed to ann again
    c, d = pair_of(second[1])
    store.save_pair_label(DATASET, c, d, RUBRIC, "bob", "tie", left_id=c)
    third = next_pair(store, DATASET, RUBRIC, queue)
    assert third is not None and third[0] == 2
    # a skip counts as done for the annotator
    e, f = pair_of(third[1])
    store.save_pair_label(DATASET, e, f, RUBRIC, "ann", None, skipped=True)
    assert next_pair(store, DATASET, RUBRIC, queue) == (3, queue.ids[3])


def test_pair_review_stays_hidden_until_the_viewer_labels_the_pair(store: Store) -> None:
    pair = ("t006", "t011")
    store.add_judgment(DATASET, {**JUDGE, "trajectory_id": pair[0], "other_id": pair[1],
                                 "order": "ab", "verdict": "B"})  # fmt: skip
    store.save_pair_label(DATASET, *pair, RUBRIC, "bob", "A", left_id=pair[1])
    ann, lead = Viewer("ann"), Viewer("lead", adjudicator=True)
    with pytest.raises(NotAllowed):
        pair_review(store, DATASET, RUBRIC, ann, pair)
    store.save_pair_label(DATASET, *pair, RUBRIC, "ann", None, skipped=True)
    with pytest.raises(NotAllowed):  # a skip is no way to look first
        pair_review(store, DATASET, RUBRIC, ann, pair)
    assert [r["annotator"] for r in pair_review(store, DATASET, RUBRIC, lead, pair).labels] == [
        "bob",
        "ann",
    ]
    store.save_pair_label(DATASET, *pair, RUBRIC, "ann", "tie", left_id=pair[0])
    review = pair_review(store, DATASET, RUBRIC, ann, pair)
    assert [r["annotator"] for r in review.labels] == ["bob"]
    assert [j["verdict"] for j in review.judgments] == ["B"]


# --- the page ----------------------------------------------------------------------------

PAGE = "from trajudge.labeling_app.pages._page_pairs import page_label_pairs\npage_label_pairs()"


def run_pairs(url: str, annotator: str = "ann", **config: Any) -> AppTest:
    at = AppTest.from_string(PAGE, default_timeout=60)
    at.session_state[S.CONFIG] = AppConfig(
        db_url=url, dataset=DATASET, rubric=RUBRIC, overlap=1.0, **config
    )
    sign_in_as(at, url, annotator)
    return at.run()


def _texts(at: AppTest) -> str:
    return "\n".join(
        [str(e.value) for e in at.code]
        + [str(e.value) for e in at.text]
        + [str(e.value) for e in at.info]
        + [str(e.value) for e in at.success]
        + [str(e.label) for e in at.expander]
    )


def _shown_ids(at: AppTest) -> list[str]:
    return [str(t.value).split(" · ")[0][3:] for t in at.text if str(t.value).startswith("id ")]


def _judge_everything(store: Store) -> None:
    for a, b in ALL_PAIRS:
        for order, verdict in (("ab", "A"), ("ba", "A")):
            row = {**JUDGE, "judge": "SECRET-JUDGE", "trajectory_id": a, "other_id": b}
            store.add_judgment(DATASET, {**row, "order": order, "verdict": verdict,
                                         "reasoning": "SECRET-REASONING"})  # fmt: skip


def test_pair_page_stores_the_choice_mapped_back_and_is_blind_until_then(
    store_url: str, store: Store
) -> None:
    _judge_everything(store)
    at = run_pairs(store_url)
    assert not at.exception
    key = at.session_state[S.CURRENT]
    a, b = pair_of(key)
    left = left_id("ann", a, b)
    right = b if left == a else a
    # the two trajectories side by side, the left one as this annotator's layout says
    assert _shown_ids(at) == [left, right]
    assert [s.value for s in at.subheader][:1] == ["A · left"]
    assert "SECRET" not in _texts(at)  # blind: no judge, no verdict, no reasoning
    assert "Everyone: 0 / 7 pairs have a label" in [p.proto.text for p in at.get("progress")]
    at.button(key="pair-right").click().run()
    assert not at.exception
    rows = store.pair_labels_frame(DATASET).to_dict(orient="records")
    assert [(r["trajectory_id"], r["other_id"], r["annotator"]) for r in rows] == [(a, b, "ann")]
    # right better: the right trajectory is the better one, in the original numbering
    assert rows[0]["category"] == ("A" if right == a else "B")
    assert rows[0]["left_id"] == left
    shown = _texts(at)
    assert "Saved: B · right better" in shown
    # once labeled, the judges' verdicts, as sides of this screen: A (original) is `a`
    side = "A · left better" if left == a else "B · right better"
    assert f"judge SECRET-JUDGE (ab, sample 0): {side}" in shown
    # relabel: tie, the earlier version kept
    at.button(key="pair-tie").click().run()
    rows = store.pair_labels_frame(DATASET).to_dict(orient="records")
    assert len(rows) == 1 and rows[0]["category"] == "tie"
    history = store.pair_label_history(int(rows[0]["id"]))
    assert [h["category"] for h in history] == ["A" if right == a else "B"]
    # next: another pair, blind again
    at.button(key="pair-tie").click().run()
    at.button[[b.label for b in at.button].index("Next")].click().run()
    assert at.session_state[S.CURRENT] != key
    assert "SECRET" not in _texts(at)
    assert "You: 1 / 7 labeled" in [p.proto.text for p in at.get("progress")]
    # back: the labeled pair again, with this annotator's label as a side of the screen
    at.button[[b.label for b in at.button].index("Back")].click().run()
    assert at.session_state[S.CURRENT] == key
    assert "Your label: tie" in [str(e.value) for e in at.info]
    assert f"judge SECRET-JUDGE (ab, sample 0): {side}" in _texts(at)


def test_pair_page_shows_html_in_trajectories_as_text(store_url: str, store: Store) -> None:
    xss = store.trajectory(DATASET, "xss")
    assert isinstance(xss, Trajectory)
    twin = xss.model_copy(update={"id": "xss2", "trial": 1})
    store.import_dataset(DATASET, [twin])
    at = run_pairs(store_url, max_pairs=None)
    # walk to the xss pair (skip others)
    for _ in range(10):
        if set(pair_of(at.session_state[S.CURRENT])) == {"xss", "xss2"}:
            break
        at.button[[b.label for b in at.button].index("Skip")].click().run()
    assert set(pair_of(at.session_state[S.CURRENT])) == {"xss", "xss2"}
    skipped = store.pair_labels_frame(DATASET)
    assert skipped["skipped"].all() and skipped["category"].isna().all()
    assert not skipped.duplicated(["trajectory_id", "other_id"]).any()
    shown = "\n".join([str(e.value) for e in at.code] + [str(e.value) for e in at.text])
    for payload in (SCRIPT, IMG, LINK):
        assert shown.count(payload) >= 2  # on both sides, verbatim, as text or code
    rich = [str(e.value) for e in at.markdown] + [str(e.value) for e in at.subheader]
    rich += [str(b.label) for b in at.button] + [str(e.label) for e in at.expander]
    for text in rich:
        for bad in ("<script", "onerror", "javascript:", "<img"):
            assert bad not in text, text


def test_pair_page_maps_back_in_both_layouts_across_annotators(
    store_url: str, store: Store
) -> None:
    """Each annotator presses "left better" on the first pair of their queue: the store holds
    the trajectory each of them saw on the left as the better one, whichever layout."""
    layouts = set()
    for k in range(12):
        name = f"ann{k}"
        at = run_pairs(store_url, annotator=name)
        a, b = pair_of(at.session_state[S.CURRENT])
        left = _shown_ids(at)[0]
        at.button(key="pair-left").click().run()
        assert not at.exception
        frame = store.pair_labels_frame(DATASET)
        row = frame[frame["annotator"] == name].to_dict(orient="records")
        assert len(row) == 1 and (row[0]["trajectory_id"], row[0]["other_id"]) == (a, b)
        assert row[0]["left_id"] == left
        assert row[0]["category"] == ("A" if left == a else "B")
        layouts.add(left == a)
    assert layouts == {True, False}  # some saw a pair in its original order, some swapped


def test_a_pairwise_rubric_makes_the_pair_page_the_app_after_sign_in(
    store_url: str, store: Store
) -> None:
    from trajudge.labeling_app import app_script

    at = AppTest.from_file(str(app_script()), default_timeout=60)
    at.session_state[S.CONFIG] = AppConfig(db_url=store_url, dataset=DATASET, rubric=RUBRIC)
    at.run()
    add_account(store, "ann", password=PASSWORD)
    at.text_input(key="login-name").input("ann")
    at.text_input(key="login-password").input(PASSWORD)
    at.button(key="login-go").click().run()
    assert not at.exception
    labels = [b.label for b in at.button]
    assert {"A · left better", "B · right better", "tie", "Next"} <= set(labels)
    assert len(_shown_ids(at)) == 2


def test_judge_verdicts_before_the_label_only_on_a_server_that_shows_them(
    store_url: str, store: Store
) -> None:
    _judge_everything(store)
    # a blind server: the annotator's switch alone shows nothing
    at = AppTest.from_string(PAGE, default_timeout=60)
    at.session_state[S.CONFIG] = AppConfig(
        db_url=store_url, dataset=DATASET, rubric=RUBRIC, overlap=1.0
    )
    sign_in_as(at, store_url, "ann")
    at.session_state[S.SHOW_JUDGES] = True
    at.run()
    assert "SECRET" not in _texts(at)
    # --show-judges, switched on: the verdicts before the label, as sides of the screen
    at = run_pairs(store_url, show_judges=True)
    a, b = pair_of(at.session_state[S.CURRENT])
    side = "A · left better" if left_id("ann", a, b) == a else "B · right better"
    assert f"judge SECRET-JUDGE (ab, sample 0): {side}" in _texts(at)
    assert not store.pair_labels_frame(DATASET).shape[0]


def test_the_leads_choice_orders_the_pair_queue_too(store_url: str, store: Store) -> None:
    _judge_everything(store)
    assert "Queue order: random" in [c.value for c in run_pairs(store_url).caption]
    cho, _ = add_account(store, "cho", "lead")
    rubric = load_rubric(RUBRIC)
    cfg = AppConfig(db_url=store_url, dataset=DATASET, rubric=RUBRIC)
    with pytest.raises(ValueError, match="not a strategy for rubric"):  # no active for pairs
        choose_strategy(store, cfg, DATASET, rubric, cho, "active")
    choose_strategy(store, cfg, DATASET, rubric, cho, "disagreement")
    at = run_pairs(store_url, "bob")
    assert not at.exception
    assert "Queue order: disagreement" in [c.value for c in at.caption]
