"""Limits on what a hostile input file may make trajudge build, each named in its error.

A YAML alias bomb ("billion laughs") is a few hundred bytes that expand to billions of nodes
once anything walks the parsed tree, and deep nesting exhausts Python's stack. Each limit has
a default far above any real file and an environment variable that overrides it; the error
message names both, so a user with a legitimate giant file knows what to raise.
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Limit:
    """One limit: its default and the environment variable that overrides it."""

    env: str
    default: int
    what: str

    @property
    def value(self) -> int:
        raw = os.environ.get(self.env)
        if raw is None or not raw.strip():
            return self.default
        try:
            return max(1, int(raw))
        except ValueError:
            return self.default

    def exceeded(self, detail: str = "") -> str:
        """The error text: what was exceeded, the limit and how to raise it."""
        tail = f" ({detail})" if detail else ""
        return f"{self.what} over the limit of {self.value:,}{tail}; raise {self.env} to allow it"


YAML_ALIASES = Limit("TRAJUDGE_MAX_YAML_ALIASES", 10_000, "YAML aliases (*name)")
YAML_NODES = Limit("TRAJUDGE_MAX_YAML_NODES", 5_000_000, "YAML nodes once aliases are expanded")
NESTING = Limit("TRAJUDGE_MAX_NESTING", 200, "nesting depth")
# inspect_ai decompresses each member of an .eval zip whole, then holds every sample at once
ZIP_MEMBER = Limit(
    "TRAJUDGE_MAX_ZIP_MEMBER_BYTES", 256 << 20, "bytes of one .eval member once decompressed"
)
ZIP_TOTAL = Limit("TRAJUDGE_MAX_ZIP_BYTES", 1 << 30, "bytes of an .eval log once decompressed")
ZIP_RATIO = Limit("TRAJUDGE_MAX_ZIP_RATIO", 100, "compression ratio of an .eval member")
# format detection parses the first records of a file: a first record of any size was read whole
SNIFF = Limit("TRAJUDGE_MAX_SNIFF_BYTES", 16 << 20, "bytes read to detect the format")
# a JSON Lines line or a JSON list's element is held whole (and copied while parsed: about 3.5
# times its size at the peak); no real trajectory comes near this
RECORD = Limit("TRAJUDGE_MAX_RECORD_BYTES", 256 << 20, "characters in one record")
# the shapes that are one document (an Inspect .json log, a mapping file, one event file of a
# folder) are read whole: refused by their size before a byte is read
DOCUMENT = Limit("TRAJUDGE_MAX_DOCUMENT_BYTES", 1 << 30, "bytes of a file read whole")
# rubrics, configs and specs are kilobytes; the YAML parser holds the text and every node
YAML_BYTES = Limit("TRAJUDGE_MAX_YAML_BYTES", 64 << 20, "bytes of a YAML file")
