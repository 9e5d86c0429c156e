"""Summarizers: turn a span of messages into text, by name or by object.

``get_summarizer("extractive")`` (the default, LLM-free) and ``get_summarizer("openai",
model=...)`` (any OpenAI-compatible endpoint, falls back to extractive). Implementations
are imported on first use, so importing this package costs nothing. Test doubles live in
:mod:`condense.testing`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from condense._lazy import lazy_names as _lazy_names
from condense.summarizers.base import Summarizer
from condense.summarizers.outcome import (
    ReportingSummarizer,
    SummaryOutcome,
    summarize_with_report,
)
from condense.summarizers.registry import (
    get_summarizer,
    known_summarizers,
    register_summarizer,
)

if TYPE_CHECKING:
    from condense.summarizers.extractive import ExtractiveSummarizer
    from condense.summarizers.openai_compat import OpenAISummarizer

__all__ = [
    "ExtractiveSummarizer",
    "OpenAISummarizer",
    "ReportingSummarizer",
    "Summarizer",
    "SummaryOutcome",
    "get_summarizer",
    "known_summarizers",
    "register_summarizer",
    "summarize_with_report",
]

_LAZY = {
    "ExtractiveSummarizer": "condense.summarizers.extractive",
    "OpenAISummarizer": "condense.summarizers.openai_compat",
}


__getattr__, __dir__ = _lazy_names(globals(), _LAZY)
