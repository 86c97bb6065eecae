"""Judge alignment as a product: ``trajudge align`` fits on dev, measures on holdout, and
saves an aligned judge that ``trajudge judge`` / ``trajudge run`` use by name.

The statistics are plain functions in :mod:`trajudge.calibration` (``align``, ``fit_*``,
``compare_*``, trust-or-escalate, PPI); this package reads the store, makes the few-shot
judge calls through the batch runner and saves the aligned judge. It sits beside
:mod:`trajudge.pipeline`: it imports judges, calibration, the report's store readers and the
store, and only the CLI and the pipeline import it.
"""

from trajudge.alignment._aligned import aligned_judge, aligned_judges_by_name
from trajudge.alignment._fewshot import FewshotResult, holdout_tasks, run_fewshot, select_examples
from trajudge.alignment._items import JudgeItems, judge_items, target_score
from trajudge.alignment._options import METHODS, AlignOptions
from trajudge.alignment._run import AlignmentRun, align_judge

__all__ = [
    "METHODS",
    "AlignOptions",
    "AlignmentRun",
    "FewshotResult",
    "JudgeItems",
    "align_judge",
    "aligned_judge",
    "aligned_judges_by_name",
    "holdout_tasks",
    "judge_items",
    "run_fewshot",
    "select_examples",
    "target_score",
]
