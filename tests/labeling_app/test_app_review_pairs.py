"""Review and Export under a pairwise rubric: the disagreement tables worked out by hand,
blindness per pair, adjudication by an adjudicator only, and the pair-label download."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest
from labeling_helpers import DATASET, IMG, SCRIPT
from test_app_blind import everything
from test_app_pages import plain_texts, rich_texts, run_page

from trajudge.labeling_app import Viewer
from trajudge.labeling_app._access import pair_review_data
from trajudge.labeling_app._review import (
    majority,
    pair_annotator_disagreements,
    pair_judge_human_disagreements,
)
from trajudge.store import Store

RUBRIC = "trajectory_preference"
SECRET = "PAIR-JUDGE-REASONING"
P1, P2, P3 = ("t001", "t006"), ("t002", "t007"), ("xss", "t003")
PAIRWISE = {"rubric": RUBRIC}
LEAD = {"rubric": RUBRIC}


def _judge(store: Store, pair: tuple[str, str], verdicts: list[str]) -> None:
    base = {"judge": "pj", "rubric_id": RUBRIC, "rubric_version": "v", "model": "m"}
    base |= {"mode": "pairwise", "trajectory_id": pair[0], "other_id": pair[1]}
    for n, (order, verdict) in enumerate(zip(["ab", "ba"] * 2, verdicts, strict=False)):
        row = {**base, "order": order, "sample": n // 2, "verdict": verdict}
        store.add_judgment(DATASET, {**row, "reasoning": f"{SECRET} {SCRIPT}"})


@pytest.fixture
def seeded(store: Store) -> Store:
    """P1: the judge says A twice, ann A, bob B (annotators split; human majority split).
    P2: the judge says B, A, B; ann B (agreement with the judge's majority).
    P3: the judge flips (A, B); bob tie, ann skipped (only bob labeled it)."""
    _judge(store, P1, ["A", "A"])
    _judge(store, P2, ["B", "A", "B"])
    _judge(store, P3, ["A", "B"])
    store.save_pair_label(DATASET, *P1, RUBRIC, "ann", "A", note="ANN-NOTE")
    store.save_pair_label(DATASET, *P1, RUBRIC, "bob", "B", note=f"BOB-NOTE {IMG}")
    store.save_pair_label(DATASET, *P2, RUBRIC, "ann", "B")
    store.save_pair_label(DATASET, *P3, RUBRIC, "bob", "tie")
    store.save_pair_label(DATASET, *P3, RUBRIC, "ann", None, skipped=True)
    return store


def test_majority_and_the_tables_by_hand(seeded: Store) -> None:
    assert (majority(["A", "B", "A"]), majority(["A", "B"]), majority([])) == ("A", None, None)
    data = pair_review_data(seeded, DATASET, RUBRIC, Viewer("lead", adjudicator=True))
    judge = pair_judge_human_disagreements(data.labels, data.judgments, RUBRIC)
    # P1: judge A (2 of 2) vs humans split A/B -> listed; P2: judge B (2 of 3) = ann B -> not;
    # P3: judge split A/B vs bob tie -> listed
    assert judge[
        ["trajectory_id", "other_id", "judge_verdicts", "human_labels"]
    ].values.tolist() == [
        ["t001", "t006", "A×2", "ann=A, bob=B"],
        ["xss", "t003", "A×1, B×1", "bob=tie"],
    ]
    humans = pair_annotator_disagreements(data.labels, RUBRIC)
    assert humans[["trajectory_id", "labels", "n_annotators"]].values.tolist() == [
        ["t001", "ann=A, bob=B", 2]
    ]


def test_an_annotator_reviews_only_the_pairs_she_labeled(seeded: Store) -> None:
    # ann labeled P1 and P2 and skipped P3: P3 (bob's tie, the judge's reasoning) stays hidden
    data = pair_review_data(seeded, DATASET, RUBRIC, Viewer("ann"))
    pairs = set(zip(data.labels["trajectory_id"], data.labels["other_id"], strict=True))
    assert pairs == {P1, P2}
    assert set(zip(data.judgments["trajectory_id"], data.judgments["other_id"], strict=True)) == {
        P1,
        P2,
    }
    url = seeded.sql_engine.url.render_as_string(hide_password=False)
    at = run_page("review", url, config=PAIRWISE)
    assert not at.exception
    shown = everything(at)
    assert "Only pairs you have labeled are shown" in shown
    assert at.selectbox(key="review-pair-judge-pick").options == ["t001 vs t006"]
    assert "xss" not in shown and "bob=tie" not in shown  # P3 is not hers
    # P1 after her label: bob's label and note and the judge's reasoning, as plain text
    assert "bob: B (t006) better" in plain_texts(at) and "BOB-NOTE" in plain_texts(at)
    assert SECRET in plain_texts(at) and IMG in plain_texts(at)
    for text in rich_texts(at):
        assert "<img" not in text and "<script" not in text and SECRET not in text
    # an annotator cannot adjudicate
    assert not [b for b in at.button if b.label == "Save adjudication"]


def test_before_her_own_label_a_pair_stays_hidden_then_shows(seeded: Store) -> None:
    url = seeded.sql_engine.url.render_as_string(hide_password=False)
    at = run_page("review", url, annotator="carol", config=PAIRWISE)
    assert not at.exception
    assert SECRET not in everything(at) and "BOB-NOTE" not in everything(at)
    assert "Nothing to review." in plain_texts(at)
    seeded.save_pair_label(DATASET, *P1, RUBRIC, "carol", "tie")
    at = run_page("review", url, annotator="carol", config=PAIRWISE)
    assert "t001 vs t006" in at.selectbox(key="review-pair-judge-pick").options
    assert "BOB-NOTE" in plain_texts(at) and SECRET in plain_texts(at)


def test_the_adjudicator_sees_every_pair_and_settles_one(seeded: Store) -> None:
    url = seeded.sql_engine.url.render_as_string(hide_password=False)
    at = run_page("review", url, annotator="lead", role="adjudicator", config=LEAD)
    assert not at.exception
    assert at.selectbox(key="review-pair-judge-pick").options == ["t001 vs t006", "xss vs t003"]
    key = '["t001", "t006"]'
    at.radio(key=f"judge-adj-pair-{key}").set_value("B")
    at.text_area(key=f"judge-adj-pair-note-{key}").input("B is right")
    next(b for b in at.button if b.label == "Save adjudication" and "judge" in str(b.key)).click()
    at.run()
    rows = seeded.pair_item_labels(DATASET, *P1, RUBRIC)
    adj = [r for r in rows if r["adjudication"]]
    assert [(r["annotator"], r["category"], r["note"]) for r in adj] == [
        ("lead", "B", "B is right")
    ]
    at.run()
    assert at.dataframe[0].value["adjudicated"].tolist() == [True, False]


def _export(
    url: str, annotator: str, config: dict[str, Any], role: str = "annotator"
) -> pd.DataFrame:
    at = run_page("export", url, annotator=annotator, role=role, config=config)
    assert not at.exception
    labels = [d.proto.label for d in at.get("download_button")]
    assert labels == ["Download CSV", "Download JSONL", "Download PARQUET"]
    frame: pd.DataFrame = at.dataframe[0].value
    return frame


def test_export_offers_pair_labels_own_or_everyones(seeded: Store) -> None:
    url = seeded.sql_engine.url.render_as_string(hide_password=False)
    mine = _export(url, "ann", PAIRWISE)
    assert set(mine["annotator"]) == {"ann"} and len(mine) == 3
    assert "other_id" in mine.columns and "category" in mine.columns
    everyone = _export(url, "lead", LEAD, "adjudicator")
    assert sorted(everyone["annotator"]) == ["ann", "ann", "ann", "bob", "bob"]
