"""The label page: one item at a time from the annotator's queue, saved on every click."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from trajudge.judges import Rubric
from trajudge.labeling_app import _state as S
from trajudge.labeling_app._access import label_page_judgments, own_label
from trajudge.labeling_app._config import AppConfig
from trajudge.labeling_app._data import (
    get_count,
    get_pool,
    get_queue,
    get_rubric,
    get_store,
    get_trajectory,
)
from trajudge.labeling_app._queue import Queue, next_item, progress
from trajudge.labeling_app._view import build_item_view
from trajudge.labeling_app._widgets import (
    label_value,
    level_text,
    render_item,
    render_judgments,
    render_progress,
    render_rule,
    value_shortcut,
)

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


def sidebar(cfg: AppConfig) -> None:
    """Who is signed in, the judge-verdict toggle (only on a server started with
    ``--show-judges``: labeling is blind otherwise) and sign-out (on every page)."""
    ss = st.session_state
    with st.sidebar:
        role = " (adjudicator)" if cfg.is_adjudicator(ss[S.ANNOTATOR]) else ""
        st.text(
            f"Annotator: {ss[S.ANNOTATOR]}{role}\nDataset: {ss[S.DATASET]}\nRubric: {cfg.rubric}"
        )
        if cfg.show_judges:
            st.toggle("Show judge verdicts", key=S.SHOW_JUDGES, help="Off: labeling is blind.")
        if st.button("Sign out", key="sign-out"):
            ss[S.ANNOTATOR] = None
            S.reset_queue_position()
            st.rerun()


def _queue(cfg: AppConfig, dataset: str, rubric: Rubric, me: str) -> Queue:
    pool = get_pool(cfg.db_url, dataset, rubric.id)
    return get_queue(cfg.db_url, dataset, cfg.rubric, me, cfg.strategy, cfg.overlap, pool)


def _advance(cfg: AppConfig, dataset: str, rubric: Rubric, me: str) -> None:
    """Put the next open item of the queue on screen (None when the queue is done)."""
    ss = st.session_state
    store = get_store(cfg.db_url)
    queue = _queue(cfg, dataset, rubric, me)
    current = ss[S.CURRENT]
    if current is not None:
        ss[S.VISITED] = [*ss[S.VISITED], current][-200:]
    exclude = frozenset([current]) if current is not None else frozenset()
    found = next_item(store, dataset, rubric.id, queue, start=ss[S.CURSOR], exclude=exclude)
    if found is None:
        S.show_item(None)
        ss[S.CURSOR] = len(queue)
    else:
        pos, tid = found
        S.show_item(tid)
        # the current item stays open until labeled: only move the cursor up to it
        ss[S.CURSOR] = pos


def _save(
    cfg: AppConfig,
    dataset: str,
    rubric: Rubric,
    tid: str,
    value: float | str | None,
    *,
    skipped: bool = False,
) -> None:
    ss = st.session_state
    me = ss[S.ANNOTATOR]
    criteria = {
        c.id: ss.get(S.widget_key("crit", tid, c.id))
        for c in rubric.criteria
        if ss.get(S.widget_key("crit", tid, c.id)) is not None
    }
    note = (ss.get(S.widget_key("note", tid)) or "").strip() or None
    get_store(cfg.db_url).save_label(
        dataset,
        tid,
        rubric.id,
        me,
        None if isinstance(value, str) else value,
        category=value if isinstance(value, str) else None,
        criteria=criteria or None,
        note=note,
        unsure=bool(ss.get(S.widget_key("unsure", tid))),
        skipped=skipped,
    )
    S.set_flash(tid, "success", f"Saved: {level_text(rubric, value)}")


def _on_screen(tid: str, *, warn: bool = True) -> bool:
    """Whether ``tid`` is still the item on screen when its button's callback runs.

    A button's callback carries the item of the run that drew it. When a rerun is slow and a
    key is pressed before it redrew the buttons (or a second Next arrives), the callback can
    be about an item no longer on screen: it must not save or move anything then.
    """
    if st.session_state[S.CURRENT] == tid:
        return True
    current = st.session_state[S.CURRENT]
    if warn and current is not None:
        S.set_flash(
            current,
            "warning",
            "Not saved: that click was meant for another item; give the label again.",
        )
    return False


def _on_value(cfg: AppConfig, dataset: str, rubric: Rubric, tid: str, value: int | str) -> None:
    if _on_screen(tid):  # a number (binary, ordinal) or a category name (nominal)
        _save(cfg, dataset, rubric, tid, value if isinstance(value, str) else float(value))


def _on_details(cfg: AppConfig, dataset: str, rubric: Rubric, tid: str) -> None:
    """A note, unsure flag or criterion changed: re-save when the item already has a value."""
    store = get_store(cfg.db_url)
    mine = own_label(store, dataset, tid, rubric.id, st.session_state[S.ANNOTATOR])
    if mine is not None and not mine["skipped"]:
        _save(cfg, dataset, rubric, tid, label_value(mine))


def _on_skip(cfg: AppConfig, dataset: str, rubric: Rubric, tid: str) -> None:
    if not _on_screen(tid):
        return
    _save(cfg, dataset, rubric, tid, None, skipped=True)
    _advance(cfg, dataset, rubric, st.session_state[S.ANNOTATOR])


def _on_next(cfg: AppConfig, dataset: str, rubric: Rubric, tid: str) -> None:
    if not _on_screen(tid, warn=False):  # a second Next for the same item: already moved on
        return
    me = st.session_state[S.ANNOTATOR]
    if own_label(get_store(cfg.db_url), dataset, tid, rubric.id, me) is None:
        S.set_flash(tid, "warning", "Give a label or skip this item first.")
        return
    _advance(cfg, dataset, rubric, me)


def _on_back() -> None:
    ss = st.session_state
    if ss[S.VISITED]:
        S.show_item(ss[S.VISITED][-1])
        ss[S.VISITED] = ss[S.VISITED][:-1]


def _on_open(tid_key: str) -> None:
    ss = st.session_state
    target = ss.get(tid_key)
    if target and target != ss[S.CURRENT]:
        if ss[S.CURRENT] is not None:
            ss[S.VISITED] = [*ss[S.VISITED], ss[S.CURRENT]][-200:]
        S.show_item(target)


def _seed_widgets(rubric: Rubric, tid: str, mine: dict[str, Any] | None) -> None:
    """Show an earlier label in the widgets the first time its item is on screen."""
    import json

    ss = st.session_state
    if mine is None or S.widget_key("note", tid) in ss:
        return
    ss[S.widget_key("note", tid)] = mine["note"] or ""
    ss[S.widget_key("unsure", tid)] = bool(mine["unsure"])
    crit = json.loads(mine["criteria"]) if mine["criteria"] else {}
    for c in rubric.criteria:
        ss[S.widget_key("crit", tid, c.id)] = crit.get(c.id)


def label_panel(cfg: AppConfig, dataset: str, rubric: Rubric, tid: str) -> None:
    """The rubric with its anchors beside the value buttons, then details and navigation."""
    ss = st.session_state
    # first, at a place nothing above can move: a frame that moves is reloaded, and until its
    # script runs again Enter does nothing
    st.iframe(_ENTER_FOR_NEXT, height=1, tab_index=-1, alt="keyboard shortcut: Enter for Next")
    store = get_store(cfg.db_url)
    mine = own_label(store, dataset, tid, rubric.id, ss[S.ANNOTATOR])
    _seed_widgets(rubric, tid, mine)
    st.subheader(f"Rubric: {rubric.id}", divider="gray")
    st.text(rubric.description)
    args = (cfg, dataset, rubric, tid)
    for lv in rubric.scale.levels:
        key_col, text_col = st.columns([2, 3], vertical_alignment="center")
        chosen = mine is not None and label_value(mine) == lv.value
        key_col.button(
            f"{lv.value} · {lv.label}",
            key=f"value-{lv.value}",
            type="primary" if chosen else "secondary",
            shortcut=value_shortcut(rubric, lv.value),
            on_click=_on_value,
            args=(*args, lv.value),
            width="stretch",
            wrap=True,
        )
        text_col.text(lv.anchor)
    if rubric.criteria:
        with st.expander("Criteria (optional)", expanded=False):
            values = [lv.value for lv in rubric.scale.levels]
            for c in rubric.criteria:
                st.radio(
                    c.id,
                    [None, *values],
                    format_func=lambda v: "–" if v is None else str(v),
                    horizontal=True,
                    key=S.widget_key("crit", tid, c.id),
                    help=c.description,
                    on_change=_on_details,
                    args=args,
                )
    st.text_area("Note", key=S.widget_key("note", tid), on_change=_on_details, args=args)
    st.checkbox("Unsure", key=S.widget_key("unsure", tid), on_change=_on_details, args=args)
    message = st.empty()  # always there, so a message coming or going moves nothing below
    flash = S.flash_for(tid)  # only a message about this item: never a stale one
    if flash is not None:
        kind, text = flash
        (message.warning if kind == "warning" else message.success)(text)
    elif mine is not None:
        message.info(f"Your label: {level_text(rubric, label_value(mine))}")
    back, skip, nxt = st.columns(3)
    back.button("Back", shortcut="B", on_click=_on_back, disabled=not ss[S.VISITED])
    skip.button("Skip", shortcut="S", on_click=_on_skip, args=args)
    nxt.button("Next", shortcut="N", type="primary", on_click=_on_next, args=args)
    if mine is not None:
        history = store.label_history(int(mine["id"]))
        if history:
            with st.expander(f"Earlier versions of your label ({len(history)})"):
                cols = ["value", "note", "unsure", "skipped", "changed_at"]
                st.dataframe(pd.DataFrame(history)[cols], hide_index=True)


def my_labels(cfg: AppConfig, dataset: str, rubric: Rubric) -> None:
    """Jump back to any item this annotator labeled, to see or edit the label."""
    me = st.session_state[S.ANNOTATOR]
    done = get_store(cfg.db_url).annotator_label_ids(dataset, rubric.id, me)
    with st.sidebar.expander(f"Your recent labels ({len(done)})"):
        if done:
            st.selectbox("Item", done, key="open-pick")
            st.button("Open", on_click=_on_open, args=("open-pick",))


def signed_in_page() -> tuple[AppConfig, str, str]:
    """Start a page that needs a signed-in annotator: state, the guard, the sidebar.

    Returns the app config, the annotator and the dataset; stops the page when nobody is
    signed in.
    """
    S.init_state()
    ss = st.session_state
    cfg: AppConfig = ss[S.CONFIG]
    me, dataset = ss[S.ANNOTATOR], ss[S.DATASET]
    if not me or not dataset:
        st.warning("Sign in first.")
        st.stop()
    sidebar(cfg)
    return cfg, str(me), str(dataset)


def page_label() -> None:
    cfg, me, dataset = signed_in_page()
    ss = st.session_state
    rubric = get_rubric(cfg.rubric)
    store = get_store(cfg.db_url)
    my_labels(cfg, dataset, rubric)
    if ss[S.CURRENT] is None and ss[S.CURSOR] == 0:
        _advance(cfg, dataset, rubric, me)
    queue = _queue(cfg, dataset, rubric, me)
    render_progress(progress(store, dataset, rubric.id, queue, get_count(cfg.db_url, dataset)))
    tid = ss[S.CURRENT]
    if tid is None:
        st.success("Your queue is done. Thank you!")
        st.button("Back", on_click=_on_back, disabled=not ss[S.VISITED])
        return
    traj = get_trajectory(cfg.db_url, dataset, tid)
    if traj is None:
        st.error("This trajectory is no longer in the store.")
        st.button("Skip", on_click=_on_skip, args=(cfg, dataset, rubric, tid))
        return
    shown = cfg.show_judges and bool(ss[S.SHOW_JUDGES])
    view = build_item_view(
        traj,
        rule_result=store.item_rule_result(dataset, tid),
        judgments=label_page_judgments(store, cfg, dataset, tid, shown=shown),
        rubric_id=rubric.id,
    )
    left, right = st.columns([3, 2], gap="large")
    with left:
        render_item(view)
        render_rule(view.rule)
        if shown:
            render_judgments(view.judgments)
    with right:
        label_panel(cfg, dataset, rubric, tid)
