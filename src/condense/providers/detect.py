"""``provider="auto"``: the history tells which provider's rules apply.

In order, the first signal wins:

1. a provider named by the caller;
2. the wire format: an Anthropic Messages file goes back to Anthropic, a Responses file to
   the Responses API;
3. the model name, read in the one table of model names
   (:func:`condense.tokens.families.family_for_model`: ``claude-…``, ``gemini-…``,
   ``deepseek-…``, ``kimi-…``, ``mistral-…``, ``gpt-…`` / ``o3`` …, with the routing
   prefixes of gateways and clouds removed: ``openrouter/anthropic/``, ``bedrock/``,
   Bedrock's ``us.anthropic.``, Vertex's ``@version``);
4. the upstream's host name (the proxy knows where a request is going);
5. the keys only condense's own readers write: ``thinking_blocks`` (the Anthropic
   reader) and ``responses_items`` / ``item_id`` (the Responses reader) say which wire
   format a list of canonical messages was read from, as a loaded file's format does;
6. nothing tells: ``strict``, the structural rules (alternation included), which keep
   replay state and enforce what it implies (see ``providers/strict.py``).

A guess never loosens a rule: replay state that several providers send
(``reasoning_content``: DeepSeek, Kimi, Qwen, GLM, vLLM and SGLang reasoning parsers;
Gemini thought signatures on OpenAI-style calls, which gateways pass around) tells what to
keep, never whose looser rules apply, so it leaves the choice at ``strict``.

The request's thinking mode (``thinking=``, or the ``thinking`` object of a loaded
Anthropic body; see ``providers.anthropic.thinking_mode``) is set on the chosen profile:
it decides which thinking rules apply to this request.

Every choice carries the reason, so reports can say which profile was used and why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit

from condense.message import (
    EXTRA_CONTENT,
    ITEM_ID,
    REASONING_CONTENT,
    RESPONSES_ITEMS,
    THINKING_BLOCKS,
)
from condense.providers.anthropic import thinking_mode
from condense.providers.base import Profile
from condense.tokens.families import family_for_model

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
    thinking: object = None,
) -> ProviderChoice:
    """The profile for a history, following the signals in the module docstring, with
    the thinking mode of ``thinking`` (a request's ``thinking`` object or a mode name;
    ``None``: unknown) set on it. A ``ProviderChoice`` is a choice already made: it keeps
    a mode it has."""
    if isinstance(provider, ProviderChoice) and provider.profile.thinking_mode is not None:
        return provider
    choice = _choose(provider, messages, format, model, upstream)
    mode = thinking_mode(thinking)
    if mode is None or choice.profile.thinking_mode == mode:
        return choice
    return ProviderChoice(profile=replace(choice.profile, thinking_mode=mode), reason=choice.reason)


def _choose(
    provider: str | Profile | ProviderChoice,
    messages: Sequence[Any],
    format: str | None,
    model: str | None,
    upstream: str | None,
) -> ProviderChoice:
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
    kept = _shared_state(messages)
    if kept:
        why += f" (its {kept} is kept, and names no provider)"
    return ProviderChoice(profile=PROFILES["strict"], reason=why)


def provider_for_model(model: str, *, chat: bool = True) -> str | None:
    """The provider a model name belongs to (its row of the model table,
    :func:`condense.tokens.families.family_for_model`), or ``None`` when it is not
    recognised. A Gemini model in an OpenAI chat history means Gemini's
    OpenAI-compatible endpoint."""
    family = family_for_model(model)
    if family is None or family.provider is None:
        return None
    return _chat_endpoint(family.provider) if chat else family.provider


def _chat_endpoint(name: str) -> str:
    """The profile of ``name``'s OpenAI-compatible endpoint, for a chat history."""
    return "gemini-openai" if name == "gemini" else name


def _host_path(url: str) -> str:
    parts = urlsplit(url if "//" in url else f"//{url}")
    return f"{parts.hostname or ''}{parts.path}".lower()


_MARKERS = frozenset({THINKING_BLOCKS, RESPONSES_ITEMS, ITEM_ID})


def _replay_signal(messages: Sequence[Any]) -> tuple[str, str] | None:
    """The wire format a canonical list was read from, told by the keys only condense's
    readers write."""
    for message in messages:
        if type(message) is not dict or message.get("role") != "assistant":
            continue
        if not _MARKERS.isdisjoint(message):  # one set operation for the common message
            if THINKING_BLOCKS in message:
                return "anthropic", "the history carries Anthropic thinking blocks"
            return "responses", "the history carries Responses items"
    return None


def _shared_state(messages: Sequence[Any]) -> str | None:
    """The replay state several providers send that the history carries, named."""
    for message in messages:
        if type(message) is not dict or message.get("role") != "assistant":
            continue
        if REASONING_CONTENT in message:
            return "reasoning_content"
        calls = message.get("tool_calls")
        if isinstance(calls, list) and any(
            isinstance(call, dict) and EXTRA_CONTENT in call for call in calls
        ):
            return "Gemini thought signatures"
    return None
