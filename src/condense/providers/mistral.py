"""Mistral La Plateforme (and vLLM-served Mistral models).

Tool-call ids are exactly 9 characters of ``[A-Za-z0-9]``; calls and results match one to
one and in order; roles alternate, the first turn is the user's, and a ``user`` message
may not directly follow a ``tool`` message (repair bridges it with an assistant turn).
"""

from __future__ import annotations

import re
from typing import Any

from condense.providers.base import OPENAI_KEYS, Profile, Provider, Refusals

MISTRAL_ID = re.compile(r"^[A-Za-z0-9]{9}$")


def error_body(status: int, message: str, code: str | None, param: str | None) -> dict[str, Any]:
    """Mistral's error body: ``{"object": "error", "message", "type", "param", "code"}``."""
    kind = "invalid_request_message_order" if code == "3230" else "invalid_request_error"
    return {"object": "error", "message": message, "type": kind, "param": None, "code": code}


PROFILE = Profile(
    name="mistral",
    description="Mistral La Plateforme chat completions",
    first_user=True,
    alternate=True,
    system_only_at_start=True,
    developer_role=False,
    no_empty_text=False,
    id_pattern=MISTRAL_ID,
    id_max_length=9,
    id_exact_length=9,
    results_in_call_order=True,
    user_after_tool=False,
    ends_with_assistant=False,
    allowed_keys=OPENAI_KEYS,
    errors={
        "invalid_tool_call_id": "Tool call id was {id} but must be a-z, A-Z, 0-9, with a "
        "length of 9.",
        "unanswered_tool_call": "Not the same number of function calls and responses",
        "duplicate_tool_result": "Not the same number of function calls and responses",
        "orphan_tool_result": "Unexpected role RoleEnum.tool",
        "tool_result_misplaced": "Unexpected role RoleEnum.tool",
        "user_after_tool": "Unexpected role 'user' after role 'tool'",
        "ends_with_assistant": "Expected last role to be one of: [tool, user] but got assistant",
    },
)

PROVIDER = Provider(
    profile=PROFILE,
    refusals=Refusals(
        body=error_body,
        overflow="Prompt contains {prompt} tokens and 0 draft tokens, too large for model "
        "with {window} maximum context length",
        texts={
            "consecutive_same_role": "Unexpected role '{role}' after role '{previous}'",
            "first_not_user": "Unexpected role '{role}' after role '{previous}'",
        },
        generic="Invalid message at index {index}: {detail}",
        # datapizza-labs/datapizza-ai#98: role order is type invalid_request_message_order
        codes={
            "consecutive_same_role": "3230",
            "first_not_user": "3230",
            "user_after_tool": "3230",
        },
        transient={
            429: "Requests rate limit exceeded",
            500: "Internal server error",
            503: "Service unavailable",
        },
    ),
    hosts=("api.mistral.ai",),
)
