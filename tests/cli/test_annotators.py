"""`trajudge annotators`: accounts added, listed, disabled, reset, their secrets never shown
again or stored in clear."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import trajudge.cli._commands  # noqa: F401  (registers the commands)
from trajudge.cli import app
from trajudge.labeling_app.auth._signin import FAILED, Refused, SignedIn, sign_in
from trajudge.store import Store
from trajudge.trajectories import Trajectory

runner = CliRunner()
PW = "a long enough password"


@pytest.fixture
def store(db_url: str) -> Store:
    s = Store(db_url)
    s.import_dataset("d", [Trajectory(id="t0", task_id="k0")])
    return s


def test_add_list_disable_reset(store: Store, db_url: str) -> None:
    db = ["--db", db_url]
    res = runner.invoke(app, ["annotators", "add", "alice", "--password", *db], input=PW + "\n")
    assert res.exit_code == 0, res.output
    assert res.output == "added alice (annotator)\n" and PW not in res.output
    res = runner.invoke(
        app, ["annotators", "add", "bob", "--role", "lead", "--email", "B@x.org", *db]
    )
    assert res.exit_code == 0, res.output
    token = res.output.splitlines()[1].rsplit(": ", 1)[1]
    assert isinstance(sign_in(store, "bob", token, "c", ttl_s=60), SignedIn)
    assert isinstance(sign_in(store, "alice", PW, "c", ttl_s=60), SignedIn)
    listed = runner.invoke(app, ["annotators", "list", *db], env={"COLUMNS": "160"}).output
    rows = [line.split("│")[1:5] for line in listed.splitlines() if "│" in line]
    assert [[c.strip() for c in r] for r in rows] == [
        ["alice", "annotator", "", "active"],
        ["bob", "lead", "b@x.org", "invited"],
    ]
    # a taken name, a bad role, a short password, an unknown account: one line, exit 2
    for args, said in [
        (["add", "alice"], "account: alice: this name is taken"),
        (["add", "carol", "--role", "boss"], "Invalid value for '--role'"),
        (["add", "carol", "--password"], "use at least 10 characters"),
        (["disable", "nobody"], "account: nobody: no such account"),
    ]:
        res = runner.invoke(app, ["annotators", *args, *db], input="short\n")
        assert res.exit_code == 2 and said in res.output and "Traceback" not in res.output
    assert runner.invoke(app, ["annotators", "disable", "alice", *db]).exit_code == 0
    assert sign_in(store, "alice", PW, "c2", ttl_s=60) == Refused(FAILED)
    assert runner.invoke(app, ["annotators", "enable", "alice", *db]).exit_code == 0
    res = runner.invoke(app, ["annotators", "reset", "alice", *db])
    assert res.exit_code == 0 and "invite for alice" in res.output
    assert isinstance(sign_in(store, "alice", PW, "c3", ttl_s=60), Refused)  # old password gone
    assert runner.invoke(app, ["annotators", "role", "alice", "adjudicator", *db]).exit_code == 0
    account = store.account("alice")
    assert account is not None and account.role == "adjudicator"
    events = [e["event"] for e in store.sign_in_log()][::-1]
    assert "account added" in events and "account disabled" in events and "account reset" in events
