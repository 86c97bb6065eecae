"""The Typer app and the error policy shared by every command.

A known user error (:class:`trajudge.trajectories.InputError`) becomes one red line on stderr
and exit code 2; a store that fails under the command (:class:`trajudge.store.StoreError`:
deleted, read-only, full, damaged, unreachable) one line and exit code 3; nothing is printed as
a traceback.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from typing import Annotated, ParamSpec, TypeVar

import typer

from trajudge._terminal import SafeConsole
from trajudge.store import DEFAULT_URL

app = typer.Typer(
    name="trajudge",
    help="Is your agent reliable, and can the judge that says so be trusted?",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
# Logs and CI capture have no terminal width; give tables room instead of Rich's 80 columns.
_WIDTH = None if sys.stdout.isatty() or os.environ.get("COLUMNS") else 160
# markup off and control characters shown, never obeyed: ids and names come from users' files
console = SafeConsole(width=_WIDTH)
err_console = SafeConsole(stderr=True, width=_WIDTH)

DbOption = Annotated[
    str,
    typer.Option(
        "--db",
        envvar="TRAJUDGE_DB",
        help="SQLAlchemy URL of the store.",  # its default is shown beside, whole
    ),
]
P = ParamSpec("P")
R = TypeVar("R")
DEFAULT_DB = os.environ.get("TRAJUDGE_DB", DEFAULT_URL)


def given_on_command_line(ctx: typer.Context, param: str) -> bool:
    """Whether option ``param`` of the command was given on the command line (not its
    default, nor an environment variable)."""
    source = ctx.get_parameter_source(param)
    # compared by name: typer vendors its own copy of click's ParameterSource enum
    return source is not None and source.name == "COMMANDLINE"


def store_url(ctx: typer.Context, db: str, config_db: str | None) -> str:
    """The store a command uses: ``--db`` given on the command line, else ``TRAJUDGE_DB``,
    else the config's ``db:``, else the default (``sqlite:///trajudge.db``).

    The environment comes before the config so that a team can point every command at one
    shared database (README, "A team store on PostgreSQL") whatever a checked-in
    trajudge.yaml says; the variable is read now, not when the CLI was imported.
    """
    if given_on_command_line(ctx, "db"):
        return db
    env = os.environ.get("TRAJUDGE_DB")
    if env:
        return env
    return config_db or db


def existing_store_url(ctx: typer.Context, db: str, config_db: str | None) -> str:
    """:func:`store_url`, for a command that reads a store: a SQLite file that does not exist
    is an error (exit 2), not an empty store created by the command."""
    return require_store(store_url(ctx, db, config_db))


def require_store(url: str) -> str:
    """``url``, checked to name a store that exists: a command that reads a dataset must not
    create an empty SQLite file (and its folder) where a mistyped ``--db`` points."""
    # imported on use: `trajudge --help` and the other commands do not load this room
    from trajudge.core import InputError
    from trajudge.store import sqlite_path  # SQLAlchemy: not for --help

    sqlite_file = sqlite_path(url)
    if sqlite_file is not None and not sqlite_file.exists():
        raise InputError(
            url, field="db", reason="no store here: import a dataset first (trajudge import)"
        )
    return url


def _print_error(message: str, code: int) -> int:
    """Print ``error: message`` as one red line on stderr; returns ``code``."""
    from rich.markup import escape

    # the message names files and quotes their content: never read it as markup
    err_console.print(
        f"[bold red]error:[/] {escape(message)}", markup=True, highlight=False, soft_wrap=True
    )
    return code


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print one red line to stderr and return the Exit to raise."""
    return typer.Exit(_print_error(message, code))


def out_of_memory() -> str:
    """The one line for a MemoryError: an input that holds more than this process may (a
    record of many small values, below every size limit, can still take gigabytes once
    parsed into Python objects)."""
    import resource

    command = " ".join(sys.argv[1:2]) or "the command"
    cap, _ = resource.getrlimit(resource.RLIMIT_AS)
    where = "" if cap == resource.RLIM_INFINITY else f" (address space capped at {cap:,} bytes)"
    return (
        f"trajudge {command} ran out of memory{where}: an input holds more than this process "
        "can hold in memory; split the file, or run where more memory is available"
    )


def main() -> None:
    """Console entry point: run the app, mapping user errors to exit code 2."""
    # register commands (imported here so `import trajudge.cli` stays cheap)
    from trajudge.cli import _commands  # noqa: F401
    from trajudge.core import InputError
    from trajudge.store._faults import STORE_FAULT_EXIT, check_fault_exit

    try:
        app(standalone_mode=True)
    except InputError as exc:  # raised outside a command's own handler
        raise SystemExit(_print_error(str(exc), 2)) from None
    except MemoryError:
        raise SystemExit(_print_error(out_of_memory(), 2)) from None
    except Exception as exc:
        fault = check_fault_exit(exc)  # a store fault wrapped by a library on its way up
        if fault is None:
            raise
        raise SystemExit(_print_error(str(fault), STORE_FAULT_EXIT)) from None


def handle_user_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Decorator for commands: an InputError becomes one red line and exit code 2, a store
    fault one line and exit code 3."""
    # imported on use: `trajudge --help` and the other commands do not load this room
    from trajudge.core import InputError
    from trajudge.store._faults import STORE_FAULT_EXIT, check_fault_exit

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except InputError as exc:
            raise fail(str(exc)) from None
        except (typer.Exit, typer.Abort, KeyboardInterrupt):
            raise
        except MemoryError:
            raise fail(out_of_memory()) from None
        except Exception as exc:
            fault = check_fault_exit(exc)
            if fault is None:
                raise
            raise fail(str(fault), STORE_FAULT_EXIT) from None

    return wrapper
