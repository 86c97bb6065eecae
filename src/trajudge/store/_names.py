"""The store's plain constants, in a module that imports nothing (the CLI reads them to build
its options, before any command runs)."""

from typing import Literal

DEFAULT_URL = "sqlite:///trajudge.db"

LabelFormat = Literal["csv", "jsonl", "parquet"]
LABEL_FORMATS: tuple[LabelFormat, ...] = ("csv", "jsonl", "parquet")
