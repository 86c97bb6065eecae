"""How far an annotator is through the queue, and how many items anyone labeled: counted from
who labeled which item (never a value), and moved on by each save without counting again."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from trajudge.labeling_app.queue._queue import Queue
from trajudge.store import Store


@dataclass(frozen=True)
class Progress:
    """An annotator's labels and skips among the items assigned to them, and how many items
    anyone labeled.

    ``mine_assigned`` counts the queue's items this annotator is shown or has answered: a
    queue item another annotator labeled (not an overlap item) is never shown, so it is not
    assigned. A skip is an answer but not a label: the queue is done when labels and skips
    together reach the assigned count.
    """

    mine_labeled: int
    mine_skipped: int
    mine_assigned: int
    items_labeled: int
    items_total: int
    queue_size: int  # len(queue) when counted: a queue built again is counted again

    @property
    def mine_answered(self) -> int:
        return self.mine_labeled + self.mine_skipped

    @property
    def mine_fraction(self) -> float:
        if not self.mine_assigned:
            return 1.0
        return min(1.0, self.mine_answered / self.mine_assigned)

    @property
    def everyone_fraction(self) -> float:
        return min(1.0, self.items_labeled / self.items_total) if self.items_total else 1.0

    @property
    def mine_text(self) -> str:
        """``You: 3 / 10 labeled, 1 skipped`` (and ``your queue is done`` once it is)."""
        text = f"You: {self.mine_labeled} / {self.mine_assigned} labeled"
        if self.mine_skipped:
            text += f", {self.mine_skipped} skipped"
        if self.mine_assigned and self.mine_answered >= self.mine_assigned:
            text += " · your queue is done"
        return text


def queue_progress(queue: Queue, marks: Iterable[tuple[str, str, bool]], n_items: int) -> Progress:
    """The progress of ``queue``'s annotator from every human label's ``(key, annotator,
    skipped)`` (adjudications left out), as :func:`next_open` decides what is shown."""
    me = queue.annotator
    mine: dict[str, bool] = {}
    others: Counter[str] = Counter()
    labeled: set[str] = set()
    for key, who, skipped in marks:
        if who == me:
            mine[key] = skipped
        elif not skipped:
            others[key] += 1
        if not skipped:
            labeled.add(key)
    n_labeled = n_skipped = assigned = 0
    for key, shared in zip(queue.ids, queue.overlap, strict=True):
        if key in mine:
            assigned += 1
            n_skipped += mine[key]
            n_labeled += not mine[key]
        elif shared or others[key] < queue.reviewers:
            assigned += 1
    return Progress(n_labeled, n_skipped, assigned, len(labeled), n_items, len(queue))


def progress(store: Store, dataset: str, rubric_id: str, queue: Queue, n_items: int) -> Progress:
    """The annotator's progress through the queue and the share of items anyone labeled."""
    return queue_progress(queue, store.label_marks(dataset, rubric_id), n_items)


def progress_after_save(
    before: Progress, rows: Sequence[Mapping[str, Any]], annotator: str, *, skipped: bool
) -> Progress:
    """The progress after ``annotator`` saved a label (``skipped``: a skip) on one item of
    the queue, from the progress before and the item's label rows before the save
    (``Store.item_labels`` of the item under the rubric), without counting again: what
    :func:`progress` would return.

    Only non-adjudication human labels count, as in :func:`progress`. Labels saved meanwhile
    by others (or by the same annotator in another session) are not seen here: the page
    counts again on each full run.
    """
    human = [r for r in rows if r["source"] == "human" and not r["adjudication"]]
    mine = next((r for r in human if r["annotator"] == annotator), None)
    n_labeled, n_skipped = before.mine_labeled, before.mine_skipped
    if mine is not None:  # an answer changed: take the old one back
        n_labeled -= not mine["skipped"]
        n_skipped -= bool(mine["skipped"])
    n_labeled += not skipped
    n_skipped += skipped
    others = any(not r["skipped"] for r in human if r["annotator"] != annotator)
    had = others or (mine is not None and not mine["skipped"])
    has = others or not skipped
    return replace(
        before,
        mine_labeled=n_labeled,
        mine_skipped=n_skipped,
        items_labeled=before.items_labeled + int(has) - int(had),
    )
