"""Tables of a ``report.json`` for notebooks: any report, old or new, with or without pass^k.

A report may have no judge, no task ids (hence no pass^k), judges whose every call failed
(their figures are null), or come from an older trajudge where AC1 or TPR were bare numbers
instead of ``{value, low, high}`` objects. These functions read whatever is there and always
return frames with the same columns, so a notebook never fails on a missing key.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

JUDGE_COLUMNS = [
    "judge",
    "kappa",
    "kappa_low",
    "kappa_high",
    "ac1",
    "agreement",
    "tpr",
    "tnr",
    "flip_rate",
    "cost_per_1k",
    "errors",
    "judgments",
    "items",
    "flags",
]
PASS_K_COLUMNS = ["source", "kind", "k", "pass^k", "low", "high", "tasks"]
CORRECTED_COLUMNS = ["judge", "k", "raw", "corrected", "low", "high"]


def _part(obj: Any, key: str = "value") -> float:
    """A number from a bare number or an estimate object; NaN for None or a missing key."""
    if isinstance(obj, Mapping):
        obj = obj.get(key)
    elif key != "value":
        return math.nan
    if obj is None:
        return math.nan
    try:
        return float(obj)
    except (TypeError, ValueError):
        return math.nan


def judge_table(report: Mapping[str, Any]) -> pd.DataFrame:
    """One row per judge: kappa with its interval, AC1, agreement, TPR, TNR, flip rate, cost,
    errors and flags (NaN where a figure is undefined or absent)."""
    rows = []
    for j in report.get("judges") or []:
        n_errors = j.get("n_errors")
        rows.append(
            {
                "judge": str(j.get("name", j.get("judge", "?"))),
                "kappa": _part(j.get("kappa")),
                "kappa_low": _part(j.get("kappa"), "low"),
                "kappa_high": _part(j.get("kappa"), "high"),
                "ac1": _part(j.get("ac1")),
                "agreement": _part(j.get("agreement")),
                "tpr": _part(j.get("tpr")),
                "tnr": _part(j.get("tnr")),
                "flip_rate": _part(j.get("flip_rate")),
                "cost_per_1k": _part(j.get("cost_per_1k")),
                "errors": math.nan if n_errors is None else int(n_errors),
                "judgments": _part(j.get("n_judgments")),
                "items": _part(j.get("n_items")),
                "flags": ", ".join(j.get("flags") or []) or "-",
            }
        )
    return pd.DataFrame(rows, columns=JUDGE_COLUMNS)


def pass_k_table(report: Mapping[str, Any]) -> pd.DataFrame:
    """Long table of pass^k per verdict source and k (empty, with its columns, when the report
    has no pass^k: no task ids)."""
    rows = []
    for key, src in (report.get("sources") or {}).items():
        tasks = src.get("n_tasks") or {}
        for k, est in (src.get("pass^k") or {}).items():
            rows.append(
                {
                    "source": str(src.get("title", key)),
                    "kind": src.get("kind"),
                    "k": int(k),
                    "pass^k": _part(est),
                    "low": _part(est, "low"),
                    "high": _part(est, "high"),
                    "tasks": _part(tasks.get(str(k))),
                }
            )
    return pd.DataFrame(rows, columns=PASS_K_COLUMNS)


def corrected_table(report: Mapping[str, Any]) -> pd.DataFrame:
    """Per judge and k: its raw pass^k and the judge-corrected pass^k with interval."""
    rows = []
    for j in report.get("judges") or []:
        ck = j.get("corrected_pass_hat") or {}
        raw = ck.get("raw") or {}
        for k, est in (ck.get("corrected") or {}).items():
            rows.append(
                {
                    "judge": str(j.get("name", "?")),
                    "k": int(k),
                    "raw": _part(raw.get(k)),
                    "corrected": _part(est),
                    "low": _part(est, "low"),
                    "high": _part(est, "high"),
                }
            )
    return pd.DataFrame(rows, columns=CORRECTED_COLUMNS)
