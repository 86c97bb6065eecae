"""trajudge: is your agent reliable, and can the judge that says so be trusted?

The names most users need, re-exported from the subpackages::

    from trajudge import Store, read_trajectories, run_checks, score_dataset, build_report
"""

from trajudge.calibration import (
    analyze,
    cohen_kappa,
    gwet_ac1,
    krippendorff_alpha,
    pass_at_k,
    pass_hat_k,
    reliability,
    reliability_intervals,
)
from trajudge.config import TrajudgeConfig, load_config
from trajudge.evalset import EvalCase, fingerprint, read_evalset
from trajudge.judges import Judge, JudgeSpec, Rubric, load_rubric, score_dataset
from trajudge.pipeline import RunSummary, run_pipeline
from trajudge.report import Report, build_report, write_report
from trajudge.rules import CheckResult, RuleReport, load_specs, run_checks
from trajudge.store import Store
from trajudge.trajectories import (
    InputError,
    Message,
    Step,
    TaskSpec,
    Trajectory,
    Usage,
    from_openai_messages,
    from_otel,
    from_tau_bench,
    read_trajectories,
)

__version__ = "0.1.0"

__all__ = [
    "CheckResult",
    "EvalCase",
    "InputError",
    "Judge",
    "JudgeSpec",
    "Message",
    "Report",
    "Rubric",
    "RuleReport",
    "RunSummary",
    "Step",
    "Store",
    "TaskSpec",
    "Trajectory",
    "TrajudgeConfig",
    "Usage",
    "__version__",
    "analyze",
    "build_report",
    "cohen_kappa",
    "fingerprint",
    "from_openai_messages",
    "from_otel",
    "from_tau_bench",
    "gwet_ac1",
    "krippendorff_alpha",
    "load_config",
    "load_rubric",
    "load_specs",
    "pass_at_k",
    "pass_hat_k",
    "read_evalset",
    "read_trajectories",
    "reliability",
    "reliability_intervals",
    "run_checks",
    "run_pipeline",
    "score_dataset",
    "write_report",
]
