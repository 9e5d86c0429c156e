"""``provider="auto"``: the history tells which provider's rules apply.

In order, the first signal wins:

1. a provider named by the caller;
2. the wire format: an Anthropic Messages file goes back to Anthropic, a Responses file to
   the Responses API;
3. the model name (``claude-…``, ``gemini-…``, ``deepseek-…``, ``kimi-…``, ``mistral-…``,
   ``gpt-…`` / ``o3`` …), with any ``vendor/`` prefix of a gateway removed;
4. the upstream's host name (the proxy knows where a request is going);
5. replay state in the history itself: thinking blocks (Anthropic), reasoning items
   (Responses), Gemini thought signatures, ``reasoning_content`` (DeepSeek/Kimi thinking
   mode — their shared rule keeps it on every tool-call turn);
6. nothing tells: ``strict``, the structural rules, which keep replay state too.

Every choice carries the reason, so reports can say which profile was used and why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from condense.providers.base import (
    EXTRA_CONTENT,
    ITEM_ID,
    REASONING_CONTENT,
    RESPONSES_ITEMS,
    THINKING_BLOCKS,
    Profile,
)

AUTO = "auto"

_FORMATS = {
    "anthropic": ("anthropic", "the history is in Anthropic Messages format"),
    "responses": ("responses", "the history is in OpenAI Responses format"),
    "gemini": ("gemini", "the history is in Gemini generateContent format"),
    # Converse serves many model families; its own checks are the structural ones
    "bedrock": ("strict", "the history is in Bedrock Converse format (structural rules)"),
}


@dataclass(frozen=True, kw_only=True)
class ProviderChoice:
    """The profile a history is handled with, and why it was chosen."""

    profile: Profile
    reason: str

    @property
    def name(self) -> str:
        return self.profile.name

    def __str__(self) -> str:
        return f"{self.profile.name} ({self.reason})"


def choose_provider(
    provider: str | Profile | ProviderChoice = AUTO,
    *,
    messages: Sequence[Any] = (),
    format: str | None = None,
    model: str | None = None,
    upstream: str | None = None,
) -> ProviderChoice:
    """The profile for a history, following the signals in the module docstring."""
    from condense.providers import PROFILES, PROVIDERS, get_profile

    if isinstance(provider, ProviderChoice):
        return provider
    if isinstance(provider, Profile):
        return ProviderChoice(profile=provider, reason="given")
    if not isinstance(provider, str) or provider.lower() != AUTO:
        return ProviderChoice(profile=get_profile(provider), reason="given")
    if format in _FORMATS:
        name, reason = _FORMATS[format]
        return ProviderChoice(profile=PROFILES[name], reason=reason)
    chat = format in (None, "openai")
    named = provider_for_model(model, chat=chat) if model else None
    if named is not None:
        return ProviderChoice(profile=PROFILES[named], reason=f"model {model!r}")
    if upstream:
        host = _host_path(upstream)
        for candidate in PROVIDERS.values():
            if any(pattern in host for pattern in candidate.hosts):
                reason = f"upstream {urlsplit(upstream).netloc or upstream!r}"
                name = _chat_endpoint(candidate.name) if chat else candidate.name
                return ProviderChoice(profile=PROFILES[name], reason=reason)
    found = _replay_signal(messages)
    if found is not None:
        name, reason = found
        return ProviderChoice(profile=PROFILES[name], reason=reason)
    why = "nothing in the history names its provider"
    if format == "sharegpt":
        why = "ShareGPT trajectories have no provider"
    return ProviderChoice(profile=PROFILES["strict"], reason=why)


def provider_for_model(model: str, *, chat: bool = True) -> str | None:
    """The provider a model name belongs to, or ``None`` when it is not recognised.

    Gateway prefixes (``anthropic/``, ``openrouter/google/``) are removed; a Gemini model
    in an OpenAI chat history means Gemini's OpenAI-compatible endpoint.
    """
    from condense.providers import PROVIDERS

    lowered = model.strip().lower()
    names = [lowered, lowered.rsplit("/", 1)[-1]]
    for name in names:
        for candidate in PROVIDERS.values():
            if any(name.startswith(prefix) for prefix in candidate.models):
                return _chat_endpoint(candidate.name) if chat else candidate.name
    return None


def _chat_endpoint(name: str) -> str:
    """The profile of ``name``'s OpenAI-compatible endpoint, for a chat history."""
    return "gemini-openai" if name == "gemini" else name


def _host_path(url: str) -> str:
    parts = urlsplit(url if "//" in url else f"//{url}")
    return f"{parts.hostname or ''}{parts.path}".lower()


_MARKERS = frozenset({THINKING_BLOCKS, RESPONSES_ITEMS, ITEM_ID, REASONING_CONTENT})


def _replay_signal(messages: Sequence[Any]) -> tuple[str, str] | None:
    reasoning = False
    for message in messages:
        if type(message) is not dict or message.get("role") != "assistant":
            continue
        if not _MARKERS.isdisjoint(message):  # one set operation for the common message
            if THINKING_BLOCKS in message:
                return "anthropic", "the history carries Anthropic thinking blocks"
            if RESPONSES_ITEMS in message or ITEM_ID in message:
                return "responses", "the history carries Responses items"
            reasoning = reasoning or REASONING_CONTENT in message
        calls = message.get("tool_calls")
        if calls and _has_thought_signature(calls):
            return "gemini-openai", "the history carries Gemini thought signatures"
    if reasoning:
        return "deepseek", "the history carries reasoning_content (DeepSeek/Kimi thinking)"
    return None


def _has_thought_signature(calls: object) -> bool:
    if not isinstance(calls, list):
        return False
    for call in calls:
        if not isinstance(call, dict) or EXTRA_CONTENT not in call:
            continue  # the common case, without the (slow) Mapping checks
        extra = call[EXTRA_CONTENT]
        google = extra.get("google") if isinstance(extra, Mapping) else None
        if isinstance(google, Mapping) and "thought_signature" in google:
            return True
    return False
