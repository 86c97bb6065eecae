"""JSON records read a piece at a time, so a big file is never in memory whole.

:func:`iter_json_records` yields the records :func:`~trajudge.trajectories._io.load_json_records`
finds in the whole text (``record N`` for the elements of a JSON list, ``line N`` for JSON
Lines), with the same errors, while holding only the record being decoded and a window of text
around it:

* a JSON list is decoded element by element by the standard library's decoder
  (``json.JSONDecoder.raw_decode``) over a window that grows until the element fits, so every
  value and every error message is that of ``json.loads``;
* JSON Lines are decoded line by line;
* one pretty-printed object, or several written one after another, are decoded one object at
  a time over a window, as list elements are.

A ``[`` file whose first line is a complete JSON value with more lines after it is JSON Lines
of lists (one conversation per line), as for ``load_json_records``.

With ``limit``, no more than that many bytes of the file are read: where the records would need
more, :class:`Cut` is raised (format detection reads a bounded prefix, see ``reading/_sniff.py``).
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import IO

from trajudge.core import INPUT_JSON, InputError
from trajudge.trajectories._io import (
    JSON_WS,
    NOT_JSON_WS,
    Record,
    decode_utf8,
    json_error_reason,
)
from trajudge.trajectories._json import check_json_depth, load_json, too_deep
from trajudge.trajectories._limits import RECORD

CHUNK = 1 << 20  # characters read at a time
# An element that fails this close to the end of the window may only be cut off by it: a
# truncated literal, number or \\u escape fails within a few characters of the end.
_MARGIN = 64
_BOM = b"\xef\xbb\xbf"


class Cut(Exception):
    """The records go on past the ``limit`` bytes a reader was allowed to read."""


class _NotJSON(InputError):
    """A line that is not JSON by itself (maybe the first line of a pretty-printed object)."""


class TooLong(InputError):
    """One record longer than ``TRAJUDGE_MAX_RECORD_BYTES``: refused whatever the shape."""


class Text:
    """A UTF-8 file decoded a chunk at a time (a leading BOM is skipped).

    A bad byte raises :class:`InputError` naming its line and offset, as
    :func:`~trajudge.trajectories._io.decode_utf8` does for a whole file. With ``limit``,
    reading more than ``limit`` bytes of a longer file raises :class:`Cut`.
    """

    def __init__(self, path: Path, chunk: int = CHUNK, limit: int | None = None) -> None:
        self.path = path
        self.chunk = chunk
        self.limit = limit
        self.eof = False
        self._read = 0  # bytes read from the file
        self._fh: IO[bytes] = open(path, "rb")  # noqa: SIM115 - closed by close()
        self._carry = b""  # the start of a character cut by the end of the last chunk
        self._offset = 0  # bytes decoded so far (after the BOM)
        self._lines = 0  # newlines decoded so far
        self._start = True

    def read(self, size: int | None = None) -> str:
        """The next piece of text, about ``size`` characters; ``""`` at the end of the file."""
        while not self.eof:
            raw = self._fh.read(self._allowed(size or self.chunk))
            self._read += len(raw)
            data = self._carry + raw
            if self._start and (len(data) >= len(_BOM) or not raw):
                self._start = False
                data = data.removeprefix(_BOM)
            elif self._start:
                self._carry = data
                continue
            self.eof = not raw
            try:
                text = data.decode("utf-8")
                self._carry = b""
            except UnicodeDecodeError as exc:
                if raw and exc.reason == "unexpected end of data" and exc.end == len(data):
                    text, self._carry = data[: exc.start].decode("utf-8"), data[exc.start :]
                else:
                    line = self._lines + data.count(b"\n", 0, exc.start) + 1
                    byte = data[exc.start : exc.start + 1].hex()
                    raise InputError(
                        str(self.path),
                        record=f"line {line}",
                        reason=f"not valid UTF-8 "
                        f"(byte 0x{byte} at offset {self._offset + exc.start})",
                    ) from None
            self._offset += len(data) - len(self._carry)
            self._lines += text.count("\n")
            if text:
                return text
        return ""

    def _allowed(self, size: int) -> int:
        """``size``, or what is left of the limit (0 at the limit, when the file ends there)."""
        if self.limit is None:
            return size
        left = self.limit - self._read
        if left <= 0 and self._fh.read(1):
            raise Cut(self.limit)
        return min(size, left)

    def rest(self) -> str:
        """Everything not read yet."""
        parts = []
        while piece := self.read():
            parts.append(piece)
        return "".join(parts)

    def close(self) -> None:
        self._fh.close()


class _Window:
    """The text around the element being decoded, with its place in the file (for errors)."""

    def __init__(self, text: Text, buf: str, pos: int) -> None:
        self.text = text
        self.buf = buf
        self.pos = pos
        self._lines = 0  # newlines dropped before buf[0]
        self._column = 0  # characters of buf[0]'s line dropped before it

    def more(self) -> bool:
        """Drop what was decoded and read more (at least as much as is held, so an element
        of any size is decoded a bounded number of times); False at the end of the file."""
        dropped = self.buf[: self.pos]
        last_newline = dropped.rfind("\n")
        if last_newline < 0:
            self._column += len(dropped)
        else:
            self._lines += dropped.count("\n")
            self._column = len(dropped) - last_newline - 1
        piece = self.text.read(max(self.text.chunk, len(self.buf) - self.pos))
        self.buf = self.buf[self.pos :] + piece
        self.pos = 0
        return bool(piece)

    def next_char(self) -> str:
        """Skip whitespace; the next character, or ``""`` at the end of the file."""
        while True:
            while self.pos < len(self.buf) and self.buf[self.pos] in JSON_WS:
                self.pos += 1
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self.more():
                return ""

    def error(self, msg: str, pos: int) -> InputError:
        exc = json.JSONDecodeError(msg, self.buf, pos)
        line = self._lines + exc.lineno
        column = exc.colno + (self._column if exc.lineno == 1 else 0)
        return InputError(
            str(self.text.path),
            record=f"line {line}",
            reason=f"invalid JSON: {msg} (column {column})",
        )


def _decode(window: _Window, n: int) -> tuple[object, int]:
    """The value at ``window.pos`` (``record n``) and where it ends, reading more of the file
    until it fits; its depth is checked."""
    decoder, most, path = INPUT_JSON, RECORD.value, str(window.text.path)
    while True:
        try:
            value, end = decoder.raw_decode(window.buf, window.pos)
        except RecursionError:
            raise too_deep(path, f"record {n}") from None
        except json.JSONDecodeError as exc:
            cut = exc.msg.startswith("Unterminated string") or exc.pos >= len(window.buf) - _MARGIN
            if cut and not window.text.eof:
                if len(window.buf) - window.pos > most:
                    raise TooLong(path, record=f"record {n}", reason=RECORD.exceeded()) from None
                window.more()  # then decode the value again, whole this time
                continue
            raise window.error(exc.msg, exc.pos) from None
        if end - window.pos > most:
            raise TooLong(path, record=f"record {n}", reason=RECORD.exceeded())
        if type(value) in (int, float) and end > len(window.buf) - _MARGIN and not window.text.eof:
            window.more()  # a number near the end of the window may go on ("1" of "1.5e3")
            continue
        if isinstance(value, list | dict):
            check_json_depth(window.buf[window.pos : end], path, f"record {n}")
        return value, end


def _list_elements(window: _Window) -> Iterator[Record]:
    """The elements of the JSON list that starts at ``window.pos``."""
    window.pos += 1  # past "["
    char = window.next_char()
    if char == "]":
        window.pos += 1
        if window.next_char():
            raise window.error("Extra data", window.pos)
        raise InputError(str(window.text.path), reason="the JSON list is empty")
    n = 0
    while True:
        if not char:
            raise window.error("Expecting value", window.pos)
        value, window.pos = _decode(window, n)
        yield f"record {n}", value
        n += 1
        char = window.next_char()
        if char == ",":
            window.pos += 1
            char = window.next_char()
        elif char == "]":
            window.pos += 1
            if window.next_char():
                raise window.error("Extra data", window.pos)
            return
        else:
            raise window.error("Expecting ',' delimiter", window.pos)


def _objects(window: _Window) -> Iterator[Record]:
    """JSON values written one after another (pretty-printed objects: OpenTelemetry's
    ``ConsoleSpanExporter``; one SWE-agent ``.traj``), as ``record N``, one at a time."""
    n = 0
    while window.next_char():
        value, window.pos = _decode(window, n)
        yield f"record {n}", value
        n += 1


def _lines(text: Text, buf: str) -> Iterator[Record]:
    """JSON Lines: one record per non-blank line (``buf`` is the text read so far)."""
    pos, n, most = 0, 0, RECORD.value
    while True:
        newline = buf.find("\n", pos)
        while newline < 0 and not text.eof:
            if len(buf) - pos > most:
                raise TooLong(str(text.path), record=f"line {n + 1}", reason=RECORD.exceeded())
            # a long line: read as much again as is held, so it is copied a few times at most
            buf = buf[pos:] + text.read(max(text.chunk, len(buf) - pos))
            pos = 0
            newline = buf.find("\n")
        line = buf[pos:] if newline < 0 else buf[pos:newline]
        n += 1
        if len(line) > most:
            raise TooLong(str(text.path), record=f"line {n}", reason=RECORD.exceeded())
        if line.strip():
            try:
                yield f"line {n}", load_json(line, str(text.path), f"line {n}")
            except json.JSONDecodeError as exc:
                raise _NotJSON(
                    str(text.path), record=f"line {n}", reason=json_error_reason(exc)
                ) from None
        if newline < 0:
            return
        pos = newline + 1


def _lines_of_lists(path: Path, limit: int | None = None) -> bool:
    """Whether a ``[`` file is JSON Lines of lists: a non-blank line follows the first one, and
    the first line is a complete JSON value by itself.

    Looks at the bytes only (no decoding) until the first newline followed by more text, so a
    one-line file of any size is scanned, never held; only a first line that may be a whole
    record is decoded. With ``limit``, only the first ``limit`` bytes are looked at: a file
    that shows no second line in them is taken for one JSON list.
    """
    budget = (1 << 63) if limit is None else limit
    with open(path, "rb") as fh:
        first_end, seen = -1, 0
        while first_end < 0:
            block = fh.read(min(CHUNK, budget - seen))
            if not block:
                return False  # one line (or none ends within the limit)
            newline = block.find(b"\n")
            if newline >= 0:
                first_end = seen + newline
                block = block[newline + 1 :]
            seen += len(block) if first_end < 0 else 0
        seen = fh.tell()
        while not block.strip():
            block = fh.read(min(CHUNK, budget - seen))
            seen += len(block)
            if not block:
                return False  # one line, then blank lines (as far as the limit)
        fh.seek(0)
        first = fh.read(first_end)
    try:
        INPUT_JSON.decode(first.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return False
    return True


def _objects_within(path: Path, limit: int, line_error: InputError) -> Iterator[Record]:
    """The JSON objects written one after another (or the one pretty-printed object) that end
    within the first ``limit`` bytes of a longer file, then :class:`Cut`.

    JSON that is broken before the cut is ``line_error`` (the first line's), as
    ``load_json_records`` reports it for the whole file.
    """
    with open(path, "rb") as fh:
        data = fh.read(limit)
    try:  # a character cut by the limit is left out
        text = codecs.getincrementaldecoder("utf-8-sig")().decode(data, final=False)
    except UnicodeDecodeError:
        text = decode_utf8(path, data)  # raises, naming the line of the bad byte
    decoder = INPUT_JSON
    pos, n = len(text) - len(text.lstrip()), 0
    while pos < len(text):
        try:
            value, end = decoder.raw_decode(text, pos)
        except RecursionError:
            raise too_deep(str(path), f"record {n}") from None
        except json.JSONDecodeError as exc:
            if exc.msg.startswith("Unterminated string") or exc.pos >= len(text) - _MARGIN:
                break  # the object goes on past the limit
            raise line_error from None
        check_json_depth(text[pos:end], str(path), f"record {n}")
        yield f"record {n}", value
        n += 1
        after = NOT_JSON_WS.search(text, end)
        pos = len(text) if after is None else after.start()
    raise Cut(limit)


def iter_json_records(
    path: Path, *, chunk: int = CHUNK, limit: int | None = None
) -> Generator[Record, None, None]:
    """Yield the JSON records of a file one at a time (see the module docstring).

    Raises :class:`InputError` (file, ``line N``, reason) at the first bad byte or bad JSON,
    when the file is empty and when its JSON list is empty, like ``load_json_records``; with
    ``limit``, :class:`Cut` where the next record needs more than ``limit`` bytes of the file.
    """
    text = Text(path, chunk, limit)
    try:
        buf = text.read()
        start = len(buf) - len(buf.lstrip())
        while start == len(buf) and not text.eof:
            buf += text.read()
            start = len(buf) - len(buf.lstrip())
        if start == len(buf):
            raise InputError(str(path), reason="the file is empty")
        if buf[start] == "[":
            if _lines_of_lists(path, limit):
                yield from _lines(text, buf)
            else:
                yield from _list_elements(_Window(text, buf, start))
            return
        records = _lines(text, buf)
        try:
            first = next(records)
        except _NotJSON as exc:
            if buf[start] != "{":
                raise
            # one pretty-printed object, or several one after another, from the start again
            text.close()
            if limit is not None and path.stat().st_size > limit:
                yield from _objects_within(path, limit, exc)
            text = Text(path, chunk)
            yield from _objects(_Window(text, text.read(), 0))
            return
        yield first
        yield from records
    finally:
        text.close()
