"""Aligned judges in the store: every alignment a new version, the same content never twice."""

from __future__ import annotations

import pytest

from trajudge.core import InputError
from trajudge.store import Store


def _record(name: str = "j-aligned", cut: float = 3.5, dataset: str = "d") -> dict[str, object]:
    return {
        "name": name,
        "dataset": dataset,
        "base_judge": "j",
        "config_sha256": "c" * 64,
        "rule": {"method": "threshold", "feature": "score", "threshold": cut},
    }


def test_versions_count_up_and_identical_content_is_not_saved_twice(db_url: str) -> None:
    store = Store(db_url)
    assert store.aligned_judge("j-aligned") is None
    assert store.save_aligned_judge(_record()) == 1
    assert store.save_aligned_judge(_record()) == 1  # same alignment again: no new version
    assert store.save_aligned_judge(_record(cut=4.0)) == 2
    assert store.save_aligned_judge(_record()) == 3  # back to the first content: a new version
    latest = store.aligned_judge("j-aligned")
    assert latest is not None and latest["version"] == 3 and latest["rule"]["threshold"] == 3.5
    second = store.aligned_judge("j-aligned", version=2)
    assert second is not None and second["rule"]["threshold"] == 4.0
    assert second["created_at"] <= latest["created_at"]


def test_latest_of_each_name_and_by_dataset(db_url: str) -> None:
    store = Store(db_url)
    store.save_aligned_judge(_record("a", dataset="d1"))
    store.save_aligned_judge(_record("a", cut=2.0, dataset="d2"))
    store.save_aligned_judge(_record("b", dataset="d1"))
    assert [(r["name"], r["version"]) for r in store.aligned_judges()] == [("a", 2), ("b", 1)]
    # "a" was last fitted on d2: its latest version is not a d1 judge any more
    assert [r["name"] for r in store.aligned_judges("d1")] == ["b"]
    assert [r["name"] for r in store.aligned_judges("d2")] == ["a"]


def test_an_unknown_name_is_one_clear_error(db_url: str) -> None:
    store = Store(db_url)
    store.save_aligned_judge(_record("a"))
    with pytest.raises(InputError, match=r"no aligned judge 'x' \(known: a\); run trajudge align"):
        store.require_aligned_judge("x")
