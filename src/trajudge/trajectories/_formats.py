"""The names of the input formats (a light module: the CLI lists them in ``--help``)."""

from __future__ import annotations

from typing import Literal

from trajudge.trajectories._readers import READERS, ReaderName

Format = Literal["auto", ReaderName]
FORMATS: tuple[str, ...] = ("auto", *(r.name for r in READERS))
