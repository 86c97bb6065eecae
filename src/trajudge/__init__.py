"""trajudge: is your agent reliable, and can the judge that says so be trusted?"""

from trajudge.calibration import pass_at_k, pass_hat_k, reliability
from trajudge.store import Store
from trajudge.trajectories import InputError, Step, TaskSpec, Trajectory, Usage

__version__ = "0.1.0"

__all__ = [
    "InputError",
    "Step",
    "Store",
    "TaskSpec",
    "Trajectory",
    "Usage",
    "__version__",
    "pass_at_k",
    "pass_hat_k",
    "reliability",
]
