"""Import every command module (``trajudge.cli._cmd_*``) so its commands register on the app.

The modules of the main workflow come first, in the order a newcomer uses them, so that
``trajudge --help`` lists the commands that way; any other ``_cmd_*`` module follows.
"""

from __future__ import annotations

import importlib
import pkgutil

import trajudge.cli as _pkg

WORKFLOW = [
    "_cmd_run",
    "_cmd_import",
    "_cmd_check",
    "_cmd_reliability",
    "_cmd_judge",
    "_cmd_label",
    "_cmd_align",
    "_cmd_report",
    "_cmd_evalset",
]
_found = {m.name for m in pkgutil.iter_modules(_pkg.__path__) if m.name.startswith("_cmd_")}
for _name in [*(w for w in WORKFLOW if w in _found), *sorted(_found - set(WORKFLOW))]:
    importlib.import_module(f"trajudge.cli.{_name}")
