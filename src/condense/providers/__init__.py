"""Everything condense knows about each provider, one module per provider.

=================  =====================================================================
name               module
=================  =====================================================================
``openai``         :mod:`~condense.providers.openai` (Chat Completions)
``responses``      :mod:`~condense.providers.responses` (Responses API items)
``anthropic``      :mod:`~condense.providers.anthropic` (Messages API)
``gemini``         :mod:`~condense.providers.gemini` (native rules)
``gemini-openai``  :mod:`~condense.providers.gemini` (its OpenAI-compatible endpoint)
``mistral``        :mod:`~condense.providers.mistral`
``deepseek``       :mod:`~condense.providers.deepseek`
``kimi``           :mod:`~condense.providers.kimi` (Moonshot)
``minimax``        :mod:`~condense.providers.minimax`
``local``          :mod:`~condense.providers.local` (vLLM, llama.cpp, SGLang, Ollama)
``strict``         :mod:`~condense.providers.strict` (derived: structural rules only)
=================  =====================================================================

``validate``, ``repair``, ``compress``, ``classify``, the strict fake provider and the CLI
read from here. ``provider="auto"`` (the default everywhere) lets the history choose:
see :func:`choose_provider`.
"""

from __future__ import annotations

from collections.abc import Mapping

from condense.exceptions import UnknownNameError
from condense.providers import (
    anthropic,
    deepseek,
    gemini,
    kimi,
    local,
    minimax,
    mistral,
    openai,
    responses,
    strict,
)
from condense.providers.base import MediaBilling, Profile, Provider, Refusals
from condense.providers.detect import AUTO, ProviderChoice, choose_provider

__all__ = [
    "AUTO",
    "DEFAULT_PROVIDER",
    "PROFILES",
    "PROVIDERS",
    "Profile",
    "Provider",
    "ProviderChoice",
    "Refusals",
    "check_provider",
    "choose_provider",
    "get_profile",
    "get_provider",
    "media_billing",
]

PROVIDERS: Mapping[str, Provider] = {
    provider.name: provider
    for provider in (
        openai.PROVIDER,
        responses.PROVIDER,
        anthropic.PROVIDER,
        gemini.PROVIDER,
        gemini.OPENAI_COMPATIBLE,
        mistral.PROVIDER,
        deepseek.PROVIDER,
        kimi.PROVIDER,
        minimax.PROVIDER,
        local.PROVIDER,
        strict.PROVIDER,
    )
}
PROFILES: Mapping[str, Profile] = {name: p.profile for name, p in PROVIDERS.items()}
DEFAULT_PROVIDER = AUTO
"""Every entry point defaults to ``"auto"``: the history (its format, its replay state, the
model name) picks the provider, and ``strict`` only when nothing tells."""


def get_provider(name: str) -> Provider:
    """The provider called ``name`` (case-insensitive); UnknownNameError lists the known."""
    try:
        return PROVIDERS[name.lower()]
    except (KeyError, AttributeError):
        raise UnknownNameError("provider", str(name), sorted(PROVIDERS)) from None


def check_provider(provider: str | Profile) -> str | Profile:
    """``provider`` itself if it is ``"auto"``, a known name or a Profile; else
    UnknownNameError listing the known names (for arguments checked before use)."""
    if isinstance(provider, str) and provider.lower() == AUTO:
        return provider
    get_profile(provider)
    return provider


def media_billing(profile: Profile) -> MediaBilling:
    """How the provider of ``profile`` bills images and documents (OpenAI's rules for a
    profile built by hand)."""
    known = PROVIDERS.get(profile.name)
    return known.media if known is not None else "openai"


def get_profile(provider: str | Profile) -> Profile:
    """The profile of ``provider`` (a name, or a Profile returned as is). ``"auto"`` is
    not a profile: resolve it with :func:`choose_provider` first."""
    if isinstance(provider, Profile):
        return provider
    return get_provider(provider).profile
