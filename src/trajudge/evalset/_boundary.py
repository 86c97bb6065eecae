"""Boundary cases: detecting them in a trajectory, and how well an eval set covers them.

An eval set made only of ordinary runs says little about how the agent behaves when a tool
returns nothing, too much, an error, a refusal or nothing in time, or when the user sends far
more than usual. Seven kinds are tracked: ``empty_result``, ``oversized_output``,
``ambiguous_request``, ``long_input``, ``permission_denied``, ``tool_failure`` and
``timeout``; ``long_input`` is detected from the user's turns, ``ambiguous_request`` (a matter
of meaning) is tagged by hand, the rest are detected from the tool calls.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from trajudge.calibration import reliability
from trajudge.evalset._case import BOUNDARY_KINDS, EvalCase, case_frame
from trajudge.trajectories import Trajectory

MAX_OUTPUT_CHARS = 20_000
# A user turn this long (a pasted log or document) stresses context handling; ordinary
# requests, τ-bench's included, are under 1,000 characters.
MAX_INPUT_CHARS = 10_000
MIN_BOUNDARY_SHARE = 0.10
# tools whose empty output is by design (τ-bench's "think" returns "")
SILENT_TOOLS: frozenset[str] = frozenset({"think"})
EMPTY_OUTPUTS = frozenset({"", "[]", "{}", "null"})

_TIMEOUT = re.compile(
    r"time[ds]?[\s_-]?out(?:s|error|exception)?\b|deadline exceeded", re.IGNORECASE
)
_PERMISSION_WORDS = r"permission denied|access denied|unauthori[sz]ed|forbidden"
# a bare 403 counts only in error text: tool outputs are full of numbers (a fare of 403)
_PERMISSION_IN_ERROR = re.compile(rf"{_PERMISSION_WORDS}|\b403\b", re.IGNORECASE)
_PERMISSION_IN_OUTPUT = re.compile(
    rf"{_PERMISSION_WORDS}|\b(?:http|status|code|error)[\s:=]*403\b", re.IGNORECASE
)


def detect_boundary_tags(
    trajectory: Trajectory,
    *,
    max_output_chars: int = MAX_OUTPUT_CHARS,
    max_input_chars: int = MAX_INPUT_CHARS,
    silent_tools: Collection[str] = SILENT_TOOLS,
) -> list[str]:
    """The boundary kinds a trajectory's tool calls run into, in :data:`BOUNDARY_KINDS` order.

    Rules, step by step:

    * ``empty_result``: a successful call whose output is ``""`` (after stripping), ``[]``,
      ``{}`` or ``null``. An output of None means "not recorded" and is not empty; tools in
      ``silent_tools`` (empty by design) are ignored.
    * ``oversized_output``: an output longer than ``max_output_chars`` characters.
    * ``long_input``: the input, or any user turn of the conversation, longer than
      ``max_input_chars`` characters.
    * ``tool_failure``: a call with ``ok=False``.
    * ``timeout``: the error or output says timeout / timed out / TimeoutError / deadline
      exceeded.
    * ``permission_denied``: the error or output says permission denied, access denied,
      unauthorized or forbidden; a bare ``403`` counts in error text only (in an output it
      must read like a status: ``HTTP 403``, ``status: 403``).
    * ``ambiguous_request`` is never detected: tag it by hand.

    Examples
    --------
    >>> from trajudge.trajectories import Step
    >>> t = Trajectory(id="a", task_id="t", steps=[
    ...     Step(tool="search", output="[]"),
    ...     Step(tool="book", ok=False, error="HTTP 403 Forbidden")])
    >>> detect_boundary_tags(t)
    ['empty_result', 'permission_denied', 'tool_failure']
    """
    found: set[str] = set()
    user_texts = [trajectory.input or ""]
    user_texts += [m.content or "" for m in trajectory.messages if m.role == "user"]
    if any(len(text) > max_input_chars for text in user_texts):
        found.add("long_input")
    for step in trajectory.steps:
        out = step.output
        if (
            step.ok
            and out is not None
            and out.strip() in EMPTY_OUTPUTS
            and step.tool not in silent_tools
        ):
            found.add("empty_result")
        if out is not None and len(out) > max_output_chars:
            found.add("oversized_output")
        if not step.ok:
            found.add("tool_failure")
        err = step.error or ""
        if _TIMEOUT.search(err) or (out is not None and _TIMEOUT.search(out)):
            found.add("timeout")
        if _PERMISSION_IN_ERROR.search(err) or (
            out is not None and _PERMISSION_IN_OUTPUT.search(out)
        ):
            found.add("permission_denied")
    return [k for k in BOUNDARY_KINDS if k in found]


@dataclass
class CoverageReport:
    """How an eval set covers the boundary kinds.

    Attributes
    ----------
    table:
        One row per kind: ``kind``, ``cases``, ``share`` (of all cases) and ``pass^k`` for
        each k (NaN where no task of that kind has k verdicts).
    n_cases, n_boundary:
        Cases in the set, and cases with at least one boundary tag.
    boundary_share:
        ``n_boundary / n_cases`` (NaN for an empty set).
    missing:
        Kinds with no case at all.
    warnings:
        Human-readable warnings; one when boundary cases are under ``min_share`` of the set.
    """

    table: pd.DataFrame
    n_cases: int
    n_boundary: int
    boundary_share: float
    missing: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


SuccessSpec = str | Mapping[str, bool | Sequence[bool | None] | None]


def coverage(
    cases_or_frame: Sequence[EvalCase] | pd.DataFrame,
    *,
    success: SuccessSpec = "outcome",
    ks: Sequence[int] = (1, 2),
    min_share: float = MIN_BOUNDARY_SHARE,
) -> CoverageReport:
    """Each boundary kind's share of the set and pass^k on the cases of that kind.

    Parameters
    ----------
    cases_or_frame:
        Eval cases, or a frame with ``id``, ``task_id`` and ``tags`` (lists of kinds).
    success:
        Where "pass" comes from. ``"outcome"``: the environment outcome of each case's
        trajectory; ``"label"``: the case's expected verdict is ``pass``; another string: that
        column of the frame; a mapping: case id -> verdict, or a list of verdicts when the case
        was run several times. None is "no verdict" and is left out of pass^k.
    ks:
        The k of pass^k. Trials are grouped by task id (all runs of all cases of one task),
        through :func:`trajudge.calibration.reliability`.
    min_share:
        Warn when fewer than this share of cases carry a boundary tag.

    Examples
    --------
    >>> frame = pd.DataFrame({"id": ["a", "b", "c", "d"], "task_id": ["1", "1", "2", "3"],
    ...                       "tags": [["timeout"], ["timeout"], [], []],
    ...                       "success": [True, False, True, True]})
    >>> r = coverage(frame, success="success", ks=[1, 2])
    >>> row = r.table.set_index("kind").loc["timeout"]
    >>> float(row["share"]), float(row["pass^1"]), float(row["pass^2"])  # task 1: c=1, n=2
    (0.5, 0.5, 0.0)
    """
    frame = _success_frame(cases_or_frame, success)
    n = len(frame)
    ks = sorted({int(k) for k in ks})
    rows: list[dict[str, Any]] = []
    tag_sets = [set(t) for t in frame["tags"]]
    for kind in BOUNDARY_KINDS:
        mask = [kind in tags for tags in tag_sets]
        sub = frame[mask]
        row: dict[str, Any] = {
            "kind": kind,
            "cases": len(sub),
            "share": len(sub) / n if n else math.nan,
        }
        runs = sub.explode("success")
        runs = runs[runs["success"].notna()]
        result = reliability(runs[["task_id", "success"]], ks=ks) if len(runs) else None
        for k in ks:
            row[f"pass^{k}"] = result.pass_hat[k] if result is not None else math.nan
        rows.append(row)
    n_boundary = sum(1 for tags in tag_sets if tags)
    share = n_boundary / n if n else math.nan
    missing = [r["kind"] for r in rows if r["cases"] == 0]
    warnings: list[str] = []
    if n and share < min_share:
        warnings.append(
            f"boundary cases are {share:.0%} of the set ({n_boundary} of {n}), under "
            f"{min_share:.0%}: add cases with empty results, failures, timeouts, ..."
        )
    return CoverageReport(
        table=pd.DataFrame(rows),
        n_cases=n,
        n_boundary=n_boundary,
        boundary_share=share,
        missing=missing,
        warnings=warnings,
    )


def _success_frame(
    cases_or_frame: Sequence[EvalCase] | pd.DataFrame, success: SuccessSpec
) -> pd.DataFrame:
    """A frame with ``id``, ``task_id``, ``tags`` and ``success`` (a list of verdicts per row)."""
    if isinstance(cases_or_frame, pd.DataFrame):
        frame = cases_or_frame.copy()
    else:
        frame = case_frame(list(cases_or_frame))
    for col in ("id", "task_id", "tags"):
        if col not in frame.columns:
            raise ValueError(f"coverage needs a column {col!r}")
    if isinstance(success, str):
        if success == "label" and "label" in frame.columns:
            values: list[Any] = [None if v is None else v == "pass" for v in frame["label"]]
        elif success in frame.columns:
            values = [None if _missing(v) else bool(v) for v in frame[success]]
        else:
            raise ValueError(f"no column {success!r} to read success from")
    else:
        values = [success.get(str(i)) for i in frame["id"]]
    frame["success"] = [list(v) if isinstance(v, list | tuple) else [v] for v in values]
    return frame


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))
