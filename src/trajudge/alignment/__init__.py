"""Judge alignment as a product: ``trajudge align`` fits on dev, measures on holdout, and
saves an aligned judge that ``trajudge judge`` / ``trajudge run`` use by name.

The statistics are plain functions in :mod:`trajudge.calibration` (``align``, ``fit_*``,
``compare_*``, trust-or-escalate, PPI); this package reads the store, makes the few-shot
judge calls through the batch runner and saves the aligned judge. It sits beside
:mod:`trajudge.pipeline`: it imports judges, calibration, the report's store readers and the
store, and only the CLI and the pipeline import it. Its names load on first use.
"""

from typing import TYPE_CHECKING

from trajudge.core import lazy_exports

if TYPE_CHECKING:
    from trajudge.alignment._aligned import aligned_judge, aligned_judges_by_name
    from trajudge.alignment._fewshot import (
        FewshotResult,
        holdout_tasks,
        run_fewshot,
        select_examples,
    )
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

_EXPORTS = {
    "aligned_judge": "trajudge.alignment._aligned",
    "aligned_judges_by_name": "trajudge.alignment._aligned",
    "FewshotResult": "trajudge.alignment._fewshot",
    "holdout_tasks": "trajudge.alignment._fewshot",
    "run_fewshot": "trajudge.alignment._fewshot",
    "select_examples": "trajudge.alignment._fewshot",
    "JudgeItems": "trajudge.alignment._items",
    "judge_items": "trajudge.alignment._items",
    "target_score": "trajudge.alignment._items",
    "METHODS": "trajudge.alignment._options",
    "AlignOptions": "trajudge.alignment._options",
    "AlignmentRun": "trajudge.alignment._run",
    "align_judge": "trajudge.alignment._run",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
