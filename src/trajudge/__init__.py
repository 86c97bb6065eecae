"""trajudge: is your agent reliable, and can the judge that says so be trusted?

The names most users need, re-exported from the subpackages::

    from trajudge import Store, read_trajectories, run_checks, score_dataset, build_report

Each is imported on first use (see :mod:`trajudge.core._lazy`), so ``import trajudge`` is quick.

Glossary (one word per concept, in code, messages and docs):

- **run**: one attempt of an agent at a task, stored as a *trajectory* (``task_id``, ``trial``);
  a *dataset* is a named set of trajectories.
- **gate**: a rule check whose failure fails the run before any judge sees it.
- **judge**: a model with a rubric and settings (a ``JudgeSpec``); a **call** is one request to
  it (one *order* and one *sample*); a **judgment** is the stored outcome of a call: a verdict
  or an error, never both.
- **verdict kind**: binary · ordinal · pairwise · nominal (:mod:`trajudge.rubrics._kinds`);
  pairwise and nominal verdicts are *categories*.
- **order**: ``ab`` or ``ba``, which trajectory (or the reference) is shown first. A **flip** is
  an item whose two orders disagree; its aggregate verdict is *inconsistent* (a nominal
  judge) or a tie (a pairwise judge, by default). "Inconsistent" names the verdict, "flip"
  the event.
- **threshold**: the pass/fail boundary of an ordinal score (``score >= threshold`` passes),
  declared by the rubric, given by ``--threshold`` or fitted on dev labels (an aligned
  judge's rule); trust or escalate fits a threshold on confidence (items at or above it keep
  the judge's verdict). The older name *cut* survives only as aliases (``TrustCut``,
  ``fit_trust_cut``, ``pass_cut``); a store from before schema version 8 has its aligned
  judges rewritten in these words when it is opened.
- **aggregate**: the one verdict per item over its orders and samples; every figure uses it.
- **engine**: what runs a command's work: the judge calls (``local``, ``ray``, ``batch``) or
  the rule checks of a Parquet file (``local``, ``ray``). The store's SQLAlchemy objects are
  *SQL engines* (``Store.sql_engine``, ``make_sql_engine``), never a bare "engine".
- **dev / holdout**: the split of tasks an alignment fits on / is proven on.
- **label**: a human's verdict on an item, signed by its annotator.
"""

from typing import TYPE_CHECKING

from trajudge.core import lazy_exports

if TYPE_CHECKING:
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
    from trajudge.core import InputError
    from trajudge.evalset import EvalCase, fingerprint, read_evalset
    from trajudge.judges import Judge, JudgeSpec, Rubric, load_rubric, score_dataset
    from trajudge.pipeline import RunSummary, run_pipeline
    from trajudge.report import Report, build_report, write_report
    from trajudge.rules import CheckResult, RuleReport, load_specs, run_checks
    from trajudge.store import Store
    from trajudge.trajectories import (
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

# name -> the module it comes from: imported on first use, so `import trajudge` stays light
_EXPORTS = {
    "CheckResult": "trajudge.rules",
    "EvalCase": "trajudge.evalset",
    "InputError": "trajudge.trajectories",
    "Judge": "trajudge.judges",
    "JudgeSpec": "trajudge.judges",
    "Message": "trajudge.trajectories",
    "Report": "trajudge.report",
    "Rubric": "trajudge.judges",
    "RuleReport": "trajudge.rules",
    "RunSummary": "trajudge.pipeline",
    "Step": "trajudge.trajectories",
    "Store": "trajudge.store",
    "TaskSpec": "trajudge.trajectories",
    "Trajectory": "trajudge.trajectories",
    "TrajudgeConfig": "trajudge.config",
    "Usage": "trajudge.trajectories",
    "analyze": "trajudge.calibration",
    "build_report": "trajudge.report",
    "cohen_kappa": "trajudge.calibration",
    "fingerprint": "trajudge.evalset",
    "from_openai_messages": "trajudge.trajectories",
    "from_otel": "trajudge.trajectories",
    "from_tau_bench": "trajudge.trajectories",
    "gwet_ac1": "trajudge.calibration",
    "krippendorff_alpha": "trajudge.calibration",
    "load_config": "trajudge.config",
    "load_rubric": "trajudge.judges",
    "load_specs": "trajudge.rules",
    "pass_at_k": "trajudge.calibration",
    "pass_hat_k": "trajudge.calibration",
    "read_evalset": "trajudge.evalset",
    "read_trajectories": "trajudge.trajectories",
    "reliability": "trajudge.calibration",
    "reliability_intervals": "trajudge.calibration",
    "run_checks": "trajudge.rules",
    "run_pipeline": "trajudge.pipeline",
    "score_dataset": "trajudge.judges",
    "write_report": "trajudge.report",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
