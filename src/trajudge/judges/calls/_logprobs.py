"""Expected scores from token log-probabilities (G-Eval style, Liu et al. 2023).

A judge with ``logprobs: true`` asks the provider for the log-probability of every output
token and of its :data:`TOP_LOGPROBS` most likely alternatives (OpenAI's ``logprobs`` and
``top_logprobs``, which litellm passes to OpenAI-compatible servers, llama.cpp's included).
:func:`field_probabilities` then finds, in the verdict's JSON text, where the value of each
enumerated field (``score``, ``score_a`` / ``score_b``, ``verdict``) starts, and reads the
probability of each allowed value at that token:

- the tokens' bytes are laid end to end and the value's first byte located among them; the
  token holding it may start with the JSON before the value (``' 4'``, ``':"A'``): an
  alternative counts only if it starts with the same bytes, the rest is the value's start;
- an alternative that spells one allowed value (``'4'``, ``'4,'``, ``'A"'``) gives that value
  its probability; one that no allowed value starts with (``'0'`` on a 1..5 scale, or a token
  the JSON grammar would not allow: servers report the model's distribution before the
  grammar) is dropped, and the rest renormalised over the allowed values;
- a value split across tokens (``'1'`` then ``'0'`` for 10 where digits are single tokens):
  an alternative that begins several allowed values (``'1'`` on a 1..10 scale) is resolved
  at the next token when it is the token the model wrote (the next position's alternatives
  split its probability: ``'0'`` -> 10, ``','`` -> 1, anything JSON does not allow after a
  number is dropped); when the model wrote another token its
  continuation was never computed, and it counts for the value it spells alone (1), the
  single-token reading G-Eval uses.

The result is ``{value: probability}`` over every allowed value (0 for those never seen),
summing to 1; :func:`expected_score` is Σ p·value on a numeric scale. Nothing is returned
(None) when the response has no log-probabilities, when its tokens do not spell its text
(a tool call's arguments have none), or when no allowed value is among the alternatives.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from trajudge.core import INPUT_JSON

#: Alternatives asked for per token (OpenAI's maximum); scales have at most a dozen values,
#: but a server reports alternatives before its JSON grammar, so some are not values at all.
TOP_LOGPROBS = 20

_Token = tuple[bytes, float, list[tuple[bytes, float]]]
#: what may follow a number in JSON (anything else after a value's digits is no value)
_AFTER_NUMBER = frozenset(b",}] \t\r\n")


def _get(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None)


def _bytes(entry: Any) -> bytes:
    raw = _get(entry, "bytes")
    if isinstance(raw, list) and raw:
        return bytes(raw)
    return str(_get(entry, "token") or "").encode()


def completion_tokens(completion: Any) -> list[_Token] | None:
    """The output tokens of ``completion`` as (bytes, logprob, [(alternative, logprob)]),
    None when it has no log-probabilities."""
    try:
        choice = completion.choices[0]
    except (AttributeError, IndexError, TypeError):
        return None
    content = _get(_get(choice, "logprobs"), "content")
    if not content:
        return None
    out: list[_Token] = []
    for entry in content:
        tops = [(_bytes(a), float(_get(a, "logprob"))) for a in _get(entry, "top_logprobs") or []]
        out.append((_bytes(entry), float(_get(entry, "logprob")), tops))
    return out


def _value_starts(text: str) -> dict[str, tuple[int, Any]]:
    """The top-level fields of the JSON object ``text``: name -> (char offset where its value
    starts, the value). Empty when ``text`` is not a JSON object."""
    decoder = INPUT_JSON
    ws = " \t\n\r"
    out: dict[str, tuple[int, Any]] = {}
    i = len(text) - len(text.lstrip(ws))
    if not text.startswith("{", i):
        return {}
    i += 1
    try:
        while True:
            while i < len(text) and text[i] in ws + ",":
                i += 1
            if i >= len(text) or text[i] == "}":
                return out
            name, i = json.decoder.scanstring(text, i + 1)  # type: ignore[attr-defined]
            while text[i] in ws:
                i += 1
            if text[i] != ":":
                return {}
            i += 1
            while text[i] in ws:
                i += 1
            value, end = decoder.raw_decode(text, i)
            out[name] = (i, value)
            i = end
    except (ValueError, IndexError):
        return {}


def _candidates(spelled: bytes, values: Sequence[tuple[Any, bytes]], numeric: bool) -> list[Any]:
    """Allowed values the bytes ``spelled`` (the value's start) are consistent with: one when
    they spell a whole value and what follows it, several when they are a shared prefix."""
    for value, text in values:
        if spelled.startswith(text) and len(spelled) > len(text):
            nxt = spelled[len(text)]
            if (nxt in _AFTER_NUMBER) if numeric else (nxt == ord('"')):
                return [value]
    return [value for value, text in values if text.startswith(spelled)]


def _spread(
    tokens: Sequence[_Token],
    i: int,
    before: bytes,
    spelled: bytes,
    values: Sequence[tuple[Any, bytes]],
    numeric: bool,
) -> dict[Any, float]:
    """Unnormalised probabilities of ``values`` at token ``i``, whose bytes must start with
    ``before`` and whose value so far is ``spelled`` (the module docstring)."""
    chosen, chosen_lp, tops = tokens[i]
    alternatives = dict(tops)
    alternatives.setdefault(chosen, chosen_lp)
    out: dict[Any, float] = {}
    for alt, lp in alternatives.items():
        if not alt.startswith(before) or len(alt) == len(before):
            continue
        sofar = spelled + alt[len(before) :]
        found = _candidates(sofar, values, numeric)
        p = math.exp(lp)
        if len(found) == 1:
            out[found[0]] = out.get(found[0], 0.0) + p
        elif len(found) > 1:
            if alt == chosen and i + 1 < len(tokens):
                sub = _spread(tokens, i + 1, b"", sofar, values, numeric)
                total = sum(sub.values())
                for value, q in sub.items():
                    out[value] = out.get(value, 0.0) + p * q / total
            else:
                alone = [v for v, text in values if text == sofar]
                if alone:
                    out[alone[0]] = out.get(alone[0], 0.0) + p
    return out


def field_probabilities(
    tokens: Sequence[_Token] | None, content: str, enums: Mapping[str, Sequence[Any]]
) -> dict[str, dict[str, float]] | None:
    """``{field: {value: probability}}`` for each field of ``enums`` (field -> allowed
    values) found in the verdict text ``content``; None without usable log-probabilities."""
    if not tokens:
        return None
    data = content.encode()
    starts: list[int] = []
    pos = 0
    for tok, _, _ in tokens:
        starts.append(pos)
        pos += len(tok)
    joined = b"".join(t for t, _, _ in tokens)
    # the tokens spell the text, give or take whitespace around it that the server or
    # litellm stripped from the message; they do not spell a tool call's arguments
    shift = joined.find(data)
    if shift < 0 or joined[:shift].strip() or not data:
        return None
    fields = _value_starts(content)
    out: dict[str, dict[str, float]] = {}
    for name, allowed in enums.items():
        if name not in fields or not allowed:
            continue
        char, _ = fields[name]
        numeric = not isinstance(allowed[0], str)
        # the value's first byte among the tokens (a string's: past its opening quote)
        offset = shift + len(content[:char].encode()) + (0 if numeric else 1)
        held = [k for k, s in enumerate(starts) if s <= offset < s + len(tokens[k][0])]
        if not held:
            continue
        i = held[0]
        before = joined[starts[i] : offset]
        values = [(v, (str(v) if numeric else json.dumps(v)[1:-1]).encode()) for v in allowed]
        spread = _spread(tokens, i, before, b"", values, numeric)
        total = sum(spread.values())
        if total <= 0:
            continue
        out[name] = {str(v): spread.get(v, 0.0) / total for v, _ in values}
    return out or None


def expected_score(probs: Mapping[str, float]) -> float:
    """Σ p·score over a numeric scale's ``{score: probability}``."""
    return float(sum(float(k) * p for k, p in probs.items()))
