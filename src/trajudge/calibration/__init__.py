"""Calibration: agreement statistics, bootstrap intervals, bias probes, reliability."""

from trajudge.calibration._agreement import (
    BinaryRates,
    ac1_from_counts,
    binary_rates,
    cohen_kappa,
    confusion,
    gwet_ac1,
    kappa_from_counts,
    percent_agreement,
)
from trajudge.calibration._align import AlignmentResult, MethodResult, align
from trajudge.calibration._align_calibrate import (
    CalibrationFit,
    Calibrator,
    fit_calibrator,
    pass_cut,
    task_folds,
)
from trajudge.calibration._align_compare import (
    MetricChange,
    ProbabilityComparison,
    VerdictComparison,
    compare_probabilities,
    compare_verdicts,
    gain_verdict,
)
from trajudge.calibration._align_features import item_features
from trajudge.calibration._align_stack import FeatureWeight, StackFit, fit_stack
from trajudge.calibration._align_threshold import ThresholdFit, apply_threshold, fit_threshold
from trajudge.calibration._analysis import analyze, calibrate_files
from trajudge.calibration._bias import (
    BANDS,
    Probe,
    central_tendency_probe,
    order_shift_probe,
    position_probe,
    self_preference_probe,
    stability_probe,
    verbosity_probe,
)
from trajudge.calibration._bootstrap import (
    binary_agreement,
    bootstrap_kappa,
    bootstrap_ratio,
    cluster_bootstrap,
    cluster_bootstrap_many,
    multiplicities,
    per_item_sums,
    resampled_sums,
)
from trajudge.calibration._budget import LabelBudget, label_budget
from trajudge.calibration._corrected import CorrectedRate, corrected_pass_rate, rogan_gladen
from trajudge.calibration._corrected_k import CorrectedPassK, corrected_pass_hat_k
from trajudge.calibration._escalate import (
    TrustCut,
    TrustOutcome,
    clopper_pearson_lower,
    escalated_items,
    evaluate_trust,
    fit_trust_cut,
)
from trajudge.calibration._estimate import Estimate
from trajudge.calibration._judge_report import model_family
from trajudge.calibration._ppi import (
    PPIEstimate,
    PPIPassK,
    pass_rate_estimates,
    ppi_pass_hat_k,
    ppi_pass_rate,
)
from trajudge.calibration._probability import (
    brier_score,
    expected_calibration_error,
    reliability_diagram,
)
from trajudge.calibration._raters import (
    HumanAgreement,
    consensus,
    human_agreement,
    krippendorff_alpha,
    reliability_matrix,
)
from trajudge.calibration._reliability import (
    ReliabilityResult,
    pass_at_k,
    pass_hat_k,
    reliability,
    reliability_intervals,
)
from trajudge.calibration._results import CalibrationResult, JudgeReport
from trajudge.calibration._synthetic import (
    SyntheticJudge,
    synthetic_judgments,
    synthetic_labels,
    synthetic_world,
)
from trajudge.calibration._tables import read_table, validate_table
from trajudge.calibration._validation import as_binary, as_float, parse_verdict
from trajudge.calibration._verdicts import (
    Threshold,
    best_threshold,
    item_means,
    item_verdicts,
    judge_threshold,
    label_threshold,
    row_passes,
)

__all__ = [
    "BANDS",
    "AlignmentResult",
    "BinaryRates",
    "CalibrationFit",
    "CalibrationResult",
    "Calibrator",
    "CorrectedPassK",
    "CorrectedRate",
    "Estimate",
    "FeatureWeight",
    "HumanAgreement",
    "JudgeReport",
    "LabelBudget",
    "MethodResult",
    "MetricChange",
    "PPIEstimate",
    "PPIPassK",
    "ProbabilityComparison",
    "Probe",
    "ReliabilityResult",
    "StackFit",
    "SyntheticJudge",
    "Threshold",
    "ThresholdFit",
    "TrustCut",
    "TrustOutcome",
    "VerdictComparison",
    "ac1_from_counts",
    "align",
    "analyze",
    "apply_threshold",
    "as_binary",
    "as_float",
    "best_threshold",
    "binary_agreement",
    "binary_rates",
    "bootstrap_kappa",
    "bootstrap_ratio",
    "brier_score",
    "calibrate_files",
    "central_tendency_probe",
    "clopper_pearson_lower",
    "cluster_bootstrap",
    "cluster_bootstrap_many",
    "cohen_kappa",
    "compare_probabilities",
    "compare_verdicts",
    "confusion",
    "consensus",
    "corrected_pass_hat_k",
    "corrected_pass_rate",
    "escalated_items",
    "evaluate_trust",
    "expected_calibration_error",
    "fit_calibrator",
    "fit_stack",
    "fit_threshold",
    "fit_trust_cut",
    "gain_verdict",
    "gwet_ac1",
    "human_agreement",
    "item_features",
    "item_means",
    "item_verdicts",
    "judge_threshold",
    "kappa_from_counts",
    "krippendorff_alpha",
    "label_budget",
    "label_threshold",
    "model_family",
    "multiplicities",
    "order_shift_probe",
    "parse_verdict",
    "pass_at_k",
    "pass_cut",
    "pass_hat_k",
    "pass_rate_estimates",
    "per_item_sums",
    "percent_agreement",
    "position_probe",
    "ppi_pass_hat_k",
    "ppi_pass_rate",
    "read_table",
    "reliability",
    "reliability_diagram",
    "reliability_intervals",
    "reliability_matrix",
    "resampled_sums",
    "rogan_gladen",
    "row_passes",
    "self_preference_probe",
    "stability_probe",
    "synthetic_judgments",
    "synthetic_labels",
    "synthetic_world",
    "task_folds",
    "validate_table",
    "verbosity_probe",
]
