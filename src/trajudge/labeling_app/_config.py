"""The app's configuration (passed from `trajudge label` through environment variables),
annotator-name validation, the optional shared password and the adjudicator password."""

from __future__ import annotations

import hmac
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from trajudge.core import InputError

Strategy = Literal["random", "stratified", "disagreement", "escalated", "active"]
STRATEGIES: tuple[Strategy, ...] = ("random", "stratified", "disagreement", "escalated", "active")
DEFAULT_RUBRIC = "trajectory_reasonableness"

ENV_DB = "TRAJUDGE_DB"
ENV_DATASET = "TRAJUDGE_LABEL_DATASET"
ENV_RUBRIC = "TRAJUDGE_LABEL_RUBRIC"
ENV_SHOW_JUDGES = "TRAJUDGE_LABEL_SHOW_JUDGES"
ENV_STRATEGY = "TRAJUDGE_LABEL_STRATEGY"
ENV_OVERLAP = "TRAJUDGE_LABEL_OVERLAP"
ENV_PASSWORD = "TRAJUDGE_LABEL_PASSWORD"
ENV_ADJUDICATORS = "TRAJUDGE_LABEL_ADJUDICATORS"
ENV_ADJUDICATOR_PASSWORD = "TRAJUDGE_LABEL_ADJUDICATOR_PASSWORD"
ENV_MAX_PAIRS = "TRAJUDGE_LABEL_MAX_PAIRS"
ENV_BUDGET = "TRAJUDGE_LABEL_BUDGET"

_NAME = re.compile(r"[A-Za-z0-9 ._-]{1,64}")


@dataclass(frozen=True)
class AppConfig:
    """What `trajudge label` hands to the Streamlit app."""

    db_url: str
    dataset: str | None = None
    rubric: str = DEFAULT_RUBRIC
    show_judges: bool = False
    strategy: Strategy = "random"
    overlap: float = 0.2
    # names that may see every item on the Review page and save adjudications (they sign in
    # with the adjudicator password); everyone else reviews only items they labeled
    adjudicators: tuple[str, ...] = ()
    # pairwise rubrics, when no pairwise judge of the rubric ran: pairs per task to label (a
    # seeded sample, as a judge's ``max_pairs``); None: every pair of trials
    max_pairs: int | None = None
    # --strategy active: the expected number of labels of the design when it is first built
    # (None: 200, at most the judged items); a stored design keeps its own
    budget: int | None = None

    def __post_init__(self) -> None:
        names: dict[str, None] = {}
        for n in self.adjudicators:
            try:
                names[validate_annotator(n)] = None
            except InputError as exc:
                raise InputError("--adjudicator", record=repr(n), reason=exc.reason) from None
        object.__setattr__(self, "adjudicators", tuple(names))
        if self.strategy not in STRATEGIES:
            raise InputError(
                "--strategy", reason=f"{self.strategy!r} is not one of {', '.join(STRATEGIES)}"
            )
        if not (math.isfinite(self.overlap) and 0.0 <= self.overlap <= 1.0):
            raise InputError("--overlap", reason=f"must be in [0, 1], got {self.overlap}")
        if self.max_pairs is not None and self.max_pairs < 1:
            raise InputError("--max-pairs", reason=f"must be at least 1, got {self.max_pairs}")
        if self.budget is not None and self.budget < 1:
            raise InputError("--budget", reason=f"must be at least 1, got {self.budget}")

    def to_env(self) -> dict[str, str]:
        """The environment variables that carry this configuration to the app process."""
        env = {
            ENV_DB: self.db_url,
            ENV_RUBRIC: self.rubric,
            ENV_SHOW_JUDGES: "1" if self.show_judges else "0",
            ENV_STRATEGY: self.strategy,
            ENV_OVERLAP: repr(self.overlap),
        }
        if self.dataset:
            env[ENV_DATASET] = self.dataset
        if self.adjudicators:  # a comma never occurs in a valid name
            env[ENV_ADJUDICATORS] = ",".join(self.adjudicators)
        if self.max_pairs is not None:
            env[ENV_MAX_PAIRS] = str(self.max_pairs)
        if self.budget is not None:
            env[ENV_BUDGET] = str(self.budget)
        return env

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> AppConfig:
        """Read the configuration written by :meth:`to_env` (defaults for missing keys)."""
        env = os.environ if environ is None else environ
        # imported on use: the store (SQLAlchemy) loads when the app starts, not for --help
        from trajudge.store import DEFAULT_URL

        try:
            overlap = float(env.get(ENV_OVERLAP, "0.2"))
        except ValueError:
            raise InputError(ENV_OVERLAP, reason="expected a number") from None
        try:
            max_pairs = int(env[ENV_MAX_PAIRS]) if env.get(ENV_MAX_PAIRS) else None
        except ValueError:
            raise InputError(ENV_MAX_PAIRS, reason="expected a whole number") from None
        try:
            budget = int(env[ENV_BUDGET]) if env.get(ENV_BUDGET) else None
        except ValueError:
            raise InputError(ENV_BUDGET, reason="expected a whole number") from None
        strategy = env.get(ENV_STRATEGY, "random")
        if strategy not in STRATEGIES:
            raise InputError(ENV_STRATEGY, reason=f"{strategy!r} is not a strategy")
        return cls(
            db_url=env.get(ENV_DB, DEFAULT_URL),
            dataset=env.get(ENV_DATASET) or None,
            rubric=env.get(ENV_RUBRIC, DEFAULT_RUBRIC),
            show_judges=env.get(ENV_SHOW_JUDGES, "0") == "1",
            strategy=strategy,
            overlap=overlap,
            adjudicators=tuple(n for n in env.get(ENV_ADJUDICATORS, "").split(",") if n),
            max_pairs=max_pairs,
            budget=budget,
        )

    def is_adjudicator(self, name: str | None) -> bool:
        """Whether ``name`` holds the adjudicator role (given with ``--adjudicator``)."""
        return name is not None and name in self.adjudicators


