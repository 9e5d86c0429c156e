"""Which provider's rules a proxied request is checked against: one function, one place.

:func:`choose_provider` is the proxy's only provider decision. It returns the name of a
validator profile (``condense.PROFILES``); when condense's ``providers`` package lands,
this is the one function to rewire.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from condense.profiles import PROFILES
from condense.server.apis import api_for_path

__all__ = ["AUTO", "choose_provider", "model_family"]

AUTO = "auto"

# Model-name prefixes (lower case, after any "vendor/" routing prefix) → profile.
_MODEL_PREFIXES: tuple[tuple[str, str], ...] = (
    ("claude", "anthropic"),
    ("gemini", "gemini"),
    ("mistral", "mistral"),
    ("magistral", "mistral"),
    ("ministral", "mistral"),
    ("codestral", "mistral"),
    ("devstral", "mistral"),
    ("pixtral", "mistral"),
    ("open-mistral", "mistral"),
    ("open-mixtral", "mistral"),
)
# Upstream hosts (suffix match) → profile, for chat requests whose model says nothing.
_HOSTS: tuple[tuple[str, str], ...] = (
    ("api.anthropic.com", "anthropic"),
    ("generativelanguage.googleapis.com", "gemini"),
    ("api.mistral.ai", "mistral"),
)


def model_family(model: str | None) -> str:
    """``model`` lower-cased without routing prefixes (``openrouter/anthropic/claude-x``,
    Bedrock's ``us.anthropic.claude-x`` → ``claude-x``)."""
    name = (model or "").strip().lower().rsplit("/", 1)[-1]
    for vendor in ("anthropic.", "google.", "mistral.", "openai."):
        if vendor in name:
            name = name.split(vendor, 1)[1]
    return name


def choose_provider(path: str, model: str | None, upstream_url: str, configured: str) -> str:
    """The profile to validate, repair and compress a request with.

    ``configured`` (a profile name, from ``--provider`` or the config file) wins unless it
    is ``"auto"``. Then the path decides for the providers' own APIs (``/v1/messages`` →
    ``anthropic``, ``/v1/responses`` → ``responses``); for Chat Completions the model name
    (``claude-…``, ``gemini-…``, ``mistral-…``/``codestral-…``), then the upstream host
    (Anthropic's, Google's and Mistral's OpenAI-compatible endpoints); anything else is an
    OpenAI-compatible server (OpenAI, vLLM, llama.cpp, DeepSeek, Kimi, MiniMax, …):
    ``openai``, whose rules every such server enforces and which keeps
    ``reasoning_content``.
    """
    if configured != AUTO:
        return configured.lower()
    api = api_for_path(path)
    if api is not None and api.format in ("anthropic", "responses"):
        return api.format
    family = model_family(model)
    for prefix, profile in _MODEL_PREFIXES:
        if family.startswith(prefix):
            return profile
    host = (urlsplit(upstream_url).hostname or "").lower()
    for suffix, profile in _HOSTS:
        if host == suffix or host.endswith("." + suffix):
            return profile
    return "openai"


def known_providers() -> list[str]:
    """The names ``choose_provider`` accepts as ``configured``."""
    return [AUTO, *sorted(PROFILES)]
