"""Blind labeling: an annotator sees judges' verdicts and other annotators' labels of an item
only after labeling it; adjudicators (accounts with the role adjudicator or lead) see all and
alone adjudicate. Checked in the data layer the pages call, and on every page under AppTest."""

from __future__ import annotations

import pytest
from labeling_helpers import DATASET, PASSWORD
from streamlit.testing.v1 import AppTest
from test_app_pages import RUBRIC, plain_texts, rich_texts, run_page

from trajudge.core import InputError
from trajudge.judges import load_rubric
from trajudge.labeling_app import (
    AppConfig,
    NotAllowed,
    Viewer,
    export_frame,
    item_review,
    label_page_judgments,
    review_data,
    save_adjudication,
)
from trajudge.labeling_app import _state as S
from trajudge.labeling_app._review import judge_human_disagreements
from trajudge.labeling_app.auth._manage import add_account
from trajudge.labeling_app.auth._session import viewer_of
from trajudge.store import Store

JUDGE = {
    "judge": "j",
    "rubric_id": RUBRIC,
    "rubric_version": "v",
    "model": "m",
    "mode": "pointwise",
    "order": "ab",
    "sample": 0,
}
# what ann may not see: every marker of an item she has not labeled
HIDDEN = ["BOB-NOTE-1", "JUDGE-REASON-1", "BOB-NOTE-3", "JUDGE-REASON-3", "PAIR-REASON"]
ANN = Viewer("ann")
LEAD = Viewer("lead", adjudicator=True)


def _judgment(store: Store, tid: str, score: float, reasoning: str) -> None:
    store.add_judgment(
        DATASET, {**JUDGE, "trajectory_id": tid, "score": score, "reasoning": reasoning}
    )


@pytest.fixture
def seeded(store: Store) -> Store:
    """t001: only bob labeled it (1), the judge says 5. t002: ann (5) and bob (1) labeled it,
    the judge says 5, and a pair judgment compares it with t001. t003: ann skipped it, bob (5)
    and carol (1) labeled it, the judge says 5. With the pass threshold 4 each item is a
    judge-vs-human disagreement (human mean 1, 3, 3 against 5); t002 and t003 are also
    annotator disagreements."""
    s = store
    s.save_label(DATASET, "t001", RUBRIC, "bob", 1.0, note="BOB-NOTE-1")
    _judgment(s, "t001", 5.0, "JUDGE-REASON-1")
    s.save_label(DATASET, "t002", RUBRIC, "ann", 5.0)
    s.save_label(DATASET, "t002", RUBRIC, "bob", 1.0, note="BOB-NOTE-2")
    _judgment(s, "t002", 5.0, "JUDGE-REASON-2")
    pair = {**JUDGE, "mode": "pairwise", "trajectory_id": "t002", "other_id": "t001"}
    s.add_judgment(DATASET, {**pair, "verdict": "B", "reasoning": "PAIR-REASON"})
    s.save_label(DATASET, "t003", RUBRIC, "ann", None, skipped=True)
    s.save_label(DATASET, "t003", RUBRIC, "bob", 5.0, note="BOB-NOTE-3")
    s.save_label(DATASET, "t003", RUBRIC, "carol", 1.0)
    _judgment(s, "t003", 5.0, "JUDGE-REASON-3")
    return s


def everything(at: AppTest) -> str:
    """All a page shows: text, code, Markdown, messages, tables, choices and widget labels."""
    parts = [plain_texts(at), *rich_texts(at)]
    parts += [d.value.to_csv() for d in at.dataframe]
    parts += [str(o) for sb in at.selectbox for o in sb.options]
    parts += [str(r.label) for r in at.radio] + [str(t.label) for t in at.text_area]
    return "\n".join(parts)


# -- the data layer ----------------------------------------------------------------------------


def test_review_data_holds_only_items_the_viewer_labeled(seeded: Store) -> None:
    mine = review_data(seeded, DATASET, RUBRIC, ANN)
    # t003 is skipped, not labeled: a skip must not open the review (skip, look, then label)
    assert set(mine.labels["trajectory_id"]) == {"t002"}
    assert sorted(mine.labels["annotator"]) == ["ann", "bob"]
    # the pair judgment speaks about t001 too, which ann has not labeled
    assert mine.judgments["reasoning"].tolist() == ["JUDGE-REASON-2"]
    everyone = review_data(seeded, DATASET, RUBRIC, LEAD)
    assert set(everyone.labels["trajectory_id"]) == {"t001", "t002", "t003"}
    assert len(everyone.judgments) == 4


