"""The read functions of the reader table (:mod:`trajudge.trajectories._readers`), one per
input format, and the :class:`Source` each is given.

Apart from the table so that the table stays short; like it, this module imports nothing but
the standard library when loaded (``trajudge --help`` lists the formats): each function
imports its reader when called.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trajudge.trajectories._models import Trajectory
    from trajudge.trajectories._options import Ignored, ReadOptions
    from trajudge.trajectories._spec import TaskSpec


@dataclass(frozen=True)
class Source:
    """What a read function is given: the file (or folder), its JSON records (parsed as they
    are taken: a reader of the file itself never takes them), the options, where to count
    what it does not use, and where to put the task specs it finds."""

    path: Path
    records: Iterator[tuple[str, Any]]
    options: ReadOptions
    ignored: Ignored
    specs: dict[str, TaskSpec]


# Each read function imports its reader when called and is a generator, so nothing is read
# until the iteration starts (a bad record raises from the iteration, see TrajectoryStream).
# The formats that stream read one record at a time; the others take all the records (a
# τ²-bench, SWE-agent or OpenHands file is one document) or the file itself.


def from_jsonl(src: Source) -> Iterator[tuple[str, Trajectory]]:
    # imported on use: naming the formats (--help) loads no reader
    from trajudge.trajectories._jsonl import iter_native

    yield from iter_native(src.path, src.records)


def from_parquet(src: Source) -> Iterator[tuple[str, Trajectory]]:
    # imported on use: naming the formats (--help) loads no reader
    from trajudge.trajectories._parquet import iter_parquet

    yield from iter_parquet(src.path)


def from_openai(src: Source) -> Iterator[tuple[str, Trajectory]]:
    # imported on use: naming the formats (--help) loads no reader
    from trajudge.trajectories.readers.chat._openai_file import iter_openai

    yield from iter_openai(src.path, src.records, src.ignored)


def from_responses(src: Source) -> Iterator[tuple[str, Trajectory]]:
    # imported on use: naming the formats (--help) loads no reader
    from trajudge.trajectories.readers.chat._responses import iter_responses

    yield from iter_responses(src.path, src.records, src.ignored)


def from_langchain(src: Source) -> Iterator[tuple[str, Trajectory]]:
    # imported on use: naming the formats (--help) loads no reader
    from trajudge.trajectories.readers.chat._langchain import iter_langchain

    yield from iter_langchain(src.path, src.records, src.ignored)


def from_otel(src: Source) -> Iterator[tuple[str, Trajectory]]:
    # a trace's spans may be anywhere in the file
    from trajudge.trajectories.readers.otel._otel import otel_from_records

    yield from otel_from_records(src.path, src.records, src.options, src.ignored)


def from_tau_bench(src: Source) -> Iterator[tuple[str, Trajectory]]:
    # imported on use: naming the formats (--help) loads no reader
    from trajudge.trajectories.readers.bench._tau_bench import iter_tau_bench

    yield from iter_tau_bench(src.path, src.records, src.specs)


def from_tau2_bench(src: Source) -> Iterator[tuple[str, Trajectory]]:
    # imported on use: naming the formats (--help) loads no reader
    from trajudge.trajectories.readers.bench._tau2_bench import tau2_from_records

    items, specs = tau2_from_records(src.path, list(src.records), src.ignored)
    src.specs.update(specs)
    yield from items


def from_inspect(src: Source) -> Iterator[tuple[str, Trajectory]]:
    # imported on use: naming the formats (--help) loads no reader
    from trajudge.trajectories.readers.bench._inspect import read_inspect

    yield from read_inspect(src.path, src.ignored)


def from_swe_agent(src: Source) -> Iterator[tuple[str, Trajectory]]:
    # imported on use: naming the formats (--help) loads no reader
    from trajudge.trajectories.readers.bench._swe_agent import swe_agent_from_records

    yield from swe_agent_from_records(src.path, list(src.records), src.ignored)


def from_openhands(src: Source) -> Iterator[tuple[str, Trajectory]]:
    # imported on use: naming the formats (--help) loads no reader
    from trajudge.trajectories.readers.bench._openhands import openhands_from_records

    yield from openhands_from_records(src.path, list(src.records), src.ignored)


def from_codex(src: Source) -> Iterator[tuple[str, Trajectory]]:
    # imported on use: naming the formats (--help) loads no reader
    from trajudge.trajectories.readers.agents._codex import codex_from_records

    yield from codex_from_records(src.path, list(src.records), src.ignored)


def from_claude_code(src: Source) -> Iterator[tuple[str, Trajectory]]:
    # imported on use: naming the formats (--help) loads no reader
    from trajudge.trajectories.readers.agents._claude_code import claude_code_from_records

    yield from claude_code_from_records(src.path, list(src.records), src.ignored)


def from_gemini_cli(src: Source) -> Iterator[tuple[str, Trajectory]]:
    # imported on use: naming the formats (--help) loads no reader
    from trajudge.trajectories.readers.agents._gemini_cli import gemini_cli_from_records

    yield from gemini_cli_from_records(src.path, list(src.records), src.ignored)


def from_smolagents(src: Source) -> Iterator[tuple[str, Trajectory]]:
    # imported on use: naming the formats (--help) loads no reader
    from trajudge.trajectories.readers.agents._smolagents_memory import smolagents_from_records

    yield from smolagents_from_records(src.path, src.records, src.ignored)


def from_autogen(src: Source) -> Iterator[tuple[str, Trajectory]]:
    # imported on use: naming the formats (--help) loads no reader
    from trajudge.trajectories.readers.agents._autogen import autogen_from_records

    yield from autogen_from_records(src.path, src.records, src.ignored)


def from_crewai(src: Source) -> Iterator[tuple[str, Trajectory]]:
    # imported on use: naming the formats (--help) loads no reader
    from trajudge.trajectories.readers.agents._crewai import crewai_from_records

    yield from crewai_from_records(src.path, src.records, src.ignored)
