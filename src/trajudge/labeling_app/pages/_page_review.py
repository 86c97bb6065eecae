"""The review page: disagreements side by side, settled with an adjudication label (under a
pairwise rubric, of pairs: ``_page_review_pairs``).

Blind labeling holds here too: an annotator reviews only items they have labeled, and only an
adjudicator sees every item and saves adjudications (the rule lives in ``_access``).
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from trajudge.judges import Rubric
from trajudge.labeling_app._access import (
    NotAllowed,
    Viewer,
    item_review,
    review_data,
    save_adjudication,
)
from trajudge.labeling_app._config import AppConfig
from trajudge.labeling_app._data import get_rubric, get_store, get_trajectory
from trajudge.labeling_app._review import annotator_disagreements, judge_human_disagreements
from trajudge.labeling_app._view import build_item_view
from trajudge.labeling_app._widgets import label_value, level_text, render_item
from trajudge.labeling_app.auth._session import require_viewer
from trajudge.labeling_app.pages._page_label import signed_in_page
from trajudge.labeling_app.pages._page_review_pairs import review_pairs


def _human_column(rubric: Rubric, rows: list[dict[str, Any]]) -> None:
    st.markdown("**Human labels**")
    for r in rows:
        with st.container(border=True):
            st.text(f"{r['annotator']}: {level_text(rubric, label_value(r))}")
            if r["unsure"]:
                st.badge("unsure", color="orange")
            if r["note"]:
                st.text(r["note"])


def _judge_column(judgments: list[dict[str, Any]]) -> None:
    st.markdown("**Judges**")
    if not judgments:
        st.text("No judgments for this rubric.")
    for j in judgments:
        with st.container(border=True):
            score = "error" if j["error"] else f"{j['score']}"
            st.text(f"{j['judge']} ({j['order']}, sample {j['sample']}): {score}")
            st.text(str(j["reasoning"] or j["error"] or ""))


def _adjudicate(
    cfg: AppConfig,
    dataset: str,
    rubric: Rubric,
    viewer: Viewer,
    tid: str,
    rows: list[Any],
    tab: str,
) -> None:
    existing = [r for r in rows if r["adjudication"]]
    st.markdown("**Adjudication**")
    for r in existing:
        st.text(f"Adjudicated by {r['annotator']}: {level_text(rubric, label_value(r))}")
    if not viewer.adjudicator:
        st.text("Only an adjudicator settles disagreements (an account with role adjudicator).")
        return
    with st.form(f"{tab}-adjudicate-{tid}"):
        values = [lv.value for lv in rubric.scale.levels]
        value = st.radio(
            "Final label",
            values,
            format_func=lambda v: level_text(rubric, v),
            horizontal=True,
            key=f"{tab}-adj-value-{tid}",
        )
        note = st.text_area("Reason", key=f"{tab}-adj-note-{tid}")
        if st.form_submit_button("Save adjudication", type="primary"):
            save_adjudication(
                get_store(cfg.db_url),
                dataset,
                rubric.id,
                require_viewer(cfg),  # the role as stored now, not as at the page's start
                tid,
                value if isinstance(value, str) else float(value),
                note=note.strip() or None,
            )
            st.success(f"Adjudication saved: {level_text(rubric, value)}")


def _detail(
    cfg: AppConfig, dataset: str, rubric: Rubric, viewer: Viewer, tid: str, *, judges: bool
) -> None:
    store = get_store(cfg.db_url)
    try:
        item = item_review(store, dataset, rubric.id, viewer, tid)
    except NotAllowed as exc:
        st.warning(str(exc))
        return
    humans = [r for r in item.labels if not r["adjudication"]]
    left, right = st.columns(2)
    if judges:
        with left:
            _human_column(rubric, humans)
        with right:
            _judge_column(item.judgments)
    else:  # annotator vs annotator: one column each
        cols = st.columns(max(len(humans), 1))
        for col, r in zip(cols, humans, strict=False):
            with col:
                _human_column(rubric, [r])
    _adjudicate(cfg, dataset, rubric, viewer, tid, item.labels, "judge" if judges else "human")
    traj = get_trajectory(cfg.db_url, dataset, tid)
    if traj is not None:
        with st.expander("The trajectory"):
            render_item(build_item_view(traj, rule_result=store.item_rule_result(dataset, tid)))


def _pick(table: pd.DataFrame, key: str) -> str | None:
    if table.empty:
        st.text("Nothing to review.")
        return None
    st.dataframe(table, hide_index=True, width="stretch")
    ids = list(dict.fromkeys(table["trajectory_id"].astype(str)))
    picked: str = st.selectbox("Item to review", ids, key=key)
    return picked


def page_review() -> None:
    cfg, _me, dataset = signed_in_page()
    viewer = require_viewer(cfg)
    rubric = get_rubric(cfg.rubric)
    st.title("Review disagreements")
    what = "pair" if rubric.mode == "pairwise" else "item"
    if viewer.adjudicator:
        st.text(f"Adjudicator: every {what} is shown.")
    else:
        st.text(f"Only {what}s you have labeled are shown (labeling stays blind until then).")
    if rubric.mode == "pairwise":
        review_pairs(cfg, dataset, rubric, viewer)
        return
    data = review_data(get_store(cfg.db_url), dataset, rubric.id, viewer)
    judge_tab, human_tab = st.tabs(["Judge vs human", "Annotator vs annotator"])
    with judge_tab:
        table = judge_human_disagreements(data.labels, data.judgments, rubric)
        tid = _pick(table, "review-judge-pick")
        if tid is not None:
            _detail(cfg, dataset, rubric, viewer, tid, judges=True)
    with human_tab:
        table = annotator_disagreements(data.labels, rubric)
        tid = _pick(table, "review-human-pick")
        if tid is not None:
            _detail(cfg, dataset, rubric, viewer, tid, judges=False)