def test_item_review_refuses_an_item_before_the_viewer_labels_it(seeded: Store) -> None:
    for tid in ("t001", "t003", "t004"):
        with pytest.raises(NotAllowed, match="label this item first"):
            item_review(seeded, DATASET, RUBRIC, ANN, tid)
    got = item_review(seeded, DATASET, RUBRIC, ANN, "t002")
    assert [j["reasoning"] for j in got.judgments] == ["JUDGE-REASON-2"]
    assert sorted(r["annotator"] for r in got.labels) == ["ann", "bob"]
    assert len(item_review(seeded, DATASET, RUBRIC, LEAD, "t001").labels) == 1
    # once ann labels t001 the pair judgment of t002 against it is hers to see as well
    seeded.save_label(DATASET, "t001", RUBRIC, "ann", 2.0)
    got = item_review(seeded, DATASET, RUBRIC, ANN, "t002")
    assert sorted(str(j["reasoning"]) for j in got.judgments) == ["JUDGE-REASON-2", "PAIR-REASON"]


def test_only_an_adjudicator_saves_an_adjudication(seeded: Store) -> None:
    with pytest.raises(NotAllowed, match="only an adjudicator"):
        save_adjudication(seeded, DATASET, RUBRIC, ANN, "t002", 3.0)
    frame = seeded.labels_frame(DATASET)
    assert not frame["adjudication"].any()
    save_adjudication(seeded, DATASET, RUBRIC, LEAD, "t002", 3.0, note="middle")
    frame = seeded.labels_frame(DATASET)
    adj = frame[frame["adjudication"]]
    assert adj[["trajectory_id", "annotator", "value"]].values.tolist() == [["t002", "lead", 3.0]]


def test_label_page_judgments_only_on_a_server_that_shows_them(seeded: Store) -> None:
    url = seeded.sql_engine.url.render_as_string(hide_password=False)
    blind = AppConfig(db_url=url, dataset=DATASET)
    assert label_page_judgments(seeded, blind, DATASET, "t001", shown=True) == []
    open_ = AppConfig(db_url=url, dataset=DATASET, show_judges=True)
    assert label_page_judgments(seeded, open_, DATASET, "t001", shown=False) == []
    got = label_page_judgments(seeded, open_, DATASET, "t001", shown=True)
    assert [j["reasoning"] for j in got] == ["JUDGE-REASON-1"]


def test_export_frame_is_the_viewers_own_labels_unless_adjudicator(seeded: Store) -> None:
    assert set(export_frame(seeded, DATASET, ANN)["annotator"]) == {"ann"}
    assert len(export_frame(seeded, DATASET, ANN)) == 2
    assert len(export_frame(seeded, DATASET, LEAD)) == len(seeded.labels_frame(DATASET)) == 6


def test_the_role_comes_from_the_account(store: Store) -> None:
    for name, role in [("ann", "annotator"), ("adj", "adjudicator"), ("boss", "lead")]:
        add_account(store, name, role, password=PASSWORD)
    views = {n: viewer_of(a) for n in ("ann", "adj", "boss") if (a := store.account(n))}
    assert views == {
        "ann": ANN,
        "adj": Viewer("adj", adjudicator=True),
        "boss": Viewer("boss", adjudicator=True, lead=True),
    }
    cfg = AppConfig(db_url="sqlite://", session_hours=2.5, allowed_hosts=("Labels.Example.org",))
    assert cfg.allowed_hosts == ("labels.example.org",)
    assert AppConfig.from_env(cfg.to_env()) == cfg
    assert AppConfig.from_env({}).allowed_hosts == ("localhost", "127.0.0.1", "::1")
    with pytest.raises(InputError, match="--allowed-host"):
        AppConfig(db_url="sqlite://", allowed_hosts=("a,b",))


# -- the pages -----------------------------------------------------------------------------------


def test_review_page_shows_an_annotator_only_items_she_labeled(seeded: Store) -> None:
    at = run_page("review", seeded.sql_engine.url.render_as_string(hide_password=False))
    assert not at.exception
    shown = everything(at)
    for marker in HIDDEN:
        assert marker not in shown, marker
    judge_table, human_table = at.dataframe[0].value, at.dataframe[1].value
    assert judge_table["trajectory_id"].tolist() == ["t002"]
    assert human_table["trajectory_id"].tolist() == ["t002"]
    assert human_table["labels"].tolist() == ["ann=5, bob=1"]  # not bob's or carol's on t003
    assert [sb.options for sb in at.selectbox] == [["t002"], ["t002"]]
    # her own item, reviewed: the judge and bob are there
    assert "JUDGE-REASON-2" in shown and "BOB-NOTE-2" in shown
    # but she cannot settle it
    assert not [b for b in at.button if b.label == "Save adjudication"]
    assert "Only an adjudicator settles disagreements" in shown


