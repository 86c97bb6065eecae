"""What Google ADK records beyond the GenAI conventions: its own schema and Gemini contents.

* ADK's legacy schema (every 1.x release; ADK 2 with ``ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN=1``):
  ``call_llm`` spans with ``gcp.vertex.agent.llm_request`` (the Gemini request: ``contents``
  and ``config.system_instruction``) and ``gcp.vertex.agent.llm_response`` (its ``content``),
  ``execute_tool`` spans with ``gcp.vertex.agent.tool_call_args`` / ``tool_response``. With
  ``ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS=false`` each of them is the placeholder ``{}``;
* the GenAI events of that schema (``gen_ai.system.message``, ``gen_ai.user.message`` for every
  content of the request whatever its role, ``gen_ai.choice``): their ``content`` is a Gemini
  ``Content`` (``role``, ``parts`` with ``text`` / ``function_call`` / ``function_response``),
  or ``<elided>`` unless ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` is true;
* a tool's result as ADK hands it to the model: ``{"result": value}``, or ``{"error": msg}``
  for a failure (:func:`unwrap_adk`), in every schema.
"""

from __future__ import annotations

from typing import Any

from trajudge.trajectories._options import as_dict
from trajudge.trajectories.readers.otel._otel_messages import (
    Msg,
    args_of,
    as_text,
    parse_json,
    role_of,
)

ADK_SCOPE = "gcp.vertex.agent"
# what ADK writes in place of content it was told not to capture: in the GenAI events, and on
# its own spans
ELIDED = "<elided>"
_PLACEHOLDER = "{}"
_LEGACY_KEYS = (
    "gcp.vertex.agent.llm_request",
    "gcp.vertex.agent.llm_response",
    "gcp.vertex.agent.tool_call_args",
    "gcp.vertex.agent.tool_response",
)


def unwrap_adk(value: Any) -> tuple[Any, str | None]:
    """ADK wraps a tool's return as ``{"result": value}`` and its failure as ``{"error": msg}``."""
    parsed = parse_json(value)
    if isinstance(parsed, dict) and len(parsed) == 1:
        if "result" in parsed:
            return parsed["result"], None
        if "error" in parsed:
            return None, as_text(parsed["error"])
    return value, None


def without_placeholders(attrs: dict[str, Any]) -> dict[str, Any]:
    """A span's attributes less ADK's ``{}`` placeholders (a tool that really returned ``{}`` is
    recorded that way too, but so is its function response, which the reader prefers)."""
    if not any(attrs.get(k) == _PLACEHOLDER for k in _LEGACY_KEYS):
        return attrs
    return {k: v for k, v in attrs.items() if not (k in _LEGACY_KEYS and v == _PLACEHOLDER)}


def is_gemini_content(value: Any) -> bool:
    """A Gemini ``Content`` (``{"role", "parts": [...]}``, each part an object)."""
    parts = value.get("parts") if isinstance(value, dict) else None
    return isinstance(parts, list) and all(isinstance(p, dict) for p in parts)


def gemini_text(value: Any) -> str | None:
    """A system instruction as text: a string, or the text parts of a ``Content``."""
    if isinstance(value, str) or value is None:
        return value or None
    if is_gemini_content(value):
        return gemini_content(value, "system")[0].text
    return as_text(value)


def gemini_content(content: Any, default: str = "user") -> list[Msg]:
    """One Gemini ``Content``: a message of its role (``default`` when it names none) with its
    text and function calls, or a tool message per ``function_response`` part."""
    if not isinstance(content, dict):
        return []
    role = role_of(content.get("role")) or default
    texts: list[str] = []
    calls: list[tuple[str | None, str, dict[str, Any]]] = []
    results: list[Msg] = []
    for p in content.get("parts") or []:
        if not isinstance(p, dict):
            continue
        if isinstance(p.get("text"), str) and not p.get("thought"):
            texts.append(p["text"])
        fc = p.get("function_call") or p.get("functionCall")
        if isinstance(fc, dict) and isinstance(fc.get("name"), str):
            calls.append((fc.get("id"), fc["name"], args_of(fc.get("args"))))
        fr = p.get("function_response") or p.get("functionResponse")
        if isinstance(fr, dict):
            value, error = unwrap_adk(fr.get("response"))
            text = as_text(value) if error is None else error
            results.append(
                Msg(
                    "tool",
                    text,
                    call_id=fr.get("id"),
                    name=fr.get("name"),
                    failed=error is not None,
                )
            )
    if results:
        return results
    return [Msg(role, "\n".join(texts) if texts else None, calls)]


def adk_messages(attrs: dict[str, Any]) -> tuple[list[Msg], list[Msg]] | None:
    """The messages of a legacy ``call_llm`` span; None when it recorded none (no attributes,
    or the ``{}`` placeholders)."""
    attrs = without_placeholders(attrs)
    request = as_dict(parse_json(attrs.get("gcp.vertex.agent.llm_request")))
    response = as_dict(parse_json(attrs.get("gcp.vertex.agent.llm_response")))
    if not request and not response:
        return None
    inputs: list[Msg] = []
    system = gemini_text(as_dict(request.get("config")).get("system_instruction"))
    if system:
        inputs.append(Msg("system", system))
    for c in request.get("contents") or []:
        inputs += gemini_content(c)
    return inputs, gemini_content(response.get("content"), "assistant")
