"""Trajectories: the data model, task specs, readers and importers.

Each public name is imported on first use (see :mod:`trajudge.core._lazy`): the CLI's modules need
only ``InputError`` and ``FORMATS`` to register their commands, so ``trajudge --help`` does
not load pydantic and every reader.
"""

from typing import TYPE_CHECKING

from trajudge.core import lazy_exports

if TYPE_CHECKING:
    from trajudge.core import InputError, atomic_write, atomic_write_bytes, canonical_json
    from trajudge.trajectories._formats import FORMATS
    from trajudge.trajectories._json import json_deeper_than, load_json
    from trajudge.trajectories._jsonl import read_jsonl, write_jsonl
    from trajudge.trajectories._lean import LeanStep, LeanTrajectory, LeanUsage
    from trajudge.trajectories._models import Message, Step, Trajectory, Usage
    from trajudge.trajectories._options import Ignored, ReadOptions, load_mapping
    from trajudge.trajectories._parquet import (
        iter_lean_block,
        iter_parquet_block,
        parquet_blocks,
        read_parquet,
        read_parquet_block,
        write_parquet,
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
    from trajudge.trajectories._yaml import load_yaml, read_yaml
    from trajudge.trajectories.readers.bench._tau_bench import from_tau_bench
    from trajudge.trajectories.readers.chat._openai import from_openai_messages
    from trajudge.trajectories.readers.chat._openai_file import read_openai
    from trajudge.trajectories.readers.otel._otel import from_otel
    from trajudge.trajectories.reading._read import (
        ImportResult,
        detect_format,
        read_trajectories,
        stream_trajectories,
    )
    from trajudge.trajectories.reading._trajectory_stream import TrajectoryStream

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
    "LeanStep",
    "LeanTrajectory",
    "LeanUsage",
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
    "iter_lean_block",
    "iter_parquet_block",
    "json_deeper_than",
    "load_json",
    "load_mapping",
    "load_yaml",
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

# name -> the module it comes from
_EXPORTS = {
    "ArgCheck": "trajudge.trajectories._spec",
    "atomic_write": "trajudge.core",
    "atomic_write_bytes": "trajudge.core",
    "Baseline": "trajudge.trajectories._spec",
    "Budgets": "trajudge.trajectories._spec",
    "canonical_json": "trajudge.core",
    "CustomCheckRef": "trajudge.trajectories._spec",
    "detect_format": "trajudge.trajectories.reading._read",
    "ExpectedCall": "trajudge.trajectories._spec",
    "FORMATS": "trajudge.trajectories._formats",
    "from_openai_messages": "trajudge.trajectories.readers.chat._openai",
    "from_otel": "trajudge.trajectories.readers.otel._otel",
    "from_tau_bench": "trajudge.trajectories.readers.bench._tau_bench",
    "Ignored": "trajudge.trajectories._options",
    "iter_lean_block": "trajudge.trajectories._parquet",
    "iter_parquet_block": "trajudge.trajectories._parquet",
    "LeanStep": "trajudge.trajectories._lean",
    "LeanTrajectory": "trajudge.trajectories._lean",
    "LeanUsage": "trajudge.trajectories._lean",
    "json_deeper_than": "trajudge.trajectories._json",
    "load_json": "trajudge.trajectories._json",
    "ImportResult": "trajudge.trajectories.reading._read",
    "InputError": "trajudge.core",
    "load_mapping": "trajudge.trajectories._options",
    "MatchMode": "trajudge.trajectories._spec",
    "Message": "trajudge.trajectories._models",
    "parquet_blocks": "trajudge.trajectories._parquet",
    "parse_path": "trajudge.trajectories._spec",
    "read_jsonl": "trajudge.trajectories._jsonl",
    "read_openai": "trajudge.trajectories.readers.chat._openai_file",
    "read_parquet": "trajudge.trajectories._parquet",
    "read_parquet_block": "trajudge.trajectories._parquet",
    "read_trajectories": "trajudge.trajectories.reading._read",
    "load_yaml": "trajudge.trajectories._yaml",
    "read_yaml": "trajudge.trajectories._yaml",
    "ReadOptions": "trajudge.trajectories._options",
    "Severity": "trajudge.trajectories._spec",
    "Step": "trajudge.trajectories._models",
    "stream_trajectories": "trajudge.trajectories.reading._read",
    "TaskSpec": "trajudge.trajectories._spec",
    "Trajectory": "trajudge.trajectories._models",
    "TrajectoryStream": "trajudge.trajectories.reading._trajectory_stream",
    "Usage": "trajudge.trajectories._models",
    "write_jsonl": "trajudge.trajectories._jsonl",
    "write_parquet": "trajudge.trajectories._parquet",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
