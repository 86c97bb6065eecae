"""Secrets never reach the disk, the logs or the screen: one redaction mechanism.

Two defences, applied together by :func:`redact`:

1. **Known values.** Whoever reads a secret (the LLM client reads API keys and header values
   from the environment variables a judge names) registers it with :func:`register_secret`.
   Every occurrence of a registered value is replaced by ``[redacted $NAME]``, naming the
   environment variable so the user still knows which key a provider rejected.
2. **Patterns**, for keys nobody registered (a gateway quoting a key from another
   configuration, a key pasted into a trajectory and quoted back by the judge):
   ``sk-...`` (OpenAI, Anthropic, DeepSeek and most OpenAI-compatible gateways, masked forms
   ``sk-abc***xyz`` included), ``Bearer <token>``, Google ``AIza...``, AWS access key ids,
   GitHub / GitLab / Hugging Face / Groq / xAI / Replicate tokens, and ``api_key=...`` /
   ``"x-api-key": "..."`` / ``Authorization: ...`` assignments. They become ``[redacted]``.
   URL credentials too: a userinfo password (``http://user:***@host``) and key-carrying query
   parameters (``?api-key=[redacted]``), so a judge's ``api_base`` or a database URL can be
   stored and shown (its configuration hash still covers the real value).

Where it is applied: every error string the LLM client builds, every log record in the
process once a client exists (:func:`install_log_redaction`, a log-record factory, so records
of litellm, openai, httpx and asyncio are covered, not only trajudge's), the response cache,
and the store's write of judgments (every text field), so nothing written can carry a key.

Values shorter than :data:`MIN_SECRET_CHARS` are not registered: they cannot be credentials,
and replacing them everywhere would garble messages (a value ``"1"`` inside ``"401"``).

>>> register_secret("s3cr3t-value-42", "MY_KEY")
>>> redact("401: Incorrect API key provided: s3cr3t-value-42")
'401: Incorrect API key provided: [redacted $MY_KEY]'
>>> redact("Authorization: Bearer abcdefghijklmnop")
'Authorization: [redacted]'
>>> redact("http://user:pa55word@gw.example/v1?api-version=2&key=abc123")
'http://user:***@gw.example/v1?api-version=2&key=[redacted]'
>>> forget_secrets()
"""

from __future__ import annotations

import logging
import re
import threading
from typing import Any

MIN_SECRET_CHARS = 4
REDACTED = "[redacted]"

_TOKEN = r"[A-Za-z0-9._~+/=*-]"
_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    # header or field assignments: keep the name, drop the value
    (
        re.compile(
            r"(?i)((?:x-)?api[_-]?key|authorization|access[_-]?token|secret[_-]?key"
            r"|client[_-]?secret|password)"
            r"(\"?'?\s*[:=]\s*\"?'?)(?:bearer\s+|basic\s+)?" + _TOKEN + r"{6,}"
        ),
        r"\1\2" + REDACTED,
    ),
    (re.compile(r"(?i)\bbearer\s+" + _TOKEN + r"{8,}"), REDACTED),
    (re.compile(r"\bsk-[A-Za-z0-9_*-]{12,}"), REDACTED),
    (re.compile(r"\bAIza[0-9A-Za-z_-]{30,}"), REDACTED),
    (re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), REDACTED),
    (
        re.compile(
            r"\b(?:ghp|gho|ghu|ghs|github_pat|glpat|hf|gsk|r8|pplx|xai)[_-][A-Za-z0-9_]{16,}"
        ),
        REDACTED,
    ),  # URL credentials: the password of a userinfo (http://user:SECRET@host), and the value
    # of a query parameter that carries a key (?api-key=, ?key=, ?token=, ?sig=, ...); the
    # user name and the host stay, so the URL still says where it points
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^/\s:@?#]*):[^/\s@?#]+@"), r"\1:***@"),
    (
        re.compile(
            r"(?i)([?&;](?:x-)?(?:api[-_]?key|key|token|access[-_]?token|auth|password|passwd"
            r"|secret|client[-_]?secret|sig|signature|code|apikey)=)[^&#;\s\"']+"
        ),
        r"\1" + REDACTED,
    ),
]

#: Per pattern above, literals one of which any match contains (lower case for the (?i)
#: patterns, which are looked for in the lowered text): an ASCII text holding none of a
#: pattern's literals cannot match it, so the pattern is not run (most texts hold no secret,
#: and six regular-expression passes cost more than the rest of a judgment's write). Not for
#: other texts: under (?i) some non-ASCII letters match ASCII ones ("ı" matches "i").
_LITERALS: list[tuple[bool, tuple[str, ...]]] = [
    (True, ("api", "authorization", "access", "secret", "password")),
    (True, ("bearer",)),
    (False, ("sk-",)),
    (False, ("AIza",)),
    (False, ("AKIA", "ASIA")),
    (False, ("ghp", "gho", "ghu", "ghs", "github_pat", "glpat", "hf", "gsk", "r8", "pplx", "xai")),
    (False, ("://",)),
    (False, ("=",)),
]

#: Per pattern: whether its literals are looked for in the lowered text, and the literals as
#: one expression (one C-level scan instead of one per literal).
_PREFILTERS = [(lower, re.compile("|".join(map(re.escape, lits)))) for lower, lits in _LITERALS]

_lock = threading.Lock()
_known: dict[str, str] = {}  # secret value -> the name shown instead (an env var)


def register_secret(value: str | None, name: str) -> None:
    """Remember ``value`` as a secret; :func:`redact` replaces it by ``[redacted $name]``."""
    if value is None or len(value) < MIN_SECRET_CHARS:
        return
    with _lock:
        _known[value] = name


def forget_secrets() -> None:
    """Forget every registered value (tests)."""
    with _lock:
        _known.clear()


def redact(text: str) -> str:
    """``text`` with every registered secret and every key-like token replaced."""
    if not text:
        return text
    with _lock:
        known = sorted(_known.items(), key=lambda kv: -len(kv[0]))  # longest first
    for value, name in known:
        if value in text:
            text = text.replace(value, f"[redacted ${name}]")
    ascii_only = text.isascii()
    lowered = text.lower()
    for (pattern, repl), (ignore_case, prefilter) in zip(_PATTERNS, _PREFILTERS, strict=True):
        where = lowered if ignore_case else text
        if not ascii_only or prefilter.search(where):
            text = pattern.sub(repl, text)
            lowered = text.lower()
    return text


def redact_value(value: Any) -> Any:
    """:func:`redact` applied to a string, or to the strings inside a dict or list."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: redact_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_value(v) for v in value]
    return value


_installed = False
_formatter = logging.Formatter()


def install_log_redaction() -> None:
    """Redact every log record created in this process from now on (idempotent).

    A logger's filter only sees records logged on that very logger, and handlers belong to the
    application, so the redaction wraps the log-record factory: the message (with its
    arguments) and any exception text are redacted when the record is made, whoever logs it.
    """
    global _installed
    with _lock:
        if _installed:
            return
        _installed = True
    previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # a broken format string: leave it to the handler to report
            return record
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, ()
        if record.exc_info:
            text = _formatter.formatException(record.exc_info)
            clean = redact(text)
            if clean != text:  # keep the exception object unless it carries a secret
                record.exc_text, record.exc_info = clean, None
        return record

    logging.setLogRecordFactory(factory)
