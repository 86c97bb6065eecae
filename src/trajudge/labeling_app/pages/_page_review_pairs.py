"""The review page under a pairwise rubric: pairs whose judges and annotators disagree, side
by side, settled with an adjudication (A, B or tie).

Blind as for items (the rule lives in ``_access``): an annotator reviews only pairs they have
labeled (a skip does not count), and sees the judges' verdicts and the other labels of a pair
only then; an adjudicator sees every pair and is the only one who saves adjudications.
Verdicts and labels are shown in the pair's original numbering (A = its first trajectory,
B = its second), each trajectory named; all trajectory text goes through ``st.text``.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from trajudge.judges import Rubric
from trajudge.labeling_app._access import (
    NotAllowed,
    Viewer,
    own_pair_label,
    pair_review,
    pair_review_data,
    save_pair_adjudication,
)
from trajudge.labeling_app._config import AppConfig
from trajudge.labeling_app._data import get_store, get_trajectory
from trajudge.labeling_app._review import (
    pair_annotator_disagreements,
    pair_judge_human_disagreements,
)
from trajudge.labeling_app._view import build_item_view
from trajudge.labeling_app._widgets import render_item
from trajudge.labeling_app.auth._session import require_viewer
from trajudge.labeling_app.queue._pairs import pair_key, pair_of, pair_title

_OPTION = {"A": "A better", "B": "B better", "tie": "tie"}


def _category_text(category: Any, a: str, b: str) -> str:
    return {"A": f"A ({a}) better", "B": f"B ({b}) better", "tie": "tie"}.get(
        str(category), "no verdict"
    )


def _labels_text(rows: list[dict[str, Any]], a: str, b: str) -> str:
    lines = []
    for r in rows:
        value = "skipped" if r["skipped"] else _category_text(r["category"], a, b)
        lines.append(f"{r['annotator']}: {value}" + (" (unsure)" if r["unsure"] else ""))
        if r["note"]:
            lines.append(f"  note: {r['note']}")
    return "\n".join(lines) or "No labels."


def _judges_text(judgments: list[dict[str, Any]], a: str, b: str) -> str:
    lines = []
    for j in judgments:
        verdict = f"error: {j['error']}" if j["error"] else _category_text(j["verdict"], a, b)
        lines.append(f"judge {j['judge']} ({j['order']}, sample {j['sample']}): {verdict}")
        if j["reasoning"]:
            lines.append(f"  {j['reasoning']}")
    return "\n".join(lines) or "No judgments of this pair."


def _adjudicate(
    cfg: AppConfig,
    dataset: str,
    rubric: Rubric,
    viewer: Viewer,
    pair: tuple[str, str],
    rows: list[dict[str, Any]],
    tab: str,
) -> None:
    a, b = pair
    st.markdown("**Adjudication**")
    for r in rows:
        if r["adjudication"]:
            st.text(f"Adjudicated by {r['annotator']}: {_category_text(r['category'], a, b)}")
    if not viewer.adjudicator:
        st.text("Only an adjudicator settles disagreements (an account with role adjudicator).")
        return
    key = pair_key(a, b)
    st.text(f"A is {a}, B is {b}.")  # ids stay plain text: the radio's options are Markdown
    with st.form(f"{tab}-adjudicate-pair-{key}"):
        category = st.radio(
            "Final label",
            [str(lv.value) for lv in rubric.scale.levels],
            format_func=lambda c: _OPTION.get(c, c),
            horizontal=True,
            key=f"{tab}-adj-pair-{key}",
        )
        note = st.text_area("Reason", key=f"{tab}-adj-pair-note-{key}")
        if st.form_submit_button("Save adjudication", type="primary"):
            store = get_store(cfg.db_url)
            reason = note.strip() or None
            now = require_viewer(cfg)  # the role as stored now, not as at the page's start
            save_pair_adjudication(store, dataset, rubric.id, now, pair, category, note=reason)
            st.success(f"Adjudication saved: {_OPTION.get(category, category)}")


def _detail(
    cfg: AppConfig, dataset: str, rubric: Rubric, viewer: Viewer, key: str, tab: str
) -> None:
    store = get_store(cfg.db_url)
    a, b = pair = pair_of(key)
    try:
        review = pair_review(store, dataset, rubric.id, viewer, pair)
    except NotAllowed as exc:
        st.warning(str(exc))
        return
    mine = own_pair_label(store, dataset, pair, rubric.id, viewer.name)
    humans = [r for r in review.labels if not r["adjudication"]]
    if mine is not None:
        humans = [mine, *humans]
    left, right = st.columns(2)
    with left:
        st.markdown("**Human labels**")
        st.text(_labels_text(humans, a, b))
    with right:
        st.markdown("**Judges**")
        st.text(_judges_text(review.judgments, a, b))
    _adjudicate(cfg, dataset, rubric, viewer, pair, review.labels, tab)
    for name, tid in (("A", a), ("B", b)):
        traj = get_trajectory(cfg.db_url, dataset, tid)
        if traj is not None:  # a fixed label: an expander's label is Markdown, an id is data
            with st.expander(f"Trajectory {name}"):
                render_item(build_item_view(traj))


def _pick(table: pd.DataFrame, key: str) -> str | None:
    if table.empty:
        st.text("Nothing to review.")
        return None
    st.dataframe(table, hide_index=True, width="stretch")
    pairs = zip(table["trajectory_id"].astype(str), table["other_id"].astype(str), strict=True)
    keys = list(dict.fromkeys(pair_key(a, b) for a, b in pairs))
    picked: str = st.selectbox("Pair to review", keys, key=key, format_func=pair_title)
    return picked


def review_pairs(cfg: AppConfig, dataset: str, rubric: Rubric, viewer: Viewer) -> None:
    """The Review page's body under a pairwise rubric."""
    data = pair_review_data(get_store(cfg.db_url), dataset, rubric.id, viewer)
    judge_tab, human_tab = st.tabs(["Judge vs human", "Annotator vs annotator"])
    with judge_tab:
        table = pair_judge_human_disagreements(data.labels, data.judgments, rubric.id)
        key = _pick(table, "review-pair-judge-pick")
        if key is not None:
            _detail(cfg, dataset, rubric, viewer, key, "judge")
    with human_tab:
        table = pair_annotator_disagreements(data.labels, rubric.id)
        key = _pick(table, "review-pair-human-pick")
        if key is not None:
            _detail(cfg, dataset, rubric, viewer, key, "human")
