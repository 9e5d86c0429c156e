"""OpenAI Chat Completions, and the OpenAI-compatible servers that follow its rules.

Ids may repeat across turns (τ-bench's real gpt-4o runs reuse them) and the
``developer`` role is understood. ``reasoning_content`` is accepted on assistant
messages: OpenAI-compatible servers replay it (DeepSeek and Kimi have their own modules
with the stricter rule that tool-call turns must carry it).

How OpenAI refuses — its error body (:func:`error_body`), overflow and rate-limit texts,
the pairing errors — is shared by the OpenAI-compatible servers (DeepSeek, Kimi, vLLM,
Gemini's compatible endpoint, the Responses API): their modules read it from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from condense.message import REASONING_CONTENT
from condense.providers.base import Profile, Provider, Refusals, keys_plus

_TYPES = {401: "invalid_request_error", 403: "invalid_request_error", 404: "invalid_request_error"}


def error_body(status: int, message: str, code: str | None, param: str | None) -> dict[str, Any]:
    """OpenAI's error body, ``{"error": {"message", "type", "param", "code"}}``, typed by
    status as the API types it: ``invalid_request_error`` for a 4xx, a 401 included
    (continuedev/continue #10294); a 429 by what ran out — ``requests`` (or ``tokens``)
    with code ``rate_limit_exceeded`` (Pythagora-io/gpt-pilot #53), ``insufficient_quota``
    for a spent quota (OpenHands/OpenHands #998); ``server_error`` for a 5xx."""
    if status == 429:
        code = code or "rate_limit_exceeded"
        kind = "insufficient_quota" if code == "insufficient_quota" else "requests"
    elif status >= 500:
        kind = "server_error"
    else:
        kind = _TYPES.get(status, "invalid_request_error")
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


OVERFLOW = (
    "This model's maximum context length is {window} tokens. However, your messages "
    "resulted in {prompt} tokens. Please reduce the length of the messages."
)
OUTPUT_LIMIT = (
    "This model's maximum context length is {window} tokens. However, you requested "
    "{total} tokens ({prompt} in the messages, {output} in the completion). Please reduce "
    "the length of the messages or completion."
)
TRANSIENT: Mapping[int, str] = {
    429: "Rate limit reached for requests. Please try again later.",
    500: "The server had an error while processing your request. Sorry about that!",
    503: "The engine is currently overloaded, please try again later.",
}
PAIRING_ERRORS: Mapping[str, str] = {
    "orphan_tool_result": "Invalid parameter: messages with role 'tool' must be a response "
    "to a preceeding message with 'tool_calls'.",
    "tool_result_misplaced": "Invalid parameter: messages with role 'tool' must be a response "
    "to a preceeding message with 'tool_calls'.",
    "unanswered_tool_call": "An assistant message with 'tool_calls' must be followed by tool "
    "messages responding to each 'tool_call_id'. The following tool_call_ids did not have "
    "response messages: {id}",
    "missing_tool_call_id": "Missing parameter 'tool_call_id': messages with role 'tool' must "
    "have a 'tool_call_id'.",
    "unknown_key": "Additional properties are not allowed ('{key}' was unexpected) - "
    "'messages.{index}'",
    "private_key": "Additional properties are not allowed ('{key}' was unexpected) - "
    "'messages.{index}'",
    "arguments_invalid_json": "messages.{index}.tool_calls.{call}.function.arguments: "
    "arguments must be a valid JSON object string",
    "arguments_not_object": "messages.{index}.tool_calls.{call}.function.arguments: "
    "arguments must be a valid JSON object string",
    "arguments_not_string": "Input should be a valid string",
}
REFUSALS = Refusals(
    body=error_body,
    overflow=OVERFLOW,
    output_limit=OUTPUT_LIMIT,
    overflow_code="context_length_exceeded",
    transient=TRANSIENT,
)
"""How OpenAI and the servers that copy it refuse a request."""

PROFILE = Profile(
    name="openai",
    description="OpenAI Chat Completions and OpenAI-compatible servers",
    first_user=False,
    alternate=False,
    system_only_at_start=False,
    developer_role=True,
    no_empty_text=False,
    id_pattern=None,
    id_max_length=40,
    unique_ids=False,
    allowed_keys=keys_plus({"assistant": frozenset({REASONING_CONTENT})}),
    errors=PAIRING_ERRORS,
)

PROVIDER = Provider(
    profile=PROFILE,
    refusals=REFUSALS,
    hosts=("api.openai.com",),
)