def test_review_page_shows_an_adjudicator_everything(seeded: Store) -> None:
    at = run_page(
        "review",
        seeded.sql_engine.url.render_as_string(hide_password=False),
        annotator="lead",
        role="adjudicator",
    )
    assert not at.exception
    assert set(at.dataframe[0].value["trajectory_id"]) == {"t001", "t002", "t003"}
    assert set(at.dataframe[1].value["trajectory_id"]) == {"t002", "t003"}
    picked = at.selectbox(key="review-human-pick").value
    at.radio(key=f"human-adj-value-{picked}").set_value(3)
    next(b for b in at.button if b.label == "Save adjudication" and "human" in str(b.key)).click()
    at.run()
    frame = seeded.labels_frame(DATASET)
    adj = frame[frame["adjudication"]]
    assert adj[["trajectory_id", "annotator", "value"]].values.tolist() == [[picked, "lead", 3.0]]


def test_label_page_of_a_blind_server_never_shows_judges(seeded: Store) -> None:
    # even with the verdicts switch on in the session (it was a toggle anyone could tick)
    state = {S.CURRENT: "t001", S.CURSOR: 1, S.SHOW_JUDGES: True}
    at = run_page("label", seeded.sql_engine.url.render_as_string(hide_password=False), **state)
    assert not at.exception
    assert S.SHOW_JUDGES not in [t.key for t in at.toggle]
    assert "JUDGE-REASON-1" not in everything(at)
    assert "Judge verdicts" not in [s.value for s in at.subheader]


def test_export_page_offers_an_annotator_her_own_labels(seeded: Store) -> None:
    at = run_page("export", seeded.sql_engine.url.render_as_string(hide_password=False))
    assert not at.exception
    assert set(at.dataframe[0].value["annotator"]) == {"ann"}
    assert "BOB-NOTE" not in everything(at)
    csv = at.get("download_button")[0].proto
    assert csv.label == "Download CSV"
    lead = run_page(
        "export",
        seeded.sql_engine.url.render_as_string(hide_password=False),
        annotator="lead",
        role="adjudicator",
    )
    assert set(lead.dataframe[0].value["annotator"]) == {"ann", "bob", "carol"}


def test_an_adjudicator_whose_role_is_taken_away_saves_no_adjudication(seeded: Store) -> None:
    url = seeded.sql_engine.url.render_as_string(hide_password=False)
    at = run_page("review", url, annotator="lead", role="adjudicator")
    assert any(b.label == "Save adjudication" for b in at.button)
    seeded.set_account_role("lead", "annotator")  # trajudge annotators role lead annotator
    picked = at.selectbox(key="review-human-pick").value
    at.radio(key=f"human-adj-value-{picked}").set_value(3)
    next(b for b in at.button if b.label == "Save adjudication" and "human" in str(b.key)).click()
    at.run()
    # the session ended with the role: nothing saved, the page says so
    assert not seeded.labels_frame(DATASET)["adjudication"].any()
    assert at.session_state[S.ANNOTATOR] is None
    events = [(e["name"], e["event"], e["detail"]) for e in seeded.sign_in_log()]
    assert events[0] == ("lead", "session ended", "account reset or changed")


def test_a_reference_judge_against_expected_calls_is_reviewed_like_a_pointwise_one(
    seeded: Store,
) -> None:
    # The demo's reference judge scores t002 against its task spec's expected calls: other_id
    # "spec:<task>" names no trajectory, so once ann labeled t002 she sees it, and it is a
    # judge-vs-human row (judge 5 vs humans 3: a disagreement at the pass threshold 4).
    ref = {**JUDGE, "judge": "ref", "mode": "reference", "other_id": "spec:T"}
    for order in ("ab", "ba"):
        row = {**ref, "order": order, "trajectory_id": "t002", "score": 5.0, "reasoning": "REF-2"}
        seeded.add_judgment(DATASET, row)
    mine = review_data(seeded, DATASET, RUBRIC, ANN)
    assert sorted(mine.judgments["reasoning"]) == ["JUDGE-REASON-2", "REF-2", "REF-2"]
    got = item_review(seeded, DATASET, RUBRIC, ANN, "t002").judgments
    assert sorted(str(j["reasoning"]) for j in got) == ["JUDGE-REASON-2", "REF-2", "REF-2"]
    rubric = load_rubric(RUBRIC)
    table = judge_human_disagreements(mine.labels, mine.judgments, rubric)
    assert table[["trajectory_id", "judge", "judge_score", "human_mean"]].values.tolist() == [
        ["t002", "j", 5.0, 3.0],
        ["t002", "ref", 5.0, 3.0],
    ]
    # a pairwise judgment is no score of one trajectory: never a row of this table
    everyone = review_data(seeded, DATASET, RUBRIC, LEAD).judgments
    pairs = everyone[everyone["mode"] == "pairwise"].assign(score=5.0)
    assert len(pairs) == 1
    assert judge_human_disagreements(mine.labels, pairs, rubric).empty
