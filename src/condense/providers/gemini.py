"""Google Gemini: the native ``generateContent`` rules and its OpenAI-compatible endpoint.

Both count parallel calls (as many response parts as call parts, in the call order) and
want the function-response turn right after the call turn. Gemini 3 signs its function
calls: on the OpenAI-compatible endpoint the signature travels on the tool call as
``extra_content.google.thought_signature`` and must be replayed. A call that never had one
(migrated from another model, or written by the client) may carry the documented dummy
signature :data:`DUMMY_THOUGHT_SIGNATURE`.
"""

from __future__ import annotations

from typing import Any

from condense.message import EXTRA_CONTENT, THINKING_BLOCKS
from condense.providers import openai
from condense.providers.base import (
    ANTHROPIC_ID,
    OPENAI_KEYS,
    TOOL_CALL_KEYS,
    Profile,
    Provider,
    Refusals,
    keys_plus,
)

DUMMY_THOUGHT_SIGNATURE = "skip_thought_signature_validator"
"""The value Gemini's docs give for calls whose real signature does not exist."""

_PAIRING = {
    "unanswered_tool_call": "Please ensure that the number of function response parts is "
    "equal to the number of function call parts of the function call turn.",
    "orphan_tool_result": "Please ensure that function response turn comes immediately after "
    "a function call turn.",
    "tool_result_misplaced": "Please ensure that function response turn comes immediately "
    "after a function call turn.",
    "results_out_of_order": "Please ensure that function response turn comes immediately "
    "after a function call turn.",
    "duplicate_tool_result": "Please ensure that the number of function response parts is "
    "equal to the number of function call parts of the function call turn.",
    "missing_thought_signature": "Function call is missing a thought_signature in "
    "functionCall parts. This is required for tools to work correctly, and missing "
    "thought_signature may lead to degraded model performance. Additional data, function "
    "call `default_api:{name}` , position {index}. Please refer to "
    "https://ai.google.dev/gemini-api/docs/thought-signatures for more details.",
}


def error_body(status: int, message: str, code: str | None, param: str | None) -> dict[str, Any]:
    """Google's error body: ``{"error": {"code", "message", "status"}}``."""
    statuses = {
        400: "INVALID_ARGUMENT",
        401: "UNAUTHENTICATED",
        403: "PERMISSION_DENIED",
        404: "NOT_FOUND",
        429: "RESOURCE_EXHAUSTED",
        503: "UNAVAILABLE",
        504: "DEADLINE_EXCEEDED",
    }
    return {
        "error": {"code": status, "message": message, "status": statuses.get(status, "INTERNAL")}
    }


_REFUSALS = Refusals(
    body=error_body,
    overflow="The input token count ({prompt}) exceeds the maximum number of tokens "
    "allowed ({window}).",
    texts={
        "empty_message": "* GenerateContentRequest.contents[{index}].parts: "
        "contents.parts must not be empty.\n"
    },
    generic="* GenerateContentRequest.contents[{index}]: {detail}\n",
    transient={
        429: "Resource has been exhausted (e.g. check quota).",
        500: "An internal error has occurred. Please retry or report in "
        "https://developers.generativeai.google/guide/troubleshooting",
        503: "The model is overloaded. Please try again later.",
    },
)

PROFILE = Profile(
    name="gemini",
    description="Google Gemini generateContent (native rules)",
    first_user=True,
    alternate=True,
    system_only_at_start=True,
    developer_role=False,
    no_empty_text=True,
    id_pattern=ANTHROPIC_ID,
    id_max_length=None,
    results_in_call_order=True,
    thought_signatures=True,
    # the adapter (``formats/gemini.py``) keeps a model turn's thought parts here
    allowed_keys=keys_plus({"assistant": frozenset({THINKING_BLOCKS})}),
    tool_call_keys=TOOL_CALL_KEYS | {EXTRA_CONTENT},
    errors={
        **_PAIRING,
        "consecutive_same_role": "Please ensure that function call turn comes immediately "
        "after a user turn or after a function response turn.",
        "unknown_key": 'Invalid JSON payload received. Unknown name "{key}" at '
        "'contents[{index}]': Cannot find field.",
    },
)

OPENAI_COMPATIBLE_PROFILE = Profile(
    name="gemini-openai",
    description="Gemini through its OpenAI-compatible endpoint (thought signatures on calls)",
    first_user=False,
    alternate=False,
    system_only_at_start=False,
    developer_role=False,
    no_empty_text=False,
    id_pattern=None,
    id_max_length=None,
    unique_ids=False,
    results_in_call_order=True,
    thought_signatures=True,
    allowed_keys=OPENAI_KEYS,
    tool_call_keys=TOOL_CALL_KEYS | {EXTRA_CONTENT},
    errors={**openai.PAIRING_ERRORS, **_PAIRING},
)

PROVIDER = Provider(
    profile=PROFILE,
    refusals=_REFUSALS,
    hosts=("generativelanguage.googleapis.com",),
    media="gemini",
)
OPENAI_COMPATIBLE = Provider(
    profile=OPENAI_COMPATIBLE_PROFILE,
    refusals=openai.REFUSALS,
    hosts=("generativelanguage.googleapis.com/v1beta/openai",),
    media="gemini",
)
