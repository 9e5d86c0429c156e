"""Anthropic Messages API (also through Bedrock and Vertex).

Rules beyond pairing: the first turn is the user's, roles alternate, ids match
``^[A-Za-z0-9_-]+$``, no empty text, a ``tool_result`` carries only its own fields (no
``name``), blocks are of known types and a text block has no extra keys, at most four
``cache_control`` breakpoints (a ``tool_use`` block may carry one). Replay state: the
``thinking`` / ``redacted_thinking`` blocks of each assistant turn ride on the canonical
message under ``thinking_blocks``; once a history has thinking, the assistant turn of a
running tool loop must start with its thinking.
"""

from __future__ import annotations

from typing import Any

from condense.providers.base import (
    ANTHROPIC_ID,
    THINKING_BLOCKS,
    TOOL_CALL_KEYS,
    BlockRules,
    Profile,
    Provider,
    Refusals,
)

MAX_CACHE_BREAKPOINTS = 4
STANDARD_WINDOW = 200_000
"""The context window that needs no long-context tier."""
LONG_CONTEXT_TIER_WORDINGS = (
    # a 429 rate_limit_error asking for the long-context tier ("Extra usage is required for
    # long context requests.", anthropics/claude-code#42616)
    r"extra usage is required for long context",
)
BILLING_WORDINGS = (
    # a 400 invalid_request_error when a subscription's extra usage is spent: "You're out of
    # extra usage. Add more at claude.ai/settings/usage and keep going." (NousResearch/
    # hermes-agent tests/agent/test_error_classifier.py, issues #11736, #13170)
    r"out of extra usage",
)
REPLAY_IDENTITY_WORDINGS = (
    # preserved thinking (2026): a thinking block whose prefix changed after it was made,
    # "messages.1.content.0: Invalid `signature` in `thinking` block. The block is bound to a
    # different conversation. Remove the block, or set
    # `thinking.block_binding.prefix_mismatch_behavior` to "drop_block". …" (opencode #48637;
    # Anthropic docs, "Fix a thinking block bound to a different conversation")
    r"bound to a different conversation",
    r"prefix_mismatch_behavior",
    # the same block failing its signature check for any other reason: "thinking block has
    # invalid signature" (NousResearch/hermes-agent tests/agent/test_error_classifier.py);
    # "Invalid `signature` in `thinking` block" (provider-rules.md)
    r"invalid\W{0,2}signature\W{0,2} in\W{0,2}(?:redacted_)?thinking\W{0,2} block",
    r"thinking block has (?:an )?invalid signature",
    r"invalid\W{0,2}data\W{0,2} in\W{0,2}redacted_thinking\W{0,2} block",
)
TEXT_BLOCK_KEYS = frozenset({"type", "text", "cache_control", "citations"})
"""The keys a text block may have."""
THINKING_TYPES = frozenset({"thinking", "redacted_thinking"})
SERVER_TOOL_USE_TYPES = frozenset({"server_tool_use", "mcp_tool_use"})
BLOCK_TYPES = frozenset(
    {
        "text",
        "image",
        "image_url",  # the canonical form of an image block
        "document",
        "search_result",
        "container_upload",
        "tool_reference",
        *SERVER_TOOL_USE_TYPES,
        "mcp_tool_result",
    }
)
"""Content block types the canonical form may carry for Anthropic, besides the
``*_tool_result`` blocks of server tools (any type ending in ``_tool_result``)."""

ERRORS = {
    "unanswered_tool_call": "messages.{index}: `tool_use` ids were found without "
    "`tool_result` blocks immediately after: {id}. Each `tool_use` block must have a "
    "corresponding `tool_result` block in the next message.",
    "orphan_tool_result": "messages.{index}.content.{block}: unexpected `tool_use_id` found "
    "in `tool_result` blocks: {id}. Each `tool_result` block must have a corresponding "
    "`tool_use` block in the previous message.",
    "tool_result_misplaced": "messages.{index}.content.{block}: unexpected `tool_use_id` "
    "found in `tool_result` blocks: {id}. Each `tool_result` block must have a "
    "corresponding `tool_use` block in the previous message.",
    "first_not_user": 'messages: first message must use the "user" role',
    "no_user_message": 'messages: first message must use the "user" role',
    "consecutive_same_role": 'messages: roles must alternate between "user" and '
    '"assistant", but found multiple "{role}" roles in a row',
    "arguments_not_object": "messages.{index}.content.{block}.tool_use.input: Input should "
    "be a valid dictionary",
    "arguments_invalid_json": "messages.{index}.content.{block}.tool_use.input: Input should "
    "be a valid dictionary",
    "unknown_key": "messages.{index}.{key}: Extra inputs are not permitted",
    "private_key": "messages.{index}.{key}: Extra inputs are not permitted",
    "thinking_missing_in_loop": "messages.{index}.content.0.type: Expected `thinking` or "
    "`redacted_thinking`, but found `{found}`. When `thinking` is enabled, a final "
    "`assistant` message must start with a thinking block (preceeding the lastmost set of "
    "`tool_use` and `tool_result` blocks). We recommend you include thinking blocks from "
    "previous turns. To avoid this requirement, disable `thinking`. Please consult our "
    "documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking",
    "tool_result_in_assistant": "messages.{index}: `tool_result` blocks can only be in "
    "`user` messages",
    "empty_text_block": "messages: text content blocks must be non-empty",
    "too_many_cache_breakpoints": "A maximum of 4 blocks with cache_control may be "
    "provided. Found {found}.",
    "server_tool_unpaired": "messages.{index}: `{name}` tool use with id `{id}` was found "
    "without a corresponding `{name}_tool_result` block",
    "unknown_block_type": "messages.{index}.content.{block}: Input tag '{found}' found using "
    "'type' does not match any of the expected tags",
}


