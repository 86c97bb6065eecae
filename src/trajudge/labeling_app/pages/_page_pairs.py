"""The pair page (a pairwise rubric): two trajectories of one task side by side, which is
better, saved on every click.

The side each trajectory is shown on comes from the annotator and the pair (``_pairs``); the
screen's ``A`` is always the left side and ``B`` the right one, and the label is stored in
the pair's original numbering with the side shown on the left. Blind as the label page: the
judges' verdicts on the pair and the other annotators' labels of it appear only after the
annotator's own label (or, on a server started with ``--show-judges``, when switched on).

The pair and its panel are one ``st.fragment``, as on the label page.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from trajudge.judges import Rubric
from trajudge.labeling_app import _state as S
from trajudge.labeling_app._access import (
    NotAllowed,
    own_pair_label,
    pair_page_judgments,
    pair_review,
)
from trajudge.labeling_app._config import AppConfig
from trajudge.labeling_app._data import get_pairs, get_rubric, get_store
from trajudge.labeling_app._view import ItemView, build_item_view
from trajudge.labeling_app._widgets import render_item, render_progress
from trajudge.labeling_app.auth._session import require_viewer
from trajudge.labeling_app.pages._actions import on_back
from trajudge.labeling_app.pages._page_label import (
    _ENTER_FOR_NEXT,
    recent_picker,
    session_progress,
    signed_in_page,
)
from trajudge.labeling_app.pages._pair_actions import (
    SCREEN_SIDE,
    SIDE_TEXT,
    advance_pair,
    on_pair_details,
    on_pair_next,
    on_pair_skip,
    on_pair_value,
    pair_queue,
)
from trajudge.labeling_app.queue._pairs import (
    left_id,
    pair_key,
    pair_of,
    pair_progress,
    pair_title,
    shown_side,
)
from trajudge.labeling_app.queue._progress import Progress
from trajudge.labeling_app.queue._queue import Queue

_SHORTCUT = {"A": "A", "B": "B", "tie": "T"}


def _side_text(verdict: Any, left: str, a: str, b: str) -> str:
    side = shown_side(str(verdict), left, a, b) if verdict is not None else None
    return "no verdict" if side is None else SIDE_TEXT[side]


def _verdict_lines(
    judgments: list[dict[str, Any]], labels: list[dict[str, Any]], left: str, a: str, b: str
) -> str:
    """The judges' verdicts and the other labels of the pair, each as the side it points to
    on this annotator's screen (plain text)."""
    lines = []
    for j in judgments:
        verdict = f"error: {j['error']}" if j["error"] else _side_text(j["verdict"], left, a, b)
        lines.append(f"judge {j['judge']} ({j['order']}, sample {j['sample']}): {verdict}")
    for r in labels:
        who = f"{r['annotator']} (adjudication)" if r["adjudication"] else str(r["annotator"])
        value = "skipped" if r["skipped"] else _side_text(r["category"], left, a, b)
        lines.append(f"{who}: {value}")
    return "\n".join(lines) or "No judgments and no other labels of this pair."


def _review(
    cfg: AppConfig, dataset: str, rubric: Rubric, me: str, pair: tuple[str, str], left: str
) -> None:
    """After the annotator's own label: what the judges and the others said (blind before)."""
    store = get_store(cfg.db_url)
    a, b = pair
    try:
        review = pair_review(store, dataset, rubric.id, require_viewer(cfg), pair)
    except NotAllowed:
        if cfg.show_judges and st.session_state[S.SHOW_JUDGES]:
            judged = pair_page_judgments(store, cfg, dataset, pair, rubric.id, shown=True)
            lines = _verdict_lines(judged, [], left, a, b)
            st.text(f"Judge verdicts (shown by --show-judges):\n{lines}")
        return
    with st.expander("Judges and other annotators on this pair", expanded=True):
        st.text(_verdict_lines(review.judgments, review.labels, left, a, b))


