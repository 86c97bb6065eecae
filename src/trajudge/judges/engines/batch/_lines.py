"""One contract for the result files of every provider's batches (OpenAI, Azure OpenAI,
Anthropic, Vertex AI, Bedrock): each line is its own result.

A provider's results are JSON Lines, one object per request, named by an id the request
carried (``custom_id``, ``recordId``, a label). :class:`ResultLines` reads them line by line
(bytes split at ``\\n`` only, each line decoded and parsed alone) and keeps, per request id,
either its record or the reason its line cannot be used:

- a line that is not UTF-8, not JSON or not a JSON object is charged to the request whose id
  it names (found in the raw text when it does not parse), and is an error for that request
  alone; a line naming no id (or several) cannot be charged to one request, and every
  request left without a result says so beside its own reason;
- a request answered twice with different answers is an error ("last one wins" would store
  an answer the provider also contradicted); the same answer twice is one answer;
- :meth:`ResultLines.result` turns a request's record into its call result with the
  provider's own function, and a record whose fields are not the shapes that function reads
  (a ``200`` whose body is not an object, a message that is a string) is an error for that
  request, never a traceback that would leave the whole batch unread.

So the valid answers of a batch are stored whatever its other lines hold, a bad line is
stored as an error (never a pass or a fail), the engine marks it failed on its batch, and the
next run resubmits only the errors.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import AsyncIterator, Callable, Mapping
from typing import TYPE_CHECKING, Any

from trajudge.core import INPUT_JSON
from trajudge.judges.calls._result import CallResult
from trajudge.store import redact

if TYPE_CHECKING:
    from trajudge.judges.calls._call import PreparedCall

Build = Callable[[dict[str, Any] | None], CallResult]


class ResultLines:
    """The records of a batch's result files by request id (module docstring).

    ``batch_id`` names the batch in errors; ``id_key`` is the field that carries the request
    id (looked for in the raw text of a line that does not parse); ``id_of`` finds the id in
    a record (None: it names none); ``keep`` is what is kept of a record (e.g. without the
    prompt a provider echoes)."""

    def __init__(
        self,
        batch_id: str,
        id_key: str,
        id_of: Callable[[dict[str, Any]], Any],
        keep: Callable[[dict[str, Any]], dict[str, Any]] = lambda record: record,
    ) -> None:
        self.batch_id = batch_id
        self.id_of = id_of
        self.keep = keep
        self._raw_id = re.compile('"' + re.escape(id_key) + r'"\s*:\s*"((?:[^"\\]|\\.)*)"')
        self.records: dict[str, dict[str, Any]] = {}
        self._line_of: dict[str, str] = {}
        #: request id -> why its line cannot be used
        self.broken: dict[str, str] = {}
        #: lines charged to no request: "where: why"
        self.stray: list[str] = []

    # -- reading -------------------------------------------------------------------------
    def read(self, source: str, data: bytes) -> None:
        """Every line of the file ``source`` (e.g. ``output file file-abc``)."""
        for number, line in enumerate(data.split(b"\n"), 1):
            self.add(f"{source} line {number}", line)

    async def aread(self, source: str, chunks: AsyncIterator[bytes]) -> None:
        """:meth:`read` over a streamed body: one line in memory at a time."""
        buffer, number = b"", 0
        async for chunk in chunks:
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                number += 1
                self.add(f"{source} line {number}", line)
        self.add(f"{source} line {number + 1}", buffer)

    def add(self, where: str, line: bytes) -> None:
        """One line of a result file, found at ``where``."""
        if not line.strip():
            return
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            self._charge(where, line.decode("utf-8", "replace"), f"is not UTF-8 ({exc.reason})")
            return
        try:
            record = INPUT_JSON.decode(text)
        except (ValueError, RecursionError) as exc:
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deep"
            self._charge(where, text, f"is not JSON ({reason})")
            return
        if not isinstance(record, dict):
            self._charge(where, text, f"is a JSON {_kind(record)}, not an object")
            return
        try:
            cid = self.id_of(record)
        except (AttributeError, TypeError):  # the id's parents are not objects
            self._charge(where, text, "names its request in a field of another shape")
            return
        if cid is None or isinstance(cid, (dict, list)):
            self.stray.append(f"{where}: names no request")
            return
        self._record(where, str(cid), self.keep(record))

    def _record(self, where: str, cid: str, record: dict[str, Any]) -> None:
        if cid in self.broken:
            return
        known = self.records.get(cid)
        if known is None:
            self.records[cid] = record
            self._line_of[cid] = where
        elif _canonical(known) != _canonical(record):
            first = self._line_of[cid]
            self.broken[cid] = f"answered twice with different answers ({first}, {where})"
            del self.records[cid]

    def _charge(self, where: str, text: str, why: str) -> None:
        """A line that cannot be read: an error for the one request it names, if it does."""
        ids = {_unescape(m) for m in self._raw_id.findall(text)}
        ids.discard(None)
        if len(ids) == 1:
            cid = str(ids.pop())
            self.records.pop(cid, None)
            self.broken[cid] = f"its result ({where}) {why}"
        else:
            self.stray.append(f"{where}: {why}")

    def merge(self, other: ResultLines) -> None:
        """Add what ``other`` (another file of the same batch) read."""
        for cid, why in other.broken.items():
            self.records.pop(cid, None)
            self.broken[cid] = why
        for cid, record in other.records.items():
            self._record(other._line_of[cid], cid, record)
        self.stray += other.stray

    # -- results -------------------------------------------------------------------------
    def results(
        self,
        calls: Mapping[str, PreparedCall],
        build: Callable[[PreparedCall, dict[str, Any] | None], CallResult],
    ) -> dict[str, CallResult]:
        """:meth:`result` of every request of a batch, ``calls`` by request id; ``build(call,
        record)`` is the provider's function."""
        return {
            cid: self.result(cid, call.key or "", functools.partial(build, call))
            for cid, call in calls.items()
        }

    def result(self, cid: str, key: str, build: Build) -> CallResult:
        """The call result of request ``cid`` (cache key ``key``): ``build`` (the provider's
        function) over its record, or over None where the batch has none for it; an error
        where its line was unusable or its record is not what ``build`` reads."""
        if cid in self.broken:
            return self._error(key, self.broken[cid])
        record = self.records.get(cid)
        try:
            result = build(record)
        except Exception as exc:  # a field of another shape than the provider's format
            what = f"{type(exc).__name__}: " + " ".join(str(exc).split())[:300]
            return self._error(key, f"its result is not in the provider's format: {what}")
        if record is None and self.stray and result.error is not None:
            unread = "; ".join(self.stray[:3]) + ("; ..." if len(self.stray) > 3 else "")
            count = len(self.stray)
            result.error = redact(
                f"{result.error}; {count} line(s) of the results could not be matched to a "
                f"request: {unread}"
            )[:600]
        return result

    def _error(self, key: str, why: str) -> CallResult:
        return CallResult(
            None, None, key, error=redact(f"batch {self.batch_id}: {why}")[:600], attempts=1
        )


def _kind(value: Any) -> str:
    return {list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number"
    )


def _unescape(raw: str) -> str | None:
    try:
        value = json.loads(f'"{raw}"')
    except ValueError:
        return None
    return str(value)


def _canonical(record: dict[str, Any]) -> str:
    return json.dumps(record, sort_keys=True, ensure_ascii=False)
