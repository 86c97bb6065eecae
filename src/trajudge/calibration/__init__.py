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
    bootstrap_kappa,
    bootstrap_ratio,
    cluster_bootstrap,
    per_item_sums,
    resampled_sums,
)
from trajudge.calibration._budget import LabelBudget, label_budget
from trajudge.calibration._corrected import CorrectedRate, corrected_pass_rate, rogan_gladen
from trajudge.calibration._corrected_k import CorrectedPassK, corrected_pass_hat_k
from trajudge.calibration._estimate import Estimate
from trajudge.calibration._judge_report import best_threshold, item_verdicts, model_family
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
from trajudge.calibration._results import CalibrationResult, JudgeReport, Threshold
from trajudge.calibration._synthetic import (
    SyntheticJudge,
    synthetic_judgments,
    synthetic_labels,
    synthetic_world,
)
from trajudge.calibration._tables import parse_verdict, read_table, validate_table

__all__ = [
    "BANDS",
    "BinaryRates",
    "CalibrationResult",
    "CorrectedPassK",
    "CorrectedRate",
    "Estimate",
    "HumanAgreement",
    "JudgeReport",
    "LabelBudget",
    "Probe",
    "ReliabilityResult",
    "SyntheticJudge",
    "Threshold",
    "ac1_from_counts",
    "analyze",
    "best_threshold",
    "binary_rates",
    "bootstrap_kappa",
    "bootstrap_ratio",
    "calibrate_files",
    "central_tendency_probe",
    "cluster_bootstrap",
    "cohen_kappa",
    "confusion",
    "consensus",
    "corrected_pass_hat_k",
    "corrected_pass_rate",
    "gwet_ac1",
    "human_agreement",
    "item_verdicts",
    "kappa_from_counts",
    "krippendorff_alpha",
    "label_budget",
    "model_family",
    "order_shift_probe",
    "parse_verdict",
    "pass_at_k",
    "pass_hat_k",
    "per_item_sums",
    "percent_agreement",
    "position_probe",
    "read_table",
    "reliability",
    "reliability_intervals",
    "reliability_matrix",
    "resampled_sums",
    "rogan_gladen",
    "self_preference_probe",
    "stability_probe",
    "synthetic_judgments",
    "synthetic_labels",
    "synthetic_world",
    "validate_table",
    "verbosity_probe",
]
