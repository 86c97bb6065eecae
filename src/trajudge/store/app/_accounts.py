"""Accounts of the labeling app, the sign-in throttle and the sign-in log (schema version 9).

The store keeps what the app decides with: an account's role, disabled flag, e-mail and the
slow hash of its secret (the hashing and the sign-in rules live in
``trajudge.labeling_app.auth``; no secret ever reaches this module). The throttle counts
failures per key in one conditional write each, so two app processes on one store count
together.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, case, insert, select, update
from sqlalchemy.exc import IntegrityError

from trajudge.core import InputError, now_iso
from trajudge.store._schema import accounts, reservations, sign_in_events, sign_in_throttle

ROLES = ("annotator", "adjudicator", "lead")
_SLOT = "\x1f"  # between an item and its slot number (an item with several reviewers)


@dataclass(frozen=True)
class Account:
    """An account as stored (``secret`` is a slow hash, or None before one is set)."""

    name: str
    role: str
    email: str | None
    disabled: bool
    secret: str | None
    secret_kind: str | None
    secret_expires_at: float | None
    epoch: int
    created_at: str
    updated_at: str


def _account(row: Any) -> Account:
    return Account(**{**dict(row), "disabled": bool(row["disabled"])})


def _email(email: str | None) -> str | None:
    if email is None:
        return None
    text = email.strip().lower()
    if not text or "@" not in text or len(text) > 320 or any(c.isspace() for c in text):
        raise InputError("--email", record=repr(email), reason="not an e-mail address")
    return text


class AccountsMixin:
    """Account, throttle and sign-in log queries for :class:`trajudge.store.Store`."""

    sql_engine: Engine
    sql_write_engine: Engine
    url: str

    def account(self, name: str) -> Account | None:
        """The account called ``name`` (exact), or None."""
        with self.sql_engine.connect() as conn:
            row = conn.execute(select(accounts).where(accounts.c.name == name)).mappings().first()
        return None if row is None else _account(row)

    def account_by_email(self, email: str) -> Account | None:
        """The account with this e-mail address (compared in lower case), or None: how a
        single sign-on identity finds its account."""
        key = email.strip().lower()
        with self.sql_engine.connect() as conn:
            row = conn.execute(select(accounts).where(accounts.c.email == key)).mappings().first()
        return None if row is None else _account(row)

    def accounts(self) -> list[Account]:
        """Every account, by name."""
        with self.sql_engine.connect() as conn:
            rows = conn.execute(select(accounts).order_by(accounts.c.name)).mappings().all()
        return [_account(r) for r in rows]

    def add_account(
        self,
        name: str,
        role: str,
        *,
        email: str | None = None,
        secret: str,
        secret_kind: str,
        secret_expires_at: float | None = None,
    ) -> Account:
        """Add an account holding the hash ``secret``; InputError when the name or the e-mail
        is taken or the role unknown."""
        if role not in ROLES:
            raise InputError("--role", reason=f"{role!r} is not one of {', '.join(ROLES)}")
        now = now_iso()
        row = dict(
            name=name,
            role=role,
            email=_email(email),
            disabled=False,
            secret=secret,
            secret_kind=secret_kind,
            secret_expires_at=secret_expires_at,
            epoch=0,
            created_at=now,
            updated_at=now,
        )
        try:
            with self.sql_write_engine.begin() as conn:
                conn.execute(insert(accounts).values(**row))
        except IntegrityError:
            taken = "name" if self.account(name) is not None else "e-mail"
            raise InputError("account", record=name, reason=f"this {taken} is taken") from None
        return _account(row)

    def _change_account(self, name: str, **values: Any) -> Account:
        with self.sql_write_engine.begin() as conn:
            done = conn.execute(
                update(accounts)
                .where(accounts.c.name == name)
                .values(**values, epoch=accounts.c.epoch + 1, updated_at=now_iso())
            )
        found = self.account(name) if done.rowcount == 1 else None
        if found is None:
            raise InputError("account", record=name, reason="no such account")
        return found

    def set_account_secret(
        self, name: str, secret: str, secret_kind: str, expires_at: float | None = None
    ) -> Account:
        """Replace the account's secret hash; every session opened before ends."""
        return self._change_account(
            name, secret=secret, secret_kind=secret_kind, secret_expires_at=expires_at
        )

    def set_account_disabled(self, name: str, disabled: bool) -> Account:
        """Disable (or enable) an account; every session opened before ends, and a disabled
        account's reservations lapse (its open items pass to the others)."""
        account = self._change_account(name, disabled=disabled)
        if disabled:
            self.release_reservations(name)
        return account

    def set_account_role(self, name: str, role: str) -> Account:
        """Give the account another role; every session opened before ends."""
        if role not in ROLES:
            raise InputError("--role", reason=f"{role!r} is not one of {', '.join(ROLES)}")
        return self._change_account(name, role=role)

    def redeem_invite(self, name: str, old_secret: str, new_secret: str) -> bool:
        """Swap a still-unused invite (hash ``old_secret``) for a password hash, in one
        conditional write: of two sessions redeeming one invite, one wins."""
        with self.sql_write_engine.begin() as conn:
            done = conn.execute(
                update(accounts)
                .where(
                    accounts.c.name == name,
                    accounts.c.secret == old_secret,
                    accounts.c.secret_kind == "invite",
                )
                .values(
                    secret=new_secret,
                    secret_kind="password",
                    secret_expires_at=None,
                    updated_at=now_iso(),
                )
            )
        return done.rowcount == 1

    # --- the throttle --------------------------------------------------------------------

    def throttle_until(self, keys: Sequence[str]) -> float:
        """The latest time (epoch seconds) before which any of ``keys`` may not try again;
        0 when none is throttled."""
        q = select(sign_in_throttle.c.not_before).where(sign_in_throttle.c.key.in_(list(keys)))
        with self.sql_engine.connect() as conn:
            return max((float(r[0]) for r in conn.execute(q)), default=0.0)

    def record_failure(
        self, key: str, now: float, *, forget_after_s: float, wait_s: Callable[[int], float]
    ) -> int:
        """Count a failed sign-in for ``key`` (the count starts again after ``forget_after_s``
        quiet seconds) and set when the next attempt may come (``now + wait_s(count)``);
        returns the count."""
        t = sign_in_throttle.c
        counted = case((t.last_failure_at < now - forget_after_s, 1), else_=t.failures + 1)
        for _ in range(3):  # an insert that lost a race to another process: update instead
            try:
                with self.sql_write_engine.begin() as conn:
                    done = conn.execute(
                        update(sign_in_throttle)
                        .where(t.key == key)
                        .values(failures=counted, last_failure_at=now)
                    )
                    if done.rowcount == 0:
                        conn.execute(
                            insert(sign_in_throttle).values(
                                key=key, failures=1, last_failure_at=now, not_before=0.0
                            )
                        )
                    n = int(conn.execute(select(t.failures).where(t.key == key)).scalar_one())
                    conn.execute(
                        update(sign_in_throttle)
                        .where(t.key == key, t.not_before < now + wait_s(n))
                        .values(not_before=now + wait_s(n))
                    )
                return n
            except IntegrityError:
                continue
        raise RuntimeError(f"could not count a failed sign-in for {key}")  # pragma: no cover

    def clear_failures(self, keys: Sequence[str]) -> None:
        """Forget the failures of ``keys`` (after a successful sign-in); an UPDATE, not a
        DELETE, so the README's grants for the app's database role suffice."""
        with self.sql_write_engine.begin() as conn:
            conn.execute(
                update(sign_in_throttle)
                .where(sign_in_throttle.c.key.in_(list(keys)))
                .values(failures=0, not_before=0.0)
            )

    # --- reservations ----------------------------------------------------------------------

    def reserve(
        self,
        dataset: str,
        rubric_id: str,
        item: str,
        annotator: str,
        *,
        ttl_s: float,
        slots: int = 1,
    ) -> bool:
        """Hand ``item`` to ``annotator`` for ``ttl_s`` seconds: True when a slot of it is
        free, hers already (renewed) or another's that lapsed; False while others hold all
        ``slots`` (an item with several reviewers has one slot each). One conditional write
        each way, so of two annotators asking for one slot at once one gets it."""
        if slots <= 1:
            return self._reserve_slot(dataset, rubric_id, item, annotator, ttl_s)
        keys = [f"{item}{_SLOT}{s}" for s in range(slots)]
        r = reservations.c
        with self.sql_write_engine.begin() as conn:  # hers already: renew it, take no other
            renewed = conn.execute(
                update(reservations)
                .where(
                    r.dataset == dataset,
                    r.rubric_id == rubric_id,
                    r.item.in_(keys),
                    r.annotator == annotator,
                )
                .values(expires_at=time.time() + ttl_s)
            )
        if renewed.rowcount:
            return True
        return any(self._reserve_slot(dataset, rubric_id, k, annotator, ttl_s) for k in keys)

    def _reserve_slot(
        self, dataset: str, rubric_id: str, item: str, annotator: str, ttl_s: float
    ) -> bool:
        now = time.time()
        r = reservations.c
        key = (r.dataset == dataset, r.rubric_id == rubric_id, r.item == item)
        row = dict(dataset=dataset, rubric_id=rubric_id, item=item, annotator=annotator)
        for _ in range(3):
            try:
                with self.sql_write_engine.begin() as conn:
                    taken = conn.execute(
                        update(reservations)
                        .where(*key, (r.annotator == annotator) | (r.expires_at <= now))
                        .values(annotator=annotator, expires_at=now + ttl_s)
                    )
                    if taken.rowcount == 1:
                        return True
                    held = conn.execute(select(r.annotator).where(*key)).first()
                    if held is not None:
                        return False
                    conn.execute(insert(reservations).values(**row, expires_at=now + ttl_s))
                    return True
            except IntegrityError:  # inserted by another at the same moment: look again
                continue
        return False

    def release_reservations(self, annotator: str, item: str | None = None) -> None:
        """Let the annotator's reservations (of one item, or all) lapse now (an UPDATE: the
        README's grants for the app's role suffice)."""
        r = reservations.c
        q = update(reservations).where(r.annotator == annotator)
        if item is not None:
            q = q.where((r.item == item) | r.item.startswith(f"{item}{_SLOT}", autoescape=True))
        with self.sql_write_engine.begin() as conn:
            conn.execute(q.values(expires_at=0.0))

    # --- the sign-in log -----------------------------------------------------------------

    def log_sign_in(self, name: str, client: str, event: str, detail: str | None = None) -> None:
        """Write one line of the sign-in log (never a secret: the caller passes none)."""
        with self.sql_write_engine.begin() as conn:
            conn.execute(
                insert(sign_in_events).values(
                    at=now_iso(), name=name[:100], client=client[:100], event=event, detail=detail
                )
            )

    def sign_in_log(self, limit: int = 500) -> list[dict[str, Any]]:
        """The latest lines of the sign-in log, the newest first."""
        q = select(sign_in_events).order_by(sign_in_events.c.id.desc()).limit(limit)
        with self.sql_engine.connect() as conn:
            return [dict(r) for r in conn.execute(q).mappings()]
