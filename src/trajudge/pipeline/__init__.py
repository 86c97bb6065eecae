"""The main job: ``trajudge run CONFIG`` from import to the gated report, in one call.

Phases, in order, each resumable:

1. **import** the dataset named in ``trajudge.yaml`` (idempotent: unchanged trajectories are
   left alone), limited to the configured subset (``limits``) so every number in the report
   is about the same trajectories; with ``dataset.source`` (a Phoenix or MLflow URL), the
   traces new since the last pull instead, as ``trajudge import`` pulls them;
2. **rules**: every rule check, results stored;
3. **core layer** (when ``layers`` names core tasks, directly or as the core cases of an eval
   set, see :func:`core_task_ids`): the judges score the core tasks first; when the core set
   fails its gate (rule gates, then every judge), the run stops there with the reason (exit 1);
4. **judges**: every judge over the rest (gates first, cache, resume);
5. **labels**: a labels file named in the config is imported (all or nothing);
6. **align** (with an ``align:`` block): the judge is aligned with the labels on the dev
   tasks and measured on the holdout ones; the aligned judge is saved (a new version when
   anything changed) and the report shows it (:func:`trajudge.alignment.align_judge`), unless
   dev says the chosen method is worse than the judge or its threshold is degenerate: then the run
   says why and goes on, nothing saved;
7. **report**: calibration and reliability, written as Markdown, HTML and JSON; the exit code
   is the report's gate result;
8. **export** (with ``export:`` targets): the judgments, labels and calibration written back
   as ``trajudge export`` writes them (idempotent: a second run writes nothing twice).

Judges named in ``aligned_judges`` (saved earlier by ``trajudge align``) are scored in phase 4
like the others, and the report cuts their scores with their aligned rule.
"""

from trajudge.pipeline._core import core_results, core_task_ids
from trajudge.pipeline._report import config_report
from trajudge.pipeline._run import run_pipeline
from trajudge.pipeline._scope import select_subset
from trajudge.pipeline._summary import RunSummary

__all__ = [
    "RunSummary",
    "config_report",
    "core_results",
    "core_task_ids",
    "run_pipeline",
    "select_subset",
]
