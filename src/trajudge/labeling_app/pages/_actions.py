"""What the label page's clicks do: save a label, move to the next item, go back, open one.

Every callback about an item carries the item of the run that drew its button and acts only
while that item is still on screen (a slow rerun can deliver a click meant for the item
before). Each save also moves on the progress and the recent-labels list the page keeps.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import streamlit as st

from trajudge.judges import Rubric
from trajudge.labeling_app import _state as S
from trajudge.labeling_app._access import own_label
from trajudge.labeling_app._config import AppConfig
from trajudge.labeling_app._data import get_pool, get_queue, get_store
from trajudge.labeling_app._widgets import label_value, level_text
from trajudge.labeling_app.auth._session import require_account
from trajudge.labeling_app.queue._progress import progress_after_save
from trajudge.labeling_app.queue._queue import Queue, next_item
from trajudge.labeling_app.queue._strategy import design_state, queue_choice

RECENT_MAX = 200  # items in "Your recent labels"
# how long the item put on screen stays reserved for its annotator (Store.reserve): two
# annotators are not handed the same non-overlap item at once; a skip lets it go at once
RESERVE_S = 600.0
QUEUE_SEEN = "queue_seen"  # (strategy, length) of the queue the cursor is a position in


def annotator_queue(cfg: AppConfig, dataset: str, rubric: Rubric, me: str) -> Queue:
    """The annotator's queue under the strategy in force now (the lead's choice, read from
    the store on every call, else ``--strategy``)."""
    store = get_store(cfg.db_url)
    choice = queue_choice(store, cfg, dataset, rubric.id)
    pool = get_pool(cfg.db_url, dataset, rubric.id)
    return get_queue(
        cfg.db_url,
        dataset,
        cfg.rubric,
        me,
        choice.strategy,
        cfg.overlap,
        pool,
        budget=choice.budget,
        reviewers=cfg.reviewers,
        learn=choice.learn,
        design=design_state(store, dataset, rubric, choice),
    )


def follow_queue(queue: Queue) -> bool:
    """Start from the top of a queue that changed (another strategy, the fitted draws of an
    active design, another pool): the position in the old one means nothing in it. The
    item on screen stays until it is answered; the next one comes from the new queue.
    Whether it changed since this session last looked."""
    ss = st.session_state
    key = (queue.strategy, len(queue))
    if ss.get(QUEUE_SEEN) == key:
        return False
    ss[QUEUE_SEEN] = key
    ss[S.CURSOR] = 0
    return True


def advance_in(queue: Queue, find: Callable[[int, frozenset[str]], tuple[int, str] | None]) -> None:
    """Put the next open entry of ``queue`` on screen (None when the queue is done), the one
    on screen remembered for Back. ``find(start, exclude)`` is the queue scan (items or
    pairs): the first open ``(position, id)`` at or after ``start``, ids in ``exclude`` left
    out."""
    ss = st.session_state
    current = ss[S.CURRENT]
    if current is not None:
        ss[S.VISITED] = [*ss[S.VISITED], current][-200:]
    exclude = frozenset([current]) if current is not None else frozenset()
    found = find(ss[S.CURSOR], exclude)
    if found is None:
        S.show_item(None)
        ss[S.CURSOR] = len(queue)
    else:
        pos, key = found
        S.show_item(key)
        # the entry on screen stays open until labeled: only move the cursor up to it
        ss[S.CURSOR] = pos


def advance(cfg: AppConfig, dataset: str, rubric: Rubric, me: str) -> None:
    """Put the next open item of the queue on screen (None when the queue is done)."""
    store = get_store(cfg.db_url)
    queue = annotator_queue(cfg, dataset, rubric, me)
    follow_queue(queue)
    advance_in(
        queue,
        lambda start, exclude: next_item(
            store, dataset, rubric.id, queue, start=start, exclude=exclude, reserve_s=RESERVE_S
        ),
    )


def after_save(
    key: str, before: list[dict[str, Any]], me: str, *, skipped: bool, text: str
) -> None:
    """What every save moves on in the session: the progress kept between fragment runs (from
    the labels of ``key`` read before the save), the recent-labels list, the message."""
    ss = st.session_state
    if ss[S.PROGRESS] is not None:
        ss[S.PROGRESS] = progress_after_save(ss[S.PROGRESS], before, me, skipped=skipped)
    if ss[S.RECENT] is not None:
        ss[S.RECENT] = [key, *(k for k in ss[S.RECENT] if k != key)][:RECENT_MAX]
    S.set_flash(key, "success", f"Saved: {text}")


def _criteria_values(
    rubric: Rubric, tid: str, before: list[dict[str, Any]], me: str
) -> dict[str, Any] | None:
    """The criteria to save: the widgets' values while they are drawn, else the criteria
    already stored with the annotator's label (hidden widgets hold no values)."""
    ss = st.session_state
    if ss.get(S.SHOW_CRITERIA):  # a widget's key: gone for a run that did not draw it
        keys = {c.id: S.widget_key("crit", tid, c.id) for c in rubric.criteria}
        return {cid: ss[k] for cid, k in keys.items() if ss.get(k) is not None} or None
    mine = next((r for r in before if r["annotator"] == me and not r["adjudication"]), None)
    stored: dict[str, Any] | None = (
        json.loads(mine["criteria"]) if mine is not None and mine["criteria"] else None
    )
    return stored


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
    me = require_account(cfg).name  # checked against the store: a disabled account saves nothing
    note = (ss.get(S.widget_key("note", tid)) or "").strip() or None
    store = get_store(cfg.db_url)
    before = store.item_labels(dataset, tid, rubric.id)
    store.save_label(
        dataset,
        tid,
        rubric.id,
        me,
        None if isinstance(value, str) else value,
        category=value if isinstance(value, str) else None,
        criteria=_criteria_values(rubric, tid, before, me),
        note=note,
        unsure=bool(ss.get(S.widget_key("unsure", tid))),
        skipped=skipped,
    )
    after_save(tid, before, me, skipped=skipped, text=level_text(rubric, value))


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


