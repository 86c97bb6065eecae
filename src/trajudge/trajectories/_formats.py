"""The names of the input formats (a light module: the CLI lists them in ``--help``)."""

from __future__ import annotations

from typing import Literal, get_args

Format = Literal[
    "auto",
    "jsonl",
    "parquet",
    "openai",
    "responses",
    "langchain",
    "otel",
    "tau-bench",
    "tau2-bench",
    "inspect",
    "swe-agent",
    "openhands",
]
FORMATS: tuple[str, ...] = get_args(Format)
