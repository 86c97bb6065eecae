"""Accounts, sign-in, the throttle and the sign-in log, on the store itself (SQLite and
PostgreSQL): the rules the sign-in page and every save rely on."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import textwrap
import time

import pytest
from sqlalchemy import text

from trajudge.core import InputError
from trajudge.labeling_app.auth._manage import add_account, first_lead, reset_account
from trajudge.labeling_app.auth._secrets import hash_secret, verify_secret
from trajudge.labeling_app.auth._signin import (
    FAILED,
    LOCKOUT_S,
    Refused,
    SessionEnded,
    SignedIn,
    check_session,
    set_password,
    sign_in,
)
from trajudge.store import Store

PW = "correct horse battery"
TTL = 3600.0
# the clock the test gives sign_in (invites expire against the real clock: start at now)
T0 = float(int(time.time()))


def _store(db_url: str) -> Store:
    return Store(db_url)


def _everything_stored(store: Store) -> str:
    """Every value of the three account tables, as text (to look for secrets in)."""
    out = []
    with store.sql_engine.connect() as conn:
        for table in ("accounts", "sign_in_throttle", "sign_in_events"):
            out += [repr(tuple(r)) for r in conn.execute(text(f"SELECT * FROM {table}"))]
    return "\n".join(out)


def test_the_hash_is_scrypt_of_the_password_and_nothing_else_is_stored(db_url: str) -> None:
    store = _store(db_url)
    account, token = add_account(store, "alice", password=PW)
    assert token is None and account.secret_kind == "password"
    assert account.secret is not None
    kind, n, r, p, salt, digest = account.secret.split("$")
    # recomputed with hashlib directly from the stored parameters: the hash is scrypt's
    import base64

    def unb64(s: str) -> bytes:
        return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))

    expected = hashlib.scrypt(
        PW.encode(), salt=unb64(salt), n=int(n), r=int(r), p=int(p), maxmem=2**28, dklen=32
    )
    assert (kind, int(n), int(r), int(p)) == ("scrypt", 2**15, 8, 3)
    assert unb64(digest) == expected
    assert verify_secret(PW, account.secret) and not verify_secret(PW + "x", account.secret)
    assert hash_secret(PW) != account.secret  # a fresh salt each time
    sign_in(store, "alice", PW, "10.0.0.1", ttl_s=TTL, now=T0)
    sign_in(store, "alice", "wrong " + PW, "10.0.0.1", ttl_s=TTL, now=T0)
    assert PW not in _everything_stored(store)


def test_every_failure_gets_the_same_message(db_url: str) -> None:
    store = _store(db_url)
    add_account(store, "alice", password=PW)
    add_account(store, "bob", password=PW)
    store.set_account_disabled("bob", True)
    _, token = add_account(store, "carol", invite_days=1.0)
    assert token is not None
    got = [
        sign_in(store, "alice", "not it", "c1", ttl_s=TTL, now=T0),  # wrong password
        sign_in(store, "nobody", PW, "c2", ttl_s=TTL, now=T0),  # unknown name
        sign_in(store, "bob", PW, "c3", ttl_s=TTL, now=T0),  # disabled, right password
        sign_in(store, "carol", token, "c4", ttl_s=TTL, now=T0 + 2 * 86400),  # expired invite
        sign_in(store, "", "", "c5", ttl_s=TTL, now=T0),
    ]
    assert [g.message for g in got if isinstance(g, Refused)] == [FAILED] * 5
    ok = sign_in(store, "alice", PW, "c1", ttl_s=TTL, now=T0)
    assert isinstance(ok, SignedIn) and ok.role == "annotator" and not ok.must_set_password
    # the log says what happened (for the lead), never a secret
    log = store.sign_in_log()
    assert [(e["name"], e["event"]) for e in log[::-1]] == [
        ("alice", "failed"),
        ("nobody", "failed"),
        ("bob", "failed"),
        ("carol", "failed"),
        ("", "failed"),
        ("alice", "signed in"),
    ]
    assert [e["detail"].split(" (")[0] for e in log[::-1][:4]] == [
        "wrong credential",
        "unknown name",
        "account disabled",
        "invite expired",
    ]
    assert token not in _everything_stored(store)


def test_an_invite_works_once_and_becomes_a_password(db_url: str) -> None:
    store = _store(db_url)
    _, token = add_account(store, "dave", "adjudicator", email="Dave@Example.org")
    assert token is not None
    signed = sign_in(store, "dave", token, "c", ttl_s=TTL, now=T0)
    assert isinstance(signed, SignedIn) and signed.must_set_password
    after = set_password(store, signed, PW, "c")
    assert not after.must_set_password
    check_session(store, after, "c", now=T0 + 1)  # the session goes on with its password
    assert isinstance(sign_in(store, "dave", token, "c", ttl_s=TTL, now=T0 + 2), Refused)
    assert isinstance(sign_in(store, "dave", PW, "c", ttl_s=TTL, now=T0 + 3), SignedIn)
    with pytest.raises(SessionEnded):  # a second session of the same invite lost the race
        set_password(store, signed, "another password", "c")
    # single sign-on finds the account by e-mail, in any case
    found = store.account_by_email("dave@EXAMPLE.org")
    assert found is not None and found.name == "dave" and found.email == "dave@example.org"
    assert store.account_by_email("nobody@example.org") is None
    with pytest.raises(InputError, match="e-mail is taken"):
        add_account(store, "dave2", email="DAVE@example.org", password=PW)
    with pytest.raises(InputError, match="name is taken"):
        add_account(store, "dave", password=PW)


def test_a_session_ends_when_the_account_is_disabled_reset_or_expires(db_url: str) -> None:
    store = _store(db_url)
    add_account(store, "alice", password=PW)
    one = sign_in(store, "alice", PW, "c1", ttl_s=TTL, now=T0)
    two = sign_in(store, "alice", PW, "c2", ttl_s=TTL, now=T0)
    assert isinstance(one, SignedIn) and isinstance(two, SignedIn)
    # two sessions of one person both work
    assert check_session(store, one, "c1", now=T0 + 1).name == "alice"
    assert check_session(store, two, "c2", now=T0 + 1).name == "alice"
    with pytest.raises(SessionEnded, match="expired"):
        check_session(store, one, "c1", now=T0 + TTL)
    store.set_account_disabled("alice", True)
    with pytest.raises(SessionEnded, match="disabled"):
        check_session(store, two, "c2", now=T0 + 2)
    store.set_account_disabled("alice", False)
    with pytest.raises(SessionEnded, match="reset or changed"):  # enabling again: sign in anew
        check_session(store, two, "c2", now=T0 + 3)
    three = sign_in(store, "alice", PW, "c2", ttl_s=TTL, now=T0 + 4)
    assert isinstance(three, SignedIn)
    reset_account(store, "alice", password="a new password")
    with pytest.raises(SessionEnded, match="reset or changed"):
        check_session(store, three, "c2", now=T0 + 5)
    assert isinstance(sign_in(store, "alice", PW, "c2", ttl_s=TTL, now=T0 + 6), Refused)


def test_fifty_wrong_passwords_are_throttled_then_locked_out_and_logged(db_url: str) -> None:
    store = _store(db_url)
    add_account(store, "alice", password=PW)
    # 50 wrong passwords at once: the first four are checked (free for three, and the
    # fourth failure asks for 2 s), the other 46 refused unchecked
    got = [sign_in(store, "alice", f"guess {i}", "6.6.6.6", ttl_s=TTL, now=T0) for i in range(50)]
    assert [g.message for g in got if isinstance(g, Refused)][:4] == [FAILED] * 4
    assert sum(isinstance(g, Refused) and g.message.startswith("Too many") for g in got) == 46
    # the right password in the same second is refused too, and says nothing of its rightness
    right = sign_in(store, "alice", PW, "6.6.6.6", ttl_s=TTL, now=T0)
    assert (
        isinstance(right, Refused)
        and right.message == "Too many failed sign-ins: wait 2 seconds and try again."
    )
    events = [e["event"] for e in store.sign_in_log()]
    assert events.count("failed") == 4 and events.count("throttled") == 47
    # an attacker who waits each time as long as asked: by hand, after failure n the next
    # try may come 2^(n-3) s later (n = 4..9), and failure 10 locks the name for 15 minutes
    now = T0
    for wait in (2, 4, 8, 16, 32, 64):
        now += wait
        assert sign_in(store, "alice", "guess", "6.6.6.6", ttl_s=TTL, now=now) == Refused(FAILED)
    assert store.throttle_until(["account:alice"]) == now + LOCKOUT_S
    # from another address too: the name is locked, whoever asks
    locked = sign_in(store, "alice", PW, "7.7.7.7", ttl_s=TTL, now=now + LOCKOUT_S - 1)
    assert isinstance(locked, Refused) and "Too many" in locked.message
    ok = sign_in(store, "alice", PW, "7.7.7.7", ttl_s=TTL, now=now + LOCKOUT_S)
    assert isinstance(ok, SignedIn)
    # a success clears the name's count: the next wrong password is free again
    assert sign_in(store, "alice", "x", "7.7.7.7", ttl_s=TTL, now=now + LOCKOUT_S) == Refused(
        FAILED
    )
    assert store.throttle_until(["account:alice"]) <= now + LOCKOUT_S  # no wait asked


def test_one_client_guessing_many_names_is_throttled_per_client(db_url: str) -> None:
    store = _store(db_url)
    # ten free failures per client, then 2^(n-10) s: the 11th failure asks for 2 s
    names = [f"user{i}" for i in range(12)]
    got = [sign_in(store, n, "guess", "6.6.6.6", ttl_s=TTL, now=T0) for n in names]
    assert [g.message for g in got if isinstance(g, Refused)][:11] == [FAILED] * 11
    assert isinstance(got[11], Refused) and "Too many" in got[11].message
    # another client is not held back by it
    other = sign_in(store, "user11", "guess", "8.8.8.8", ttl_s=TTL, now=T0)
    assert other == Refused(FAILED)


def test_the_throttle_holds_across_processes(db_url: str, tmp_path: object) -> None:
    store = _store(db_url)
    add_account(store, "alice", password=PW)
    code = textwrap.dedent(
        f"""
        from trajudge.labeling_app.auth._signin import sign_in
        from trajudge.store import Store
        s = Store({db_url!r})
        for i in range(4):
            sign_in(s, "alice", "guess", "6.6.6.6", ttl_s=60.0, now={T0})
        """
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=300)
    # this process (another app server on the same store) sees the other's failures
    got = sign_in(store, "alice", PW, "6.6.6.6", ttl_s=TTL, now=T0 + 1)
    assert isinstance(got, Refused) and "Too many" in got.message
    assert isinstance(sign_in(store, "alice", PW, "6.6.6.6", ttl_s=TTL, now=T0 + 2), SignedIn)


def test_the_first_lead_is_made_once(db_url: str) -> None:
    store = _store(db_url)
    made = first_lead(store)
    assert made is not None
    account, token = made
    assert account.name == "lead" and account.role == "lead" and account.secret_kind == "invite"
    assert first_lead(store) is None  # accounts exist now
    signed = sign_in(store, "lead", token, "c", ttl_s=TTL, now=T0)
    assert isinstance(signed, SignedIn) and signed.must_set_password
    with pytest.raises(InputError, match="at least 10"):
        add_account(store, "eve", password="short")
    with pytest.raises(InputError, match="not one of"):
        store.add_account("eve", "boss", secret="x", secret_kind="password")
