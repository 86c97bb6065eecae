"""MLflow's span convention, read as the GenAI conventions the OTel reader knows.

MLflow's tracing (``@mlflow.trace``, ``mlflow.<flavor>.autolog``) writes every attribute as
JSON text (a string attribute ``"x"`` is stored as ``"\\"x\\""``) and keeps a span's whole input
and output in ``mlflow.spanInputs`` / ``mlflow.spanOutputs``, its kind in ``mlflow.spanType``
(``CHAT_MODEL``, ``LLM``, ``TOOL``, ``AGENT``, ...) and a model call's tokens in
``mlflow.chat.tokenUsage``. The same attributes reach an OTLP file (MLflow on a shared
OpenTelemetry tracer provider) and a tracking server's stored spans, so one translation serves
both.

:func:`translate` rewrites an MLflow span's attributes in place: every JSON text decoded, and

* a model call (``CHAT_MODEL`` / ``LLM`` / ``CHAT``) in the OpenAI Chat Completions form
  (``mlflow.spanInputs.messages``, ``mlflow.spanOutputs.choices[].message``) gets
  ``gen_ai.input.messages`` / ``gen_ai.output.messages`` (role + parts), its tokens
  ``gen_ai.usage.input_tokens`` / ``output_tokens`` and its model ``gen_ai.response.model``
  (else ``mlflow.llm.model`` as ``gen_ai.request.model``);
* a ``TOOL`` span becomes a GenAI ``execute_tool`` span: the span's name is the tool,
  ``mlflow.spanInputs`` its arguments and ``mlflow.spanOutputs`` its result (a failed tool has
  no output: its error is the span's ``exception`` event, as in every convention).

A span without ``mlflow.spanType`` is left alone.
"""

from __future__ import annotations

import json
from typing import Any

from trajudge.trajectories._options import as_dict
from trajudge.trajectories.readers.otel._otel_messages import parse_json
from trajudge.trajectories.readers.otel._otel_values import Span

_MODEL_KINDS = ("CHAT_MODEL", "LLM", "CHAT")


def is_mlflow(span: Span) -> bool:
    return "mlflow.spanType" in span.attrs


def _parts(message: Any) -> dict[str, Any] | None:
    """One OpenAI chat message as a GenAI role + parts message."""
    m = as_dict(message)
    role = m.get("role")
    if not isinstance(role, str):
        return None
    content = m.get("content")
    parts: list[dict[str, Any]] = []
    if role == "tool":
        response = content if isinstance(content, str) else json.dumps(content)
        parts.append({"type": "tool_call_response", "id": m.get("tool_call_id"),
                      "response": response})  # fmt: skip
        return {"role": "tool", "parts": parts}
    if isinstance(content, str):
        parts.append({"type": "text", "content": content})
    elif isinstance(content, list):
        for block in content:
            text = as_dict(block).get("text")
            if isinstance(text, str):
                parts.append({"type": "text", "content": text})
    for call in m.get("tool_calls") or []:
        fn = as_dict(as_dict(call).get("function"))
        if isinstance(fn.get("name"), str):
            parts.append({"type": "tool_call", "id": as_dict(call).get("id"),
                          "name": fn["name"], "arguments": fn.get("arguments")})  # fmt: skip
    out: dict[str, Any] = {"role": role, "parts": parts}
    if isinstance(m.get("name"), str):
        out["name"] = m["name"]
    return out


def _model_call(a: dict[str, Any]) -> None:
    inputs, outputs = as_dict(a.get("mlflow.spanInputs")), as_dict(a.get("mlflow.spanOutputs"))
    messages = inputs.get("messages")
    if isinstance(messages, list):
        a["gen_ai.input.messages"] = [p for p in map(_parts, messages) if p is not None]
    choices = outputs.get("choices")
    if isinstance(choices, list):
        out = [_parts(as_dict(c).get("message")) for c in choices]
        a["gen_ai.output.messages"] = [p for p in out if p is not None]
    usage = as_dict(a.get("mlflow.chat.tokenUsage"))
    for theirs, ours in (("input_tokens", "input_tokens"), ("output_tokens", "output_tokens")):
        if theirs in usage:
            a[f"gen_ai.usage.{ours}"] = usage[theirs]
    if isinstance(outputs.get("model"), str):
        a["gen_ai.response.model"] = outputs["model"]
    elif isinstance(a.get("mlflow.llm.model"), str):
        a["gen_ai.request.model"] = a["mlflow.llm.model"]


def translate(span: Span) -> None:
    """Rewrite an MLflow span's attributes as the GenAI conventions (see the module doc)."""
    if not is_mlflow(span):
        return
    a = span.attrs
    for key, value in list(a.items()):
        a[key] = parse_json(value)
    kind = a.get("mlflow.spanType")
    if kind in _MODEL_KINDS:
        _model_call(a)
    elif kind == "TOOL":
        a["gen_ai.operation.name"] = "execute_tool"
        a["gen_ai.tool.name"] = span.name
        if a.get("mlflow.spanInputs") is not None:
            a["gen_ai.tool.call.arguments"] = a["mlflow.spanInputs"]
        if a.get("mlflow.spanOutputs") is not None:
            a["gen_ai.tool.call.result"] = a["mlflow.spanOutputs"]