@S.guarded
def on_value(cfg: AppConfig, dataset: str, rubric: Rubric, tid: str, value: int | str) -> None:
    if _on_screen(tid):  # a number (binary, ordinal) or a category name (nominal)
        _save(cfg, dataset, rubric, tid, value if isinstance(value, str) else float(value))


@S.guarded
def on_details(cfg: AppConfig, dataset: str, rubric: Rubric, tid: str) -> None:
    """A note, unsure flag or criterion changed: re-save when the item already has a value."""
    store = get_store(cfg.db_url)
    mine = own_label(store, dataset, tid, rubric.id, st.session_state[S.ANNOTATOR])
    if mine is not None and not mine["skipped"]:
        _save(cfg, dataset, rubric, tid, label_value(mine))


@S.guarded
def on_skip(cfg: AppConfig, dataset: str, rubric: Rubric, tid: str) -> None:
    if not _on_screen(tid):
        return
    _save(cfg, dataset, rubric, tid, None, skipped=True)
    get_store(cfg.db_url).release_reservations(st.session_state[S.ANNOTATOR], tid)
    advance(cfg, dataset, rubric, st.session_state[S.ANNOTATOR])


def next_if_labeled(
    key: str, labeled: Callable[[], bool], move: Callable[[], None], *, noun: str
) -> None:
    """Next: move on only from the entry (item or pair) on screen, once it has a label or a
    skip."""
    if not _on_screen(key, warn=False):  # a second Next for the same entry: already moved on
        return
    if not labeled():
        S.set_flash(key, "warning", f"Give a label or skip this {noun} first.")
        return
    move()


@S.guarded
def on_next(cfg: AppConfig, dataset: str, rubric: Rubric, tid: str) -> None:
    me = st.session_state[S.ANNOTATOR]
    next_if_labeled(
        tid,
        lambda: own_label(get_store(cfg.db_url), dataset, tid, rubric.id, me) is not None,
        lambda: advance(cfg, dataset, rubric, me),
        noun="item",
    )


def on_back() -> None:
    ss = st.session_state
    if ss[S.VISITED]:
        S.show_item(ss[S.VISITED][-1])
        ss[S.VISITED] = ss[S.VISITED][:-1]


def on_open(tid_key: str) -> None:
    ss = st.session_state
    target = ss.get(tid_key)
    if target and target != ss[S.CURRENT]:
        if ss[S.CURRENT] is not None:
            ss[S.VISITED] = [*ss[S.VISITED], ss[S.CURRENT]][-200:]
        S.show_item(target)
