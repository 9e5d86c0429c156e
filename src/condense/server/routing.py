"""Which provider's rules a proxied request is checked against: one function, one place.

:func:`choose_provider` is the proxy's only provider decision; it asks
:func:`condense.providers.choose_provider` with what a request tells — its API (the
path), its model and the upstream it goes to — and returns a profile name.
"""

from __future__ import annotations

from condense.providers import AUTO, PROFILES
from condense.providers import choose_provider as choose_profile
from condense.server.apis import api_for_path

__all__ = ["AUTO", "choose_provider", "known_providers"]


def choose_provider(path: str, model: str | None, upstream_url: str, configured: str) -> str:
    """The profile to validate, repair and compress a request with.

    ``configured`` (a profile name, from ``--provider`` or the config file) wins unless it
    is ``"auto"``. Then, as everywhere in condense, the API's own format (``/v1/messages``
    → ``anthropic``, ``/v1/responses`` → ``responses``), the model name (read in the
    library's one model table, routing prefixes and all) and the upstream's host decide.
    A Chat Completions request that none of them places goes to an OpenAI-compatible
    server: ``openai``, whose rules every such server enforces (the structural ``strict``
    would rewrite requests such a server accepts).
    """
    if configured.lower() != AUTO:
        return configured.lower()
    api = api_for_path(path)
    choice = choose_profile(
        AUTO,
        format=api.format if api is not None else None,
        model=model,
        upstream=upstream_url,
    )
    return "openai" if choice.name == "strict" else choice.name


def known_providers() -> list[str]:
    """The names ``choose_provider`` accepts as ``configured``."""
    return [AUTO, *sorted(PROFILES)]
