"""The verdict kinds of a rubric's scale and the vocabulary of their verdicts.

One definition for every room: a rubric declares its kind, a judge answers in it, and the
statistics aggregate by it. Plain constants (no pandas, no pydantic), so that loading a rubric
or registering a CLI command costs nothing.

- ``binary``: 0 (fail) or 1 (pass); ``ordinal``: 1..N, cut into pass/fail by a threshold;
- ``pairwise``: ``A`` / ``B`` / ``tie`` in the original numbering (A = the pair's first
  trajectory); ``nominal``: named categories. These two are *categorical*: their verdicts are
  names, and two presentation orders that disagree make the item *inconsistent* (a flip).
"""

from __future__ import annotations

from typing import Any, Literal

Kind = Literal["binary", "ordinal", "pairwise", "nominal"]
KINDS: tuple[Kind, ...] = ("binary", "ordinal", "pairwise", "nominal")
CATEGORICAL: tuple[Kind, ...] = ("pairwise", "nominal")
#: Pairwise verdicts in the original numbering: A = the pair's first trajectory, B = its second.
PAIRWISE_VERDICTS = ("A", "B", "tie")
#: The verdict of an item whose orders (or samples) disagree, when it is not made a tie.
INCONSISTENT = "inconsistent"
#: A pairwise verdict given in order ``ba`` (B shown first), mapped to the original numbering.
SWAP = {"A": "B", "B": "A", "tie": "tie"}
_PAIRWISE_WORDS = {"a": "A", "b": "B", "tie": "tie", "win": "A", "loss": "B"}


def pairwise_verdict(value: Any) -> str:
    """``"A"``, ``"B"`` or ``"tie"`` for a pairwise verdict (any case; ``win`` / ``loss``, as
    trajudge stored them before verdict kinds, are A / B); ValueError for anything else.

    >>> pairwise_verdict("a"), pairwise_verdict("TIE"), pairwise_verdict("win")
    ('A', 'tie', 'A')
    """
    text = str(value).strip().lower()
    if text not in _PAIRWISE_WORDS:
        raise ValueError(f"cannot read {value!r} as a pairwise verdict (A, B or tie)")
    return _PAIRWISE_WORDS[text]


def default_inconsistent(kind: str) -> str:
    """What a position flip becomes by default: ``tie`` (pairwise) or ``inconsistent``."""
    return "tie" if kind == "pairwise" else INCONSISTENT
