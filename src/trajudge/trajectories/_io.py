"""Shared plumbing for readers and writers: file checks, JSON records, validation, atomic writes.

Every reader goes through these helpers so that a bad file is reported the same way whatever
its format: one :class:`InputError` naming the file, the record (``line N`` for JSON Lines,
``record N`` for the N-th element of a JSON list, counted from 0) and the field.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any, TypeVar

from pydantic import BaseModel, ValidationError

from trajudge.core import INPUT_JSON, InputError, pydantic_field
from trajudge.trajectories._json import check_json_depth, json_deeper_than, load_json, too_deep
from trajudge.trajectories._limits import DOCUMENT, NESTING, Limit
from trajudge.trajectories._models import Trajectory

M = TypeVar("M", bound=BaseModel)
JSON_WS = " \t\n\r"  # JSON's whitespace is these four
NOT_JSON_WS = re.compile(f"[^{JSON_WS}]")

# (record label, parsed JSON value): "line 3" for JSON Lines, "record 0" for a JSON list
Record = tuple[str, Any]


def check_file(path: str | os.PathLike[str]) -> Path:
    """Return ``path`` as a Path, or raise InputError when it is missing or not a file."""
    p = Path(path)
    if not p.exists():
        raise InputError(str(p), reason="no such file")
    if p.is_dir():
        raise InputError(str(p), reason="is a directory, expected a file")
    if not p.is_file():
        raise InputError(str(p), reason="is not a regular file")
    return p


def decode_utf8(path: Path, data: bytes) -> str:
    """Decode ``data`` as UTF-8 (a BOM is allowed), naming the line of the first bad byte."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        byte = data[exc.start : exc.start + 1].hex()
        raise InputError(
            str(path),
            record=f"line {line}",
            reason=f"not valid UTF-8 (byte 0x{byte} at offset {exc.start})",
        ) from None


def json_error_reason(exc: json.JSONDecodeError) -> str:
    return f"invalid JSON: {exc.msg} (column {exc.colno})"


def check_size(path: Path, size: int, limit: Limit = DOCUMENT, *, or_more: bool = False) -> None:
    """Refuse a file of ``size`` bytes over ``limit`` (:class:`InputError` naming the limit and
    how to raise it); ``or_more``: ``size`` is only what was read of it."""
    if size > limit.value:
        more = " or more" if or_more else ""
        raise InputError(str(path), reason=limit.exceeded(f"the file has {size:,} bytes{more}"))


def read_whole(path: Path, limit: Limit = DOCUMENT) -> bytes:
    """The bytes of a file that is read whole; one over ``limit`` is refused by its size
    before it is read (:func:`check_size`)."""
    with open(path, "rb") as fh:
        check_size(path, os.fstat(fh.fileno()).st_size, limit)
        data = fh.read(limit.value + 1)
    check_size(path, len(data), limit, or_more=True)  # it grew since
    return data


def load_json_records(path: Path, text: str) -> list[Record]:
    """Parse a JSON Lines file, or a JSON document holding a list (or one object).

    A file whose first non-blank character is ``[`` is read as one JSON list; anything else is
    read line by line (blank lines are not records). Lines end at ``\n`` only, as JSON Lines
    say: a JSON string may hold U+2028 or U+0085 as they are, which ``str.splitlines`` would
    take for line breaks. A single pretty-printed JSON object is
    accepted as one record when it is not valid line by line.
    """
    stripped = text.lstrip()
    if not stripped:
        raise InputError(str(path), reason="the file is empty")
    if stripped.startswith("["):
        try:
            doc = INPUT_JSON.decode(text)
        except json.JSONDecodeError as exc:
            lines = _json_lines(path, text) if exc.msg == "Extra data" else None
            if lines is not None:
                return lines  # JSON Lines whose lines are lists
            raise InputError(
                str(path), record=f"line {exc.lineno}", reason=json_error_reason(exc)
            ) from None
        except RecursionError:
            raise too_deep(str(path), None) from None
        if not doc:
            raise InputError(str(path), reason="the JSON list is empty")
        items = [(f"record {i}", item) for i, item in enumerate(doc)]
        if json_deeper_than(text, NESTING.value + 1):  # the list is one level more
            for where, item in items:  # which record: only on the way to the error
                check_json_depth(json.dumps(item), str(path), where)
        return items
    records: list[Record] = []
    for n, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            records.append((f"line {n}", load_json(line, str(path), f"line {n}")))
        except json.JSONDecodeError as exc:
            error = exc
            if not records and stripped.startswith("{"):
                # maybe one pretty-printed object spanning several lines
                with contextlib.suppress(json.JSONDecodeError):
                    return [("record 0", load_json(text, str(path), "record 0"))]
                # or several, one after the other (OpenTelemetry's ConsoleSpanExporter); the
                # error is then where the objects break, as the streaming reader says
                try:
                    return _concatenated(path, text)
                except json.JSONDecodeError as broken:
                    error, n = broken, broken.lineno  # a line of the whole text
            raise InputError(
                str(path), record=f"line {n}", reason=json_error_reason(error)
            ) from None
    return records


