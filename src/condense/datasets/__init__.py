"""Compress training trajectories (ShareGPT or OpenAI JSONL) to a token budget, at scale.

Each record is one trajectory. At or under the target it passes through untouched.
Otherwise the first system, human, gpt and tool turns and the last turns are kept, and
as few whole units as needed from the start of the middle are replaced by one summary
— a ``gpt`` turn with ``<tool_call>`` blocks and the ``tool`` turn answering it are one
unit, so no cut ever lands between them (``check_trajectory`` proves it on every
output). The summary is placed so that the record keeps the role order trainers accept
(:mod:`condense.datasets.placement`). When no span can make the record fit, it is kept and flagged
``still_over_limit``; when a summary fails, it is kept and flagged ``failed`` with the
reason. Nothing is repaired, nothing is dropped: lines in = lines out + rejects.

- :func:`compress_dataset` — a file, a directory or stdin; local processes + asyncio,
  or Ray Data (``engine="ray"``); resumable after a crash; atomic outputs; statistics.
- :class:`RecordProcessor` — the per-record function both engines run.
- :func:`check_trajectory` — the tool-call/response pairing checker.

Importing this package loads no tokenizer and no engine.
"""

from __future__ import annotations

from condense.datasets.check import Problem, check_trajectory
from condense.datasets.options import DEFAULT_NOTICE, DatasetOptions
from condense.datasets.record import RecordProcessor, RecordResult, Status, SummaryRequest
from condense.datasets.runner import ENGINES, compress_dataset
from condense.datasets.tokenizer import Tokenizer, TokenizerSpec, load_tokenizer, resolve_tokenizer

__all__ = [
    "DEFAULT_NOTICE",
    "ENGINES",
    "DatasetOptions",
    "Problem",
    "RecordProcessor",
    "RecordResult",
    "Status",
    "SummaryRequest",
    "Tokenizer",
    "TokenizerSpec",
    "check_trajectory",
    "compress_dataset",
    "load_tokenizer",
    "resolve_tokenizer",
]
