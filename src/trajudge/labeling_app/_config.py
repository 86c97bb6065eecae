"""The app's configuration (passed from `trajudge label` through environment variables) and
annotator-name validation. Who may sign in, and with which role, is in the store's accounts
(``trajudge annotators``)."""

from __future__ import annotations

import ipaddress
import json
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
ENV_MAX_PAIRS = "TRAJUDGE_LABEL_MAX_PAIRS"
ENV_BUDGET = "TRAJUDGE_LABEL_BUDGET"
ENV_LEARN = "TRAJUDGE_LABEL_LEARN"
ENV_SESSION_HOURS = "TRAJUDGE_LABEL_SESSION_HOURS"
ENV_ALLOWED_HOSTS = "TRAJUDGE_LABEL_ALLOWED_HOSTS"
ENV_REVIEWERS = "TRAJUDGE_LABEL_REVIEWERS_PER_ITEM"
ENV_STOP_WHEN = "TRAJUDGE_LABEL_STOP_WHEN"

# uvicorn (Streamlit's server) takes the client address from X-Forwarded-For when the direct
# peer is in this list, and its default list is loopback: any process on the machine could
# then name any address and dodge the per-client sign-in throttle. `trajudge label` always
# sets it, to the --trusted-proxy addresses (none by default), over the user's environment.
ENV_FORWARDED_ALLOW_IPS = "FORWARDED_ALLOW_IPS"
# the shared passwords of the scheme before accounts: no longer read (a deprecation line)
OLD_PASSWORD_ENVS = ("TRAJUDGE_LABEL_PASSWORD", "TRAJUDGE_LABEL_ADJUDICATOR_PASSWORD")
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")

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
    # pairwise rubrics, when no pairwise judge of the rubric ran: pairs per task to label (a
    # seeded sample, as a judge's ``max_pairs``); None: every pair of trials
    max_pairs: int | None = None
    # --strategy active: the expected number of labels of the design when it is first built
    # (None: 200, at most the judged items); a stored design keeps its own
    budget: int | None = None
    # --strategy active: labels of the uniform learning phase of a new design (None: a
    # quarter of the budget; 0: none)
    learn: int | None = None
    # hours a sign-in lasts (then the person signs in again)
    session_hours: float = 12.0
    # the host names the app answers to (Host and Origin headers): loopback names by default;
    # a name a reverse proxy forwards is added with --allowed-host
    allowed_hosts: tuple[str, ...] = LOOPBACK_HOSTS
    # annotators each non-overlap item goes to (LangSmith's num_reviewers_per_item)
    reviewers: int = 1
    # --strategy active: when labelling may stop, (statistic, target, level), the status the
    # label page shows (`--stop-when`, read by trajudge.report.parse_stop_rule)
    stop_rule: tuple[str, float, float] = ("kappa", 0.6, 0.95)
    # addresses or networks of reverse proxies whose X-Forwarded-For names the client (for
    # the sign-in log and the per-client throttle); none by default: the header is ignored
    trusted_proxies: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "trusted_proxies", trusted_proxies(self.trusted_proxies))
        hosts = tuple(dict.fromkeys(h.strip().lower() for h in self.allowed_hosts if h.strip()))
        if not hosts or any("," in h or "/" in h or " " in h for h in hosts):
            raise InputError("--allowed-host", reason=f"not host names: {self.allowed_hosts!r}")
        object.__setattr__(self, "allowed_hosts", hosts)
        if not 1 <= self.reviewers <= 50:
            raise InputError("--reviewers-per-item", reason=f"must be 1-50, got {self.reviewers}")
        if not (math.isfinite(self.session_hours) and 0.0 < self.session_hours <= 24 * 30):
            raise InputError(
                "--session-hours", reason=f"must be in (0, 720], got {self.session_hours}"
            )
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
        # imported on use: the statistics load when the app is configured, not for --help
        from trajudge.calibration.active._stop import StopRule

        try:
            StopRule(*self.stop_rule)  # type: ignore[arg-type]
        except (ValueError, TypeError) as exc:
            raise InputError("--stop-when", reason=str(exc)) from None
        if self.learn is not None and self.learn < 0:
            raise InputError("--learn", reason=f"must be at least 0, got {self.learn}")

    def to_env(self) -> dict[str, str]:
        """The environment variables that carry this configuration to the app process."""
        env = {
            ENV_DB: self.db_url,
            ENV_RUBRIC: self.rubric,
            ENV_SHOW_JUDGES: "1" if self.show_judges else "0",
            ENV_STRATEGY: self.strategy,
            ENV_OVERLAP: repr(self.overlap),
            ENV_SESSION_HOURS: repr(self.session_hours),
            ENV_ALLOWED_HOSTS: ",".join(self.allowed_hosts),
            ENV_REVIEWERS: str(self.reviewers),
            ENV_STOP_WHEN: json.dumps(list(self.stop_rule)),
            ENV_FORWARDED_ALLOW_IPS: ",".join(self.trusted_proxies),
        }
        if self.dataset:
            env[ENV_DATASET] = self.dataset
        if self.max_pairs is not None:
            env[ENV_MAX_PAIRS] = str(self.max_pairs)
        if self.budget is not None:
            env[ENV_BUDGET] = str(self.budget)
        if self.learn is not None:
            env[ENV_LEARN] = str(self.learn)
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
        try:
            learn = int(env[ENV_LEARN]) if env.get(ENV_LEARN) else None
        except ValueError:
            raise InputError(ENV_LEARN, reason="expected a whole number") from None
        try:
            session_hours = float(env.get(ENV_SESSION_HOURS, "12"))
        except ValueError:
            raise InputError(ENV_SESSION_HOURS, reason="expected a number") from None
        hosts = tuple(h for h in env.get(ENV_ALLOWED_HOSTS, "").split(",") if h)
        try:
            reviewers = int(env.get(ENV_REVIEWERS, "1"))
        except ValueError:
            raise InputError(ENV_REVIEWERS, reason="expected a whole number") from None
        try:
            statistic, target, level = json.loads(env.get(ENV_STOP_WHEN, '["kappa", 0.6, 0.95]'))
            stop_rule = (str(statistic), float(target), float(level))
        except (ValueError, TypeError):
            raise InputError(ENV_STOP_WHEN, reason="expected [statistic, target, level]") from None
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
            max_pairs=max_pairs,
            budget=budget,
            learn=learn,
            session_hours=session_hours,
            allowed_hosts=hosts or LOOPBACK_HOSTS,
            reviewers=reviewers,
            stop_rule=stop_rule,
        )


def trusted_proxies(given: tuple[str, ...]) -> tuple[str, ...]:
    """The --trusted-proxy values as addresses or networks (``10.0.0.0/8``), written the way
    uvicorn reads them; anything else (a host name, ``*``) is refused: trusting every peer
    would let anyone name any client address.

    >>> trusted_proxies(("127.0.0.1", "10.1.2.3/8", "::1"))
    ('127.0.0.1', '10.0.0.0/8', '::1')
    """
    out: list[str] = []
    for text in given:
        try:
            if "/" in text:
                out.append(str(ipaddress.ip_network(text.strip(), strict=False)))
            else:
                out.append(str(ipaddress.ip_address(text.strip())))
        except ValueError:
            raise InputError(
                "--trusted-proxy", reason=f"{text!r} is not an IP address or network"
            ) from None
    return tuple(dict.fromkeys(out))


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
