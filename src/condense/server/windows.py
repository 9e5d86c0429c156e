"""Context windows and the provider's own count: what the proxy plans each request with.

A window comes, first match wins, from the route's configuration (``--context-window`` or
the config file), from what an overflow error of that upstream stated for that model
(:class:`LearnedWindows`), or from the library's table of well-known models
(:func:`condense.tokens.context_window`). Unknown models have no window: their requests are never
compressed up front, and the first overflow error teaches the proxy their window.

The provider counts with its own tokenizer, so condense's count of a request is worth
``ratio`` of the provider's tokens. Before anything is learned the ratio is the model
family's measured one (``families``); then :class:`LearnedWindows` keeps what the
provider itself said, per upstream and model: the ``usage`` of every answer (and of
Anthropic's ``count_tokens``), and the token figures of an overflow error, each against
condense's count of the very request it describes. The ratio planned with is the highest
of the last few observations, so a request denser than the last one still fits.
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from dataclasses import dataclass

from condense.tokens.families import bare_model

__all__ = ["Learned", "LearnedWindows"]

RECENT = 8
"""How many of the provider's counts are remembered per upstream and model."""


@dataclass(frozen=True, kw_only=True)
class Learned:
    """What one upstream said about one model: the window an overflow error stated
    (``None``: none did), and how many of the provider's tokens one of condense's was
    worth (the highest of the recent observations, at least 1; ``None``: not yet seen)."""

    window: int | None
    ratio: float | None
    observations: int


class _Entry:
    __slots__ = ("ratios", "seen", "window")

    def __init__(self) -> None:
        self.window: int | None = None
        self.ratios: deque[float] = deque(maxlen=RECENT)
        self.seen = 0


class LearnedWindows:
    """What the provider's own words taught, per (upstream, model): windows from overflow
    errors and count ratios from ``usage``, ``count_tokens`` and overflow errors.
    Thread-safe; bounded to ``maxsize`` pairs (least recently used go first)."""

    def __init__(self, *, maxsize: int = 1024) -> None:
        self._known: OrderedDict[tuple[str, str], _Entry] = OrderedDict()
        self._lock = threading.Lock()
        self._maxsize = maxsize

    def get(self, upstream: str, model: str | None) -> Learned | None:
        with self._lock:
            entry = self._known.get((upstream, bare_model(model)))
            if entry is None:
                return None
            ratio = max(1.0, max(entry.ratios)) if entry.ratios else None
            return Learned(window=entry.window, ratio=ratio, observations=entry.seen)

    def learn(
        self,
        upstream: str,
        model: str | None,
        *,
        window: int | None = None,
        ratio: float | None = None,
        ceiling: int | None = None,
    ) -> None:
        """Remember a window stated by the provider, a ``ceiling`` the window must be below
        (a refusal for size that stated no window), and/or one observed count ratio (the
        provider's tokens over condense's, for the same request)."""
        key = (upstream, bare_model(model))
        with self._lock:
            entry = self._known.pop(key, None) or _Entry()
            self._known[key] = entry
            if window is not None and window > 0:
                entry.window = window
            if ceiling is not None and ceiling > 0:
                entry.window = min(entry.window or ceiling, ceiling)
            if ratio is not None and ratio > 0:
                entry.ratios.append(ratio)
                entry.seen += 1
            while len(self._known) > self._maxsize:
                self._known.popitem(last=False)

    def observe(self, upstream: str, model: str | None, *, theirs: int, ours: int) -> None:
        """Remember the provider's count ``theirs`` of a request condense counted ``ours``."""
        if theirs > 0 and ours > 0:
            self.learn(upstream, model, ratio=theirs / ours)
