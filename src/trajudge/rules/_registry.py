"""Custom checks: a registry filled by the ``@register_check("name")`` decorator.

A custom check is a function ``(trajectory, spec, **params) -> CheckResult``. A spec uses it
through ``checks: [{name: ..., params: {...}, severity: gate|diagnostic|regression}]``; the
severity in the spec wins over the one the function returns, and the result is renamed to the
registered name. Spec files can list modules to import (``imports: [mypkg.checks]``) so their
checks are registered before the names are validated.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any

from trajudge.rules._models import CheckResult
from trajudge.trajectories import TaskSpec, Trajectory

_REGISTRY: dict[str, Callable[..., CheckResult]] = {}


def register_check(name: str) -> Callable[[Callable[..., CheckResult]], Callable[..., CheckResult]]:
    """Register ``func`` as the custom check ``name`` (re-registering replaces it).

    >>> @register_check("always_true")
    ... def _always_true(trajectory, spec):
    ...     return CheckResult(check="always_true", passed=True, score=1.0)
    >>> "always_true" in registered_checks()
    True
    >>> unregister_check("always_true")
    """
    if not name or not name.strip():
        raise ValueError("a custom check needs a non-empty name")

    def decorator(func: Callable[..., CheckResult]) -> Callable[..., CheckResult]:
        _REGISTRY[name] = func
        return func

    return decorator


def unregister_check(name: str) -> None:
    """Remove a registered check (tests use this to clean up)."""
    _REGISTRY.pop(name, None)


def registered_checks() -> dict[str, Callable[..., CheckResult]]:
    """A copy of the registry: name -> function."""
    return dict(_REGISTRY)


def get_check(name: str) -> Callable[..., CheckResult]:
    """The registered function, or KeyError naming the known checks."""
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY)) or "none"
        raise KeyError(f"unknown custom check {name!r} (registered: {known})") from None


def bind_error(name: str, params: dict[str, Any]) -> str | None:
    """Why ``params`` do not fit the check's signature, or None when they do."""
    func = get_check(name)
    try:
        inspect.signature(func).bind(None, None, **params)
    except TypeError as exc:
        return str(exc)
    return None


# -- built-in custom checks ------------------------------------------------------------------


@register_check("final_answer_regex")
def final_answer_regex(
    trajectory: Trajectory, spec: TaskSpec, *, pattern: str, flags: str = ""
) -> CheckResult:
    """The final answer contains a match of ``pattern`` (``flags``: any of ``i``, ``m``, ``s``)."""
    flag_map = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL}
    value = 0
    for f in flags:
        value |= flag_map[f]
    answer = trajectory.final_answer
    if answer is None:
        return CheckResult(check="final_answer_regex", passed=False, score=0.0, detail="no answer")
    found = re.search(pattern, answer, value) is not None
    return CheckResult(
        check="final_answer_regex",
        passed=found,
        score=1.0 if found else 0.0,
        detail="" if found else f"final answer does not match {pattern!r}",
    )


@register_check("max_calls")
def max_calls(trajectory: Trajectory, spec: TaskSpec, *, tool: str, limit: int) -> CheckResult:
    """``tool`` is called at most ``limit`` times."""
    n = sum(1 for s in trajectory.steps if s.tool == tool)
    ok = n <= limit
    return CheckResult(
        check="max_calls",
        passed=ok,
        score=1.0 if ok else 0.0,
        detail="" if ok else f"{tool} called {n} times (limit {limit})",
        data={"tool": tool, "count": n, "limit": limit},
    )
