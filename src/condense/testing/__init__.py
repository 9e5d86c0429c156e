"""Test doubles that ship with condense, for your tests as much as for ours.

- :class:`FakeProvider`: a scriptable OpenAI-compatible server on 127.0.0.1;
- :class:`StrictProvider`: the same server enforcing one provider's rules, refusing bad
  histories and oversized prompts with that provider's real status, body and wording;
- :class:`ProviderCount`: how both count a prompt — their own way (another vocabulary,
  other per-message and tool overheads than condense's count), configurable;
- :class:`DeterministicSummarizer`: a summarizer with no I/O whose output depends only
  on its inputs, and that can be told to fail;
- :class:`SimulatedLLM`: the same text from an async summarizer that takes as long as a
  model would, to size a dataset run's ``concurrency`` without one;
- :func:`~condense.testing.sessions.synthetic_session`: long, realistic agent sessions.

None of them is registered under a summarizer name: pass the object.
"""

from __future__ import annotations

from condense.testing.counting import ProviderCount
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
from condense.testing.simulated import SimulatedLLM
from condense.testing.strict_provider import Refusal, StrictProvider
from condense.testing.summarizers import DeterministicSummarizer, SummaryCall

__all__ = [
    "Delay",
    "DeterministicSummarizer",
    "Disconnect",
    "Empty",
    "Fail",
    "FakeProvider",
    "ProviderCount",
    "RecordedRequest",
    "Refusal",
    "Reply",
    "SimulatedLLM",
    "Step",
    "StrictProvider",
    "SummaryCall",
    "Truncated",
]
