"""`trajudge annotators add|list|disable|enable|reset|role`: the labeling app's accounts."""

from __future__ import annotations

import getpass
import sys
import time
from typing import Annotated, Literal

import typer

from trajudge.cli._app import (
    DEFAULT_DB,
    DbOption,
    app,
    console,
    handle_user_errors,
    require_store,
)
from trajudge.core import InputError

annotators_app = typer.Typer(
    help="Accounts of the labeling app: who may sign in, with which role.", no_args_is_help=True
)
app.add_typer(annotators_app, name="annotators")

Role = Literal["annotator", "adjudicator", "lead"]
PasswordOption = Annotated[
    bool,
    typer.Option(
        "--password",
        help="Set a password instead of printing an invite: typed at a hidden prompt (twice), "
        "or the first line of standard input when it is not a terminal.",
    ),
]
InviteDays = Annotated[
    float, typer.Option(min=0.01, max=90, help="Days an invite works (until it is used).")
]


def _read_password(name: str) -> str:
    """A password from a hidden prompt (asked twice) or from the first line of stdin; never
    echoed or written anywhere."""
    if sys.stdin.isatty():
        first = getpass.getpass(f"Password for {name}: ")
        if getpass.getpass("Again: ") != first:
            raise InputError("--password", reason="the two passwords differ")
        return first
    line = sys.stdin.readline()
    password = line[:-1] if line.endswith("\n") else line
    if not password:
        raise InputError("--password", reason="standard input held no password line")
    return password


def _said_invite(name: str, token: str, days: float) -> None:
    until = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(time.time() + days * 86400))
    console.print(f"invite for {name} (works once, until {until}): {token}", highlight=False)
    console.print(
        f"{name} signs in to the app with this name and the invite, then chooses a password.",
        highlight=False,
    )


@annotators_app.command("add")
@handle_user_errors
def add_cmd(
    name: Annotated[str, typer.Argument(help="The account's name (what labels are saved under).")],
    role: Annotated[Role, typer.Option(help="annotator, adjudicator or lead.")] = "annotator",
    email: Annotated[str | None, typer.Option(help="E-mail for single sign-on (unique).")] = None,
    password: PasswordOption = False,
    invite_days: InviteDays = 7.0,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Add an account. Prints a one-time invite for its person (stored only as a hash), or
    with --password sets the password you type."""
    # imported on use: `trajudge --help` and the other commands do not load this room
    from trajudge.labeling_app._config import validate_annotator
    from trajudge.labeling_app.auth._manage import add_account
    from trajudge.store import Store

    name = validate_annotator(name)
    secret = _read_password(name) if password else None
    store = Store(require_store(db))
    account, token = add_account(
        store, name, role, email=email, password=secret, invite_days=invite_days
    )
    store.log_sign_in(name, "trajudge annotators", "account added", role)
    console.print(f"added {account.name} ({account.role})", highlight=False)
    if token is not None:
        _said_invite(account.name, token, invite_days)


@annotators_app.command("list")
@handle_user_errors
def list_cmd(db: DbOption = DEFAULT_DB) -> None:
    """List the accounts: name, role, e-mail and state (active, invited, disabled)."""
    # imported on use: `trajudge --help` and the other commands do not load these
    from rich.table import Table

    # imported on use, as above
    from trajudge.store import Store

    accounts = Store(require_store(db)).accounts()
    if not accounts:
        console.print("no accounts yet (trajudge annotators add NAME)")
        return
    table = Table("name", "role", "e-mail", "state", "updated (UTC)")
    for a in accounts:
        if a.disabled:
            state = "disabled"
        elif a.secret_kind == "invite":
            left = (a.secret_expires_at or 0.0) > time.time()
            state = "invited" if left else "invite expired"
        else:
            state = "active"
        table.add_row(a.name, a.role, a.email or "", state, a.updated_at[:19])
    console.print(table)


def _change(db: str, name: str, event: str, detail: str | None = None) -> None:
    # imported on use: `trajudge --help` and the other commands do not load this room
    from trajudge.store import Store

    store = Store(require_store(db))
    account = store.account(name)
    if account is None:
        raise InputError("account", record=name, reason="no such account")
    if event == "disabled":
        store.set_account_disabled(name, True)
    elif event == "enabled":
        store.set_account_disabled(name, False)
    else:
        assert detail is not None
        store.set_account_role(name, detail)
    store.log_sign_in(name, "trajudge annotators", f"account {event}", detail)
    console.print(f"{name}: {event}" + (f" {detail}" if detail else ""), highlight=False)


@annotators_app.command("disable")
@handle_user_errors
def disable_cmd(
    name: Annotated[str, typer.Argument(help="Account name.")], db: DbOption = DEFAULT_DB
) -> None:
    """Disable an account: it cannot sign in, and its open sessions save nothing more."""
    _change(db, name, "disabled")


@annotators_app.command("enable")
@handle_user_errors
def enable_cmd(
    name: Annotated[str, typer.Argument(help="Account name.")], db: DbOption = DEFAULT_DB
) -> None:
    """Enable a disabled account again (it signs in with its password or invite)."""
    _change(db, name, "enabled")


@annotators_app.command("role")
@handle_user_errors
def role_cmd(
    name: Annotated[str, typer.Argument(help="Account name.")],
    role: Annotated[Role, typer.Argument(help="annotator, adjudicator or lead.")],
    db: DbOption = DEFAULT_DB,
) -> None:
    """Give an account another role (its open sessions end: it signs in again)."""
    _change(db, name, "role", role)


@annotators_app.command("reset")
@handle_user_errors
def reset_cmd(
    name: Annotated[str, typer.Argument(help="Account name.")],
    password: PasswordOption = False,
    invite_days: InviteDays = 7.0,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Replace an account's credential with a new invite (printed once) or, with --password,
    a password you type; its old password or invite stops working and its sessions end."""
    # imported on use: `trajudge --help` and the other commands do not load this room
    from trajudge.labeling_app.auth._manage import reset_account
    from trajudge.store import Store

    store = Store(require_store(db))
    if store.account(name) is None:
        raise InputError("account", record=name, reason="no such account")
    secret = _read_password(name) if password else None
    account, token = reset_account(store, name, password=secret, invite_days=invite_days)
    store.log_sign_in(name, "trajudge annotators", "account reset", account.secret_kind)
    console.print(f"{name}: reset ({account.secret_kind})", highlight=False)
    if token is not None:
        _said_invite(name, token, invite_days)
