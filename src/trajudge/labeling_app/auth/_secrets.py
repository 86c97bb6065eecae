"""Passwords and invite tokens, kept only as slow hashes (scrypt from the standard library).

A hash is ``scrypt$n$r$p$salt$digest`` (salt and digest in URL-safe base64), so the cost can
be raised later without making older hashes unreadable. The cost is OWASP's scrypt setting
N=2^15, r=8, p=3 (32 MiB, about a quarter of a second on one core).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

from trajudge.core import InputError

_N, _R, _P = 2**15, 8, 3
_MAXMEM = 128 * 1024 * 1024
MIN_PASSWORD = 10  # characters; NIST SP 800-63B asks for at least 8
MAX_PASSWORD = 1024  # a longer one is refused before hashing (no hashing-cost attack)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _scrypt(secret: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return hashlib.scrypt(
        secret.encode("utf-8"), salt=salt, n=n, r=r, p=p, maxmem=_MAXMEM, dklen=32
    )


def hash_secret(secret: str) -> str:
    """The slow hash of ``secret`` with a fresh salt."""
    salt = secrets.token_bytes(16)
    digest = _scrypt(secret, salt, _N, _R, _P)
    return f"scrypt${_N}${_R}${_P}${_b64(salt)}${_b64(digest)}"


def verify_secret(secret: str, stored: str | None) -> bool:
    """Whether ``secret`` matches the stored hash (constant-time compare). With no stored
    hash a dummy hash is still computed, so the time taken says nothing about the name."""
    if len(secret) > MAX_PASSWORD:
        return False
    try:
        kind, n, r, p, salt, digest = (stored or "").split("$")
        params = (int(n), int(r), int(p))
        ok = kind == "scrypt"
    except ValueError:
        params, salt, digest, ok = (_N, _R, _P), "", "", False
    given = _scrypt(secret, _unb64(salt) if ok else b"\0" * 16, *params)
    return ok and hmac.compare_digest(given, _unb64(digest))


def new_invite() -> str:
    """A one-time invite token (144 random bits, URL-safe)."""
    return secrets.token_urlsafe(18)


def check_new_password(password: str, name: str) -> str:
    """The password if it may be set; InputError saying why not otherwise."""
    if len(password) < MIN_PASSWORD:
        raise InputError("password", reason=f"use at least {MIN_PASSWORD} characters")
    if len(password) > MAX_PASSWORD:
        raise InputError("password", reason=f"use at most {MAX_PASSWORD} characters")
    if password.strip().casefold() == name.strip().casefold():
        raise InputError("password", reason="the password may not be the account's name")
    return password
