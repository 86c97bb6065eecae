"""Dev / holdout by task id: stable, close to the share asked, and never splitting a task."""

from __future__ import annotations

import hashlib

import pytest
from evalset_helpers import case

from trajudge.evalset import assign_splits, split_of


def test_split_is_the_documented_hash_rule() -> None:
    # independent restatement of the docstring: u = first 8 bytes of sha256 / 2**64
    for task in ["0", "17", "book-flight", "ü-task"]:
        u = int(hashlib.sha256(f"trajudge:{task}".encode()).hexdigest()[:16], 16) / 2**64
        assert split_of(task) == ("dev" if u < 0.3 else "holdout")


def test_split_is_stable_and_independent_of_the_rest_of_the_set() -> None:
    ids = [f"task-{i}" for i in range(200)]
    first = [split_of(t) for t in ids]
    assert [split_of(t) for t in reversed(ids)] == first[::-1]
    assert [split_of(t) for t in ids] == first


@pytest.mark.parametrize("share", [0.1, 0.3, 0.5])
def test_share_is_within_tolerance_on_1000_ids(share: float) -> None:
    n_dev = sum(split_of(str(i), dev_share=share) == "dev" for i in range(1000))
    # binomial sd is at most sqrt(1000 * .25) ~ 16; 0.05 * 1000 = 50 is over 3 sd
    assert abs(n_dev / 1000 - share) < 0.05


def test_raising_the_share_only_moves_tasks_into_dev() -> None:
    ids = [str(i) for i in range(500)]
    dev_30 = {t for t in ids if split_of(t, 0.3) == "dev"}
    dev_50 = {t for t in ids if split_of(t, 0.5) == "dev"}
    assert dev_30 < dev_50
    assert {split_of(t, 0.0) for t in ids} == {"holdout"}
    assert {split_of(t, 1.0) for t in ids} == {"dev"}


def test_salt_draws_another_split() -> None:
    ids = [str(i) for i in range(300)]
    assert [split_of(t) for t in ids] != [split_of(t, salt="other") for t in ids]


def test_trials_of_a_task_never_split() -> None:
    cases = [case(f"t{i}", trial) for i in range(60) for trial in range(4)]
    for share in (0.3, 0.7):
        out = assign_splits(cases, dev_share=share)
        by_task: dict[str, set[str]] = {}
        for c in out:
            by_task.setdefault(c.task_id, set()).add(c.split)
        assert all(len(s) == 1 for s in by_task.values())
        assert {c.split for c in out} == {"dev", "holdout"}


def test_bad_share_is_refused() -> None:
    with pytest.raises(ValueError, match="dev_share"):
        split_of("a", dev_share=1.5)
