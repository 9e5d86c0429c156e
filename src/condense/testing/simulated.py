"""A stand-in for an LLM summarizer: async, slow like a model, free and deterministic.

``SimulatedLLM(latency=1.0)`` waits ``latency`` seconds per call on the event loop (as a
request to a model would) and answers with the deterministic digest of
:class:`~condense.testing.DeterministicSummarizer`. Use it to size ``--concurrency``
and to benchmark a dataset run without a model: the engine treats it exactly like the
``openai`` summarizer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from condense.testing.summarizers import describe
from condense.types import RawMessage


class SimulatedLLM:
    """An async summarizer that takes ``latency`` seconds per summary."""

    name = "simulated"

    def __init__(self, latency: float = 1.0) -> None:
        self.latency = latency

    def summarize(
        self, messages: Sequence[RawMessage], *, previous: str | None, target_tokens: int
    ) -> str:
        """The same text, at once (for callers without an event loop)."""
        del target_tokens
        return describe(messages, previous)

    async def asummarize(
        self, messages: Sequence[RawMessage], *, previous: str | None, target_tokens: int
    ) -> str:
        await asyncio.sleep(self.latency)
        return self.summarize(messages, previous=previous, target_tokens=target_tokens)
