"""Eval-set hygiene: cases from failed runs, strata, splits, boundary coverage, rotation.

An eval set is a JSON Lines file under version control, one :class:`EvalCase` per line. The
functions here keep it honest over time: stratified so rare intents are not drowned out,
split by task so tuning never sees the holdout, tagged so boundary cases are counted,
rotated so it does not go stale, layered so a small core set runs first, and tied to an agent
fingerprint that says when a full re-run is due.
"""

from trajudge.evalset._boundary import (
    MAX_OUTPUT_CHARS,
    MIN_BOUNDARY_SHARE,
    SILENT_TOOLS,
    CoverageReport,
    coverage,
    detect_boundary_tags,
)
from trajudge.evalset._build import (
    case_id,
    default_label,
    infer_tools,
    make_case,
)
from trajudge.evalset._case import (
    BOUNDARY_KINDS,
    SPLITS,
    STRATA,
    VERDICTS,
    BoundaryKind,
    CaseLabel,
    CaseSource,
    EvalCase,
    Split,
    Stratum,
    Verdict,
    case_frame,
    read_evalset,
    write_evalset,
)
from trajudge.evalset._fingerprint import (
    Fingerprint,
    diff_fingerprints,
    fingerprint,
    read_fingerprint,
    tools_hash,
    write_fingerprint,
)
from trajudge.evalset._layers import core_gate, core_tasks, layers
from trajudge.evalset._ops import (
    EvalSetSummary,
    Rotation,
    add_case,
    fingerprint_dataset,
    rotate_cases,
    rotate_evalset,
    sample_evalset,
    split_evalset,
    summarize,
)
from trajudge.evalset._sampling import (
    STRATUM_SHARES,
    Sample,
    assign_strata,
    common_intents,
    hard_tasks,
    largest_remainder,
    stratified_sample,
)
from trajudge.evalset._split import DEV_SHARE, assign_splits, split_of

__all__ = [
    "BOUNDARY_KINDS",
    "DEV_SHARE",
    "MAX_OUTPUT_CHARS",
    "MIN_BOUNDARY_SHARE",
    "SILENT_TOOLS",
    "SPLITS",
    "STRATA",
    "STRATUM_SHARES",
    "VERDICTS",
    "BoundaryKind",
    "CaseLabel",
    "CaseSource",
    "CoverageReport",
    "EvalCase",
    "EvalSetSummary",
    "Fingerprint",
    "Rotation",
    "Sample",
    "Split",
    "Stratum",
    "Verdict",
    "add_case",
    "assign_splits",
    "assign_strata",
    "case_frame",
    "case_id",
    "common_intents",
    "core_gate",
    "core_tasks",
    "coverage",
    "default_label",
    "detect_boundary_tags",
    "diff_fingerprints",
    "fingerprint",
    "fingerprint_dataset",
    "hard_tasks",
    "infer_tools",
    "largest_remainder",
    "layers",
    "make_case",
    "read_evalset",
    "read_fingerprint",
    "rotate_cases",
    "rotate_evalset",
    "sample_evalset",
    "split_evalset",
    "split_of",
    "stratified_sample",
    "summarize",
    "tools_hash",
    "write_evalset",
    "write_fingerprint",
]
