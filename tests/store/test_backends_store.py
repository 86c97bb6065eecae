"""Pull cursors and export marks (schema version 9) on SQLite and PostgreSQL: the cursor moves
only with the trajectories it covers, in one transaction."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from trajudge.core import InputError
from trajudge.store import Store
from trajudge.trajectories import Trajectory

SOURCE = "phoenix+http://127.0.0.1:6006/airline"


def test_the_cursor_is_saved_with_its_trajectories_and_moves(db_url: str) -> None:
    store = Store(db_url)
    assert store.pull_cursor("ds", SOURCE) is None
    store.import_dataset("ds", [Trajectory(id="a", task_id="a")], cursor=(SOURCE, "U3Bhbjo0"))
    assert store.pull_cursor("ds", SOURCE) == "U3Bhbjo0"
    store.import_dataset("ds", [Trajectory(id="b", task_id="b")], cursor=(SOURCE, "U3Bhbjo5"))
    assert store.pull_cursor("ds", SOURCE) == "U3Bhbjo5"
    # another dataset, or another source, has a cursor of its own
    assert store.pull_cursor("other", SOURCE) is None
    assert store.pull_cursor("ds", SOURCE + "?until=x") is None
    store.close()


def test_a_failed_import_leaves_the_cursor_where_it_was(db_url: str) -> None:
    store = Store(db_url)
    store.import_dataset("ds", [Trajectory(id="a", task_id="a")], cursor=(SOURCE, "first"))

    def broken() -> Iterator[Trajectory]:
        yield Trajectory(id="b", task_id="b")
        raise InputError(SOURCE, reason="a page failed")

    with pytest.raises(InputError):
        store.import_dataset("ds", broken(), cursor=(SOURCE, "second"))
    assert store.pull_cursor("ds", SOURCE) == "first"
    assert store.count_trajectories("ds") == 1
    store.close()


def test_export_marks_record_what_a_target_accepted(db_url: str) -> None:
    store = Store(db_url)
    store.import_dataset("ds", [Trajectory(id="a", task_id="a")])
    target = "otlp+http://127.0.0.1:4318"
    assert store.export_marks(target, "ds") == {}
    store.mark_exported(target, "ds", {"judgment:1": "h1", "label:2": "h2"})
    store.mark_exported(target, "ds", {"judgment:1": "h1b"})  # changed and sent again
    assert store.export_marks(target, "ds") == {"judgment:1": "h1b", "label:2": "h2"}
    assert store.export_marks("otlp-file:x", "ds") == {}
    store.close()
