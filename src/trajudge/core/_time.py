"""Timestamps as the store keeps them."""

from __future__ import annotations

import datetime as _dt


def now_iso() -> str:
    """The current UTC time as ISO-8601 text with microseconds."""
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="microseconds")
