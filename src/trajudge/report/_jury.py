"""The jury of a rubric's judges, as a judge of its own (``--jury``).

The jury's verdict on an item combines its members' per-item aggregates the way
:func:`trajudge.judges.aggregate_jury` does: the mean of their mean scores against the pass
threshold when the members score on an ordinal scale (one threshold for all), the majority of
their pass/fail verdicts on a binary one (an even split is a fail). It is built as calls of a
judge named ``jury`` (one call per member, as samples of one order), so that every figure of
the report treats it as any other judge: kappa with intervals, corrected rates, and pass^k as
a verdict source of its own.
"""

from __future__ import annotations

import pandas as pd

from trajudge.calibration import item_means, item_verdicts, judge_threshold
from trajudge.core import InputError
from trajudge.report._categorical import JURY

_KEEP = ("task_id", "trial", "length", "agent_model", "rubric_id")


def add_jury(
    judgments: pd.DataFrame, *, threshold: float | None, rubric_threshold: float | None
) -> pd.DataFrame:
    """``judgments`` plus the jury's calls (unchanged with fewer than two judges)."""
    names = sorted(str(n) for n in judgments["judge"].unique())
    if len(names) < 2:
        return judgments
    if JURY in names:
        raise InputError("--jury", reason=f"a judge is already named {JURY!r}")
    thresholds = {
        n: judge_threshold(
            n,
            judgments[judgments["judge"] == n],
            threshold=threshold,
            rubric_threshold=rubric_threshold,
        )
        for n in names
    }
    values = {c.value for c in thresholds.values()}
    mean_scores = values != {None}  # ordinal scores: one scale and one threshold for all
    if mean_scores and len(values) > 1:
        raise InputError(
            "--jury",
            reason="the jury's judges must share one scale: pass/fail for all, "
            "or one ordinal scale "
            f"with one threshold (here {', '.join(sorted(str(v) for v in values))})",
        )
    parts = []
    for i, n in enumerate(names):
        rows = judgments[judgments["judge"] == n]
        if mean_scores:
            v = item_means(rows, ordinal=True)
        else:
            v = item_verdicts(rows, threshold=thresholds[n].value)
        parts.append(
            pd.DataFrame(
                {
                    "item": v.index,
                    "judge": JURY,
                    "order": "ab",
                    "sample": i,
                    "score": v.to_numpy(dtype=float),
                    "verdict": float("nan"),
                    "error": None,
                }
            )
        )
    jury = pd.concat(parts, ignore_index=True)
    info = judgments.drop_duplicates("item").set_index("item")
    for col in _KEEP:
        if col in judgments:
            jury[col] = jury["item"].map(info[col]).to_numpy()
    return pd.concat([judgments, jury], ignore_index=True)
