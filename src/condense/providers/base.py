"""What condense knows about one provider, as frozen values.

A :class:`Provider` bundles three things that used to live in three packages:

- its :class:`Profile`: the rules ``validate`` checks and ``repair`` enforces, including
  which replay state (reasoning the provider makes the client send back) it needs;
- its :class:`Refusals`: how it refuses a request (HTTP status, error-body shape, the
  texts it answers with), read by the strict fake provider;
- how to recognise it: its API hosts, read by ``provider="auto"`` (model names are read
  in the one table of model families, ``condense.tokens.families``, whose rows name
  their provider).

Every provider module (``providers/anthropic.py`` …) builds one or more of these; the
registry in ``providers/__init__.py`` collects them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

# The canonical message's keys live in condense.message; these names stay importable here.
from condense.message import EXTRA_CONTENT as EXTRA_CONTENT
from condense.message import ITEM_ID as ITEM_ID
from condense.message import REASONING_CONTENT as REASONING_CONTENT
from condense.message import REPLAY_KEYS as REPLAY_KEYS
from condense.message import RESPONSES_ITEMS as RESPONSES_ITEMS
from condense.message import THINKING_BLOCKS as THINKING_BLOCKS

ANTHROPIC_ID = re.compile(r"^[A-Za-z0-9_-]+$")
"""Tool-call ids Anthropic and Gemini accept (and the structural ``strict`` profile)."""

# Keys the OpenAI Chat Completions API documents for each role.
OPENAI_KEYS: Mapping[str, frozenset[str]] = {
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

MediaBilling = Literal["openai", "anthropic", "gemini"]


def keys_plus(
    extra: Mapping[str, frozenset[str]], base: Mapping[str, frozenset[str]] = OPENAI_KEYS
) -> Mapping[str, frozenset[str]]:
    """``base`` with the keys of ``extra`` added, role by role."""
    return {role: keys | extra.get(role, frozenset()) for role, keys in base.items()}


@dataclass(frozen=True, kw_only=True)
class BlockRules:
    """Rules on the content blocks of a message (Anthropic's typed blocks). Block types
    are not among them: the API adds types (server tools, MCP, compaction, …) faster than
    any list, and real traffic is the judge."""

    text_keys: frozenset[str]
    """The keys a text block may have."""
    max_cache_breakpoints: int
    """How many blocks (parts, tool calls, results) may carry ``cache_control``."""
    server_tool_types: frozenset[str]
    """Server tool-use block types whose ``*_tool_result`` must be in the same turn."""


@dataclass(frozen=True, kw_only=True)
class Profile:
    """The rules one provider enforces on a history in canonical (OpenAI chat) form.

    Every profile requires tool results directly after their call, one result per call
    and JSON-object arguments. The switches say what else the provider refuses.
    """

    name: str
    description: str
    first_user: bool
    """The first message after the system prompt must come from the user (and a history
    needs a user message at all)."""
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
    """Ids must have exactly this many characters (Mistral: 9 of ``[A-Za-z0-9]``)."""
    unique_ids: bool = True
    """Tool-call ids must be unique across the history (OpenAI accepts reuse)."""
    results_in_call_order: bool = False
    """Results answer parallel calls in the order the calls were made."""
    results_anywhere_after: bool = False
    """A result may come anywhere after its call, paired by id, with other messages
    between them (the Responses API: Codex puts ``developer`` and ``user`` messages
    between a call and its output). Otherwise results come directly after their call."""
    custom_tool_calls: bool = False
    """Custom (free-form) tool calls are accepted: ``{"type": "custom", "custom": {"name",
    "input"}}``, whose ``input`` is any text, not JSON arguments (OpenAI's custom tools;
    the Responses API's ``custom_tool_call``)."""
    user_after_tool: bool = True
    """A user message may directly follow a tool result (Mistral refuses it)."""
    ends_with_assistant: bool = True
    """A request may end with an assistant message (Mistral wants the last role to be
    user or tool)."""
    reasoning_on_tool_calls: bool = False
    """Once a history carries ``reasoning_content``, every assistant message with tool
    calls must carry it too (DeepSeek and Kimi thinking mode)."""
    thinking_start: bool = False
    """Under budgeted thinking (``thinking_mode == "enabled"``), the first assistant
    message of the current turn must start with its thinking (Anthropic; see
    ``condense.turns``). Adaptive thinking may leave a whole turn without any."""
    thinking_mode: str | None = None
    """The request's thinking mode when it is known (``"enabled"``, ``"adaptive"``,
    ``"disabled"``), else ``None``: a request setting, not the provider's, so
    ``choose_provider(thinking=...)`` sets it per request. An unknown mode never reports
    what one of the modes accepts."""
    thought_signatures: bool = False
    """Once a history carries a Gemini thought signature, the first call of every step
    of the current turn (after the latest user message) needs one."""
    blocks: BlockRules | None = None
    """Rules on content blocks, for providers with typed blocks."""
    allowed_keys: Mapping[str, frozenset[str]]
    tool_call_keys: frozenset[str] = TOOL_CALL_KEYS
    errors: Mapping[str, str] = field(default_factory=dict)
    """Violation code → the error text this provider returns for it, where known. The
    text may use ``{index}``, ``{id}``, ``{key}``, ``{role}``, ``{previous}``."""


BodyShape = Callable[[int, str, "str | None", "str | None"], dict[str, Any]]
"""``(status, message, code, param) -> error body`` in one provider's shape."""


@dataclass(frozen=True, kw_only=True)
class Refusals:
    """How one provider refuses a request: what the strict fake provider answers."""

    body: BodyShape
    overflow: str
    """The context-overflow text; ``{prompt}``, ``{window}``, ``{total}`` are filled in."""
    output_limit: str | None = None
    """Where the provider counts ``max_tokens`` against the window: that refusal's text."""
    overflow_code: str | None = None
    rejection_status: int = 400
    texts: Mapping[str, str] = field(default_factory=dict)
    """Refusal texts for codes whose real wording the profile does not carry."""
    generic: str = "Invalid 'messages[{index}]': {detail}."
    own_words: bool = False
    """Never use the profile's texts (they are another provider's words)."""
    code: str | None = None
    codes: Mapping[str, str] = field(default_factory=dict)
    """The provider's own error code per violation code, where it has one."""
    transient: Mapping[int, str] = field(default_factory=dict)
    """Status → the text of a 429/5xx in this provider's words."""


@dataclass(frozen=True, kw_only=True)
class Provider:
    """Everything condense knows about one provider (or one API of a provider)."""

    profile: Profile
    refusals: Refusals
    hosts: tuple[str, ...] = ()
    """API host names (or suffixes) that mean this provider."""
    media: MediaBilling = "openai"
    """How the provider bills images and documents."""
    wordings: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Refusal wordings only this provider uses, for ``classify``: a family name
    (``"context_overflow"``, ``"long_context_tier"`` …) → regular expressions over the
    lower-cased error text. Wordings many providers share live in ``errors/_families``."""
    error_codes: Mapping[int, str] = field(default_factory=dict)
    """Numeric status codes in the provider's own error body → ``Category`` value."""

    @property
    def name(self) -> str:
        return self.profile.name
