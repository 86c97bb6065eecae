"""Provider batch request bodies from a template, for providers whose request litellm reshapes.

:meth:`~trajudge.judges.engines.batch._engine.ProviderBatchEngine.body` builds each request the way
the local engine's call would be sent: litellm's ``return_raw_request``, which costs 20-70 ms
a call for Anthropic's and Vertex AI's transformations (a 10,000-request batch: minutes of
CPU before anything is sent). Where litellm passes the messages through unchanged (OpenAI
format) the engine reuses the first body with each call's messages; where it moves them
(Anthropic's ``system``, Gemini's ``contents``) a template is used instead:

- the body litellm builds for the call with a unique placeholder in place of each message's
  content, as JSON text cut at each placeholder (each must be there exactly once, as a whole
  JSON string: litellm passed that content through whole);
- a call's body is the text with its contents (as JSON strings) put back in their places;
- one template per judge, sampling parameters and sequence of message roles, trusted only
  once the body it gives for the first call is the very body litellm builds for that call
  (else every call of that kind is built by litellm).
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from trajudge.core import canonical_json
from trajudge.judges.calls._call import PreparedCall

Build = Callable[[PreparedCall], dict[str, Any]]


@dataclass(frozen=True)
class BodyTemplate:
    """A request body as JSON text cut at each message's content: ``pieces[0]``, the content
    of message ``slots[0]``, ``pieces[1]``, ... (cut once, so no content is searched)."""

    pieces: tuple[str, ...]
    slots: tuple[int, ...]

    def fill(self, call: PreparedCall) -> dict[str, Any]:
        parts = [self.pieces[0]]
        for slot, piece in zip(self.slots, self.pieces[1:], strict=True):
            parts += [json.dumps(call.messages[slot]["content"], ensure_ascii=False), piece]
        return dict(json.loads("".join(parts)))


class BodyTemplates:
    """The templates of one batch engine, built with ``build`` (litellm's body of a call)."""

    def __init__(self, build: Build) -> None:
        self.build = build
        #: per (judge, parameters, roles): the template, or None where litellm builds each body
        self.known: dict[tuple[int, str, tuple[Any, ...]], BodyTemplate | None] = {}

    def body(self, call: PreparedCall) -> dict[str, Any]:
        """The body of ``call``: from its template, else (and for the first call of each
        kind, which checks the template) as litellm builds it."""
        roles = tuple(m.get("role") for m in call.messages)
        sig = (id(call.judge), canonical_json(call.params), roles)
        if sig in self.known:
            template = self.known[sig]
            return self.build(call) if template is None else template.fill(call)
        real = self.build(call)
        template = self._template(call)
        self.known[sig] = template if template is not None and template.fill(call) == real else None
        return real

    def _template(self, call: PreparedCall) -> BodyTemplate | None:
        """The body litellm builds for ``call`` with placeholders for the contents, cut at each
        (None: a placeholder is not there exactly once as a whole JSON string)."""
        marks = [json.dumps(f"trajudge-content-{uuid.uuid4().hex}") for _ in call.messages]
        shaped = dataclasses.replace(
            call,
            messages=[
                {**m, "content": json.loads(k)} for m, k in zip(call.messages, marks, strict=True)
            ],
        )
        text = json.dumps(self.build(shaped), ensure_ascii=False)
        if any(text.count(k) != 1 for k in marks):
            return None
        at = sorted((text.index(k), i) for i, k in enumerate(marks))
        pieces, last = [], 0
        for pos, i in at:
            pieces.append(text[last:pos])
            last = pos + len(marks[i])
        pieces.append(text[last:])
        return BodyTemplate(tuple(pieces), tuple(i for _, i in at))
