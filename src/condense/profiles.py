"""Provider profiles: which rules each provider enforces on a chat history.

A profile is a frozen set of switches read by ``validate`` and ``repair``. The rules and
the error texts come from ``provider-rules.md`` (public issue trackers); where a
provider's rule is unknown we assume the strictest rule any provider of its family
enforces. ``strict`` is the union of all of them and the default: a history that passes
``strict`` is accepted by every profile.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from condense.exceptions import UnknownNameError

ANTHROPIC_ID = re.compile(r"^[A-Za-z0-9_-]+$")
MISTRAL_ID = re.compile(r"^[A-Za-z0-9]{9}$")

# Keys the OpenAI Chat Completions API documents for each role.
_OPENAI_KEYS: Mapping[str, frozenset[str]] = {
    "system": frozenset({"role", "content", "name"}),
    "developer": frozenset({"role", "content", "name"}),
    "user": frozenset({"role", "content", "name"}),
    "assistant": frozenset({"role", "content", "name", "tool_calls", "refusal", "audio"}),
    # ``name`` on tool results is documented by Mistral and accepted by OpenAI
    # (tau-bench's real gpt-4o runs send it); Gemini needs the name to answer a call.
    "tool": frozenset({"role", "content", "tool_call_id", "name"}),
}
TOOL_CALL_KEYS = frozenset({"id", "type", "function"})
FUNCTION_KEYS = frozenset({"name", "arguments"})


def _keys_plus(extra: Mapping[str, frozenset[str]]) -> Mapping[str, frozenset[str]]:
    return {role: keys | extra.get(role, frozenset()) for role, keys in _OPENAI_KEYS.items()}


@dataclass(frozen=True, kw_only=True)
class Profile:
    """The rules one provider enforces. Every profile requires tool results directly
    after their call, one result per call, unique call ids and JSON-object arguments."""

    name: str
    description: str
    first_user: bool
    """The first message after the system prompt must come from the user."""
    alternate: bool
    """No two user (or two assistant) messages in a row."""
    system_only_at_start: bool
    """System/developer messages may only open the history."""
    developer_role: bool
    """The ``developer`` role is understood (else it is rewritten to ``system``)."""
    no_empty_text: bool
    """User messages and tool-less assistant messages need non-empty content."""
    id_pattern: re.Pattern[str] | None
    id_max_length: int | None
    id_exact_length: int | None = None
    unique_ids: bool = True
    """Tool-call ids must be unique across the history (OpenAI accepts reuse)."""
    """Ids must have exactly this many characters (Mistral: 9 of ``[A-Za-z0-9]``)."""
    allowed_keys: Mapping[str, frozenset[str]]
    tool_call_keys: frozenset[str] = TOOL_CALL_KEYS
    errors: Mapping[str, str] = field(default_factory=dict)
    """Code → the error text this provider returns for it, where known."""


_PAIRING_OPENAI = {
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
    "arguments_invalid_json": "messages.{index}.tool_calls.0.function.arguments: arguments "
    "must be a valid JSON object string",
    "arguments_not_object": "messages.{index}.tool_calls.0.function.arguments: arguments must "
    "be a valid JSON object string",
    "arguments_not_string": "Input should be a valid string",
}
_ANTHROPIC_ERRORS = {
    "unanswered_tool_call": "messages.{index}: `tool_use` ids were found without `tool_result` "
    "blocks immediately after: {id}. Each `tool_use` block must have a corresponding "
    "`tool_result` block in the next message.",
    "orphan_tool_result": "messages.{index}.content.0: unexpected `tool_use_id` found in "
    "`tool_result` blocks: {id}. Each `tool_result` block must have a corresponding "
    "`tool_use` block in the previous message.",
    "tool_result_misplaced": "messages.{index}.content.0: unexpected `tool_use_id` found in "
    "`tool_result` blocks: {id}. Each `tool_result` block must have a corresponding "
    "`tool_use` block in the previous message.",
    "first_not_user": 'messages: first message must use the "user" role',
    "consecutive_same_role": 'messages: roles must alternate between "user" and "assistant", '
    'but found multiple "{role}" roles in a row',
    "arguments_not_object": "messages.{index}.content.0.tool_use.input: Input should be a "
    "valid dictionary",
    "arguments_invalid_json": "messages.{index}.content.0.tool_use.input: Input should be a "
    "valid dictionary",
    "unknown_key": "messages.{index}.{key}: Extra inputs are not permitted",
    "private_key": "messages.{index}.{key}: Extra inputs are not permitted",
}
_GEMINI_ERRORS = {
    "unanswered_tool_call": "Please ensure that the number of function response parts is "
    "equal to the number of function call parts of the function call turn.",
    "orphan_tool_result": "Please ensure that function response turn comes immediately after "
    "a function call turn.",
    "tool_result_misplaced": "Please ensure that function response turn comes immediately "
    "after a function call turn.",
    "duplicate_tool_result": "Please ensure that the number of function response parts is "
    "equal to the number of function call parts of the function call turn.",
    "consecutive_same_role": "Please ensure that function call turn comes immediately after a "
    "user turn or after a function response turn.",
    "unknown_key": 'Invalid JSON payload received. Unknown name "{key}" at '
    "'contents[{index}]': Cannot find field.",
}
_MISTRAL_ERRORS = {
    "invalid_tool_call_id": "Tool call id was {id} but must be a-z, A-Z, 0-9, with a length of 9.",
    "unanswered_tool_call": "Not the same number of function calls and responses",
    "duplicate_tool_result": "Not the same number of function calls and responses",
    "orphan_tool_result": "Unexpected role RoleEnum.tool",
    "tool_result_misplaced": "Unexpected role RoleEnum.tool",
}
_RESPONSES_ERRORS = {
    "orphan_tool_result": "No tool call found for function call output with call_id {id}.",
    "tool_result_misplaced": "No tool call found for function call output with call_id {id}.",
    "unanswered_tool_call": "No tool output found for function call {id}.",
    "unknown_key": "Unknown parameter: 'input[{index}].{key}'.",
    "private_key": "Unknown parameter: 'input[{index}].{key}'.",
}

PROFILES: Mapping[str, Profile] = {
    p.name: p
    for p in (
        Profile(
            name="openai",
            description="OpenAI Chat Completions and OpenAI-compatible servers "
            "(vLLM, llama.cpp, SGLang, DeepSeek, Moonshot, MiniMax)",
            first_user=False,
            alternate=False,
            system_only_at_start=False,
            developer_role=True,
            no_empty_text=False,
            id_pattern=None,
            id_max_length=40,
            unique_ids=False,
            allowed_keys=_keys_plus({"assistant": frozenset({"reasoning_content"})}),
            errors=_PAIRING_OPENAI,
        ),
        Profile(
            name="responses",
            description="OpenAI Responses API input items",
            first_user=False,
            alternate=False,
            system_only_at_start=False,
            developer_role=True,
            no_empty_text=False,
            id_pattern=None,
            id_max_length=64,
            # the Responses adapter carries item ids and reasoning items here
            allowed_keys=_keys_plus(
                {
                    role: frozenset(
                        {"item_id", "responses_items"} if role == "assistant" else {"item_id"}
                    )
                    for role in _OPENAI_KEYS
                }
            ),
            tool_call_keys=TOOL_CALL_KEYS | {"item_id"},
            errors=_RESPONSES_ERRORS,
        ),
        Profile(
            name="anthropic",
            description="Anthropic Messages API (also via Bedrock and Vertex)",
            first_user=True,
            alternate=True,
            system_only_at_start=True,
            developer_role=False,
            no_empty_text=True,
            id_pattern=ANTHROPIC_ID,
            id_max_length=None,
            # what the Anthropic adapter carries: thinking blocks (they must be replayed)
            # and the tool_result block's own fields
            allowed_keys=_keys_plus(
                {
                    "assistant": frozenset({"thinking_blocks"}),
                    "tool": frozenset({"is_error", "cache_control"}),
                }
            ),
            errors=_ANTHROPIC_ERRORS,
        ),
        Profile(
            name="gemini",
            description="Google Gemini generateContent",
            first_user=True,
            alternate=True,
            system_only_at_start=True,
            developer_role=False,
            no_empty_text=True,
            id_pattern=ANTHROPIC_ID,
            id_max_length=None,
            allowed_keys=_OPENAI_KEYS,
            errors=_GEMINI_ERRORS,
        ),
        Profile(
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
            allowed_keys=_OPENAI_KEYS,
            errors=_MISTRAL_ERRORS,
        ),
        Profile(
            name="strict",
            description="the union of the strictest rules: accepted by every profile "
            "except Mistral's 9-character ids",
            first_user=True,
            alternate=True,
            system_only_at_start=True,
            developer_role=False,
            no_empty_text=True,
            id_pattern=ANTHROPIC_ID,
            id_max_length=40,
            allowed_keys=_OPENAI_KEYS,
            errors={**_GEMINI_ERRORS, **_RESPONSES_ERRORS, **_ANTHROPIC_ERRORS, **_PAIRING_OPENAI},
        ),
    )
}
DEFAULT_PROFILE = "strict"


def get_profile(provider: str | Profile) -> Profile:
    """Return the profile named ``provider`` (or ``provider`` itself if it is one)."""
    if isinstance(provider, Profile):
        return provider
    try:
        return PROFILES[provider.lower()]
    except (KeyError, AttributeError):
        raise UnknownNameError("provider", str(provider), sorted(PROFILES)) from None
