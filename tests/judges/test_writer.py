"""JudgmentWriter: answers reach the store within the flush interval, by state not by time.

The clock is a fake the test moves by hand, so "at least every half second" is checked as
what the store holds after each answer at given clock readings, never by sleeping.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from trajudge.judges import CachedResponse, Judgment, JudgmentWriter, ResponseCache
from trajudge.store import Store
from trajudge.trajectories import Trajectory


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _judgment(i: int, **kw: object) -> Judgment:
    fields: dict[str, object] = {
        "trajectory_id": f"t{i}",
        "other_id": None,
        "judge": "j",
        "rubric_id": "r",
        "rubric_version": "v1",
        "model": "m",
        "mode": "pointwise",
        "order": "ab",
        "sample": 0,
        "score": 4.0,
        "verdict": "pass",
        "config_sha256": "c" * 64,
    }
    fields.update(kw)
    return Judgment(**fields)  # type: ignore[arg-type]


@pytest.fixture
def store(db_url: str) -> Store:
    s = Store(db_url)
    s.import_dataset("ds", [Trajectory(id=f"t{i}", task_id="k", trial=i) for i in range(10)])
    return s


def _stored(store: Store) -> list[str]:
    return sorted(store.judgments_frame("ds")["trajectory_id"])


def test_answers_are_written_once_the_oldest_is_half_a_second_old(store: Store) -> None:
    clock = FakeClock()
    flushed: list[list[str]] = []
    writer = JudgmentWriter(
        store,
        "ds",
        clock=clock,
        on_flush=lambda js: flushed.append([j.trajectory_id for j in js]),
    )
    assert writer.interval_s == 0.5
    writer.add(_judgment(0))
    clock.now += 0.3
    writer.add(_judgment(1))
    clock.now += 0.19  # the oldest answer is 0.49 s old: still in memory
    writer.add(_judgment(2))
    assert _stored(store) == [] and writer.pending == 3 and writer.due_in() == pytest.approx(0.01)
    clock.now += 0.01  # 0.5 s: the next answer writes all four in one transaction
    writer.add(_judgment(3))
    assert _stored(store) == ["t0", "t1", "t2", "t3"] and writer.pending == 0
    assert flushed == [["t0", "t1", "t2", "t3"]]  # heard of only once stored
    # the interval starts again at the next answer, not at the last write
    clock.now += 5
    writer.add(_judgment(4))
    assert writer.pending == 1 and writer.due_in() == pytest.approx(0.5)
    writer.flush()
    assert _stored(store) == ["t0", "t1", "t2", "t3", "t4"] and writer.stored == 5


def test_a_full_batch_is_written_at_once(store: Store) -> None:
    clock = FakeClock()
    writer = JudgmentWriter(store, "ds", clock=clock, max_rows=3)
    for i in range(7):
        writer.add(_judgment(i))
    assert _stored(store) == ["t0", "t1", "t2", "t3", "t4", "t5"] and writer.pending == 1


def test_cache_entries_are_written_with_their_judgments(store: Store, tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.db")
    clock = FakeClock()
    writer = JudgmentWriter(store, "ds", clock=clock)
    response = CachedResponse({"score": 4}, '{"score": 4}', 100, 20, 0.0, 0.1)
    writer.add(_judgment(0), cache, ("k0", "m", response))
    writer.add(_judgment(1))  # a cache hit or an error: nothing to cache
    assert len(cache) == 0
    writer.flush()
    assert len(cache) == 1 and cache.get("k0") == response
    assert _stored(store) == ["t0", "t1"]


def test_a_failed_write_keeps_the_answers_for_the_next_flush(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = JudgmentWriter(store, "ds", clock=FakeClock())
    writer.add(_judgment(0))
    real = store.add_judgments

    def broken(dataset: str, rows: object) -> list[bool]:
        raise OSError("disk full")

    monkeypatch.setattr(store, "add_judgments", broken)
    with pytest.raises(OSError, match="disk full"):
        writer.flush()
    assert writer.pending == 1
    monkeypatch.setattr(store, "add_judgments", real)
    writer.flush()
    assert _stored(store) == ["t0"] and writer.pending == 0


def test_judgments_a_worker_stored_are_reported_and_cached_but_not_written_again(
    store: Store, tmp_path: Path
) -> None:
    """A Ray worker wrote t1 (``stored=True``): the flush writes t0 and t2 only, yet reports
    all three, and t1's cache entry is written like the others'."""
    cache = ResponseCache(tmp_path / "c.db")
    flushed: list[list[str]] = []
    writer = JudgmentWriter(
        store, "ds", on_flush=lambda js: flushed.append([j.trajectory_id for j in js])
    )
    entry = CachedResponse({"score": 4}, "{}", 1, 1, 0.0, 0.1)
    writer.add(_judgment(0))
    writer.add(_judgment(1, score=2.0), cache, ("k1", "m", entry), stored=True)
    writer.add(_judgment(2))
    writer.flush()
    assert flushed == [["t0", "t1", "t2"]] and writer.stored == 3
    assert _stored(store) == ["t0", "t2"]
    assert cache.get("k1") == entry
