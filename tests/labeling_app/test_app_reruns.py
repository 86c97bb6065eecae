"""The label page under slow reruns: a message belongs to the item it is about, and a click
that arrives for an item no longer on screen changes nothing.

In a real browser a rerun can be interrupted by the next key press: the first rerun's
callbacks have run, the page is not yet redrawn, and the next rerun runs the next callback.
AppTest runs every script to its end, so these tests build the same session states: two
clicks in one rerun (both callbacks, one redraw), and a session that moved to another item
while the buttons on the page still belong to the previous one.
"""

from __future__ import annotations

from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Button
from test_app_pages import my_rows, run_page

from trajudge.labeling_app import _state as S
from trajudge.store import Store


def _button(at: AppTest, label: str) -> Button:
    return next(b for b in at.button if b.label == label)


def _messages(at: AppTest) -> list[str]:
    return [str(m.value) for kind in ("success", "warning", "info", "error") for m in at.get(kind)]


def _labeled_first_item(store_url: str) -> tuple[AppTest, str]:
    at = run_page("label", store_url)
    first = at.session_state[S.CURRENT]
    at.button(key="value-4").click().run()
    assert "Saved: 4 · reasonable" in _messages(at)
    return at, first


def _other_item(store: Store, *not_these: str) -> str:
    return next(t for t, _ in store.trajectory_keys("demo") if t not in not_these)


def test_saved_message_does_not_follow_to_the_next_item(store_url: str, store: Store) -> None:
    at = run_page("label", store_url)
    first = at.session_state[S.CURRENT]
    # a value key and Next in one rerun, as when Next interrupts the rerun of the value key
    at.button(key="value-4").click()
    _button(at, "Next").click()
    at.run()
    assert not at.exception
    second = at.session_state[S.CURRENT]
    assert second not in (None, first)
    assert [(r["trajectory_id"], r["value"]) for r in my_rows(store)] == [(first, 4.0)]
    assert not [m for m in _messages(at) if m.startswith("Saved:")], _messages(at)
    # back on the first item: its label, not a message that belonged to another screen
    _button(at, "Back").click().run()
    assert at.session_state[S.CURRENT] == first
    assert _messages(at) == ["Your label: 4 · reasonable"]


def test_message_disappears_when_another_item_is_shown(store_url: str) -> None:
    at, first = _labeled_first_item(store_url)
    _button(at, "Next").click().run()
    second = at.session_state[S.CURRENT]
    assert second != first and _messages(at) == []
    _button(at, "Next").click().run()
    assert _messages(at) == ["Give a label or skip this item first."]
    _button(at, "Back").click().run()
    assert at.session_state[S.CURRENT] == first
    assert _messages(at) == ["Your label: 4 · reasonable"]


def test_value_click_for_an_item_no_longer_on_screen_saves_nothing(
    store_url: str, store: Store
) -> None:
    at, first, second = _moved_on(store_url, store)
    at.button(key="value-2").click().run()
    assert not at.exception
    assert [(r["trajectory_id"], r["value"]) for r in my_rows(store)] == [(first, 4.0)]
    assert at.session_state[S.CURRENT] == second
    messages = _messages(at)
    assert not [m for m in messages if m.startswith("Saved:")], messages
    assert any(m.startswith("Not saved: that click was meant for another item") for m in messages)
    # the click redrawn for the item on screen saves there
    at.button(key="value-2").click().run()
    assert sorted((r["trajectory_id"], r["value"]) for r in my_rows(store)) == sorted(
        [(first, 4.0), (second, 2.0)]
    )
    assert "Saved: 2 · mostly wrong" in _messages(at)


def _moved_on(store_url: str, store: Store) -> tuple[AppTest, str, str]:
    """The first item labeled 4; Next's callback has moved the session to a second item,
    while the buttons drawn are still the first item's (the redraw has not happened)."""
    at, first = _labeled_first_item(store_url)
    second = _other_item(store, first)
    at.session_state[S.CURRENT] = second
    at.session_state[S.VISITED] = [first]
    return at, first, second


def test_second_next_for_the_same_item_does_not_skip_the_next_one(
    store_url: str, store: Store
) -> None:
    at, first, second = _moved_on(store_url, store)
    _button(at, "Next").click().run()
    assert not at.exception
    assert at.session_state[S.CURRENT] == second  # not a third item, the second unseen
    assert at.session_state[S.VISITED] == [first]


def test_skip_for_an_item_no_longer_on_screen_keeps_its_label(store_url: str, store: Store) -> None:
    at, first, second = _moved_on(store_url, store)
    _button(at, "Skip").click().run()
    assert not at.exception
    rows = my_rows(store)
    assert [(r["trajectory_id"], r["value"], r["skipped"]) for r in rows] == [(first, 4.0, False)]
    assert at.session_state[S.CURRENT] == second
