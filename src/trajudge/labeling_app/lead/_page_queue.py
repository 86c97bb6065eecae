"""The lead's choice of the label queue's strategy, on the lead's page: the strategy in force,
the choice (with the active design's budget and learning phase), and every change so far.

Saving goes through :func:`~trajudge.labeling_app.queue._strategy.choose_strategy`, which
the store refuses unless the account is an enabled lead as stored at that moment: the
session is checked first (:func:`require_account`), and the store checks the role again in
the transaction that writes.
"""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from trajudge.calibration.active._stored import learning_open
from trajudge.judges import Rubric
from trajudge.labeling_app._config import AppConfig
from trajudge.labeling_app._data import get_store
from trajudge.labeling_app.auth._session import require_account
from trajudge.labeling_app.queue._strategy import choose_strategy, queue_choice, strategies_for
from trajudge.store import NotLead, Store

PICK, BUDGET, LEARN, SAID = "lead-strategy", "lead-budget", "lead-learn", "lead-strategy-said"


def _on_save(cfg: AppConfig, dataset: str, rubric: Rubric) -> None:
    ss = st.session_state
    try:
        account = require_account(cfg)  # the session, checked against the store now
    except Exception:
        return
    budget, learn = ss.get(BUDGET), ss.get(LEARN)
    try:
        row = choose_strategy(
            get_store(cfg.db_url),
            cfg,
            dataset,
            rubric,
            account,
            str(ss[PICK]),
            budget=None if budget is None else int(budget),
            learn=None if learn is None else int(learn),
        )
    except (NotLead, ValueError) as exc:
        ss[SAID] = ("error", f"Not saved: {exc}")
        return
    ss[SAID] = ("success", f"Saved: the queue order is {row['strategy']} for everyone's next item.")


def _design_text(store: Store, dataset: str, rubric: Rubric) -> str | None:
    """The stored active design in a line (its budget, and where its learning phase is), or
    None when there is none."""
    draws = store.label_draws(dataset, rubric.id)
    if draws.empty:
        return None
    d = json.loads(str(draws["design"].iloc[0]))
    text = f"Active design drawn: budget {d['budget']} of {d['items']} items"
    phases = set(draws["phase"].dropna())
    if 2 in phases:
        return f"{text}; learning phase of {d['learn']} labels done, the rest drawn as fitted"
    if 1 in phases:
        left = len(learning_open(store, dataset, rubric))
        return f"{text}; learning phase of {d['learn']} labels: {left} of its items to label"
    return text


def queue_section(cfg: AppConfig, dataset: str, rubric: Rubric) -> None:
    """The strategy in force, the form to change it, and the log of changes."""
    ss = st.session_state
    store = get_store(cfg.db_url)
    st.subheader("Label queue", divider="gray")
    choice = queue_choice(store, cfg, dataset, rubric.id)
    who = (
        f"chosen by {choice.chosen_by} at {str(choice.chosen_at)[:19]} UTC"
        if choice.chosen_by
        else "from trajudge label --strategy"
    )
    st.text(f"Queue order in force: {choice.strategy} ({who})")
    st.caption(
        "Takes effect for every annotator's next item. Under active, a new design draws its "
        "first labels uniformly (the learning phase, a quarter of the budget by default), "
        "then the rest with probabilities fitted on them; a design already drawn keeps its "
        "budget. Labels given under another order are no probability sample: the weighted "
        "estimates leave them out and say how many."
    )
    options = list(strategies_for(rubric))
    if ss.get(PICK) not in options:
        ss[PICK] = choice.strategy if choice.strategy in options else options[0]
    design = _design_text(store, dataset, rubric)
    if design:
        st.text(design)
    st.selectbox("Queue order", options, key=PICK)
    if "active" in options:
        cols = st.columns(2)
        cols[0].number_input(
            "Budget (active: expected labels)", min_value=1, step=1, value=None, key=BUDGET,
            placeholder="200",
        )  # fmt: skip
        cols[1].number_input(
            "Learning phase (active: uniform labels first)", min_value=0, step=1, value=None,
            key=LEARN, placeholder="a quarter of the budget",
        )  # fmt: skip
    st.button("Save queue order", on_click=_on_save, args=(cfg, dataset, rubric))
    said = ss.pop(SAID, None)
    if said is not None:
        (st.error if said[0] == "error" else st.success)(said[1])
    log = pd.DataFrame(store.label_strategy_log(dataset, rubric.id))
    if not log.empty:
        log["at"] = log["at"].str.slice(0, 19)
        st.caption("Changes of the queue order (UTC), newest first.")
        st.dataframe(
            log[["at", "name", "previous", "strategy", "budget", "learn"]],
            hide_index=True,
            width="stretch",
        )
