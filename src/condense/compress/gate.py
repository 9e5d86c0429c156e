"""Stage 4, gate: what leaves ``compress`` is valid for the profile and never larger than
what came in.

Under Anthropic's thinking rules the thinking that the edits unbound is removed first
(``condense.reduce.thinking``). Then the output is validated (``InvalidOutputError``
rather than an invalid history) and counted exactly; when it is not smaller than the
repaired input, the repaired input is returned instead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from condense.exceptions import InvalidOutputError
from condense.providers import Profile
from condense.reduce.thinking import Stripped, ThinkingRemoval, unbind_thinking
from condense.tokens import TokenCounter
from condense.types import RawMessage
from condense.validate import check


@dataclass(frozen=True, kw_only=True)
class Gated:
    messages: list[RawMessage]
    tokens: int
    replay_removed: tuple[ThinkingRemoval, ...]
    reverted: bool
    """True when the reduced history was not smaller and the input came back instead."""


@dataclass(kw_only=True)
class InputSize:
    """The tokens of the (repaired) input, as far as they are known: ``at_least`` (a
    part counted exactly) and, only when a candidate output is not below that, the
    exact count (``count()``, called once)."""

    at_least: int
    count: Callable[[], int]
    _exact: int | None = field(default=None, init=False, repr=False)

    def exceeds(self, tokens: int) -> bool:
        """Whether the input holds more than ``tokens``: an output of ``tokens`` is smaller."""
        if tokens < self.at_least:
            return True
        if self._exact is None:
            self._exact = self.count()
        return tokens < self._exact


def gate(
    output: Sequence[RawMessage],
    *,
    repaired: Sequence[RawMessage],
    input_size: InputSize,
    original: Sequence[Any],
    profile: Profile,
    counter: TokenCounter,
    unbind: bool,
    stripped: Stripped,
) -> Gated:
    """Unbind thinking if asked, validate, count, and never return a history that is not
    smaller than the input (``repaired``, whose size ``input_size`` knows)."""
    removed: tuple[ThinkingRemoval, ...] = ()
    messages = list(output)
    if unbind:
        messages, removed = unbind_thinking(messages, original, stripped=stripped)
    problems = check(messages, profile)
    if problems:
        raise InvalidOutputError(profile.name, problems, messages=list(output))
    tokens = counter.messages(messages)
    if not input_size.exceeds(tokens):
        return Gated(messages=list(repaired), tokens=tokens, replay_removed=(), reverted=True)
    return Gated(messages=messages, tokens=tokens, replay_removed=removed, reverted=False)
