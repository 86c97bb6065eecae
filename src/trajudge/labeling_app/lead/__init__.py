"""The lead's page and what it counts: every account's progress, agreement between
annotators and between judges and humans so far (kappa with intervals), the items people
disagree on, and the sign-in log. Only an account with the role lead reaches it."""

from typing import TYPE_CHECKING

from trajudge.core import lazy_exports

if TYPE_CHECKING:
    from trajudge.labeling_app.lead._stats import human_values, judge_agreement, pairwise_agreement

__all__ = ["human_values", "judge_agreement", "pairwise_agreement"]

# name -> the module it comes from: imported on first use (see trajudge.core._lazy)
_EXPORTS = {
    "human_values": "trajudge.labeling_app.lead._stats",
    "judge_agreement": "trajudge.labeling_app.lead._stats",
    "pairwise_agreement": "trajudge.labeling_app.lead._stats",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
