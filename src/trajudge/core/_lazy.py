"""Lazy public names: a package imports the module behind a name when the name is first used.

``import trajudge`` (and ``trajudge --help``) must not pay for scikit-learn, SciPy, matplotlib
or pandas; a package lists where each public name lives and gets a module ``__getattr__``
(PEP 562) that imports it on first use and keeps it::

    __getattr__, __dir__ = lazy_exports(__name__, {"Store": "trajudge.store", ...})

The names stay importable as before (``from trajudge import Store``), and the type checker
reads them from an ``if TYPE_CHECKING:`` block of ordinary imports in the same package.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``, whose name ``n`` lives in ``exports[n]``."""

    def __getattr__(name: str) -> Any:
        try:
            where = exports[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        value = getattr(importlib.import_module(where), name)
        setattr(sys.modules[package], name, value)  # the next lookup does not come here
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(exports))

    return __getattr__, __dir__
