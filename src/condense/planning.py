"""Planning over units: what is protected, what is reducible, and which span to summarize.

Planning works on cheap token estimates; only what is kept is counted exactly later, so
the cost of planning grows with the number of messages, not with their size.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from condense.reduce.mask import MIN_MASKABLE_CHARS
from condense.tokens.pieces import MEDIA_PART_TOKENS
from condense.types import RawMessage
from condense.units import Unit, UnitKind

PLACEHOLDER_TOKENS = 60
"""A generous estimate of a masking placeholder's size."""


def quick_estimate(message: Mapping[str, Any]) -> int:
    """A very cheap token estimate of a canonical message, for planning only: ~4 ASCII
    characters or ~3 UTF-8 bytes of other text per token, plus framing. The plan is
    verified with the real tokenizer afterwards."""
    total = 4
    content = message.get("content")
    if type(content) is str:
        total += _text_estimate(content)
    elif isinstance(content, list):
        for part in content:
            text = part.get("text") if isinstance(part, dict) else None
            total += _text_estimate(text) if isinstance(text, str) else MEDIA_PART_TOKENS
    for call in message.get("tool_calls") or ():
        function = call["function"]
        total += 4 + _text_estimate(function["arguments"]) + len(function["name"]) // 3
    return total


def _text_estimate(text: str) -> int:
    return len(text) >> 2 if text.isascii() else len(text.encode("utf-8", "replace")) // 3


@dataclass(frozen=True, kw_only=True)
class Layout:
    """Which units are protected and where the tail starts (indices into the unit list)."""

    protected: frozenset[int]
    tail_start: int

    def reducible(self, unit_index: int) -> bool:
        return unit_index < self.tail_start and unit_index not in self.protected


def layout(
    units: Sequence[Unit],
    *,
    tail_tokens: int,
    unit_tokens: Callable[[Unit], int],
) -> Layout:
    """Protect system units, the first and latest user asks, the latest assistant reply
    and the longest suffix of units that fits in ``tail_tokens``."""
    protected: set[int] = {i for i, u in enumerate(units) if u.kind is UnitKind.SYSTEM}
    users = [i for i, u in enumerate(units) if u.kind is UnitKind.USER]
    if users:
        protected.update((users[0], users[-1]))
    replies = [i for i, u in enumerate(units) if u.kind is UnitKind.REPLY]
    if replies:
        protected.add(replies[-1])
    tail_start = len(units)
    spent = 0
    while tail_start > 0:
        cost = unit_tokens(units[tail_start - 1])
        if spent + cost > tail_tokens:
            break
        spent += cost
        tail_start -= 1
    return Layout(protected=frozenset(protected), tail_start=tail_start)


def reducible_runs(units: Sequence[Unit], plan: Layout) -> list[range]:
    """Maximal runs of consecutive reducible units, oldest first."""
    runs: list[range] = []
    start: int | None = None
    for index in range(len(units) + 1):
        if index < len(units) and plan.reducible(index):
            if start is None:
                start = index
        elif start is not None:
            runs.append(range(start, index))
            start = None
    return runs


def cheap_savings(messages: Sequence[RawMessage], unit: Unit, estimate: Sequence[int]) -> int:
    """What masking and argument shrinking could save on ``unit``, roughly."""
    if unit.kind is not UnitKind.TOOL_EXCHANGE:
        return 0
    saved = 0
    for index in range(unit.start + 1, unit.stop):
        content = messages[index].get("content")
        if isinstance(content, str) and len(content) >= MIN_MASKABLE_CHARS:
            saved += max(0, estimate[index] - PLACEHOLDER_TOKENS)
    for call in messages[unit.start].get("tool_calls") or ():
        arguments = call["function"]["arguments"]
        if len(arguments) > 2000:
            saved += (len(arguments) - 1000) // 5
    return saved
