"""Active labelling with valid inference, and when labelling may stop.

* ``_design`` — inclusion probabilities from the judge's uncertainty (mixed with the uniform
  design, every one with a floor), the uncertainty learnt from labels already drawn, the draw.
* ``_ipw`` — pass rate, TPR, TNR and κ from actively drawn labels: inverse-probability
  weighting with the judge as the prediction (Zrnic & Candès 2024), normal intervals.
* ``_sequence`` — betting confidence sequences (Waudby-Smith & Ramdas 2024), valid however
  often they are looked at.
* ``_stop`` — the stopping certificate: "certified at 95%: κ ≥ 0.6" or "~N more labels".
"""

from trajudge.calibration.active._design import (
    draw,
    fitted_uncertainty,
    judge_uncertainty,
    sampling_probabilities,
)
from trajudge.calibration.active._ipw import ActiveEstimates, active_estimates, active_pass_rate
from trajudge.calibration.active._sequence import betting_cs
from trajudge.calibration.active._stop import STATISTICS, StopStatus, sequence_interval, stop_status

__all__ = [
    "STATISTICS",
    "ActiveEstimates",
    "StopStatus",
    "active_estimates",
    "active_pass_rate",
    "betting_cs",
    "draw",
    "fitted_uncertainty",
    "judge_uncertainty",
    "sampling_probabilities",
    "sequence_interval",
    "stop_status",
]
