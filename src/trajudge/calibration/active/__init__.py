"""Active labelling with valid inference, and when labelling may stop.

* ``_design`` — inclusion probabilities from the judge's uncertainty (mixed with the uniform
  design, every one with a floor), the uncertainty learnt from labels already drawn, the draw.
* ``_ipw`` — pass rate, TPR, TNR and κ from actively drawn labels: inverse-probability
  weighting with the judge as the prediction (Zrnic & Candès 2024), normal intervals.
* ``_sequence`` — betting confidence sequences (Waudby-Smith & Ramdas 2024), valid however
  often they are looked at.
* ``_passk`` — pass^k from actively drawn labels: Horvitz-Thompson within a task, Hajek
  over tasks, a task-clustered interval on the logit scale.
* ``_stop`` — the stopping certificate under a configurable rule (:class:`StopRule`, by
  default κ ≥ 0.6 at 95%): "certified at 95%: κ ≥ 0.6" or "~N more labels".
"""

from trajudge.calibration.active._design import (
    draw,
    fitted_uncertainty,
    judge_uncertainty,
    sampling_probabilities,
)
from trajudge.calibration.active._ipw import ActiveEstimates, active_estimates, active_pass_rate
from trajudge.calibration.active._passk import ActivePassK, active_pass_hat_k
from trajudge.calibration.active._sequence import betting_cs
from trajudge.calibration.active._stop import (
    STATISTICS,
    StopRule,
    StopStatus,
    sequence_interval,
    stop_status,
)

__all__ = [
    "STATISTICS",
    "ActiveEstimates",
    "ActivePassK",
    "StopRule",
    "StopStatus",
    "active_estimates",
    "active_pass_hat_k",
    "active_pass_rate",
    "betting_cs",
    "draw",
    "fitted_uncertainty",
    "judge_uncertainty",
    "sampling_probabilities",
    "sequence_interval",
    "stop_status",
]
