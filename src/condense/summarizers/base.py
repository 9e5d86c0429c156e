"""The summarizer protocol: turn a span of messages into text.

A summarizer is given a contiguous span of whole units (never half a tool exchange), the
previous condense summary if there is one (so it can fold it in instead of summarizing a
summary), and a target size in tokens. It returns plain text; condense wraps it into a
message and places it so the profile's role-order rules hold.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from condense.types import RawMessage


@runtime_checkable
class Summarizer(Protocol):
    """Anything with a ``name`` and a ``summarize`` method of this signature."""

    name: str

    def summarize(
        self,
        messages: Sequence[RawMessage],
        *,
        previous: str | None,
        target_tokens: int,
    ) -> str:
        """Return a summary of ``messages`` of about ``target_tokens`` tokens or fewer.

        ``previous`` is the text of an earlier summary that the span follows; the result
        must carry its facts forward. Implementations must not mutate ``messages``.
        Raise any exception on failure; callers decide whether to fall back.
        """
        ...
