"""The README's shell sessions, as a test reads and checks them.

A session is a fenced block whose lines start with ``$ `` (a command; a line ending in ``\\``
goes on) followed by what it printed. A plain block right after a session's block is more of
the same command's output (the README cuts a long output into excerpts with prose between).

Output is compared the way :mod:`doctest` compares (``ELLIPSIS`` and ``NORMALIZE_WHITESPACE``:
``...`` stands for anything, a run of spaces or newlines for any other), after one more
normalisation: a run of a box-drawing rule character (``─``, ``━``, ``═``) counts as one, since
a table's borders are as wide as its widest cell and the README marks a cell that changes from
machine to machine (a time, a path) with ``...``.
"""

from __future__ import annotations

import doctest
import re
from dataclasses import dataclass, field

_RULES = re.compile(r"([─━═])\1+")
_CHECKER = doctest.OutputChecker()
_FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


@dataclass
class Command:
    """One ``$`` command of a session, what the README shows it printed, and excerpts."""

    line: int  # the README line of the ``$``
    text: str  # the command, continuation lines joined as the shell joins them
    output: str
    excerpts: list[str] = field(default_factory=list)


def sections(readme: str) -> list[tuple[str, int, str]]:
    """Every ``## `` section: its title, the README line it starts on, its text."""
    titles = [line[3:] for line in readme.split("\n") if line.startswith("## ")]
    return [(t, *section(readme, t)) for t in titles]


def section(readme: str, title: str) -> tuple[int, str]:
    """The text of the ``## title`` section, and the README line it starts on."""
    start = readme.index(f"\n## {title}\n") + 1
    end = readme.find("\n## ", start + 1)
    return readme.count("\n", 0, start) + 1, readme[start : end if end != -1 else len(readme)]


def commands(text: str, first_line: int = 1) -> list[Command]:
    """The ``$`` commands of every session in ``text`` (plain and ``console`` blocks), in
    order."""
    out: list[Command] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        fence = lines[i].strip()
        if fence not in ("```", "```console"):
            if fence.startswith("```"):  # a block with a language: YAML, Python, ...
                i = _close(lines, i)
            i += 1
            continue
        end = _close(lines, i)
        indent = len(lines[i]) - len(lines[i].lstrip())
        block = [line[indent:] for line in lines[i + 1 : end]]
        if block and block[0].startswith("$ "):
            out += _session(block, first_line + i + 1)
        elif out:  # more of the last command's output
            out[-1].excerpts.append("\n".join(block))
        i = end + 1
    return out


def _close(lines: list[str], i: int) -> int:
    """The line that closes the fenced block opened at line ``i`` (fences may be indented,
    in a list item)."""
    return next(j for j in range(i + 1, len(lines)) if lines[j].strip() == "```")


def _session(block: list[str], line: int) -> list[Command]:
    found: list[Command] = []
    j = 0
    while j < len(block):
        if not block[j].startswith("$ "):
            j += 1
            continue
        start = j
        parts = [block[j][2:]]
        while parts[-1].endswith("\\") and j + 1 < len(block):
            j += 1
            parts[-1] = parts[-1][:-1]
            parts.append(block[j].strip())
        j += 1
        shown: list[str] = []
        while j < len(block) and not block[j].startswith("$ "):
            shown.append(block[j])
            j += 1
        text = " ".join(p.strip() for p in parts)
        found.append(Command(line + start, text, "\n".join(shown)))
    return found


def matches(want: str, got: str) -> bool:
    """Whether ``got`` is what ``want`` shows (module docstring)."""
    want, got = _RULES.sub(r"\1", want), _RULES.sub(r"\1", got)
    return _CHECKER.check_output(want.strip() + "\n", got.strip() + "\n", _FLAGS)


def contains(excerpt: str, got: str) -> bool:
    """Whether ``excerpt`` is a part of ``got``."""
    return matches(f"...\n{excerpt.strip()}\n...", f"\n{got}\n")
