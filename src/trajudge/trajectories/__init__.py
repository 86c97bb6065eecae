"""Trajectories: the data model, task specs, readers and importers."""

from trajudge.trajectories._errors import InputError
from trajudge.trajectories._io import atomic_write, atomic_write_bytes
from trajudge.trajectories._jsonl import read_jsonl, write_jsonl
from trajudge.trajectories._models import Message, Step, Trajectory, Usage, canonical_json
from trajudge.trajectories._openai import from_openai_messages, read_openai
from trajudge.trajectories._options import Ignored, ReadOptions, load_mapping
from trajudge.trajectories._otel import from_otel
from trajudge.trajectories._parquet import (
    parquet_blocks,
    read_parquet,
    read_parquet_block,
    write_parquet,
)
from trajudge.trajectories._read import (
    FORMATS,
    ImportResult,
    TrajectoryStream,
    detect_format,
    read_trajectories,
    stream_trajectories,
)
from trajudge.trajectories._spec import (
    ArgCheck,
    Baseline,
    Budgets,
    CustomCheckRef,
    ExpectedCall,
    MatchMode,
    Severity,
    TaskSpec,
    parse_path,
)
from trajudge.trajectories._tau_bench import from_tau_bench
from trajudge.trajectories._yaml import read_yaml

__all__ = [
    "FORMATS",
    "ArgCheck",
    "Baseline",
    "Budgets",
    "CustomCheckRef",
    "ExpectedCall",
    "Ignored",
    "ImportResult",
    "InputError",
    "MatchMode",
    "Message",
    "ReadOptions",
    "Severity",
    "Step",
    "TaskSpec",
    "Trajectory",
    "TrajectoryStream",
    "Usage",
    "atomic_write",
    "atomic_write_bytes",
    "canonical_json",
    "detect_format",
    "from_openai_messages",
    "from_otel",
    "from_tau_bench",
    "load_mapping",
    "parquet_blocks",
    "parse_path",
    "read_jsonl",
    "read_openai",
    "read_parquet",
    "read_parquet_block",
    "read_trajectories",
    "read_yaml",
    "stream_trajectories",
    "write_jsonl",
    "write_parquet",
]
