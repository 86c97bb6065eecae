"""The report: judges against labels, pass^k per verdict source, CI gates, renderers."""

from trajudge.report._build import build_report
from trajudge.report._calibrate import calibrate_report
from trajudge.report._demo import DEMO_RUBRIC, write_demo_dataset
from trajudge.report._gates import (
    JUDGE_METRICS,
    USAGE_TOLERANCE,
    Gate,
    baseline_regressions,
    check_gates,
    parse_gate,
    parse_stop_rule,
    read_baseline,
)
from trajudge.report._model import Ceiling, Flag, JudgeRow, Report, SourceResult, labels_phrase
from trajudge.report.inputs._sources import (
    StoreInputs,
    render_length,
    store_inputs,
    trajectory_frame,
    verdict_frame,
)
from trajudge.report.render._frames import corrected_table, judge_table, pass_k_table
from trajudge.report.render._render import (
    FORMATS,
    parse_formats,
    render_html,
    render_json,
    write_report,
)
from trajudge.report.render._text import print_report, print_sections, render_markdown
from trajudge.report.sections._alignment import alignment_sections, alignment_summary

__all__ = [
    "DEMO_RUBRIC",
    "FORMATS",
    "JUDGE_METRICS",
    "USAGE_TOLERANCE",
    "Ceiling",
    "Flag",
    "Gate",
    "JudgeRow",
    "Report",
    "SourceResult",
    "StoreInputs",
    "alignment_sections",
    "alignment_summary",
    "baseline_regressions",
    "build_report",
    "calibrate_report",
    "check_gates",
    "corrected_table",
    "judge_table",
    "labels_phrase",
    "parse_formats",
    "parse_gate",
    "parse_stop_rule",
    "pass_k_table",
    "print_report",
    "print_sections",
    "read_baseline",
    "render_html",
    "render_json",
    "render_length",
    "render_markdown",
    "store_inputs",
    "trajectory_frame",
    "verdict_frame",
    "write_demo_dataset",
    "write_report",
]
