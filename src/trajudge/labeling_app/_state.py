"""Session-state keys (the only place they are spelled) and ``init_state()``."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ParamSpec

import streamlit as st

from trajudge.labeling_app._config import AppConfig
from trajudge.store._faults import check_fault_exit

P = ParamSpec("P")

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
STORE_FAULT = "store_fault"  # what failed when a click's callback met a failing store, or None
_FAULT_SHOWN = "store_fault_shown"  # the fault already shown in the run under way, or None


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


def store_fault_message(fault: str) -> str:
    """What the app says when the store fails: plain words, no SQL text, no server path."""
    return (
        f"The label store failed: {fault}. Nothing can be saved until it is fixed: an answer "
        "given now is NOT saved; the labels saved before are kept. Tell whoever runs "
        "trajudge label."
    )


class SignedOut(PermissionError):
    """The session is not (or no longer) signed in: the click saves nothing."""


def guarded(callback: Callable[P, None]) -> Callable[P, None]:
    """A click's callback that, when the store fails, records the fault for the page to show
    (:data:`STORE_FAULT`) instead of Streamlit's error box; Streamlit runs callbacks before
    the page, outside the page's own error handling. A session that ended meanwhile
    (:class:`SignedOut`) stops the callback before it saves; the run that follows shows the
    sign-in page with the reason."""

    @functools.wraps(callback)
    def run(*args: P.args, **kwargs: P.kwargs) -> None:
        try:
            callback(*args, **kwargs)
        except SignedOut:
            return
        except Exception as exc:
            fault = check_fault_exit(exc)
            if fault is None:
                raise
            st.session_state[STORE_FAULT] = fault.fault

    return run


def shows_store_faults(body: Callable[P, None]) -> Callable[P, None]:
    """A page or fragment body that shows a store fault in plain words: the one a click's
    callback left (:func:`guarded`), or one the body itself meets. A fragment needs it as
    well as the app's entry file, because a click in a fragment reruns only the fragment."""

    @functools.wraps(body)
    def run(*args: P.args, **kwargs: P.kwargs) -> None:
        ss = st.session_state
        outer = ss.get(_FAULT_SHOWN)  # said by the entry file in this run (a fragment inside)
        shown = ss.pop(STORE_FAULT, None)
        if shown:
            st.error(store_fault_message(shown))
        if outer is None:
            ss[_FAULT_SHOWN] = shown
        try:
            body(*args, **kwargs)
        except Exception as exc:  # Streamlit's rerun/stop signals are BaseExceptions: they pass
            found = check_fault_exit(exc)
            if found is None:
                raise
            if found.fault not in (shown, outer):  # a click's fault met again: said once
                st.error(store_fault_message(found.fault))
        finally:
            if outer is None:
                ss[_FAULT_SHOWN] = None

    return run
