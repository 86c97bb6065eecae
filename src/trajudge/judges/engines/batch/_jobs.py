"""What a provider batch is made of: where it goes, the input file being filled, the job
that collects it. Shared by the engine and every provider module."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

from trajudge.judges.calls._call import PreparedCall
from trajudge.judges.calls._client import LLMClient

#: Requests per batch (OpenAI's limit: 50,000 requests and 200 MB per input file).
MAX_REQUESTS = 50_000
MAX_BYTES = 190 * 1024 * 1024
ENDPOINT = "/v1/chat/completions"
#: The batch endpoint (and each line's ``url``) where a provider's differs from OpenAI's:
#: Azure OpenAI's global batches name it without the version prefix.
ENDPOINTS = {"azure": "/chat/completions"}


def endpoint_of(provider: str) -> str:
    """The chat completions endpoint of ``provider``'s batches (:data:`ENDPOINTS`)."""
    return ENDPOINTS.get(provider, ENDPOINT)


@dataclass(frozen=True)
class Target:
    """Where a batch goes: one provider endpoint, model and set of credentials."""

    provider: str
    model: str
    api_base: str | None
    api_key_env: str | None
    headers: tuple[tuple[str, str], ...]
    place: tuple[str | None, ...] = ()  # Vertex AI: project, location, bucket


@dataclass
class Job:
    pk: int
    batch_id: str
    provider: str
    client: LLMClient
    calls: dict[str, PreparedCall]
    tools: Any = None  # Anthropic: the request's ``tools`` (the rubric's schema as a tool)


@dataclass
class Chunk:
    """A batch input file being filled: its JSONL lines and the calls (without prompts)."""

    url: str = ENDPOINT
    anthropic: bool = False  # Message Batches requests: ``{"custom_id", "params"}``
    beta: str | None = None  # the ``anthropic-beta`` header the requests need
    calls: list[tuple[str, PreparedCall]] = field(default_factory=list)
    lines: list[bytes] = field(default_factory=list)
    size: int = 0

    def add(self, call: PreparedCall, body: dict[str, Any]) -> None:
        cid = f"r{len(self.calls)}"
        request = (
            {"custom_id": cid, "params": body}
            if self.anthropic
            else {"custom_id": cid, "method": "POST", "url": self.url, "body": body}
        )
        line = json.dumps(request, ensure_ascii=False).encode()
        self.calls.append((cid, without_prompt(call)))
        self.lines.append(line)
        self.size += len(line) + 1


def without_prompt(call: PreparedCall) -> PreparedCall:
    """``call`` without its messages: all a judgment needs once the request is sent."""
    return dataclasses.replace(call, messages=[])
