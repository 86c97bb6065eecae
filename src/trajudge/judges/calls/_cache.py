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

Two more tables let a re-run skip the work of finding a request's key (reading, gating and
rendering each trajectory):

- ``inputs`` maps an *input key* to the request key it was rendered into. The input key
  (:func:`trajudge.judges.prompts._inputs.input_key`) is the SHA-256 of what the prompt is a
  function of: the trajectory's content hash (SHA-256 of its canonical JSON, as the store keeps it),
  the other trajectory's (pairwise, reference), the judge configuration hash (model,
  endpoint, parameters, rubric version, prompt templates, budget, schema), order, sample and
  a hash of the rendering code. A hit is looked up through the request key (a join): an input entry
  never answers without the response of the request it names.
- ``gates`` keeps the failed rule checks of a trajectory (content hash) under a task spec
  (spec hash) and the rules' code (its hash): a re-run need not parse a trajectory to gate it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import sqlite3
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

from trajudge.core import canonical_json
from trajudge.store import StoreError, redact, redact_value
from trajudge.store._faults import driver_fault

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


P = ParamSpec("P")
R = TypeVar("R")


def _faults(
    method: Callable[Concatenate[ResponseCache, P], R],
) -> Callable[Concatenate[ResponseCache, P], R]:
    """A cache method whose file failing (disk full, read-only, damaged) is a StoreError
    naming the cache, one line for the CLI, instead of sqlite3's traceback."""

    @functools.wraps(method)
    def run(self: ResponseCache, *args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.Error as exc:
            fault = driver_fault(exc)
            if fault is None:
                raise
            raise StoreError(f"response cache {self.path}", fault) from None

    return run  # type: ignore[return-value]  # functools' _Wrapped names self positionally


class ResponseCache:
    """A persistent request -> response map (thread-safe; one connection per cache).

    >>> cache = ResponseCache(":memory:")
    >>> cache.get("k") is None
    True
    """

    @_faults
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
            self._conn.execute(
                "CREATE TABLE IF NOT EXISTS inputs ("
                " key TEXT PRIMARY KEY, request_key TEXT NOT NULL)"
            )
            self._conn.execute(
                "CREATE TABLE IF NOT EXISTS gates (key TEXT PRIMARY KEY, failed TEXT NOT NULL)"
            )
            columns = {r[1] for r in self._conn.execute("PRAGMA table_info(responses)")}
            if "probs" not in columns:  # a cache written before log-probability scores
                self._conn.execute("ALTER TABLE responses ADD COLUMN probs TEXT")
            self._conn.commit()

    @_faults
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

    @_faults
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

    @_faults
    def get_inputs(self, keys: Iterable[str]) -> dict[str, tuple[str, CachedResponse]]:
        """Input key -> (request key, cached response) for the input ``keys`` whose request is
        cached (absent keys are left out), in a few queries."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, tuple[str, CachedResponse]] = {}
        with self._lock:
            for start in range(0, len(wanted), _IN_CHUNK):
                chunk = wanted[start : start + _IN_CHUNK]
                rows = self._conn.execute(
                    "SELECT i.key, r.key, r.verdict, r.content, r.prompt_tokens,"
                    " r.completion_tokens, r.cost_usd, r.latency_s, r.probs"
                    " FROM inputs AS i JOIN responses AS r ON r.key = i.request_key"
                    f" WHERE i.key IN ({','.join('?' * len(chunk))})",
                    chunk,
                ).fetchall()
                for r in rows:
                    found[r[0]] = (r[1], _response(r[2:]))
        return found

    @_faults
    def get_gates(self, keys: Iterable[str]) -> dict[str, list[tuple[str, str]]]:
        """Gate key -> the failed checks stored under it, as (check, severity) pairs."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, list[tuple[str, str]]] = {}
        with self._lock:
            for start in range(0, len(wanted), _IN_CHUNK):
                chunk = wanted[start : start + _IN_CHUNK]
                rows = self._conn.execute(
                    f"SELECT key, failed FROM gates WHERE key IN ({','.join('?' * len(chunk))})",
                    chunk,
                ).fetchall()
                for key, failed in rows:
                    found[key] = [(str(c), str(s)) for c, s in json.loads(failed)]
        return found

    @_faults
    def put_gates(self, entries: Iterable[tuple[str, list[tuple[str, str]]]]) -> None:
        """Store ``(gate key, failed checks)`` entries in one transaction."""
        rows = [(key, json.dumps(sorted(failed))) for key, failed in entries]
        if not rows:
            return
        with self._lock:
            self._conn.executemany("INSERT OR REPLACE INTO gates (key, failed) VALUES (?, ?)", rows)
            self._conn.commit()

    def put(self, key: str, model: str, response: CachedResponse) -> None:
        self.put_many([(key, model, response)])

    @_faults
    def put_many(
        self,
        entries: Iterable[tuple[str, str, CachedResponse]],
        inputs: Iterable[tuple[str, str]] = (),
    ) -> None:
        """Store ``(key, model, response)`` entries (redacted first) and ``(input key,
        request key)`` links in one transaction."""
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
        links = list(inputs)
        if not rows and not links:
            return
        with self._lock:
            self._conn.executemany(
                "INSERT OR REPLACE INTO responses (key, model, verdict, content, prompt_tokens,"
                " completion_tokens, cost_usd, latency_s, probs)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            self._conn.executemany(
                "INSERT OR REPLACE INTO inputs (key, request_key) VALUES (?, ?)", links
            )
            self._conn.commit()

    @_faults
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
