"""The labeling app on a store that fails under it: a plain message (no SQL text, no server
path), and nothing "saved". The whole app file runs under AppTest; the store file is really
deleted between two clicks, as a disk cleanup or a mistaken ``rm`` would."""

from __future__ import annotations

from pathlib import Path

import pytest
from labeling_helpers import DATASET, sign_in_as
from streamlit.testing.v1 import AppTest

from trajudge.labeling_app import AppConfig, app_script
from trajudge.labeling_app import _state as S
from trajudge.labeling_app._serve import streamlit_command
from trajudge.store import Store


def _sqlite_only(store_url: str) -> Path:
    if not store_url.startswith("sqlite:///"):
        pytest.skip("the file of a SQLite store is deleted")
    return Path(store_url.removeprefix("sqlite:///"))


def test_a_label_given_after_the_store_was_deleted_is_refused_in_plain_words(
    store_url: str,
) -> None:
    path = _sqlite_only(store_url)
    at = AppTest.from_file(str(app_script()), default_timeout=60)
    at.session_state[S.CONFIG] = AppConfig(db_url=store_url, dataset=DATASET, overlap=1.0)
    sign_in_as(at, store_url, "ann")
    at.run()
    assert not at.exception
    at.button(key="value-4").click().run()  # saved while the store is there
    assert any(s.value.startswith("Saved: 4") for s in at.success)
    for name in (path.name, f"{path.name}-wal", f"{path.name}-shm"):
        (path.parent / name).unlink(missing_ok=True)
    next(b for b in at.button if b.label == "Next").click().run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1, errors
    (error,) = errors
    assert error.startswith("The label store failed: the store file was deleted.")
    assert "NOT saved" in error
    for leak in (str(path.parent), "SELECT", "INSERT", "sqlite", "Traceback"):
        assert leak not in error
    assert not path.exists()  # no empty store made in its place


def test_a_click_on_a_deleted_store_saves_nothing_and_says_so(store_url: str) -> None:
    path = _sqlite_only(store_url)
    at = AppTest.from_file(str(app_script()), default_timeout=60)
    at.session_state[S.CONFIG] = AppConfig(db_url=store_url, dataset=DATASET, overlap=1.0)
    sign_in_as(at, store_url, "ann")
    at.run()
    copy = path.read_bytes()  # the store as it was, to look into afterwards
    for name in (path.name, f"{path.name}-wal", f"{path.name}-shm"):
        (path.parent / name).unlink(missing_ok=True)
    at.button(key="value-5").click().run()
    assert not at.exception
    assert not [s.value for s in at.success if s.value.startswith("Saved")]
    (error,) = [e.value for e in at.error]
    assert error.startswith("The label store failed: the store file was deleted.")
    path.write_bytes(copy)
    assert Store(store_url).labels_frame(DATASET).empty  # nothing saved anywhere


def test_the_server_shows_no_error_details() -> None:
    command = streamlit_command()
    assert command[command.index("--client.showErrorDetails") + 1] == "type"
