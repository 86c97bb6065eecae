"""Reading a YAML file with one-line errors (config, rubrics and task specs share it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from trajudge.trajectories._errors import InputError


def read_yaml(path: str | Path) -> Any:
    """Parse a YAML file; a missing, unreadable, non-UTF-8 or malformed file raises
    :class:`InputError` naming the file (and the line for YAML errors).

    >>> read_yaml("/no/such/file.yaml")
    Traceback (most recent call last):
    ...
    trajudge.trajectories._errors.InputError: /no/such/file.yaml: file not found
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(str(p), None, None, "file not found") from None
    except UnicodeDecodeError as exc:
        raise InputError(str(p), f"byte {exc.start}", None, "not UTF-8 text") from None
    except OSError as exc:
        raise InputError(str(p), None, None, f"cannot read: {exc.strerror or exc}") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise InputError(str(p), where, None, f"invalid YAML: {problem}") from None
