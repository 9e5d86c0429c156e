"""How many of condense's tokens one request may send: the window in the provider's
tokens, turned into condense's.

The provider counts the whole request (:mod:`condense.tokens.request`: the messages, the
tools, the instructions) with its own tokenizer, against its window less the output the
request asks for where the provider counts that too (Chat Completions and Anthropic
Messages refuse prompt + ``max_tokens`` over the window; Responses does not: its
``Refusals.output_limit`` is ``None``). So the room is::

    (window - output) × (1 - margin) / ratio - what is sent besides the messages
                                             - SLACK_PER_MESSAGE × messages

in condense's tokens, where ``ratio`` is what the provider's own count taught
(:class:`~condense.server.windows.LearnedWindows`) or, until it has spoken, the model
family's measured ratio (:mod:`condense.tokens.families`), and the slack allows for a
provider whose framing costs more per message than the 3 tokens condense counts (OpenAI's
older models and many servers: 4 and more).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from condense.exceptions import CondenseError
from condense.providers import PROVIDERS
from condense.server.windows import Learned
from condense.tokens.counting import shared_counter
from condense.tokens.families import Tokenizer, tokenizer_for_model
from condense.tokens.media import Media
from condense.tokens.request import Room, parts_tokens, plan_room

__all__ = ["SLACK_PER_MESSAGE", "Budget", "plan_budget"]

SLACK_PER_MESSAGE = 2
"""Condense tokens kept free per message for a provider's heavier framing."""
LEARNED_MARGIN = 0.1
"""The margin kept below a window learned from an overflow error (not configured)."""


@dataclass(frozen=True, kw_only=True)
class Budget:
    """What one request may send, and how it is counted (see the module docstring)."""

    encoding: str
    media: Media
    tokenizer: Tokenizer
    fixed: int
    """Condense's tokens of what the request sends besides its messages."""
    window: int | None
    output: int
    """The requested output the provider counts against the window (0: not counted)."""
    ratio: float
    """The provider's tokens per condense token planned with."""
    margin: float

    def count(self, messages: Sequence[Any]) -> int:
        """Condense's tokens of the whole request with ``messages`` as its history."""
        try:
            counted = shared_counter(self.encoding, media=self.media).messages(messages)
        except (CondenseError, TypeError, ValueError, AttributeError):
            counted = 0
        return counted + self.fixed

    def room(self, messages: int) -> Room | None:
        """The room of a request of ``messages`` messages, ``None`` without a window."""
        if self.window is None:
            return None
        output = self.output if self.output < self.window else 0
        return plan_room(
            int((self.window - output) * (1 - self.margin)),
            ratio=self.ratio,
            fixed=self.fixed,
            reserve=SLACK_PER_MESSAGE * messages,
            tokenizer=self.tokenizer.name,
        )

    def replace(self, **changes: Any) -> Budget:
        return dataclasses.replace(self, **changes)


def plan_budget(
    *,
    parts: Mapping[str, Any],
    provider: str,
    model: str | None,
    encoding: str,
    media: Media,
    window: int | None,
    output: int,
    learned: Learned | None,
    margin: float,
    window_learned: bool = False,
) -> Budget:
    """The budget of a request to ``provider``'s ``model``: ``parts`` are what it sends
    besides its history (``request_parts``), ``output`` its ``max_tokens``."""
    tokenizer = tokenizer_for_model(model)
    ratio = learned.ratio if learned is not None and learned.ratio is not None else None
    known = PROVIDERS.get(provider)
    counts_output = known is None or known.refusals.output_limit is not None
    return Budget(
        encoding=encoding,
        media=media,
        tokenizer=tokenizer,
        fixed=parts_tokens(parts, encoding=encoding, tokenizer=tokenizer),
        window=window,
        output=output if counts_output else 0,
        ratio=ratio if ratio is not None else tokenizer.ratio,
        margin=max(margin, LEARNED_MARGIN) if window_learned else margin,
    )
