"""The review page: disagreements side by side, settled with an adjudication label."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from trajudge.judges import Rubric
from trajudge.labeling_app import _state as S
from trajudge.labeling_app._config import AppConfig
from trajudge.labeling_app._data import get_rubric, get_store, get_trajectory
from trajudge.labeling_app._page_label import signed_in_page
from trajudge.labeling_app._review import annotator_disagreements, judge_human_disagreements
from trajudge.labeling_app._view import build_item_view
from trajudge.labeling_app._widgets import level_text, render_item


def _human_column(rubric: Rubric, rows: list[dict[str, Any]]) -> None:
    st.markdown("**Human labels**")
    for r in rows:
        with st.container(border=True):
            st.text(f"{r['annotator']}: {level_text(rubric, None if r['skipped'] else r['value'])}")
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
    cfg: AppConfig, dataset: str, rubric: Rubric, tid: str, rows: list[Any], tab: str
) -> None:
    ss = st.session_state
    existing = [r for r in rows if r["adjudication"]]
    st.markdown("**Adjudication**")
    for r in existing:
        st.text(f"Adjudicated by {r['annotator']}: {level_text(rubric, r['value'])}")
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
            get_store(cfg.db_url).save_label(
                dataset,
                tid,
                rubric.id,
                ss[S.ANNOTATOR],
                float(value),
                note=note.strip() or None,
                adjudication=True,
            )
            st.success(f"Adjudication saved: {level_text(rubric, value)}")


def _detail(cfg: AppConfig, dataset: str, rubric: Rubric, tid: str, *, judges: bool) -> None:
    store = get_store(cfg.db_url)
    rows = store.item_labels(dataset, tid, rubric.id)
    humans = [r for r in rows if not r["adjudication"]]
    left, right = st.columns(2)
    if judges:
        with left:
            _human_column(rubric, humans)
        with right:
            _judge_column(
                [j for j in store.item_judgments(dataset, tid) if j["rubric_id"] == rubric.id]
            )
    else:  # annotator vs annotator: one column each
        cols = st.columns(max(len(humans), 1))
        for col, r in zip(cols, humans, strict=False):
            with col:
                _human_column(rubric, [r])
    _adjudicate(cfg, dataset, rubric, tid, rows, "judge" if judges else "human")
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
    cfg, _, dataset = signed_in_page()
    rubric = get_rubric(cfg.rubric)
    store = get_store(cfg.db_url)
    st.title("Review disagreements")
    labels = store.labels_frame(dataset, rubric_id=rubric.id, source="human")
    judge_tab, human_tab = st.tabs(["Judge vs human", "Annotator vs annotator"])
    with judge_tab:
        table = judge_human_disagreements(labels, store.judgments_frame(dataset), rubric)
        tid = _pick(table, "review-judge-pick")
        if tid is not None:
            _detail(cfg, dataset, rubric, tid, judges=True)
    with human_tab:
        table = annotator_disagreements(labels, rubric)
        tid = _pick(table, "review-human-pick")
        if tid is not None:
            _detail(cfg, dataset, rubric, tid, judges=False)
