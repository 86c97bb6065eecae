"""What a source held against what was built from it: the proof that a reader lost nothing.

Each reader has a census: a walk over the raw records that counts what the source holds (tool
calls, failed calls, user messages, token totals where recorded), written apart from the code
that builds trajectories so the two can disagree. When the reading ends, :func:`check` compares
the census with the trajectories built; a difference is an :class:`InputError` (nothing is
stored) unless the caller accepted that loss by name (``trajudge import --accept-loss``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from trajudge.core import InputError
from trajudge.trajectories._models import Trajectory

#: The names ``--accept-loss`` takes, one per count.
LOSSES: tuple[str, ...] = (
    "tool_calls",
    "failed_calls",
    "user_messages",
    "prompt_tokens",
    "completion_tokens",
)
_WORDS = {
    "tool_calls": ("tool call", "tool calls"),
    "failed_calls": ("failed tool call", "failed tool calls"),
    "user_messages": ("user message", "user messages"),
    "prompt_tokens": ("prompt token", "prompt tokens"),
    "completion_tokens": ("completion token", "completion tokens"),
}


@dataclass
class Held:
    """Counts of what a source holds (a census) or of what was built from it.

    Token totals are None where the source records none, so a reader that fills them from
    nowhere is caught as surely as one that drops them.
    """

    tool_calls: int = 0
    failed_calls: int = 0
    user_messages: int = 0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    # counts this census gives only as a lower bound (a trace's tool spans: the calls its
    # model messages name are joined across repeated histories by the reader alone), and
    # counts it does not take; see :func:`differences`
    floor: set[str] = field(default_factory=set, compare=False, repr=False)
    unknown: set[str] = field(default_factory=set, compare=False, repr=False)
    # what a census keeps between records (calls still open, message ids already counted)
    scratch: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    # run once, in order, when the last record has been counted (a conversation that is the
    # whole file is closed there)
    finish: list[Callable[[Held], None]] = field(default_factory=list, compare=False, repr=False)

    def add_tokens(self, prompt: int | None, completion: int | None) -> None:
        """Add token counts, each only when the source recorded it."""
        if prompt is not None:
            self.prompt_tokens = (self.prompt_tokens or 0) + prompt
        if completion is not None:
            self.completion_tokens = (self.completion_tokens or 0) + completion


def built(trajectories: Iterable[Trajectory]) -> Held:
    """What the trajectories hold, counted the way a census counts a source."""
    out = Held()
    for t in trajectories:
        add_built(out, t)
    return out


def add_built(out: Held, t: Trajectory) -> None:
    """Add one trajectory's counts to ``out``."""
    out.tool_calls += len(t.steps)
    out.failed_calls += sum(1 for s in t.steps if not s.ok)
    out.user_messages += sum(1 for m in t.messages if m.role == "user")
    out.add_tokens(t.usage.prompt_tokens, t.usage.completion_tokens)


@dataclass(frozen=True)
class Loss:
    """One count that differs: ``held`` in the source, ``built`` in the trajectories."""

    name: str
    held: int | None
    built: int | None
    floor: bool = False

    def line(self) -> str:
        one, many = _WORDS[self.name]
        held = "none" if self.held is None else f"{self.held:,}"
        held = f"at least {held}" if self.floor else held
        made = "none" if self.built is None else f"{self.built:,}"
        noun = one if self.held == 1 else many
        return f"the source holds {held} {noun}, {made} were read ({self.name})"


def differences(held: Held, made: Held) -> list[Loss]:
    """Every count on which the census and the built trajectories disagree: differ, or for a
    count the census gives as a lower bound, fall short of it."""
    out = []
    for name in LOSSES:
        want, got = getattr(held, name), getattr(made, name)
        if name in held.unknown:
            continue
        if name in held.floor:
            if (want or 0) > (got or 0):
                out.append(Loss(name, want, got, floor=True))
        elif want != got:
            out.append(Loss(name, want, got))
    return out


def check(file: str, held: Held, made: Held, accepted: Iterable[str] = ()) -> list[Loss]:
    """Raise :class:`InputError` for the first difference not in ``accepted``; return the
    accepted ones (the caller prints them)."""
    ok = set(accepted)
    losses = differences(held, made)
    for loss in losses:
        if loss.name not in ok:
            raise InputError(
                file,
                field=loss.name,
                reason=f"{loss.line()}: nothing was stored; "
                f"to import anyway, pass --accept-loss {loss.name}",
            )
    return losses