def validate_annotator(name: str) -> str:
    """Return the annotator name if valid: 1-64 letters, digits, spaces, ``.``, ``_`` or ``-``.

    Leading and trailing spaces are removed first; a name of spaces only is refused.

    >>> validate_annotator(" ada.l ")
    'ada.l'
    """
    text = name.strip()
    if not text or not _NAME.fullmatch(text):
        raise InputError(
            "annotator", field="name", reason="use 1-64 letters, digits, spaces, '.', '_' or '-'"
        )
    return text


def password_required(environ: Mapping[str, str] | None = None) -> bool:
    """Whether a shared password is set (``TRAJUDGE_LABEL_PASSWORD``, non-empty)."""
    env = os.environ if environ is None else environ
    return bool(env.get(ENV_PASSWORD))


def check_password(given: str, environ: Mapping[str, str] | None = None) -> bool:
    """Compare ``given`` with the shared password in constant time; True when none is set."""
    env = os.environ if environ is None else environ
    expected = env.get(ENV_PASSWORD, "")
    if not expected:
        return True
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


def adjudicator_password_set(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the adjudicator password (``TRAJUDGE_LABEL_ADJUDICATOR_PASSWORD``) is set."""
    env = os.environ if environ is None else environ
    return bool(env.get(ENV_ADJUDICATOR_PASSWORD))


def check_adjudicator_password(given: str, environ: Mapping[str, str] | None = None) -> bool:
    """Compare ``given`` with the adjudicator password in constant time.

    False when no adjudicator password is set: nobody signs in as an adjudicator then.
    """
    env = os.environ if environ is None else environ
    expected = env.get(ENV_ADJUDICATOR_PASSWORD, "")
    if not expected:
        return False
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))
