"""Trajectories: the data model, task specs, readers and importers."""

from trajudge.trajectories._errors import InputError
from trajudge.trajectories._models import Step, Trajectory, Usage, canonical_json
from trajudge.trajectories._spec import (
    ArgCheck,
    Baseline,
    Budgets,
    CustomCheckRef,
    ExpectedCall,
    MatchMode,
    TaskSpec,
)

__all__ = [
    "ArgCheck",
    "Baseline",
    "Budgets",
    "CustomCheckRef",
    "ExpectedCall",
    "InputError",
    "MatchMode",
    "Step",
    "TaskSpec",
    "Trajectory",
    "Usage",
    "canonical_json",
]
