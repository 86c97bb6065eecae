"""Layered regression runs: a small core set first, the full set only when the core passes.

Contract for a runner
---------------------
1. ``core_ids, full_ids = layers(cases)``.
2. Run the cases in ``core_ids``. Build a result frame with one row per core case run:
   ``case_id`` and ``passed`` (True when the run met what the case requires: for an agent
   regression, the re-run met the case's expectations; for a judge regression, the judge's
   verdict equals the case's label), or None when the run errored and gave no verdict.
3. ``ok, reason = core_gate(result_frame, expected_ids=core_ids)``. When ``ok`` is False,
   stop: report ``reason`` and do not run the rest.
4. Otherwise run the cases of ``full_ids`` not yet run (``full_ids`` holds every case,
   core included, in file order).

An errored core case is never counted as a pass: the gate fails and says which case had no
verdict. A set without core cases passes the gate with a reason that says so.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd

from trajudge.evalset._case import EvalCase


def layers(cases: Sequence[EvalCase]) -> tuple[list[str], list[str]]:
    """``(core_ids, full_ids)``: the core cases, and every case; both in file order.

    >>> layers([])
    ([], [])
    """
    return [c.id for c in cases if c.core], [c.id for c in cases]


def core_tasks(cases: Sequence[EvalCase]) -> dict[str, str]:
    """The tasks of the core cases, each with the first core case that named it, in file
    order: what ``trajudge run`` judges first when ``layers.evalset`` names this set.

    >>> core_tasks([])
    {}
    """
    out: dict[str, str] = {}
    for c in cases:
        if c.core:
            out.setdefault(c.task_id, c.id)
    return out


def core_gate(
    result_frame: pd.DataFrame,
    *,
    min_pass_rate: float = 1.0,
    expected_ids: Iterable[str] | None = None,
    id_column: str = "case_id",
    passed_column: str = "passed",
) -> tuple[bool, str]:
    """Decide whether a run may go on past the core set.

    Parameters
    ----------
    result_frame:
        One row per core case run: ``case_id`` and ``passed`` (True / False / None for an
        error).
    min_pass_rate:
        The share of core cases that must pass (default 1.0: all of them).
    expected_ids:
        The core ids the run should have covered; any without a row fails the gate.

    Returns
    -------
    (bool, str)
        Whether to go on, and one line saying why.

    Examples
    --------
    >>> core_gate(pd.DataFrame({"case_id": ["a", "b"], "passed": [True, False]}))
    (False, 'core set failed: 1 of 2 passed (50%, need 100%); failed: b')
    >>> core_gate(pd.DataFrame({"case_id": ["a", "b"], "passed": [True, False]}),
    ...           min_pass_rate=0.5)
    (True, 'core set passed: 1 of 2 (50%, need 50%)')
    """
    if not 0 <= min_pass_rate <= 1:
        raise ValueError(f"min_pass_rate must be in [0, 1], got {min_pass_rate}")
    for col in (id_column, passed_column):
        if col not in result_frame.columns:
            raise ValueError(f"result_frame needs a column {col!r}")
    ids = [str(i) for i in result_frame[id_column]]
    verdicts = [_verdict(v) for v in result_frame[passed_column]]
    if expected_ids is not None:
        expected = list(dict.fromkeys(str(i) for i in expected_ids))
        missing = [i for i in expected if i not in set(ids)]
        if missing:
            return False, f"core set incomplete: no result for {_names(missing)}"
        if not expected and not ids:
            return True, "no core cases: nothing to gate on"
    if not ids:
        return False, "no core results"
    errored = [i for i, v in zip(ids, verdicts, strict=True) if v is None]
    if errored:
        return False, f"core set has no verdict (errors) for {_names(errored)}"
    failed = [i for i, v in zip(ids, verdicts, strict=True) if v is False]
    n_pass = len(ids) - len(failed)
    rate = n_pass / len(ids)
    summary = f"{n_pass} of {len(ids)} ({rate:.0%}, need {min_pass_rate:.0%})"
    if rate + 1e-12 < min_pass_rate:
        return False, (
            f"core set failed: {n_pass} of {len(ids)} passed ({rate:.0%}, need "
            f"{min_pass_rate:.0%}); failed: {_names(failed)}"
        )
    return True, f"core set passed: {summary}"


def _verdict(value: Any) -> bool | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return bool(value)


def _names(ids: Sequence[str], limit: int = 10) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")
