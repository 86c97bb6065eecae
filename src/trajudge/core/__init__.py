"""The base room: what every other room of trajudge shares, importing nothing of ours.

The one error type for bad user input, canonical JSON (what every hash is made from), atomic
file writes, timestamps, counts in words and the lazy-export helper. Every module here imports
only the standard library, so any room can use it without an import cycle or start-up cost.
"""

from trajudge.core._errors import InputError, pydantic_field
from trajudge.core._files import atomic_write, atomic_write_bytes
from trajudge.core._json import canonical_json
from trajudge.core._lazy import lazy_exports
from trajudge.core._time import now_iso
from trajudge.core._words import counted

__all__ = [
    "InputError",
    "atomic_write",
    "atomic_write_bytes",
    "canonical_json",
    "counted",
    "lazy_exports",
    "now_iso",
    "pydantic_field",
]