def _json_lines(path: Path, text: str) -> list[Record] | None:
    """Every non-blank line parsed as JSON, or None when one of them is not JSON."""
    records: list[Record] = []
    for n, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            try:
                records.append((f"line {n}", load_json(line, str(path), f"line {n}")))
            except json.JSONDecodeError:
                return None
    return records


def _concatenated(path: Path, text: str) -> list[Record]:
    """Pretty-printed JSON objects written one after another, as ``record N``."""
    decoder = INPUT_JSON
    records: list[Record] = []
    pos = len(text) - len(text.lstrip())
    while pos < len(text):
        where = f"record {len(records)}"
        try:
            value, end = decoder.raw_decode(text, pos)
        except RecursionError:
            raise too_deep(str(path), where) from None
        check_json_depth(text[pos:end], str(path), where)
        records.append((where, value))
        after = NOT_JSON_WS.search(text, end)  # not text[end:].lstrip(): a copy per object
        pos = len(text) if after is None else after.start()
    return records


def validation_error(
    path: str, record: str | None, exc: ValidationError, prefix: str = ""
) -> InputError:
    """Turn the first pydantic error into an InputError (``steps[0].ok: ...``)."""
    errors = exc.errors(include_url=False)
    first = errors[0]
    field = pydantic_field(tuple(first["loc"]))
    if prefix:
        field = join_field(prefix, field)
    reason = first["msg"]
    if len(errors) > 1:
        reason += f" (+{len(errors) - 1} more)"
    return InputError(path, record=record, field=field, reason=reason)


def join_field(prefix: str, field: str) -> str:
    """Join a field prefix and a pydantic path: ``messages`` + ``[3].content``."""
    if field == "(record)":
        return prefix
    return prefix + field if field.startswith("[") else f"{prefix}.{field}"


def validate(model: type[M], obj: Any, path: str, record: str | None, prefix: str = "") -> M:
    """Validate ``obj`` as ``model`` in strict mode, raising InputError on failure."""
    if not isinstance(obj, dict):
        raise InputError(
            path,
            record=record,
            field=prefix or None,
            reason=f"expected a JSON object, got {kind(obj)}",
        )
    try:
        return model.model_validate(obj, strict=True)
    except ValidationError as exc:
        raise validation_error(path, record, exc, prefix) from None


def kind(obj: Any) -> str:
    """A JSON-ish name for the type of ``obj`` ("an object", "a list", "null", ...)."""
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        int: "a number",
        float: "a number",
        type(None): "null",
    }.get(type(obj), type(obj).__name__)


def unique_items(
    path: str, items: Iterable[tuple[str, Trajectory]]
) -> Iterator[tuple[str, Trajectory]]:
    """Yield ``items``, raising InputError at a repeated trajectory id or (task_id, trial)."""
    ids: dict[str, str] = {}
    pairs: dict[tuple[str, int], str] = {}
    for label, t in items:
        if t.id in ids:
            raise InputError(
                path,
                record=label,
                field="id",
                reason=f"duplicate id {t.id!r} (first at {ids[t.id]})",
            )
        pair = (t.task_id, t.trial)
        if pair in pairs:
            raise InputError(
                path,
                record=label,
                field="task_id/trial",
                reason=f"duplicate (task_id, trial) = ({t.task_id!r}, {t.trial}) "
                f"(first at {pairs[pair]})",
            )
        ids[t.id] = label
        pairs[pair] = label
        yield label, t


def check_unique(path: str, items: Sequence[tuple[str, Trajectory]]) -> None:
    """Raise InputError on a repeated trajectory id or (task_id, trial)."""
    for _ in unique_items(path, items):
        pass


def write_text_lines(tmp: Path, lines: Iterator[str]) -> None:
    """Write lines (each ending in a newline) as UTF-8 and fsync."""
    with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
        _write_all(fh, lines)
        fh.flush()
        os.fsync(fh.fileno())


def _write_all(fh: IO[str], lines: Iterator[str]) -> None:
    for line in lines:
        fh.write(line)
        fh.write("\n")
