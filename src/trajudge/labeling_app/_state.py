"""Session-state keys (the only place they are spelled) and ``init_state()``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from trajudge.labeling_app._config import AppConfig

CONFIG = "cfg"  # AppConfig of this server (from the environment `trajudge label` sets)
ANNOTATOR = "annotator"  # the signed-in annotator's name, or None
DATASET = "dataset"  # the dataset being labeled, or None until chosen
CURRENT = "current_id"  # trajectory id on screen, or None to fetch the next one
CURSOR = "queue_cursor"  # queue position of the first item that may still be open
VISITED = "visited"  # ids shown before the current one (for Back)
SHOW_JUDGES = "show_judges"  # judge verdicts visible (off = blind labeling)
FLASH = "flash"  # a message about one item: (trajectory id, kind, text) or None
SHOW_CRITERIA = "show_criteria"  # the criteria widgets drawn (off: only the overall value)
# Kept between the label page's fragment reruns, reset by each full run of the page:
PROGRESS = "progress"  # Progress counted on the last full run, moved on by each save; or None
ITEM = "item_view"  # ((trajectory id, judges shown), ItemView) of the item on screen, or None
RECENT = "recent_labels"  # ids the annotator labeled, the latest first (at most 200), or None
RECENT_OPEN = "recent_open"  # the sidebar's "Your recent labels" expander is open


def _defaults() -> dict[str, Callable[[], Any]]:
    return {
        CONFIG: AppConfig.from_env,
        ANNOTATOR: lambda: None,
        DATASET: lambda: None,
        CURRENT: lambda: None,
        CURSOR: lambda: 0,
        VISITED: list,
        SHOW_JUDGES: lambda: None,
        FLASH: lambda: None,
        SHOW_CRITERIA: lambda: False,
        PROGRESS: lambda: None,
        ITEM: lambda: None,
        RECENT: lambda: None,
    }


def init_state() -> None:
    """Fill every missing key with a fresh value for this session."""
    ss = st.session_state
    for key, make in _defaults().items():
        if key not in ss:
            ss[key] = make()
    cfg: AppConfig = ss[CONFIG]
    if ss[SHOW_JUDGES] is None:
        ss[SHOW_JUDGES] = cfg.show_judges
    if ss[DATASET] is None and cfg.dataset:
        ss[DATASET] = cfg.dataset


def show_item(trajectory_id: str | None) -> None:
    """Put an item on screen (None: no item). A message about another item is dropped.

    Every change of the item on screen goes through here, so a message never outlives its
    item, whatever order a slow or interrupted rerun runs the callbacks in.
    """
    ss = st.session_state
    flash = ss.get(FLASH)
    if flash is not None and flash[0] != trajectory_id:
        ss[FLASH] = None
    ss[CURRENT] = trajectory_id


def set_flash(trajectory_id: str, kind: str, text: str) -> None:
    """Say something about one item (shown while that item is on screen)."""
    st.session_state[FLASH] = (trajectory_id, kind, text)


def flash_for(trajectory_id: str) -> tuple[str, str] | None:
    """``(kind, text)`` of the message about this item, or None."""
    flash = st.session_state.get(FLASH)
    if flash is None or flash[0] != trajectory_id:
        return None
    return flash[1], flash[2]


def reset_queue_position() -> None:
    """Forget the item on screen and the queue position (after sign-in or a dataset change)."""
    ss = st.session_state
    show_item(None)
    ss[CURSOR] = 0
    ss[VISITED] = []


def start_full_run() -> None:
    """A full run of a label page: count the progress and read the recent labels and the
    item on screen again (a fragment run keeps them)."""
    ss = st.session_state
    ss[PROGRESS] = None
    ss[RECENT] = None
    ss[ITEM] = None


def widget_key(kind: str, trajectory_id: str, extra: str = "") -> str:
    """The key of a per-item widget (note, unsure, criterion), unique per trajectory."""
    return f"w:{kind}:{extra}:{trajectory_id}"
