"""The time window of a pull: ``--since`` / ``--until`` as an ISO-8601 date or time (UTC when
it names no zone) or an age (``30m``, ``12h``, ``7d``: that long before now)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from trajudge.core import InputError

_AGE = re.compile(r"^(\d+)([smhdw])$")
_UNIT = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_when(text: str, option: str, *, now: datetime | None = None) -> str:
    """``text`` as an ISO-8601 UTC time; ``InputError`` naming ``option`` when it is neither a
    date/time nor an age."""
    age = _AGE.match(text.strip())
    if age:
        delta = timedelta(**{_UNIT[age.group(2)]: int(age.group(1))})
        return ((now or datetime.now(UTC)) - delta).isoformat()
    try:
        t = datetime.fromisoformat(text.strip())
    except ValueError:
        raise InputError(
            option, reason=f"not a date, time or age: {text!r} (e.g. 2026-01-31, 12h, 7d)"
        ) from None
    if t.tzinfo is None:
        t = t.replace(tzinfo=UTC)
    return t.astimezone(UTC).isoformat()
