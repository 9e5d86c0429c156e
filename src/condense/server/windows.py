"""Context windows: how many prompt tokens a model accepts.

A window comes, first match wins, from the route's configuration (``--context-window`` or
the config file), from what an overflow error of that upstream stated for that model
(:class:`LearnedWindows`), or from :func:`builtin_window`, the table of well-known models in
:mod:`condense.tokens.families`.
Unknown models have no window: their requests are never compressed up front, and the
first overflow error teaches the proxy their window.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from condense.server.routing import model_family
from condense.tokens.families import context_window

__all__ = ["Learned", "LearnedWindows", "builtin_window"]


def builtin_window(model: str | None, *, anthropic_beta: str | None = None) -> int | None:
    """The window of a well-known ``model`` (``None`` when unknown), from the model table
    the library shares (:func:`condense.tokens.families.context_window`)."""
    return context_window(model, anthropic_beta=anthropic_beta)


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
