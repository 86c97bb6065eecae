"""The names of the engines that run judge calls, checked in one place.

A leaf module: the CLI reads ``ENGINES`` for its ``--help`` without importing the judging code.
"""

from __future__ import annotations

from trajudge.core import InputError

#: Engine names for ``--engine`` and ``engine:`` (see :func:`trajudge.judges.make_engine`).
ENGINES = ("local", "processes", "ray", "batch")


def check_engine(name: str, where: str = "--engine") -> str:
    """``name`` if it names an engine; else an InputError naming ``where`` and the choices."""
    if name not in ENGINES:
        raise InputError(where, reason=f"unknown engine {name!r}: choose {', '.join(ENGINES)}")
    return name
