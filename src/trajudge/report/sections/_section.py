"""The unit every renderer shows: a titled block of text lines and an optional table."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Section:
    """A titled block: text lines, then an optional table."""

    title: str
    lines: list[str] = field(default_factory=list)
    header: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)
