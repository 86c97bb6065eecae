"""What the pair page's clicks do: save a pair label mapped back to the original numbering,
move to the next pair, skip. Back and Open are the label page's own (they only move
``S.CURRENT``, which holds the pair's key on this page).

As on the label page, every callback carries the pair of the run that drew its button and
acts only while that pair is still on screen.
"""

from __future__ import annotations

import streamlit as st

from trajudge.judges import Rubric
from trajudge.labeling_app import _state as S
from trajudge.labeling_app._access import own_pair_label
from trajudge.labeling_app._config import AppConfig
from trajudge.labeling_app._data import get_pair_pool, get_pair_queue, get_store
from trajudge.labeling_app.auth._session import require_account
from trajudge.labeling_app.pages._actions import (
    RESERVE_S,
    _on_screen,
    advance_in,
    after_save,
    follow_queue,
    next_if_labeled,
)
from trajudge.labeling_app.queue._pairs import (
    Side,
    left_id,
    next_pair,
    pair_of,
    shown_side,
    stored_category,
)
from trajudge.labeling_app.queue._queue import Queue
from trajudge.labeling_app.queue._strategy import queue_choice

# what each scale value of a pairwise rubric means on the screen: A is the left side
SCREEN_SIDE: dict[str, Side] = {"A": "left", "B": "right", "tie": "tie"}
SIDE_TEXT: dict[Side, str] = {"left": "A · left better", "right": "B · right better", "tie": "tie"}


def pair_queue(cfg: AppConfig, dataset: str, rubric: Rubric, me: str) -> Queue:
    pool = get_pair_pool(cfg.db_url, dataset, rubric.id)
    # the strategy in force now: the lead's choice, else --strategy
    choice = queue_choice(get_store(cfg.db_url), cfg, dataset, rubric.id)
    return get_pair_queue(
        cfg.db_url,
        dataset,
        rubric.id,
        cfg.max_pairs,
        me,
        choice.strategy,
        cfg.overlap,
        pool,
        cfg.reviewers,
    )


def advance_pair(cfg: AppConfig, dataset: str, rubric: Rubric, me: str) -> None:
    """Put the next open pair of the queue on screen (None when the queue is done)."""
    store = get_store(cfg.db_url)
    queue = pair_queue(cfg, dataset, rubric, me)
    follow_queue(queue)
    advance_in(
        queue,
        lambda start, exclude: next_pair(
            store, dataset, rubric.id, queue, start=start, exclude=exclude, reserve_s=RESERVE_S
        ),
    )


def _save_pair(cfg: AppConfig, dataset: str, rubric: Rubric, key: str, side: Side | None) -> None:
    """Store the annotator's choice (None: a skip) in the original numbering, with the side
    this annotator sees on the left."""
    ss = st.session_state
    me = require_account(cfg).name  # checked against the store: a disabled account saves nothing
    a, b = pair_of(key)
    left = left_id(me, a, b)
    note = (ss.get(S.widget_key("pnote", key)) or "").strip() or None
    store = get_store(cfg.db_url)
    before = store.pair_item_labels(dataset, a, b, rubric.id)
    store.save_pair_label(
        dataset,
        a,
        b,
        rubric.id,
        me,
        None if side is None else stored_category(side, left, a, b),
        left_id=left,
        note=note,
        unsure=bool(ss.get(S.widget_key("punsure", key))),
        skipped=side is None,
    )
    text = "skipped" if side is None else SIDE_TEXT[side]
    after_save(key, before, me, skipped=side is None, text=text)


@S.guarded
def on_pair_value(cfg: AppConfig, dataset: str, rubric: Rubric, key: str, side: Side) -> None:
    if _on_screen(key):
        _save_pair(cfg, dataset, rubric, key, side)


@S.guarded
def on_pair_details(cfg: AppConfig, dataset: str, rubric: Rubric, key: str) -> None:
    """The note or the unsure flag changed: re-save when the pair already has a label."""
    me = st.session_state[S.ANNOTATOR]
    a, b = pair_of(key)
    mine = own_pair_label(get_store(cfg.db_url), dataset, (a, b), rubric.id, me)
    if mine is not None and not mine["skipped"]:
        # the stored category read back in this annotator's layout, saved again unchanged
        side = shown_side(str(mine["category"]), left_id(me, a, b), a, b)
        if side is not None:
            _save_pair(cfg, dataset, rubric, key, side)


@S.guarded
def on_pair_skip(cfg: AppConfig, dataset: str, rubric: Rubric, key: str) -> None:
    if not _on_screen(key):
        return
    _save_pair(cfg, dataset, rubric, key, None)
    get_store(cfg.db_url).release_reservations(st.session_state[S.ANNOTATOR], key)
    advance_pair(cfg, dataset, rubric, st.session_state[S.ANNOTATOR])


@S.guarded
def on_pair_next(cfg: AppConfig, dataset: str, rubric: Rubric, key: str) -> None:
    me = st.session_state[S.ANNOTATOR]
    store = get_store(cfg.db_url)
    next_if_labeled(
        key,
        lambda: own_pair_label(store, dataset, pair_of(key), rubric.id, me) is not None,
        lambda: advance_pair(cfg, dataset, rubric, me),
        noun="pair",
    )
