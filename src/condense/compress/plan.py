"""Stage 1, plan: which units are protected, which are reducible, in what order.

Protected like the latest user ask: system units, the first and the latest user asks,
the latest assistant reply, the newest tool exchange (its results may not have been read
yet), the running tool loop's exchange and the longest suffix of units that fits in
``tail_tokens``. Everything else is reducible, oldest first. A plan is a frozen value made
once per call; the later stages only read it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from condense.types import RawMessage
from condense.units import Unit, UnitKind, carries_replay


@dataclass(frozen=True, kw_only=True)
class Layout:
    """Which units are protected and where the tail starts (indices into the unit list)."""

    protected: frozenset[int]
    tail_start: int

    def reducible(self, unit_index: int) -> bool:
        return unit_index < self.tail_start and unit_index not in self.protected


@dataclass(frozen=True, kw_only=True)
class Plan:
    """The units of the repaired history, the layout, and the reducible units oldest first."""

    units: tuple[Unit, ...]
    layout: Layout
    order: tuple[int, ...]

    def unit_of(self, message_index: int) -> int:
        """The index of the unit holding ``message_index`` (binary search)."""
        low, high = 0, len(self.units) - 1
        while low < high:
            mid = (low + high + 1) // 2
            if self.units[mid].start <= message_index:
                low = mid
            else:
                high = mid - 1
        return low

    def spans(self, k: int) -> list[range]:
        """The first ``k`` reducible units as contiguous unit ranges, oldest first."""
        spans: list[range] = []
        for unit in self.order[:k]:
            if spans and spans[-1].stop == unit:
                spans[-1] = range(spans[-1].start, unit + 1)
            else:
                spans.append(range(unit, unit + 1))
        return spans

    def messages_of(self, span: range) -> range:
        """The message indices a unit range covers."""
        return range(self.units[span.start].start, self.units[span.stop - 1].stop)


def make_plan(
    units: Sequence[Unit],
    *,
    tail_tokens: int,
    unit_tokens: Callable[[Unit], int],
    pinned: Collection[int] = (),
) -> Plan:
    """The :class:`Plan` for ``units`` (see the module docstring)."""
    plan_layout = layout(units, tail_tokens=tail_tokens, unit_tokens=unit_tokens, pinned=pinned)
    order = tuple(i for run in reducible_runs(units, plan_layout) for i in run)
    return Plan(units=tuple(units), layout=plan_layout, order=order)


def layout(
    units: Sequence[Unit],
    *,
    tail_tokens: int,
    unit_tokens: Callable[[Unit], int],
    pinned: Collection[int] = (),
) -> Layout:
    """Protect system units, the first and latest user asks, the latest assistant reply,
    the newest tool exchange, the units in ``pinned`` (the running tool loop's exchange)
    and the longest suffix of units that fits in ``tail_tokens``."""
    protected: set[int] = {i for i, u in enumerate(units) if u.kind is UnitKind.SYSTEM}
    protected.update(pinned)
    for kinds, which in (
        ((UnitKind.USER,), (0, -1)),
        ((UnitKind.REPLY,), (-1,)),
        ((UnitKind.TOOL_EXCHANGE,), (-1,)),
    ):
        found = [i for i, u in enumerate(units) if u.kind in kinds]
        if found:
            protected.update(found[w] for w in which)
    tail_start = len(units)
    spent = 0
    while tail_start > 0:
        cost = unit_tokens(units[tail_start - 1])
        if spent + cost > tail_tokens:
            break
        spent += cost
        tail_start -= 1
    return Layout(protected=frozenset(protected), tail_start=tail_start)


def first_kept(count: int, cost: Callable[[int], int], room: int) -> int:
    """The span planner both paths share: the smallest ``k`` in ``[0, count]`` such that
    the items ``k..count-1`` (reducible units oldest first, or a trajectory's middle
    blocks) cost at most ``room`` together; items ``0..k-1`` are the span to replace.
    Walks back from the newest and calls ``cost`` only for the items it keeps, plus one."""
    k = count
    while k > 0 and (spent := cost(k - 1)) <= room:
        room -= spent
        k -= 1
    return k


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


def tool_results(messages: Sequence[RawMessage], unit: Unit) -> list[int]:
    """The tool results of ``unit`` (the client's own input: they may be replaced)."""
    if unit.kind is not UnitKind.TOOL_EXCHANGE:
        return []
    return [i for i in range(unit.start, unit.stop) if messages[i].get("role") == "tool"]


def shrinkable_calls(messages: Sequence[RawMessage], unit: Unit) -> list[int]:
    """The assistant messages of ``unit`` whose arguments may be shrunk: an assistant
    message that carries replay state is never edited."""
    if unit.kind is not UnitKind.TOOL_EXCHANGE:
        return []
    return [
        i
        for i in range(unit.start, unit.stop)
        if messages[i].get("tool_calls") and not carries_replay(messages[i])
    ]