def pair_panel(cfg: AppConfig, dataset: str, rubric: Rubric, me: str, key: str) -> None:
    """The A / B / tie buttons, the message, navigation, (once labeled) the review of the
    pair, the note and unsure flag, then the rubric with its anchors and earlier versions."""
    ss = st.session_state
    st.iframe(_ENTER_FOR_NEXT, height=1, tab_index=-1, alt="keyboard shortcut: Enter for Next")
    store = get_store(cfg.db_url)
    a, b = pair = pair_of(key)
    left = left_id(me, a, b)
    mine = own_pair_label(store, dataset, pair, rubric.id, me)
    if mine is not None and S.widget_key("pnote", key) not in ss:
        ss[S.widget_key("pnote", key)] = mine["note"] or ""
        ss[S.widget_key("punsure", key)] = bool(mine["unsure"])
    chosen = (
        None if mine is None or mine["skipped"] else shown_side(str(mine["category"]), left, a, b)
    )
    args = (cfg, dataset, rubric, key)
    # the buttons first: the column is narrow and the rubric's anchors are long
    for lv in rubric.scale.levels:
        side = SCREEN_SIDE[str(lv.value)]
        st.button(
            SIDE_TEXT[side],
            key=f"pair-{side}",
            type="primary" if chosen == side else "secondary",
            shortcut=_SHORTCUT[str(lv.value)],
            on_click=on_pair_value,
            args=(*args, side),
            width="stretch",
        )
    message = st.empty()  # always there, so a message coming or going moves nothing below
    flash = S.flash_for(key)
    if flash is not None:
        kind, text = flash
        (message.warning if kind == "warning" else message.success)(text)
    elif mine is not None:
        message.info(f"Your label: {'skipped' if chosen is None else SIDE_TEXT[chosen]}")
    nav = st.container(horizontal=True)
    nav.button("Back", shortcut="P", on_click=on_back, disabled=not ss[S.VISITED])
    nav.button("Skip", shortcut="S", on_click=on_pair_skip, args=args)
    nav.button("Next", shortcut="N", type="primary", on_click=on_pair_next, args=args)
    _review(cfg, dataset, rubric, me, pair, left)
    st.text_area("Note", key=S.widget_key("pnote", key), on_change=on_pair_details, args=args)
    st.checkbox("Unsure", key=S.widget_key("punsure", key), on_change=on_pair_details, args=args)
    anchors = "\n".join(f"{lv.label}: {lv.anchor}" for lv in rubric.scale.levels)
    st.text(
        f"Rubric: {rubric.id}\n{rubric.description}\n\nA is the left trajectory, B the right "
        f"one.\n\n{anchors}"
    )
    if mine is not None:
        history = store.pair_label_history(int(mine["id"]))
        if history:
            with st.expander(f"Earlier versions of your label ({len(history)})"):
                rows = [
                    {
                        "label": "skipped"
                        if h["skipped"]
                        else _side_text(h["category"], left, a, b),
                        "note": h["note"],
                        "unsure": h["unsure"],
                        "changed_at": h["changed_at"],
                    }
                    for h in history
                ]
                st.dataframe(pd.DataFrame(rows), hide_index=True)


def my_pairs(cfg: AppConfig, dataset: str, rubric: Rubric, me: str) -> None:
    """The recent-labels picker of the pair page: the pairs this annotator labeled."""

    def read() -> list[str]:
        frame = get_store(cfg.db_url).pair_labels_frame(dataset, rubric_id=rubric.id)
        mine = frame[(frame["annotator"] == me) & ~frame["adjudication"].astype(bool)]
        mine = mine.sort_values("updated_at", ascending=False, kind="stable")
        pairs = zip(mine["trajectory_id"], mine["other_id"], strict=True)
        return [pair_key(str(a), str(b)) for a, b in pairs][:200]

    recent_picker(read, "Pair", pair_title)


def _progress(cfg: AppConfig, dataset: str, rubric: Rubric, queue: Queue) -> Progress:
    def count() -> Progress:
        n_pairs = len(get_pairs(cfg.db_url, dataset, rubric.id, cfg.max_pairs).pairs)
        return pair_progress(get_store(cfg.db_url), dataset, rubric.id, queue, n_pairs)

    return session_progress(queue, count)


def _views(cfg: AppConfig, dataset: str, key: str, left: str) -> tuple[ItemView, ItemView] | None:
    """The two trajectories of the pair on screen, left first (fetched once while the pair
    stays on screen); None when one is no longer in the store."""
    ss = st.session_state
    cached = ss[S.ITEM]
    if cached is not None and cached[0] == key:
        views: tuple[ItemView, ItemView] = cached[1]
        return views
    a, b = pair_of(key)
    store = get_store(cfg.db_url)
    out = []
    for tid in (left, b if left == a else a):
        traj = store.trajectory(dataset, tid)
        if traj is None:
            return None
        out.append(build_item_view(traj))
    views = (out[0], out[1])
    ss[S.ITEM] = (key, views)
    return views


@st.fragment
@S.shows_store_faults
def pair_and_panel(cfg: AppConfig, dataset: str, rubric: Rubric, me: str) -> None:
    """The progress, the pair on screen and its label panel; reruns alone on their clicks."""
    ss = st.session_state
    require_viewer(cfg)  # a click that ended the session: back to sign-in, nothing drawn
    queue = pair_queue(cfg, dataset, rubric, me)
    render_progress(_progress(cfg, dataset, rubric, queue), noun="pairs")
    st.caption(f"Queue order: {queue.strategy}")
    my_pairs(cfg, dataset, rubric, me)
    key = ss[S.CURRENT]
    if key is None:
        if not queue.ids:
            st.info(
                "No pairs to label: the dataset has no task with two trials (and no pairwise "
                "judge of this rubric compared any)."
            )
        else:
            st.success("Your queue is done. Thank you!")
        st.button("Back", on_click=on_back, disabled=not ss[S.VISITED])
        return
    a, b = pair_of(key)
    left = left_id(me, a, b)
    views = _views(cfg, dataset, key, left)
    if views is None:
        st.error("A trajectory of this pair is no longer in the store.")
        st.button("Skip", on_click=on_pair_skip, args=(cfg, dataset, rubric, key))
        return
    cols = st.columns([5, 5, 3], gap="medium")
    for col, view, name in zip(cols, views, ("A · left", "B · right"), strict=False):
        with col:
            st.subheader(name, divider="gray")
            render_item(view)
    with cols[2]:
        pair_panel(cfg, dataset, rubric, me, key)


def page_label_pairs() -> None:
    cfg, me, dataset = signed_in_page()
    ss = st.session_state
    rubric = get_rubric(cfg.rubric)
    S.start_full_run()
    if ss[S.CURRENT] is None and ss[S.CURSOR] == 0:
        advance_pair(cfg, dataset, rubric, me)
    pair_and_panel(cfg, dataset, rubric, me)
