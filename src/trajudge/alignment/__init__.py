"""Judge alignment: the methods that fit a judge to human labels on dev and measure the gain on
holdout, and ``trajudge align``, which runs them on a dataset of the store and saves an
aligned judge that ``trajudge judge`` / ``trajudge run`` use by name.

The methods are plain functions over per-item DataFrames (``align``, ``fit_threshold``,
``fit_calibrator``, ``fit_stack``, ``compare_verdicts``, ``compare_probabilities``,
``dev_cross_validation``); they build on the statistics of :mod:`trajudge.calibration`
(agreement, intervals, trust-or-escalate, PPI), which keeps exporting their names. The rest of
the package reads the store, makes the few-shot judge calls through the batch runner and saves
the aligned judge. It sits beside :mod:`trajudge.pipeline`: it imports judges, calibration, the
report's store readers and the store; the CLI and the pipeline import it, and calibration only
re-exports the methods' names, lazily. Its names load on first use.
"""

from typing import TYPE_CHECKING

from trajudge.core import lazy_exports

if TYPE_CHECKING:
    from trajudge.alignment._aligned import aligned_judge, aligned_judges_by_name
    from trajudge.alignment._calibrate import (
        CalibrationFit,
        Calibrator,
        calibrated_threshold,
        fit_calibrator,
        pass_cut,
        task_folds,
    )
    from trajudge.alignment._compare import (
        MetricChange,
        ProbabilityComparison,
        VerdictComparison,
        compare_probabilities,
        compare_verdicts,
        gain_verdict,
    )
    from trajudge.alignment._cv import (
        DevCrossValidation,
        dev_cross_validation,
        threshold_oof,
        verdict_kappa,
    )
    from trajudge.alignment._features import item_features
    from trajudge.alignment._fewshot import (
        FewshotResult,
        holdout_tasks,
        run_fewshot,
        select_examples,
    )
    from trajudge.alignment._items import JudgeItems, judge_items, target_score
    from trajudge.alignment._methods import AlignmentResult, MethodResult, align
    from trajudge.alignment._options import METHODS, AlignOptions
    from trajudge.alignment._run import AlignmentRun, align_judge
    from trajudge.alignment._stack import FeatureWeight, StackFit, fit_stack
    from trajudge.alignment._threshold import ThresholdFit, apply_threshold, fit_threshold

__all__ = [
    "METHODS",
    "AlignOptions",
    "AlignmentResult",
    "AlignmentRun",
    "CalibrationFit",
    "Calibrator",
    "DevCrossValidation",
    "FeatureWeight",
    "FewshotResult",
    "JudgeItems",
    "MethodResult",
    "MetricChange",
    "ProbabilityComparison",
    "StackFit",
    "ThresholdFit",
    "VerdictComparison",
    "align",
    "align_judge",
    "aligned_judge",
    "aligned_judges_by_name",
    "apply_threshold",
    "calibrated_threshold",
    "compare_probabilities",
    "compare_verdicts",
    "dev_cross_validation",
    "fit_calibrator",
    "fit_stack",
    "fit_threshold",
    "gain_verdict",
    "holdout_tasks",
    "item_features",
    "judge_items",
    "pass_cut",
    "run_fewshot",
    "select_examples",
    "target_score",
    "task_folds",
    "threshold_oof",
    "verdict_kappa",
]

_EXPORTS = {
    "aligned_judge": "trajudge.alignment._aligned",
    "aligned_judges_by_name": "trajudge.alignment._aligned",
    "CalibrationFit": "trajudge.alignment._calibrate",
    "Calibrator": "trajudge.alignment._calibrate",
    "fit_calibrator": "trajudge.alignment._calibrate",
    "calibrated_threshold": "trajudge.alignment._calibrate",
    "pass_cut": "trajudge.alignment._calibrate",
    "task_folds": "trajudge.alignment._calibrate",
    "MetricChange": "trajudge.alignment._compare",
    "ProbabilityComparison": "trajudge.alignment._compare",
    "VerdictComparison": "trajudge.alignment._compare",
    "compare_probabilities": "trajudge.alignment._compare",
    "compare_verdicts": "trajudge.alignment._compare",
    "gain_verdict": "trajudge.alignment._compare",
    "DevCrossValidation": "trajudge.alignment._cv",
    "dev_cross_validation": "trajudge.alignment._cv",
    "threshold_oof": "trajudge.alignment._cv",
    "verdict_kappa": "trajudge.alignment._cv",
    "item_features": "trajudge.alignment._features",
    "FewshotResult": "trajudge.alignment._fewshot",
    "holdout_tasks": "trajudge.alignment._fewshot",
    "run_fewshot": "trajudge.alignment._fewshot",
    "select_examples": "trajudge.alignment._fewshot",
    "JudgeItems": "trajudge.alignment._items",
    "judge_items": "trajudge.alignment._items",
    "target_score": "trajudge.alignment._items",
    "AlignmentResult": "trajudge.alignment._methods",
    "MethodResult": "trajudge.alignment._methods",
    "align": "trajudge.alignment._methods",
    "METHODS": "trajudge.alignment._options",
    "AlignOptions": "trajudge.alignment._options",
    "AlignmentRun": "trajudge.alignment._run",
    "align_judge": "trajudge.alignment._run",
    "FeatureWeight": "trajudge.alignment._stack",
    "StackFit": "trajudge.alignment._stack",
    "fit_stack": "trajudge.alignment._stack",
    "ThresholdFit": "trajudge.alignment._threshold",
    "apply_threshold": "trajudge.alignment._threshold",
    "fit_threshold": "trajudge.alignment._threshold",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
