"""Anthropic Messages API (also through Bedrock and Vertex).

Rules beyond pairing: the first turn is the user's, roles alternate, ids match
``^[A-Za-z0-9_-]+$``, no empty text, a ``tool_result`` carries only its own fields (no
``name``), a user turn answering calls starts with its ``tool_result`` blocks, a text
block has no extra keys, at most four ``cache_control`` breakpoints (a ``tool_use``
block may carry one), and each server tool use keeps its result in the same turn. Block
types the API adds (server tools, MCP, compaction, …) are accepted as they come: real
traffic is the judge. Replay state: the ``thinking`` / ``redacted_thinking`` blocks of
each assistant turn ride on the canonical message under ``thinking_blocks``.

Thinking is a request setting (:func:`thinking_mode`): under budgeted thinking
(``{"type": "enabled", "budget_tokens": N}``) the first assistant message of the current
turn must start with thinking; with ``{"type": "adaptive"}`` a turn may carry none.
Models with preserved thinking (:func:`binds_thinking`) bind each thinking block to
everything before it; :data:`DROP_BLOCK` is the API's own way to have mismatching blocks
dropped instead of refused.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from condense.message import THINKING_BLOCKS
from condense.providers.base import (
    ANTHROPIC_ID,
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
    # apify/tester-mcp-client#12, anthropics/claude-code#37, anthropic-sdk-typescript#653
    "text_before_tool_result": "messages.{index}: Did not find {found} `tool_result` block(s) "
    "at the beginning of this message. Messages following `tool_use` blocks must begin with "
    "a matching number of `tool_result` blocks.",
}


_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}


def error_body(status: int, message: str, code: str | None, param: str | None) -> dict[str, Any]:
    """Anthropic's error body, ``{"type": "error", "error": {"type", "message"},
    "request_id"}``, typed by status as the API's error reference lists them
    (platform.claude.com/docs/en/api/errors): ``invalid_request_error`` also "for other
    4XX status codes not listed", ``api_error`` for other 5xx."""
    kind = _ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
    return {
        "type": "error",
        "error": {"type": kind, "message": message},
        "request_id": "req_condense",
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
    thinking_start=True,
    blocks=BlockRules(
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
    hosts=("api.anthropic.com", "bedrock-runtime", "aiplatform.googleapis.com/anthropic"),
    media="anthropic",
)


# --- thinking: the request's mode, the models that bind, the API's drop_block -------------

ThinkingMode = Literal["enabled", "adaptive", "disabled"]
THINKING_MODES: tuple[ThinkingMode, ...] = ("enabled", "adaptive", "disabled")


def thinking_mode(setting: object) -> ThinkingMode | None:
    """The mode of a request's ``thinking`` setting: its ``thinking`` object
    (``{"type": "enabled", "budget_tokens": N}``, ``{"type": "adaptive"}``,
    ``{"type": "disabled"}``) or one of those type names. ``None``, and anything else (a
    type condense does not know), is an unknown mode."""
    kind = setting.get("type") if isinstance(setting, Mapping) else setting
    for mode in THINKING_MODES:
        if kind == mode:
            return mode
    return None


def request_thinking(record: object, *, format: str | None) -> object:
    """The thinking setting of a request body as it was read: its ``thinking`` object.

    An Anthropic body without one sends the model's default, which never requires
    thinking (off, or adaptive on models with preserved thinking: "models with preserved
    thinking default to adaptive thinking", platform.claude.com/docs
    build-with-claude/preserved-thinking/fix-bound-to-a-different-conversation), so it is
    read as ``adaptive``. Anything else (a bare list, another format's body without the
    field) says nothing: ``None``."""
    if not isinstance(record, Mapping):
        return None
    if "thinking" in record:
        return record["thinking"]
    return {"type": "adaptive"} if format == "anthropic" else None


_CLAUDE = re.compile(r"claude-(?:(?P<family>[a-z]+)-)?(?P<major>\d+)(?:[-.](?P<minor>\d+))?")
_PRESERVED_FROM = {"fable": (5, 1), "mythos": (5, 1), "opus": (5, 5), "sonnet": (5, 5)}


def binds_thinking(model: str | None) -> bool:
    """Whether ``model`` checks each replayed thinking block against everything before it
    (preserved thinking: Claude Fable and Mythos 5.1, Opus, Sonnet and Haiku 5.5, and
    later; platform.claude.com/docs build-with-claude/preserved-thinking/prefix-checks).

    Only a model known to be older is taken not to: an unknown model (or none) may
    check, so it is taken to (the safe side). Older models (Claude 3, 4, Opus 5 …) accept
    thinking after an edited prefix, as thinking of earlier turns always was."""
    if not model:
        return True
    match = _CLAUDE.search(model.lower())
    if match is None:
        return True
    major = int(match["major"])
    minor_text = match["minor"] or "0"
    minor = 0 if len(minor_text) > 2 else int(minor_text)  # a date suffix is no version
    first = _PRESERVED_FROM.get(match["family"] or "", (5, 5))
    return (major, minor) >= first


DROP_BLOCK_BETA = "thinking-binding-controls-2026-08-01"
"""The ``anthropic-beta`` value that unlocks ``thinking.block_binding``."""
DROP_BLOCK: Mapping[str, Any] = {"block_binding": {"prefix_mismatch_behavior": "drop_block"}}
"""What goes into the request's ``thinking`` object so that the API drops thinking blocks
that fail the prefix check instead of refusing the request (the response's
``input_transformations`` lists them); the ``anthropic-beta`` header must carry
:data:`DROP_BLOCK_BETA`. Sent with every later request of the conversation: the API keeps
no setting between requests (platform.claude.com/docs build-with-claude/preserved-thinking/
fix-bound-to-a-different-conversation)."""
