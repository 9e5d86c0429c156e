"""MiniMax (OpenAI-compatible endpoint and native v2 API).

OpenAI's rules plus a system prompt only at the start, refused with code 2013 texts. The
OpenAI-compatible endpoint answers 400; the native API answers HTTP 200 with the refusal
in ``base_resp`` (:data:`NATIVE_REFUSALS`).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from condense.providers import openai
from condense.providers.base import Provider, Refusals

_TEXTS = {
    "orphan_tool_result": "invalid params, tool result's tool id({id}) not found (2013)",
    "tool_result_misplaced": "invalid params, tool call result does not follow tool call (2013)",
    "results_out_of_order": "invalid params, tool call result does not follow tool call (2013)",
    "invalid_tool_call_id": "invalid params, tool call id is invalid (2013)",
    "tool_call_missing_id": "invalid params, tool call id is invalid (2013)",
    "missing_tool_call_id": "invalid params, tool call id is invalid (2013)",
    "duplicate_tool_call_id": "invalid params, tool call id is invalid (2013)",
    "unanswered_tool_call": "invalid params, tool call and result not match (2013)",
    "duplicate_tool_result": "invalid params, tool call and result not match (2013)",
    "arguments_invalid_json": "invalid params, invalid function arguments json string, "
    "tool_call_id: {id} (2013)",
    "arguments_not_object": "invalid params, invalid function arguments json string, "
    "tool_call_id: {id} (2013)",
    "arguments_not_string": "invalid params, invalid function arguments json string, "
    "tool_call_id: {id} (2013)",
    "system_not_at_start": "invalid params, chat content has invalid message role: system (2013)",
    "unknown_role": "invalid params, chat content has invalid message role: {role} (2013)",
}

PROFILE = dataclasses.replace(
    openai.PROFILE,
    name="minimax",
    description="MiniMax chat completions",
    system_only_at_start=True,
    errors=_TEXTS,
)


def error_body(status: int, message: str, code: str | None, param: str | None) -> dict[str, Any]:
    """The OpenAI-compatible endpoint's error body."""
    kind = "bad_request_error" if status < 500 else "api_error"
    return {
        "type": "error",
        "error": {"type": kind, "message": message, "http_code": str(status)},
        "request_id": "condense-strict",
    }


def native_error_body(
    status: int, message: str, code: str | None, param: str | None
) -> dict[str, Any]:
    """The native API's answer: HTTP 200, the refusal in ``base_resp``."""
    number = int(code) if code and code.isdigit() else {429: 1002}.get(status, 1000)
    return {
        "id": "condense-strict",
        "choices": None,
        "created": 0,
        "model": "MiniMax",
        "object": "chat.completion",
        "base_resp": {"status_code": number, "status_msg": message},
    }


def _refusals(body: Any, status: int) -> Refusals:
    return Refusals(
        body=body,
        rejection_status=status,
        overflow="invalid params, context window exceeds limit (2013)",
        texts=_TEXTS,
        generic="invalid params, invalid chat setting (2013)",
        own_words=True,
        code="2013",
        transient={
            429: "rate limit exceeded(RPM) (1002)",
            500: "unknown error (1000)",
            503: "server is busy, please try again later (1000)",
        },
    )


# The numeric status codes of the native API's ``base_resp`` → ``Category`` value.
STATUS_CODES = {
    1000: "server_error",
    1001: "timeout",
    1002: "rate_limit",
    1004: "auth",
    1008: "billing",
    1024: "server_error",
    1026: "content_filter",
    1027: "content_filter",
    1033: "server_error",
    1039: "rate_limit",
    1041: "rate_limit",
    2013: "message_format",
    2045: "rate_limit",
    2049: "auth",
    2056: "rate_limit",
}

PROVIDER = Provider(
    profile=PROFILE,
    refusals=_refusals(error_body, 400),
    hosts=("api.minimax.io", "api.minimaxi.com", "api.minimax.chat"),
    error_codes=STATUS_CODES,
)
NATIVE_REFUSALS = _refusals(native_error_body, 200)
