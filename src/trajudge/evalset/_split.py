"""Dev / holdout split by task id: deterministic, and never splitting a task's trials.

A case tuned on (dev) must not also be the case that proves the tuning worked (holdout). The
split hashes the task id, not the trajectory id, so every trial of a task lands on the same
side: otherwise a prompt tuned on trial 0 of a task would be "validated" on its trial 1.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from trajudge.evalset._case import EvalCase, Split
from trajudge.evalset._defaults import DEV_SHARE, SALT


def split_of(task_id: str, dev_share: float = DEV_SHARE, salt: str = SALT) -> Split:
    """``"dev"`` or ``"holdout"`` for a task, from a hash of ``salt`` and the task id.

    The first 8 bytes of ``sha256(f"{salt}:{task_id}")`` read as an integer and divided by
    2**64 give a number u, uniform on [0, 1); the task is ``dev`` when u < ``dev_share``. The
    answer never changes for a task, whatever else is in the set, and raising ``dev_share``
    only moves tasks from holdout to dev. Change ``salt`` to draw a different split.

    Examples
    --------
    >>> split_of("42") == split_of("42")
    True
    >>> split_of("42", dev_share=0.0), split_of("42", dev_share=1.0)
    ('holdout', 'dev')
    """
    if not 0 <= dev_share <= 1:
        raise ValueError(f"dev_share must be in [0, 1], got {dev_share}")
    digest = hashlib.sha256(f"{salt}:{task_id}".encode()).digest()
    u = int.from_bytes(digest[:8], "big") / 2**64
    return "dev" if u < dev_share else "holdout"


def assign_splits(
    cases: Iterable[EvalCase], *, dev_share: float = DEV_SHARE, salt: str = SALT
) -> list[EvalCase]:
    """Copies of ``cases`` with ``split`` set by :func:`split_of` on each task id."""
    return [c.model_copy(update={"split": split_of(c.task_id, dev_share, salt)}) for c in cases]
