"""Batched writes of judgments (and response-cache entries) as they complete.

One transaction per judgment made the store's commit the cost of a judgment; one transaction
at the end would lose a whole run to a kill. :class:`JudgmentWriter` keeps the answers in
memory for at most ``interval_s`` (0.5 s by default) and writes them in one transaction:

- when the oldest pending answer is ``interval_s`` old: checked on every :meth:`add`, and by
  :meth:`run_timer` (a task the batch runs beside its calls) when no answer comes;
- when ``max_rows`` answers are pending (a cached re-run resolves hundreds at once);
- on :meth:`flush` at the end of a batch, and when it is cancelled or fails.

So a killed run loses at most the calls in flight and the answers of the last ``interval_s``;
a cancelled one (Ctrl-C) loses only the calls in flight. ``on_flush`` hears of judgments only
once they are stored.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from trajudge.judges.calls._cache import CachedResponse, ResponseCache
from trajudge.judges.calls._judgment import Judgment
from trajudge.store import Store

#: Longest time an answer waits in memory before it is written (seconds).
FLUSH_INTERVAL_S = 0.5
#: Most answers written in one transaction.
FLUSH_MAX_ROWS = 256


@dataclass
class _Pending:
    judgments: list[Judgment] = field(default_factory=list)
    elsewhere: set[int] = field(default_factory=set)  # indices already stored by a worker
    cache: dict[
        int,
        tuple[ResponseCache, list[tuple[str, str, CachedResponse]], list[tuple[str, str]]],
    ] = field(default_factory=dict)
    since: float = 0.0


class JudgmentWriter:
    """Write judgments of ``dataset`` in small batched transactions (see the module docstring).

    ``clock`` is ``time.monotonic`` unless a test gives its own; ``on_flush`` is called after
    each write with the judgments just stored, in the order they were added.
    """

    def __init__(
        self,
        store: Store,
        dataset: str,
        *,
        interval_s: float = FLUSH_INTERVAL_S,
        max_rows: int = FLUSH_MAX_ROWS,
        on_flush: Callable[[Sequence[Judgment]], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.dataset = dataset
        self.interval_s = interval_s
        self.max_rows = max(1, max_rows)
        self.on_flush = on_flush
        self.clock = clock
        self.stored = 0
        self._pending = _Pending()
        self._wake: asyncio.Event | None = None

    @property
    def pending(self) -> int:
        """Answers not written yet."""
        return len(self._pending.judgments)

    def add(
        self,
        judgment: Judgment,
        cache: ResponseCache | None = None,
        entry: tuple[str, str, CachedResponse] | None = None,
        link: tuple[str, str] | None = None,
        *,
        stored: bool = False,
    ) -> None:
        """Queue ``judgment`` (and, for ``cache``, the ``entry`` = (key, model, response) and
        the ``link`` = (input key, request key)); writes the batch at once when it is due.
        ``stored``: the judgment is already in the store (a Ray worker wrote it): only its
        cache entry is written, and ``on_flush`` hears of it with the others."""
        p = self._pending
        if not p.judgments:
            p.since = self.clock()
            if self._wake is not None:
                self._wake.set()
        if stored:
            p.elsewhere.add(len(p.judgments))
        p.judgments.append(judgment)
        if cache is not None and (entry is not None or link is not None):
            _, entries, links = p.cache.setdefault(id(cache), (cache, [], []))
            if entry is not None:
                entries.append(entry)
            if link is not None:
                links.append(link)
        if len(p.judgments) >= self.max_rows or self.clock() - p.since >= self.interval_s:
            self.flush()

    def due_in(self) -> float | None:
        """Seconds until the pending answers must be written (None: nothing pending)."""
        if not self._pending.judgments:
            return None
        return max(0.0, self._pending.since + self.interval_s - self.clock())

    def flush(self) -> None:
        """Write every pending answer now: the judgments in one store transaction, then the
        cache entries (a judgment stored without its cache entry only costs a call later)."""
        p = self._pending
        if not p.judgments:
            return
        rows = [j.to_row() for i, j in enumerate(p.judgments) if i not in p.elsewhere]
        if rows:
            self.store.add_judgments(self.dataset, rows)
        self._pending = _Pending()  # only once written: a failed write is tried again
        self.stored += len(p.judgments)
        for cache, entries, links in p.cache.values():
            cache.put_many(entries, links)
        if self.on_flush is not None:
            self.on_flush(p.judgments)

    async def run_timer(self) -> None:
        """Flush whenever the oldest pending answer is due; runs until cancelled."""
        self._wake = asyncio.Event()
        while True:
            wait = self.due_in()
            if wait is None:
                self._wake.clear()
                await self._wake.wait()
            elif wait > 0:
                await asyncio.sleep(wait)
            else:
                self.flush()
