"""The label page: one item at a time from the annotator's queue, saved on every click.

The item and its label panel are one ``st.fragment``: a click on a value, Next, Back, Skip or
Open reruns and redraws only them (the sidebar, the navigation and the page around stay as
they are). The progress counts are kept in the session and moved on by each save; a full run
of the page (sign-in, another page, the sidebar) counts them again.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pandas as pd
import streamlit as st

from trajudge.judges import Rubric
from trajudge.labeling_app import _state as S
from trajudge.labeling_app._access import Viewer, item_reference, label_page_judgments, own_label
from trajudge.labeling_app._config import AppConfig
from trajudge.labeling_app._data import get_count, get_rubric, get_stop_lines, get_store
from trajudge.labeling_app._view import ItemView, build_item_view
from trajudge.labeling_app._widgets import (
    label_value,
    level_text,
    render_item,
    render_judgments,
    render_progress,
    render_reference,
    render_rule,
    value_shortcut,
)
from trajudge.labeling_app.auth._session import client_address, end, require_viewer, session
from trajudge.labeling_app.auth._signin import sign_out
from trajudge.labeling_app.auth._sso_page import sso_sign_out
from trajudge.labeling_app.pages._actions import (
    advance,
    annotator_queue,
    follow_queue,
    on_back,
    on_details,
    on_next,
    on_open,
    on_skip,
    on_value,
)
from trajudge.labeling_app.queue._progress import Progress, progress
from trajudge.labeling_app.queue._queue import Queue

# Enter as a second key for "Next": a fixed script (no trajectory content), ignored while
# typing in a field or when a button has the focus (the browser clicks that button itself).
_ENTER_FOR_NEXT = """<script>
const doc = window.parent.document;
// a rerun may replace this frame, and a listener from a removed frame no longer runs:
// every new frame swaps in its own listener (and says which frame holds it)
if (doc.__trajudgeEnter) doc.removeEventListener("keydown", doc.__trajudgeEnter, true);
doc.__trajudgeEnterFrame = window.frameElement;
doc.__trajudgeEnter = (e) => {
  if (e.key !== "Enter" || e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return;
  const t = e.target;
  const tag = t && t.tagName;
  if (["INPUT", "TEXTAREA", "SELECT", "BUTTON"].includes(tag) || (t && t.isContentEditable)) {
    return;
  }
  const next = Array.from(doc.querySelectorAll("button")).find(
    (b) => b.innerText.trim().startsWith("Next"));
  if (next) { e.preventDefault(); next.click(); }
};
doc.addEventListener("keydown", doc.__trajudgeEnter, true);
</script>"""


def _sign_out(cfg: AppConfig) -> None:
    signed = session()
    if signed is not None:
        sign_out(get_store(cfg.db_url), signed, client_address())
    end("You are signed out.")


def sidebar(cfg: AppConfig, viewer: Viewer) -> None:
    """Who is signed in, the judge-verdict toggle (only on a server started with
    ``--show-judges``: labeling is blind otherwise) and sign-out (on every page)."""
    ss = st.session_state
    with st.sidebar:
        role = " (lead)" if viewer.lead else " (adjudicator)" if viewer.adjudicator else ""
        st.text(f"Annotator: {viewer.name}{role}\nDataset: {ss[S.DATASET]}\nRubric: {cfg.rubric}")
        if cfg.show_judges:
            st.toggle("Show judge verdicts", key=S.SHOW_JUDGES, help="Off: labeling is blind.")
        if st.button("Sign out", key="sign-out"):
            _sign_out(cfg)
            sso_sign_out()  # under single sign-on: st.logout() and st.stop(), never a rerun
            st.rerun()


def _seed_widgets(tid: str, mine: dict[str, Any] | None) -> None:
    """Show an earlier label in the widgets the first time its item is on screen (and switch
    the criteria on when it has some)."""
    ss = st.session_state
    if mine is None or S.widget_key("note", tid) in ss:
        return
    ss[S.widget_key("note", tid)] = mine["note"] or ""
    ss[S.widget_key("unsure", tid)] = bool(mine["unsure"])
    if mine["criteria"]:
        ss[S.SHOW_CRITERIA] = True


def _criteria(rubric: Rubric, tid: str, mine: dict[str, Any] | None, args: tuple[Any, ...]) -> None:
    """The per-criterion values, drawn only while the annotator has them switched on: each is
    a widget of its own item, and a new widget costs the browser far more than a redrawn one.
    A criterion's widget starts from the value stored with the annotator's label."""
    ss = st.session_state
    if not st.toggle("Criteria (optional)", key=S.SHOW_CRITERIA):
        return
    stored = json.loads(mine["criteria"]) if mine is not None and mine["criteria"] else {}
    values = [lv.value for lv in rubric.scale.levels]
    for c in rubric.criteria:
        key = S.widget_key("crit", tid, c.id)
        if key not in ss:
            ss[key] = stored.get(c.id)
        st.radio(
            c.id,
            [None, *values],
            format_func=lambda v: "–" if v is None else str(v),
            horizontal=True,
            key=key,
            help=c.description,
            on_change=on_details,
            args=args,
        )


def label_panel(cfg: AppConfig, dataset: str, rubric: Rubric, tid: str) -> None:
    """The rubric with its anchors above the value buttons, then details and navigation."""
    ss = st.session_state
    # first, at a place nothing above can move: a frame that moves is reloaded, and until its
    # script runs again Enter does nothing
    st.iframe(_ENTER_FOR_NEXT, height=1, tab_index=-1, alt="keyboard shortcut: Enter for Next")
    store = get_store(cfg.db_url)
    mine = own_label(store, dataset, tid, rubric.id, ss[S.ANNOTATOR])
    _seed_widgets(tid, mine)
    anchors = "\n".join(
        f"{level_text(rubric, lv.value)}: {lv.anchor}" for lv in rubric.scale.levels
    )
    st.text(f"Rubric: {rubric.id}\n{rubric.description}\n\n{anchors}")
    args = (cfg, dataset, rubric, tid)
    for lv in rubric.scale.levels:
        chosen = mine is not None and label_value(mine) == lv.value
        st.button(
            level_text(rubric, lv.value),
            key=f"value-{lv.value}",
            type="primary" if chosen else "secondary",
            shortcut=value_shortcut(rubric, lv.value),
            on_click=on_value,
            args=(*args, lv.value),
            width="stretch",
        )
    if rubric.criteria:
        _criteria(rubric, tid, mine, args)
    st.text_area("Note", key=S.widget_key("note", tid), on_change=on_details, args=args)
    st.checkbox("Unsure", key=S.widget_key("unsure", tid), on_change=on_details, args=args)
    message = st.empty()  # always there, so a message coming or going moves nothing below
    flash = S.flash_for(tid)  # only a message about this item: never a stale one
    if flash is not None:
        kind, text = flash
        (message.warning if kind == "warning" else message.success)(text)
    elif mine is not None:
        message.info(f"Your label: {level_text(rubric, label_value(mine))}")
    nav = st.container(horizontal=True)
    nav.button("Back", shortcut="B", on_click=on_back, disabled=not ss[S.VISITED])
    nav.button("Skip", shortcut="S", on_click=on_skip, args=args)
    nav.button("Next", shortcut="N", type="primary", on_click=on_next, args=args)
    if mine is not None:
        history = store.label_history(int(mine["id"]))
        if history:
            with st.expander(f"Earlier versions of your label ({len(history)})"):
                rows = [
                    {
                        # the level's text: a category (nominal rubrics) or a scale value
                        "label": level_text(rubric, label_value(h)),
                        "note": h["note"],
                        "unsure": h["unsure"],
                        "changed_at": h["changed_at"],
                    }
                    for h in history
                ]
                st.dataframe(pd.DataFrame(rows), hide_index=True)


def recent_picker(
    read: Callable[[], list[str]], label: str, fmt: Callable[[str], str] = str
) -> None:
    """Jump back to any item (or pair) this annotator labeled, to see or edit the label.

    The list is drawn only while its expander is open (a selectbox whose options change with
    every label costs the browser more on each item than the rest of the sidebar); it is read
    (``read``) on a full run of the page and kept up to date by each save.
    """
    ss = st.session_state
    box = st.sidebar.expander("Your recent labels", key=S.RECENT_OPEN, on_change="rerun")
    if not box.open:
        return
    if ss[S.RECENT] is None:
        ss[S.RECENT] = read()
    done: list[str] = ss[S.RECENT]
    with box:
        if not done:
            st.text("None yet.")
            return
        st.selectbox(label, done, key="open-pick", format_func=fmt)
        st.button("Open", on_click=on_open, args=("open-pick",))


def my_labels(cfg: AppConfig, dataset: str, rubric: Rubric) -> None:
    """The recent-labels picker of the label page."""
    me = st.session_state[S.ANNOTATOR]
    store = get_store(cfg.db_url)
    recent_picker(lambda: store.annotator_label_ids(dataset, rubric.id, me), "Item")


def signed_in_page() -> tuple[AppConfig, str, str]:
    """Start a page that needs a signed-in annotator: state, the guard, the sidebar.

    Returns the app config, the annotator and the dataset. The session is checked against
    the store (an expired session, or a disabled or reset account, goes back to sign-in);
    the page stops when nobody is signed in.
    """
    S.init_state()
    ss = st.session_state
    cfg: AppConfig = ss[S.CONFIG]
    if session() is None or not ss[S.DATASET]:
        st.warning("Sign in first.")
        st.stop()
    viewer = require_viewer(cfg)
    sidebar(cfg, viewer)
    return cfg, viewer.name, str(ss[S.DATASET])


def session_progress(queue: Queue, count: Callable[[], Progress]) -> Progress:
    """The progress kept in the session, counted (``count``) when there is none: on a full
    run of the page; a fragment run moves it on from the saves."""
    ss = st.session_state
    p: Progress | None = ss[S.PROGRESS]
    if p is None or p.queue_size != len(queue):  # none yet, or the queue was built again
        p = count()
    ss[S.PROGRESS] = p
    return p


def _progress(cfg: AppConfig, dataset: str, rubric: Rubric, queue: Queue) -> Progress:
    store = get_store(cfg.db_url)
    return session_progress(
        queue,
        lambda: progress(store, dataset, rubric.id, queue, get_count(cfg.db_url, dataset)),
    )


def _item_view(cfg: AppConfig, dataset: str, rubric: Rubric, tid: str) -> ItemView | None:
    """The view of item ``tid``: the trajectory fetched by id once while it stays on screen
    (a label click redraws it from the session), None when it is no longer in the store."""
    ss = st.session_state
    shown = cfg.show_judges and bool(ss[S.SHOW_JUDGES])
    key = (tid, shown)
    cached = ss[S.ITEM]
    if cached is not None and cached[0] == key:
        view: ItemView = cached[1]
        return view
    store = get_store(cfg.db_url)
    traj = store.trajectory(dataset, tid)
    if traj is None:
        return None
    is_reference = rubric.mode == "reference"
    view = build_item_view(
        traj,
        rule_result=store.item_rule_result(dataset, tid),
        judgments=label_page_judgments(store, cfg, dataset, tid, shown=shown),
        rubric_id=rubric.id,
        reference=item_reference(store, dataset, rubric.id, traj) if is_reference else None,
        reference_rubric=is_reference,
    )
    ss[S.ITEM] = (key, view)
    return view


@st.fragment
@S.shows_store_faults
def item_and_panel(cfg: AppConfig, dataset: str, rubric: Rubric, me: str) -> None:
    """The progress, the item on screen and its label panel; reruns alone on their clicks."""
    ss = st.session_state
    require_viewer(cfg)  # a click that ended the session: back to sign-in, nothing drawn
    queue = annotator_queue(cfg, dataset, rubric, me)
    if follow_queue(queue) and ss[S.CURRENT] is None:  # a done queue changed: new items
        advance(cfg, dataset, rubric, me)
    shown = _progress(cfg, dataset, rubric, queue)
    render_progress(shown)
    st.caption(f"Queue order: {queue.strategy}")
    if queue.strategy == "active":
        for line in get_stop_lines(cfg.db_url, dataset, cfg.rubric, shown.items_labeled):
            st.caption(f"Stopping rule: {line}")
    my_labels(cfg, dataset, rubric)
    tid = ss[S.CURRENT]
    if tid is None:
        st.success("Your queue is done. Thank you!")
        st.button("Back", on_click=on_back, disabled=not ss[S.VISITED])
        return
    view = _item_view(cfg, dataset, rubric, tid)
    if view is None:
        st.error("This trajectory is no longer in the store.")
        st.button("Skip", on_click=on_skip, args=(cfg, dataset, rubric, tid))
        return
    left, right = st.columns([3, 2], gap="large")
    with left:
        render_item(view)
        render_reference(view)
        render_rule(view.rule)
        if cfg.show_judges and ss[S.SHOW_JUDGES]:
            render_judgments(view.judgments)
    with right:
        label_panel(cfg, dataset, rubric, tid)


def page_label() -> None:
    cfg, me, dataset = signed_in_page()
    ss = st.session_state
    rubric = get_rubric(cfg.rubric)
    S.start_full_run()
    if ss[S.CURRENT] is None and ss[S.CURSOR] == 0:
        advance(cfg, dataset, rubric, me)
    item_and_panel(cfg, dataset, rubric, me)
