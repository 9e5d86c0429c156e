"""Test doubles that ship with condense, for your tests as much as for ours.

- :class:`FakeProvider`: a scriptable OpenAI-compatible server on 127.0.0.1;
- :class:`StrictProvider`: the same server enforcing one provider's rules, refusing bad
  histories and oversized prompts with that provider's real status, body and wording;
- :class:`~condense.summarizers.DeterministicSummarizer`: a summarizer with no I/O whose
  output depends only on its inputs, and that can be told to fail.
"""

from __future__ import annotations

from condense.summarizers.deterministic import DeterministicSummarizer
from condense.testing.fake_provider import (
    Delay,
    Disconnect,
    Empty,
    Fail,
    FakeProvider,
    RecordedRequest,
    Reply,
    Step,
    Truncated,
)
from condense.testing.strict_provider import Refusal, StrictProvider

__all__ = [
    "Delay",
    "DeterministicSummarizer",
    "Disconnect",
    "Empty",
    "Fail",
    "FakeProvider",
    "RecordedRequest",
    "Refusal",
    "Reply",
    "Step",
    "StrictProvider",
    "Truncated",
]
