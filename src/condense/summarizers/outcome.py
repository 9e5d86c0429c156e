"""What a summary call produced, including whether it had to fall back.

``Summarizer.summarize`` returns only text. A summarizer that can fail over to another
(the ``openai`` one falls back to ``extractive``) also offers
``summarize_with_report(...) -> SummaryOutcome`` so the caller can record what happened;
:func:`summarize_with_report` calls it when present and wraps plain summarizers otherwise,
so the compress engine needs one code path for both.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from condense.summarizers.base import Summarizer
from condense.types import RawMessage


@dataclass(frozen=True, kw_only=True)
class SummaryOutcome:
    """The text of a summary and how it was obtained.

    ``summarizer`` names the summarizer whose text this is (``"extractive"`` after a
    fallback). ``fell_back`` tells whether the requested summarizer failed and
    ``reason`` why (``None`` when it did not). ``attempts`` counts the tries of the
    requested summarizer (HTTP requests, for ``openai``); ``failures`` holds one line per
    failed try, oldest first, and may be non-empty without a fallback when a retry worked.
    """

    text: str
    summarizer: str
    fell_back: bool = False
    reason: str | None = None
    attempts: int = 1
    failures: tuple[str, ...] = ()


@runtime_checkable
class ReportingSummarizer(Summarizer, Protocol):
    """A summarizer that can also say how its summary was obtained."""

    def summarize_with_report(
        self,
        messages: Sequence[RawMessage],
        *,
        previous: str | None,
        target_tokens: int,
    ) -> SummaryOutcome:
        """Like ``summarize``, but never raises for a failure it can fall back from."""
        ...


def summarize_with_report(
    summarizer: Summarizer,
    messages: Sequence[RawMessage],
    *,
    previous: str | None,
    target_tokens: int,
) -> SummaryOutcome:
    """Summarize with any summarizer and report how; plain summarizers never fall back.

    Exceptions of a plain summarizer propagate: whether to fall back is the caller's call.
    """
    if isinstance(summarizer, ReportingSummarizer):
        return summarizer.summarize_with_report(
            messages, previous=previous, target_tokens=target_tokens
        )
    text = summarizer.summarize(messages, previous=previous, target_tokens=target_tokens)
    return SummaryOutcome(text=text, summarizer=summarizer.name)