def error_body(status: int, message: str, code: str | None, param: str | None) -> dict[str, Any]:
    """Anthropic's error body: ``{"type": "error", "error": {"type", "message"}}``."""
    kinds = {
        400: "invalid_request_error",
        401: "authentication_error",
        403: "permission_error",
        404: "not_found_error",
        413: "request_too_large",
        429: "rate_limit_error",
        529: "overloaded_error",
    }
    return {
        "type": "error",
        "error": {"type": kinds.get(status, "api_error"), "message": message},
        "request_id": "req_condense_strict",
    }


PROFILE = Profile(
    name="anthropic",
    description="Anthropic Messages API (also via Bedrock and Vertex)",
    first_user=True,
    alternate=True,
    system_only_at_start=True,
    developer_role=False,
    no_empty_text=True,
    id_pattern=ANTHROPIC_ID,
    id_max_length=None,
    thinking_in_running_loop=True,
    blocks=BlockRules(
        types=BLOCK_TYPES,
        text_keys=TEXT_BLOCK_KEYS,
        max_cache_breakpoints=MAX_CACHE_BREAKPOINTS,
        server_tool_types=SERVER_TOOL_USE_TYPES,
    ),
    # what the adapter carries: thinking blocks (replayed) and tool_result's own fields
    # A turn is ``role`` + ``content`` (Anthropic refuses ``name``, ``refusal``, ``audio``);
    # the system prompt becomes the top-level ``system``; a tool_result block has no
    # ``name``; a tool_use block may carry ``cache_control`` and ``caller``.
    allowed_keys={
        "system": frozenset({"role", "content"}),
        "developer": frozenset({"role", "content"}),
        "user": frozenset({"role", "content"}),
        "assistant": frozenset({"role", "content", "tool_calls", THINKING_BLOCKS}),
        "tool": frozenset({"role", "content", "tool_call_id", "is_error", "cache_control"}),
    },
    tool_call_keys=TOOL_CALL_KEYS | {"cache_control", "caller"},
    errors=ERRORS,
)

PROVIDER = Provider(
    profile=PROFILE,
    refusals=Refusals(
        body=error_body,
        overflow="prompt is too long: {prompt} tokens > {window} maximum",
        output_limit="input length and `max_tokens` exceed context limit: {prompt} + "
        "{output} > {window}, decrease input length or `max_tokens` and try again",
        texts={
            "empty_message": "messages.{index}: all messages must have non-empty content "
            "except for the optional final assistant message",
            "duplicate_tool_call_id": "messages.{index}.content.{block}: `tool_use` ids must "
            "be unique",
            "invalid_tool_call_id": "messages.{index}.content.{block}.tool_use.id: String "
            "should match pattern '^[a-zA-Z0-9_-]+$'",
            "missing_tool_call_id": "messages.{index}.content.{block}.tool_result.tool_use_id: "
            "Field required",
            "system_not_at_start": 'Unexpected role "system". The Messages API accepts a '
            'top-level `system` parameter, not "system" as an input message role.',
        },
        generic="messages.{index}: {detail}",
        transient={
            429: "Number of request tokens has exceeded your per-minute rate limit; see the "
            "response headers for current usage. Please reduce the prompt length or the "
            "maximum tokens requested, or try again later.",
            500: "Internal server error",
            503: "Service unavailable",
            529: "Overloaded",
        },
    ),
    wordings={
        "long_context_tier": LONG_CONTEXT_TIER_WORDINGS,
        "billing": BILLING_WORDINGS,
        "replay_identity": REPLAY_IDENTITY_WORDINGS,
    },
    models=("claude-", "claude_"),
    hosts=("api.anthropic.com", "bedrock-runtime", "aiplatform.googleapis.com/anthropic"),
    media="anthropic",
)
