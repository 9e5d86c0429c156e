"""Context windows: how many prompt tokens a model accepts.

A window comes, first match wins, from the route's configuration (``--context-window`` or
the config file), from what an overflow error of that upstream stated for that model
(:class:`LearnedWindows`), or from :func:`builtin_window`, a table of well-known models.
Unknown models have no window: their requests are never compressed up front, and the
first overflow error teaches the proxy their window.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass

from condense.server.routing import model_family

__all__ = ["BUILTIN_WINDOWS", "Learned", "LearnedWindows", "builtin_window"]

# Longest prefix wins. Prompt-token limits as the providers document them (mid-2026).
BUILTIN_WINDOWS: Mapping[str, int] = {
    "claude": 200_000,
    "gpt-5": 272_000,
    "gpt-4.1": 1_047_576,
    "gpt-4o": 128_000,
    "gpt-4-turbo": 128_000,
    "gpt-4-32k": 32_768,
    "gpt-4": 8_192,
    "gpt-3.5-turbo": 16_385,
    "o1": 200_000,
    "o3": 200_000,
    "o4": 200_000,
    "codex-mini": 200_000,
    "gemini-1.5-pro": 2_097_152,
    "gemini": 1_048_576,
    "mistral-large": 131_072,
    "mistral-medium": 131_072,
    "mistral-small": 131_072,
    "magistral": 131_072,
    "devstral": 131_072,
    "codestral": 262_144,
    "deepseek": 131_072,
    "kimi-k2": 262_144,
    "moonshot-v1-8k": 8_192,
    "moonshot-v1-32k": 32_768,
    "moonshot-v1-128k": 131_072,
    "minimax-m1": 1_000_000,
    "minimax-m2": 204_800,
    "qwen3-coder": 262_144,
    "glm-4.6": 200_000,
    "glm-4.5": 131_072,
    "grok-4": 256_000,
    "grok-code": 256_000,
}
_ONE_MILLION_BETA = "context-1m"  # anthropic-beta flag that opens Claude's 1M window


def builtin_window(model: str | None, *, anthropic_beta: str | None = None) -> int | None:
    """The window of a well-known ``model`` (``None`` when unknown)."""
    family = model_family(model)
    if not family:
        return None
    if family.startswith("claude") and anthropic_beta and _ONE_MILLION_BETA in anthropic_beta:
        return 1_000_000
    best = max(
        (prefix for prefix in BUILTIN_WINDOWS if family.startswith(prefix)), key=len, default=None
    )
    return BUILTIN_WINDOWS[best] if best is not None else None


@dataclass(frozen=True, kw_only=True)
class Learned:
    """What an overflow error said: the window, and how many of the provider's tokens one
    of condense's tokens was worth in that request (``ratio`` ≥ 1)."""

    window: int
    ratio: float


class LearnedWindows:
    """Windows stated by overflow errors, per (upstream, model). Thread-safe, bounded."""

    def __init__(self, *, maxsize: int = 1024) -> None:
        self._known: dict[tuple[str, str], Learned] = {}
        self._lock = threading.Lock()
        self._maxsize = maxsize

    def get(self, upstream: str, model: str | None) -> Learned | None:
        with self._lock:
            return self._known.get((upstream, model_family(model)))

    def learn(self, upstream: str, model: str | None, *, window: int, ratio: float = 1.0) -> None:
        with self._lock:
            if len(self._known) >= self._maxsize:
                self._known.pop(next(iter(self._known)))
            self._known[(upstream, model_family(model))] = Learned(
                window=window, ratio=max(1.0, ratio)
            )
