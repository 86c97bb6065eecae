"""Import every command module (``trajudge.cli._cmd_*``) so its commands register on the app."""

from __future__ import annotations

import importlib
import pkgutil

import trajudge.cli as _pkg

for _info in sorted(pkgutil.iter_modules(_pkg.__path__), key=lambda m: m.name):
    if _info.name.startswith("_cmd_"):
        importlib.import_module(f"trajudge.cli.{_info.name}")
