"""Counts in words: "1 trajectory", "2 trajectories", shared by the CLI and the report."""

from __future__ import annotations

_IRREGULAR = {"trajectory": "trajectories", "judgment": "judgments", "was": "were", "has": "have"}


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and ``noun`` in the number ``n`` asks for.

    >>> counted(1, "trajectory"), counted(2, "trajectory"), counted(0, "task")
    ('1 trajectory', '2 trajectories', '0 tasks')
    >>> counted(1, "unstable task"), counted(3, "task spec")
    ('1 unstable task', '3 task specs')
    """
    if n == 1:
        return f"{n} {noun}"
    if plural is None:
        head, _, last = noun.rpartition(" ")
        many = _IRREGULAR.get(last, last + "s")
        plural = f"{head} {many}" if head else many
    return f"{n} {plural}"
