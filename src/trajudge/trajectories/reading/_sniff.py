"""The format of a JSON file, told by at most its first ``TRAJUDGE_MAX_SNIFF_BYTES`` bytes.

``--format auto`` parses a file's first record, and the records after it for a file that is one
conversation (a list of chat messages or of OpenHands events): before the limit, a 1 GB line
was read and parsed whole (2.2 GB) only to say that it is in no format, and a 1 GB list of
small values was held whole. :func:`sniff` reads the records within the limit, one at a time,
keeping the first; :func:`refusal` is the one-line error for a file in no format, or whose
format the records within the limit do not tell.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trajudge.core import InputError
from trajudge.trajectories._formats import FORMATS
from trajudge.trajectories._io import Record
from trajudge.trajectories._limits import SNIFF
from trajudge.trajectories._stream import Cut, iter_json_records
from trajudge.trajectories.reading._detect import EveryRecord, describe, first_record_format

_COUNTED = 1_000  # records counted for the description once no format is possible


@dataclass(frozen=True)
class Sniffed:
    """What the first bytes of a JSON file tell: ``fmt``, or why there is none."""

    fmt: str | None
    first: Record | None = None  # its top level only; None: no record ends within the limit
    count: int = 0  # records read
    cut: bool = False  # the limit was reached before the end of the file
    possible: bool = False  # records after the limit could still make it a format
    more: bool = False  # the file may hold more records than were read


def sniff(path: Path) -> Sniffed:
    """The format of the JSON records in the first ``TRAJUDGE_MAX_SNIFF_BYTES`` of ``path``.

    A record that tells the format alone (the first, mostly) ends the reading; records that
    tell it only together (see :class:`EveryRecord`) decide it when the limit cuts them off.
    Once no format is possible, a few records more are counted for the description. Raises
    :class:`InputError` for bad JSON within the limit, as the reader would.
    """
    records = iter_json_records(path, limit=SNIFF.value)
    first: Record | None = None
    count = 0
    every = EveryRecord()
    try:
        for label, value in records:
            if first is None:
                found = first_record_format(value)
                if found is not None:
                    return Sniffed(found, (label, _top(value)), 1)
                first = (label, _top(value))
            count += 1
            every.add(value)
            del value  # hold one record at most
            if not every.possible() and (not isinstance(first[1], dict) or count >= _COUNTED):
                more = isinstance(first[1], dict)  # only objects are counted
                return Sniffed(None, first, count, more=more)
    except Cut:
        fmt = every.format() if count else None
        possible = every.possible() and count > 0
        return Sniffed(fmt, first, count, cut=True, possible=possible, more=True)
    finally:
        records.close()
    return Sniffed(every.format() if count else None, first, count)


def _top(value: Any) -> Any:
    """As much of a record as :func:`describe` looks at: the keys of an object."""
    if isinstance(value, dict):
        return dict.fromkeys(value)
    return [] if isinstance(value, list) else value


def refusal(file: str, head: bytes, found: Sniffed | None) -> InputError:
    """The error for a file that ``--format auto`` cannot read: in no format (``found`` is
    None for a file that is not JSON), or in none that the records within the limit tell."""
    supported = ", ".join(f for f in FORMATS if f != "auto")
    if found is not None and found.cut and (found.possible or found.first is None):
        if found.first is not None:
            detail = f"the {found.count:,} records within it tell no format"
        elif _start(head) in (b"{", b"["):
            detail = "the first record is longer"
        else:
            detail = ""  # no object or list starts the file: it is in no format
        if detail:
            return InputError(
                file,
                reason=f"format not detected: {SNIFF.exceeded(detail)}, or pass --format "
                f"(one of {supported})",
            )
    if found is None:
        looks = describe(head, None)
    else:
        looks = describe(head, found.first, found.count, more=found.more)
    return InputError(file, reason=f"unrecognised format: {looks} (supported: {supported})")


def _start(head: bytes) -> bytes:
    """The first character of a file that is not whitespace (after a BOM)."""
    return head.removeprefix(b"\xef\xbb\xbf").lstrip()[:1]
