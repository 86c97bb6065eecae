"""The base room: what every other room of trajudge shares, importing nothing of ours.

The one error type for bad user input, canonical JSON (what every hash is made from), atomic
file writes, timestamps, counts in words, the lazy-export helper and the ``spawn`` context
whose worker processes do not re-run the caller's script. Every module here imports
only the standard library, so any room can use it without an import cycle; its names are
imported on first use too (``import trajudge`` must not pay for ``tempfile`` or ``json``).
"""

from typing import TYPE_CHECKING

from trajudge.core._lazy import lazy_exports

if TYPE_CHECKING:
    from trajudge.core._errors import InputError, pydantic_field
    from trajudge.core._files import atomic_write, atomic_write_bytes
    from trajudge.core._json import INPUT_JSON, canonical_json, loads_input, too_many_digits
    from trajudge.core._spawn import SPAWN
    from trajudge.core._time import now_iso
    from trajudge.core._words import counted

__all__ = [
    "INPUT_JSON",
    "SPAWN",
    "InputError",
    "atomic_write",
    "atomic_write_bytes",
    "canonical_json",
    "counted",
    "lazy_exports",
    "loads_input",
    "now_iso",
    "pydantic_field",
    "too_many_digits",
]

# name -> the module it comes from: imported on first use (see trajudge.core._lazy)
_EXPORTS = {
    "InputError": "trajudge.core._errors",
    "pydantic_field": "trajudge.core._errors",
    "atomic_write": "trajudge.core._files",
    "atomic_write_bytes": "trajudge.core._files",
    "canonical_json": "trajudge.core._json",
    "INPUT_JSON": "trajudge.core._json",
    "loads_input": "trajudge.core._json",
    "too_many_digits": "trajudge.core._json",
    "SPAWN": "trajudge.core._spawn",
    "now_iso": "trajudge.core._time",
    "counted": "trajudge.core._words",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
