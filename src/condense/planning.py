"""Planning over units: what is protected, what is reducible, and which span to summarize.

Planning works on cheap token estimates (``condense.tokens.quick_estimate``, which counts
replayed reasoning like the exact count); only what is kept is counted exactly later, so
the cost of planning grows with the number of messages, not with their size.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from condense.reduce.mask import MIN_MASKABLE_CHARS
from condense.types import RawMessage
from condense.units import Unit, UnitKind, carries_replay

PLACEHOLDER_TOKENS = 60
"""A generous estimate of a masking placeholder's size."""


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
    pinned: Collection[int] = (),
) -> Layout:
    """Protect system units, the first and latest user asks, the latest assistant reply,
    the units in ``pinned`` (the running tool loop's exchange) and the longest suffix of
    units that fits in ``tail_tokens``."""
    protected: set[int] = {i for i, u in enumerate(units) if u.kind is UnitKind.SYSTEM}
    protected.update(pinned)
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


def running_exchange(units: Sequence[Unit], running_turn: int | None) -> frozenset[int]:
    """The unit holding ``running_turn`` (the assistant turn of a running tool loop, see
    ``condense.validate.replay.running_loop_turn``), as a set of unit indices to pin."""
    if running_turn is None:
        return frozenset()
    return frozenset(i for i, u in enumerate(units) if u.start <= running_turn < u.stop)


def cheap_targets(messages: Sequence[RawMessage], unit: Unit) -> tuple[list[int], list[int]]:
    """``(tool results, assistant messages whose arguments may be shrunk)`` of ``unit``.

    Tool results are the client's own input and may be masked; an assistant message that
    carries replay state is never edited, so its arguments are never shrunk."""
    if unit.kind is not UnitKind.TOOL_EXCHANGE:
        return [], []
    results: list[int] = []
    assistants: list[int] = []
    for index in range(unit.start, unit.stop):
        message = messages[index]
        if message.get("role") == "tool":
            results.append(index)
        elif message.get("tool_calls") and not carries_replay(message):
            assistants.append(index)
    return results, assistants


def cheap_savings(messages: Sequence[RawMessage], unit: Unit, estimate: Sequence[int]) -> int:
    """What masking and argument shrinking could save on ``unit``, roughly."""
    results, assistants = cheap_targets(messages, unit)
    saved = 0
    for index in results:
        content = messages[index].get("content")
        if isinstance(content, str) and len(content) >= MIN_MASKABLE_CHARS:
            saved += max(0, estimate[index] - PLACEHOLDER_TOKENS)
    for index in assistants:
        for call in messages[index].get("tool_calls") or ():
            arguments = call["function"]["arguments"]
            if len(arguments) > 2000:
                saved += (len(arguments) - 1000) // 5
    return saved
