"""Test data for the labeling app: trajectories, one of them carrying HTML / script /
javascript-link payloads that must stay inert text."""

from __future__ import annotations

import time
from typing import Any

from trajudge.labeling_app import _state as S
from trajudge.labeling_app.auth._manage import add_account
from trajudge.labeling_app.auth._session import SESSION
from trajudge.labeling_app.auth._signin import SignedIn
from trajudge.store import Store
from trajudge.trajectories import Step, Trajectory, Usage

DATASET = "demo"
SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"
LINK = "[click](javascript:alert(1))"


def xss_trajectory() -> Trajectory:
    return Trajectory(
        id="xss",
        task_id="t-xss",
        input=f"Please book {SCRIPT} a flight",
        steps=[
            Step(tool="search_flights", args={"q": LINK, "html": SCRIPT}, output=IMG),
            Step(tool="book", args={"id": 1}, ok=False, error=f"failed {SCRIPT}"),
        ],
        final_answer=f"Done {LINK} {IMG}",
        intent="book",
        usage=Usage(prompt_tokens=10, completion_tokens=5, cost_usd=0.01, turns=2),
    )


def make_trajectories(n: int) -> list[Trajectory]:
    intents = ["book", "cancel", "change"]
    out = [xss_trajectory()]
    for i in range(1, n):
        out.append(
            Trajectory(
                id=f"t{i:03d}",
                task_id=f"task{i % 5}",
                trial=i // 5,
                input=f"User request number {i}",
                steps=[
                    Step(tool="get_user", args={"user_id": f"u{i}"}, output="x" * (50 * i)),
                    Step(tool="update", args={"n": i}, ok=i % 4 != 0, output="done"),
                ],
                final_answer=f"answer {i}",
                intent=intents[i % 3],
            )
        )
    return out


PASSWORD = "a password for tests"


def sign_in_as(at: Any, db_url: str, name: str, role: str = "annotator") -> None:
    """Sign ``name`` in on an AppTest session as the sign-in page does: its account (added
    with :data:`PASSWORD` when missing, given ``role``) and a session of that account."""
    store = Store(db_url)
    try:
        account = store.account(name)
        if account is None:
            account, _ = add_account(store, name, role, password=PASSWORD)
        elif account.role != role:
            account = store.set_account_role(name, role)
    finally:
        store.close()
    at.session_state[SESSION] = SignedIn(name, role, account.epoch, "password", time.time() + 3600)
    at.session_state[S.ANNOTATOR] = name


def add_accounts(db_url: str, *names: str) -> None:
    """Accounts for ``names``, each with :data:`PASSWORD` (before the server starts)."""
    store = Store(db_url)
    try:
        for name in names:
            add_account(store, name, password=PASSWORD)
    finally:
        store.close()


def browser_sign_in(page: Any, name: str, password: str = PASSWORD) -> None:
    """Sign in on the app's sign-in page in a Playwright page."""
    page.get_by_role("textbox", name="Name").fill(name)
    page.get_by_role("textbox", name="Password or invite").fill(password)
    # exact: under single sign-on "Sign in with SSO" is beside it
    page.get_by_role("button", name="Sign in", exact=True).click()
