"""The terminal consoles: text from a dataset is shown, never obeyed.

Trajectory ids, task ids, dataset and judge names come from users' files. Printed raw, an id
holding ``ESC [2J`` clears the screen, an OSC 8 sequence plants a hyperlink, ``\\r`` or a bidi
override hides what follows, and Rich markup in it (``[link=...]``, ``[/]``) is styled or
crashes the print. :class:`SafeConsole` closes both for every print, table and progress line,
whatever path the text took:

- markup is off unless a call asks for it (``markup=True`` on our own literal strings);
- every control character left in the text when Rich writes it out (C0 but newline and tab,
  DEL, C1, and the bidirectional overrides) is shown as a visible escape (``\\x1b``). Rich's
  own styles and cursor movements are generated after this, so they still work.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.segment import Segment

if TYPE_CHECKING:
    from rich.progress import Progress

    from trajudge.judges import BatchProgress

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def visible_controls(text: str) -> str:
    """``text`` with its control characters written as escapes.

    >>> visible_controls("t\\x1b[2J-1\\r\\u202e")
    't\\\\x1b[2J-1\\\\x0d\\\\u202e'
    """

    def escape(m: re.Match[str]) -> str:
        code = ord(m.group())
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

    return _CONTROL.sub(escape, text)


class SafeConsole(Console):
    """A Rich console that shows control characters instead of obeying them, markup off by
    default (see the module docstring)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("markup", False)
        super().__init__(**kwargs)

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        return super()._render_buffer(_visible(buffer))


def _visible(buffer: Iterable[Segment]) -> Iterator[Segment]:
    for segment in buffer:
        if segment.control or not _CONTROL.search(segment.text):
            yield segment
        else:
            yield Segment(visible_controls(segment.text), segment.style, segment.control)


def judge_progress(console: Console | None) -> tuple[Progress | None, Callable[..., None]]:
    """A Rich progress bar for a batch (done / errors / cache hits / cost) and its updater."""
    if console is None:
        return None, lambda p: None
    # imported on use: every command prints through this module, `trajudge --help` included
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn(
            "errors {task.fields[errors]} · cache hits {task.fields[hits]} · ${task.fields[cost]}"
        ),
        TimeElapsedColumn(),
        console=console,
    )
    task = progress.add_task("judging", total=None, errors=0, hits=0, cost="0.0000")

    def update(p: BatchProgress) -> None:
        progress.update(
            task,
            total=p.total,
            completed=p.done,
            errors=p.errors,
            hits=p.cache_hits,
            cost=f"{p.cost_usd:.4f}",
        )

    return progress, update
