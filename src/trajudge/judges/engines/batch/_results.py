"""What a provider batch answered, as the local engine's call results.

:func:`line_result` turns one line of a batch's output or error file (OpenAI's format:
``{"custom_id", "response": {"status_code", "body"}, "error"}``) into the
:class:`~trajudge.judges.CallResult` the local engine would have made of the same answer: a
200 is parsed by :func:`~trajudge.judges.calls._result.parse_json_schema` with the rubric's
verdict model, an HTTP error becomes the exception litellm raises for it on a direct call,
and a request without an answer (an expired, failed or cancelled batch) becomes an error
naming the batch. :func:`batch_cost` prices an answer at the batch price.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from trajudge.judges.calls._client import LLMClient
from trajudge.judges.calls._result import CallResult, is_truncated, one_line, parse_json_schema
from trajudge.store import redact


def line_result(
    litellm: Any,
    client: LLMClient,
    provider: str,
    key: str,
    verdict_model: type[BaseModel],
    line: dict[str, Any] | None,
    *,
    batch: Any,
) -> CallResult:
    """The result of the request with cache key ``key`` (sent to ``provider`` by ``client``)
    from its ``line`` (None: the batch
    has no line for it) of ``batch`` (the provider's batch object), as one attempt."""
    result = CallResult(None, None, key, attempts=1)
    response = line.get("response") if line is not None else None
    if line is None or response is None:
        error = (line or {}).get("error") or {}
        if error:
            reason = f"{error.get('code')}: {error.get('message')}"
        elif _get(batch, "status") == "failed":
            reason = f"the batch failed: {batch_errors(batch) or 'no reason given'}"
        else:
            reason = f"no result for this request (batch {_get(batch, 'status')})"
        result.error = redact(f"batch {_get(batch, 'id')}: {reason}")[:600]
        return result
    body = response.get("body") or {}
    status = int(response.get("status_code") or 0)
    if status != 200:
        result.error = one_line(_http_error(litellm, client.model, provider, status, body), 1)
        return result
    return completion_result(
        result, litellm, client, verdict_model, lambda: litellm.ModelResponse(**body)
    )


def completion_result(
    result: CallResult,
    litellm: Any,
    client: LLMClient,
    verdict_model: type[BaseModel],
    completion: Callable[[], Any],
) -> CallResult:
    """``result`` filled from the completion ``completion()`` builds out of a provider's
    answer, as the local engine fills it (verdict, tokens, batch cost); an answer that cannot
    be built, parsed or was cut is the local engine's error for it, after one attempt."""
    try:
        made = completion()
        verdict = parse_json_schema(made, verdict_model)
    except Exception as exc:
        result.error = one_line(exc, 1)
        result.truncated = is_truncated(exc)
        return result
    client.fill(result, verdict, made, batch_cost(litellm, client, made))
    return result


def litellm_error(model: str, provider: str, original: BaseException) -> BaseException:
    """The exception litellm raises on a direct call that failed with ``original`` (its
    mapping of a provider's error to ``RateLimitError``, ``BadRequestError`` and the rest), so a
    batch's error reads as the same call's error would."""
    from litellm.litellm_core_utils.exception_mapping_utils import exception_type

    try:
        exception_type(  # type: ignore[no-untyped-call]
            model=model, original_exception=original, custom_llm_provider=provider
        )
    except Exception as mapped:
        return mapped
    return original  # pragma: no cover - exception_type always raises


def batch_cost(litellm: Any, client: LLMClient, completion: Any) -> float | None:
    """The cost of one batch answer at the batch price (module docstring); None when the cost
    map does not know the model, 0 for a loopback endpoint."""
    if client.is_local:
        return 0.0
    usage = getattr(completion, "usage", None)
    if usage is None:
        return None
    try:
        litellm.get_model_info(client.model)
    except Exception:  # the price table does not know this model
        return None
    from litellm.cost_calculator import batch_cost_calculator

    prompt, output = batch_cost_calculator(usage, client.model)
    return float(prompt + output)


def _http_error(
    litellm: Any, model: str, provider: str, status: int, body: dict[str, Any]
) -> BaseException:
    """The exception litellm raises for this HTTP status and body on a direct call, so that
    the stored error reads as the local engine's."""
    from litellm.llms.openai.common_utils import OpenAIError

    error = body.get("error") if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    original = OpenAIError(status_code=status, message=str(message or json.dumps(body)))
    return litellm_error(model, provider, original)


def _get(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def batch_errors(batch: Any) -> str | None:
    """The provider's reasons for a failed batch, on one line (None: it gave none)."""
    data = _get(_get(batch, "errors"), "data")
    if not data:
        return None
    parts = [
        f"{_get(e, 'code')}: {_get(e, 'message')}"
        + (f" (line {_get(e, 'line')})" if _get(e, "line") is not None else "")
        for e in data
    ]
    return redact("; ".join(parts))[:2000]


#: The HTTP status of each Anthropic API error type
#: (https://docs.anthropic.com/en/api/errors), to raise what a direct call raises.
ANTHROPIC_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}


def anthropic_result(
    litellm: Any,
    client: LLMClient,
    key: str,
    verdict_model: type[BaseModel],
    params: dict[str, Any],
    entry: dict[str, Any] | None,
    batch_id: str,
) -> CallResult:
    """The result of the request with cache key ``key`` (Messages body ``params``) from its
    Anthropic batch ``entry`` (a ``result``: ``succeeded``, ``errored``, ``canceled`` or
    ``expired``; None: the batch has none for it), as one attempt: a message goes through
    litellm's own Anthropic response transformation (the tool call or JSON text becomes the
    content, stop reasons and usage are mapped) and then the local engine's parsing."""
    result = CallResult(None, None, key, attempts=1)
    kind = (entry or {}).get("type")
    if kind == "errored":
        error = entry.get("error") if entry is not None else None
        result.error = one_line(_anthropic_error(litellm, client.model, error), 1)
        return result
    if kind != "succeeded":
        reason = f"request {kind}" if kind else "no result for this request"
        result.error = redact(f"batch {batch_id}: {reason}")[:600]
        return result
    assert entry is not None
    import httpx
    from litellm.llms.anthropic.chat.transformation import AnthropicConfig, JsonModeRequest

    message = entry.get("message") or {}
    return completion_result(
        result,
        litellm,
        client,
        verdict_model,
        lambda: AnthropicConfig().transform_parsed_response(
            completion_response=message,
            raw_response=httpx.Response(200, json=message),
            model_response=litellm.ModelResponse(),
            json_mode=True,  # every batch request carries the rubric's schema
            response_format_schema=JsonModeRequest.model_validate(params).tool_schema(),
        ),
    )


def _anthropic_error(litellm: Any, model: str, error: Any) -> BaseException:
    """What litellm raises on a direct call answered with this error object (the body
    ``{"type": "error", "error": {"type", "message"}}`` of the API's error responses)."""
    from litellm.llms.anthropic.common_utils import AnthropicError

    inner = error.get("error") if isinstance(error, dict) else None
    kind = inner.get("type") if isinstance(inner, dict) else None
    status = ANTHROPIC_STATUS.get(str(kind), 500)
    original = AnthropicError(status_code=status, message=json.dumps(error))
    return litellm_error(model, "anthropic", original)
