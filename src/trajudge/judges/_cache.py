"""The judge response cache: one SQLite table in its own file (default ``.trajudge/cache.db``).

Why not litellm's own cache? The installed litellm (1.110) rejects ``Cache(type="disk")``
("Unsupported cache type 'disk'"; older releases needed the ``diskcache`` package for it), and
its other persistent backends need Redis, S3, GCS, Azure or Qdrant. litellm also builds its key from
the call's arguments alone, while a verdict depends on more than that: the rubric version and the
sample index must be in the key (two samples of the same request are two judgments), and a hit
must be reported per judgment (``cache_hit``) with the tokens, cost and latency of the original
call. A small table keyed by the SHA-256 of the FULL request does all of that with the standard
library: model, messages, every sampling parameter, the response schema, the instructor mode,
the rubric id and version, and the sample index (see :func:`request_key`). Changing any of them
is a miss. Only successful, parsed responses are stored; errors never are. What is stored is
redacted (:func:`trajudge.store.redact`): a response quoting a key does not put it on disk.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trajudge.store import redact, redact_value
from trajudge.trajectories import canonical_json

DEFAULT_CACHE_PATH = Path(".trajudge") / "cache.db"
_IN_CHUNK = 500  # keys per query (SQLite allows 999 bound parameters in old builds)


def request_key(request: dict[str, Any]) -> str:
    """SHA-256 of the canonical JSON of the full request description."""
    return hashlib.sha256(canonical_json(request).encode()).hexdigest()


@dataclass(frozen=True)
class CachedResponse:
    """What a cached call returned: the parsed verdict and the original call's usage."""

    verdict: dict[str, Any]
    content: str
    prompt_tokens: int | None
    completion_tokens: int | None
    cost_usd: float | None
    latency_s: float | None
    #: the verdict fields' value probabilities from token log-probabilities (None: none)
    probs: dict[str, dict[str, float]] | None = None


class ResponseCache:
    """A persistent request -> response map (thread-safe; one connection per cache).

    >>> cache = ResponseCache(":memory:")
    >>> cache.get("k") is None
    True
    """

    def __init__(self, path: str | Path = DEFAULT_CACHE_PATH) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
        with self._lock:
            if self.path != ":memory:":
                self._conn.execute("PRAGMA journal_mode=WAL")
                # under WAL, NORMAL syncs at checkpoints, not at every commit: a crash of the
                # process loses nothing, a power cut at most the last answers (a cache)
                self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute(
                "CREATE TABLE IF NOT EXISTS responses ("
                " key TEXT PRIMARY KEY, model TEXT NOT NULL, verdict TEXT NOT NULL,"
                " content TEXT NOT NULL, prompt_tokens INTEGER, completion_tokens INTEGER,"
                " cost_usd REAL, latency_s REAL,"
                " created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),"
                " probs TEXT)"
            )
            columns = {r[1] for r in self._conn.execute("PRAGMA table_info(responses)")}
            if "probs" not in columns:  # a cache written before log-probability scores
                self._conn.execute("ALTER TABLE responses ADD COLUMN probs TEXT")
            self._conn.commit()

    def get(self, key: str) -> CachedResponse | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT verdict, content, prompt_tokens, completion_tokens, cost_usd, latency_s,"
                " probs FROM responses WHERE key = ?",
                (key,),
            ).fetchone()
        if row is None:
            return None
        return _response(row)

    def get_many(self, keys: Iterable[str]) -> dict[str, CachedResponse]:
        """The cached responses of ``keys`` (absent keys are left out), in a few queries."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, CachedResponse] = {}
        with self._lock:
            for start in range(0, len(wanted), _IN_CHUNK):
                chunk = wanted[start : start + _IN_CHUNK]
                rows = self._conn.execute(
                    "SELECT key, verdict, content, prompt_tokens, completion_tokens, cost_usd,"
                    " latency_s, probs"
                    f" FROM responses WHERE key IN ({','.join('?' * len(chunk))})",
                    chunk,
                ).fetchall()
                for r in rows:
                    found[r[0]] = _response(r[1:])
        return found

    def put(self, key: str, model: str, response: CachedResponse) -> None:
        self.put_many([(key, model, response)])

    def put_many(self, entries: Iterable[tuple[str, str, CachedResponse]]) -> None:
        """Store ``(key, model, response)`` entries in one transaction (redacted first)."""
        rows = [
            (
                key,
                model,
                canonical_json(redact_value(response.verdict)),
                redact(response.content),
                response.prompt_tokens,
                response.completion_tokens,
                response.cost_usd,
                response.latency_s,
                None if response.probs is None else canonical_json(response.probs),
            )
            for key, model, response in entries
        ]
        if not rows:
            return
        with self._lock:
            self._conn.executemany(
                "INSERT OR REPLACE INTO responses (key, model, verdict, content, prompt_tokens,"
                " completion_tokens, cost_usd, latency_s, probs)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            self._conn.commit()

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def _response(row: Any) -> CachedResponse:
    """A cached response from its row (verdict, content, tokens, cost, latency, probs)."""
    probs = json.loads(row[6]) if row[6] is not None else None
    return CachedResponse(json.loads(row[0]), row[1], row[2], row[3], row[4], row[5], probs)
