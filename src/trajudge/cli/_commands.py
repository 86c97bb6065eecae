"""Import every command module (``trajudge.cli._cmd_*``) so its commands register on the app.

The modules of the main workflow come first, in the order a newcomer uses them, so that
``trajudge --help`` lists the commands that way; any other ``_cmd_*`` module follows.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

import typer

import trajudge.cli as _pkg
from trajudge.cli._app import app

WORKFLOW = [
    "_cmd_run",
    "_cmd_import",
    "_cmd_check",
    "_cmd_reliability",
    "_cmd_judge",
    "_cmd_label",
    "_cmd_align",
    "_cmd_report",
    "_cmd_export",
    "_cmd_evalset",
]
_found = {m.name for m in pkgutil.iter_modules(_pkg.__path__) if m.name.startswith("_cmd_")}
for _name in [*(w for w in WORKFLOW if w in _found), *sorted(_found - set(WORKFLOW))]:
    importlib.import_module(f"trajudge.cli.{_name}")


def reflow(doc: str) -> str:
    """A docstring as help text: each paragraph's hard-wrapped lines joined into one line, so
    the terminal wraps it once (Typer keeps a docstring's line breaks, which at any other
    width cut each line in two); a paragraph of list items or indented lines is kept."""
    paragraphs = re.split(r"\n\s*\n", inspect.cleandoc(doc))
    out = []
    for para in paragraphs:
        lines = para.splitlines()
        if any(line.startswith(("-", "*", " ")) or line.startswith("$") for line in lines):
            out.append(para)
        else:
            out.append(" ".join(line.strip() for line in lines))
    return "\n\n".join(out)


def _reflow_help(group: typer.Typer) -> None:
    for command in group.registered_commands:
        if command.help is None and command.callback is not None and command.callback.__doc__:
            command.help = reflow(command.callback.__doc__)
    for sub in group.registered_groups:
        if sub.typer_instance is not None:
            _reflow_help(sub.typer_instance)


_reflow_help(app)
