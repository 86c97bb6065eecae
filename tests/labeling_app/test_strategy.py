"""The lead picks the label queue's strategy in the app: stored with who, when and from what
(the store refuses any other account, whatever page calls it), read by every app process before
each item, `--strategy` only the starting value (SQLite and PostgreSQL)."""

from __future__ import annotations

import pytest
from labeling_helpers import DATASET, sign_in_as
from streamlit.testing.v1 import AppTest
from test_app_active import RUBRIC, _seed_judgments
from test_app_pages import run_page

from trajudge.judges import load_rubric
from trajudge.labeling_app import AppConfig, build_queue
from trajudge.labeling_app import _state as S
from trajudge.labeling_app.auth._manage import add_account
from trajudge.labeling_app.queue._strategy import choose_strategy, queue_choice
from trajudge.store import NotLead, Store

LEAD_PAGE = "from trajudge.labeling_app.lead._page_lead import page_lead\npage_lead()"


def test_only_an_enabled_lead_may_store_a_strategy(store: Store, store_url: str) -> None:
    ann, _ = add_account(store, "ann", "annotator")
    adj, _ = add_account(store, "adj", "adjudicator")
    cho, _ = add_account(store, "cho", "lead")
    cfg = AppConfig(db_url=store_url, dataset=DATASET, strategy="stratified")
    rubric = load_rubric(RUBRIC)
    for who in (ann, adj):
        with pytest.raises(NotLead, match="not an enabled lead"):
            choose_strategy(store, cfg, DATASET, rubric, who, "random")
        with pytest.raises(NotLead):  # the store itself, called without the app's check
            store.set_label_strategy(DATASET, RUBRIC, "random", name=who.name, started_with="x")
    assert store.label_strategy_log(DATASET, RUBRIC) == []
    assert queue_choice(store, cfg, DATASET, RUBRIC).strategy == "stratified"  # --strategy

    row = choose_strategy(store, cfg, DATASET, rubric, cho, "disagreement")
    assert (row["strategy"], row["previous"], row["name"]) == ("disagreement", "stratified", "cho")
    # another app process of the same store (another Store) sees it at once
    other = Store(store_url)
    seen = queue_choice(other, cfg, DATASET, RUBRIC)
    assert (seen.strategy, seen.chosen_by) == ("disagreement", "cho")
    # a lead disabled meanwhile changes nothing any more
    store.set_account_disabled("cho", True)
    with pytest.raises(NotLead):
        store.set_label_strategy(DATASET, RUBRIC, "random", name="cho", started_with="x")
    store.set_account_disabled("cho", False)
    # active without judgments: refused before anything is stored
    with pytest.raises(ValueError, match="run trajudge judge first"):
        choose_strategy(store, cfg, DATASET, rubric, cho, "active", budget=6)
    _seed_judgments(other)
    choose_strategy(store, cfg, DATASET, rubric, cho, "active", budget=6, learn=2)
    log = other.label_strategy_log(DATASET, RUBRIC)
    assert [(r["previous"], r["strategy"], r["budget"], r["learn"]) for r in log] == [
        ("disagreement", "active", 6, 2),
        ("stratified", "disagreement", None, None),
    ]
    assert all(r["name"] == "cho" and r["at"] for r in log)
    assert other.draw_phases(DATASET, RUBRIC) == (1,)  # the learning phase is drawn
    other.close()


def test_the_lead_page_switches_everyones_next_item(store: Store, store_url: str) -> None:
    _seed_judgments(store)
    # ann is on her first item of the random queue
    ann = run_page("label", store_url)
    first = build_queue(store.trajectory_keys(DATASET), "ann", strategy="random",
                        overlap=1.0, pool=["ann"]).ids[0]  # fmt: skip
    assert ann.session_state[S.CURRENT] == first
    assert "Queue order: random" in [c.value for c in ann.caption]

    lead = AppTest.from_string(LEAD_PAGE, default_timeout=120)
    lead.session_state[S.CONFIG] = AppConfig(db_url=store_url, dataset=DATASET, overlap=1.0)
    lead.session_state[S.DATASET] = DATASET
    sign_in_as(lead, store_url, "cho", "lead")
    lead.run()
    assert "Queue order in force: random (from trajudge label --strategy)" in [
        t.value for t in lead.text
    ]
    lead.selectbox(key="lead-strategy").select("active")
    lead.number_input(key="lead-budget").set_value(6)
    lead.number_input(key="lead-learn").set_value(2)
    lead.button[0].click().run()
    assert not lead.exception and not lead.error
    assert any("Saved: the queue order is active" in s.value for s in lead.success)
    assert any(
        t.value.startswith("Queue order in force: active (chosen by cho at ") for t in lead.text
    )
    texts = [t.value for t in lead.text]
    assert (
        "Active design drawn: budget 6 of 12 items; learning phase of 2 labels: 2 of its items "
        "to label"
    ) in texts
    log = next(d.value for d in lead.dataframe if "previous" in d.value.columns)
    assert log[["name", "previous", "strategy"]].values.tolist() == [["cho", "random", "active"]]

    # ann's next item: the first item the active design drew (her current one answered first)
    store.save_label(DATASET, first, RUBRIC, "ann", 5.0)
    nxt = next(b for b in ann.button if b.label == "Next")
    nxt.click().run()
    design = store.label_draws(DATASET, RUBRIC)
    drawn = [t for t in design.loc[design["drawn"].astype(bool), "trajectory_id"] if t != first]
    assert ann.session_state[S.CURRENT] == drawn[0]
    assert "Queue order: active" in [c.value for c in ann.caption]


def test_an_annotator_calling_the_save_path_changes_nothing(store: Store, store_url: str) -> None:
    # the page is refused to ann, and its save path refuses her as well
    at = AppTest.from_string(LEAD_PAGE, default_timeout=120)
    at.session_state[S.CONFIG] = AppConfig(db_url=store_url, dataset=DATASET)
    at.session_state[S.DATASET] = DATASET
    sign_in_as(at, store_url, "ann", "annotator")
    at.run()
    assert [e.value for e in at.error] == ["Only a lead sees this page."]
    account = store.account("ann")
    assert account is not None
    with pytest.raises(NotLead):
        choose_strategy(store, AppConfig(db_url=store_url), DATASET, load_rubric(RUBRIC),
                        account, "disagreement")  # fmt: skip
    assert store.label_strategy(DATASET, RUBRIC) is None
