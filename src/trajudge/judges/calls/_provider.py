"""What the client knows about providers before a request goes out, apart from the client.

Here: litellm's environment (:data:`LITELLM_ENV`, set on import so that it is in place before
litellm is), importing litellm and instructor (:func:`import_litellm`,
:func:`import_instructor`), which server is on this machine (:func:`is_local_base`), which
instructor mode a provider is spoken to in (:func:`choose_mode`), which providers get a
placeholder key (:func:`takes_placeholder_key`), and the verdict model's JSON schema in the
forms a request sends and a cache key hashes (:func:`schema_forms`, :func:`canonical_dict`).

It is apart from :mod:`trajudge.judges.calls._client` because the worker processes and the
batch engines need these without the client's retry loop, and because none of it depends on
one client's settings: each is a function of a model string, an ``api_base`` or a verdict
model.
"""

from __future__ import annotations

import json
import logging
import os
import weakref
from typing import Any
from urllib.parse import urlparse

from pydantic import BaseModel

from trajudge.core import canonical_json
from trajudge.rubrics._schema import response_schema

#: litellm settings trajudge sets unless the environment does: litellm fetches some tables at
#: run time (its price table at import; an Anthropic beta-header table on the first Anthropic
#: request; Hugging Face tokenizers), which stalls without a network (5 s per fetch) and makes
#: what is sent depend on a file that can change between two runs. The bundled copies are used.
LITELLM_ENV = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS": "True",
    "LITELLM_OFFLINE_MODE": "true",
}


def use_bundled_litellm_tables() -> None:
    """Set :data:`LITELLM_ENV` where the environment does not (before litellm is imported)."""
    for name, value in LITELLM_ENV.items():
        os.environ.setdefault(name, value)


use_bundled_litellm_tables()

JUDGES_EXTRA_HINT = "pip install 'trajudge[judges]'"

_OPENAI_COMPATIBLE = ("hosted_vllm/", "lm_studio/", "llamafile/", "vllm/", "local/")
_JSON_MODE = ("ollama/", "ollama_chat/")


#: Providers spoken to in OpenAI's format, whose key litellm would otherwise take from
#: OPENAI_API_KEY. Every other provider keeps its own credentials when given an
#: ``api_base`` (AZURE_API_KEY, ANTHROPIC_API_KEY, AWS signatures, Google OAuth, ...): a
#: placeholder key would replace them (Bedrock would even send it as a bearer token).
_PLACEHOLDER_KEY_PROVIDERS = frozenset(
    ("openai", "text-completion-openai", *(p.rstrip("/") for p in _OPENAI_COMPATIBLE + _JSON_MODE))
)


def takes_placeholder_key(model: str) -> bool:
    """Whether ``model``'s provider gets a placeholder key when it has an ``api_base`` and
    no key of its own (see :data:`_PLACEHOLDER_KEY_PROVIDERS`)."""
    provider = model.split("/", 1)[0] if "/" in model else "openai"
    return provider in _PLACEHOLDER_KEY_PROVIDERS


def import_litellm() -> Any:
    """litellm, quiet and dropping the parameters a provider does not take."""
    try:
        import litellm
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError(f"LLM judges need litellm and instructor: {JUDGES_EXTRA_HINT}") from exc
    litellm.suppress_debug_info = True
    litellm.drop_params = True
    return litellm


def import_instructor() -> Any:
    """instructor, with its per-attempt error logs silenced."""
    try:
        import instructor
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError(f"LLM judges need litellm and instructor: {JUDGES_EXTRA_HINT}") from exc
    # instructor logs every failed attempt at ERROR; trajudge records failures itself
    logging.getLogger("instructor").setLevel(logging.CRITICAL)
    return instructor


_SCHEMAS: weakref.WeakKeyDictionary[type[BaseModel], tuple[dict[str, Any], str, str]] = (
    weakref.WeakKeyDictionary()
)


def schema_forms(model: type[BaseModel]) -> tuple[dict[str, Any], str, str]:
    """``model``'s JSON schema, its JSON text in pydantic's order (sent: a server that decodes
    by grammar keeps the properties' order, ``reasoning`` first) and its canonical JSON (the
    cache key), computed once per model (pydantic builds a schema in about 0.4 ms). The dict
    is shared: read it, never change it."""
    known = _SCHEMAS.get(model)
    if known is None:
        schema = response_schema(model)
        known = _SCHEMAS[model] = (schema, json.dumps(schema), canonical_json(schema))
    return known


_KEY_JSON: dict[str, str] = {}  # a dict key's JSON text, made once per key


def canonical_dict(value: dict[str, Any], known: dict[str, str]) -> str:
    """``canonical_json(value)`` for a flat dict, with the canonical JSON of some values
    given in ``known`` instead of serialised again (the same text, character for character)."""
    parts = []
    for k in sorted(value):
        key = _KEY_JSON.get(k)
        if key is None:
            key = _KEY_JSON[k] = json.dumps(k, ensure_ascii=False)
        parts.append(key + ":" + (known[k] if k in known else canonical_json(value[k])))
    return "{" + ",".join(parts) + "}"


def is_local_base(api_base: str | None) -> bool:
    """Whether ``api_base`` points at this machine (calls to it cost nothing)."""
    if not api_base:
        return False
    host = urlparse(api_base).hostname or ""
    return host in ("127.0.0.1", "localhost", "::1") or host.startswith("127.")


def choose_mode(model: str, api_base: str | None, override: str | None = None) -> str:
    """The instructor mode for a provider (the value of an ``instructor.Mode``).

    - local and OpenAI-compatible servers (an ``api_base``, or vLLM / LM Studio / llamafile
      prefixes): ``json_schema_mode`` -> ``response_format={"type": "json_schema", ...}``,
      which llama.cpp and vLLM enforce by constrained decoding, so output always parses;
    - Ollama: ``json_mode`` (``format=json``);
    - hosted providers (OpenAI, Anthropic, Gemini, Bedrock, Mistral, ...): ``tool_call``,
      which litellm translates into each provider's function calling.
    """
    if override:
        return override
    if model.startswith(_JSON_MODE):
        return "json_mode"
    if api_base or model.startswith(_OPENAI_COMPATIBLE):
        return "json_schema_mode"
    return "tool_call"
