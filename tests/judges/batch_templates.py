"""The check of the provider batch engine's body templates, shared by the provider tests.

Bodies of a provider whose messages litellm reshapes (Anthropic, Vertex AI) come from a
template once the first one is litellm's own (:mod:`trajudge.judges.engines.batch._template`):
each must be exactly what litellm builds, even for content that looks like the template's
placeholders, quotes, escapes or non-ASCII text.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from trajudge.judges import PreparedCall, ProviderBatchEngine


def check_template_bodies(
    engine: ProviderBatchEngine, call: PreparedCall, lookalike: str
) -> list[dict[str, Any]]:
    """Build ``call``'s body with tricky texts appended to every message, from the template
    and by litellm, check that they are the same and that the template was used, and return
    the template's bodies. ``lookalike`` mimics the provider's own body and the placeholders."""
    tricky = [
        'plain "quoted" text',
        f'"trajudge-content-0-", "trajudge-content-1-" and {lookalike}',
        "back\\slash \\u0000 \n new line, tab\t, é, 日本, emoji 🙂",
        "",
    ]
    bodies = []
    for text in tricky:
        messages = [{**m, "content": m["content"] + text} for m in call.messages]
        changed = dataclasses.replace(call, messages=messages)
        bodies.append((engine.body(changed), engine.request(changed)[0]))
    assert [ours for ours, _ in bodies] == [theirs for _, theirs in bodies]
    assert any(t is not None for t in engine._shaped.known.values())  # the template was used
    assert len({json.dumps(ours) for ours, _ in bodies}) == len(tricky)
    return [ours for ours, _ in bodies]
