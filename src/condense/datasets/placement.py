"""Where the summary goes so that a compressed record is still one a trainer accepts.

Trainers read a trajectory as an optional system turn, then prompts and responses
strictly alternating, ending on a response. LLaMA-Factory's ShareGPT and OpenAI
converters (``src/llamafactory/data/converter.py``) accept a human or an observation
(tool) turn in every prompt slot and a gpt turn (plain or calling) in every response
slot, and skip any sample that breaks the alternation or has an odd number of turns;
a tool turn answers the calling gpt turn right before it. Replacing a span of turns by
one human turn keeps that order only where the span sits between a response and a
response, so the placement is chosen per record, from the turns around the span:

- ``turn`` — the summary is a turn of its own (the options' role) where that role may
  follow the turn before the span and precede the turn after it;
- ``joined_to_next`` — else it opens the human turn right after the span (the kept
  ask stays word for word after it, as ``compress`` joins summaries);
- ``joined_to_previous`` — else it closes the human turn right before the span;
- ``system`` — with ``summary_role="system"``: it closes the leading system turn (or
  becomes one), the only place a system turn may stand;
- ``left_out`` — no room for any text: the span simply goes, where the turns around it
  may follow each other.

When no placement keeps the order around the span the planner chose,
:func:`trainable_span` moves the span by whole units: it replaces more of the middle,
or keeps more of its start while the kept part still leaves the same room, or gives up
the end of the protected head (never the first ask), and last the start of the
protected tail (never its last unit). In a run of tool calls no human turn may stand
after the first tool turn, so there the span begins right after the first ask and the
summary closes it. When nothing works the record is kept as it was and flagged.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from enum import StrEnum

from condense.compress.plan import Plan
from condense.units import UnitKind

PROMPTS = frozenset({"human", "tool"})
"""The roles of a prompt slot (LLaMA-Factory's ``odd_tags``: user and observation)."""


class Placement(StrEnum):
    TURN = "turn"
    JOINED_TO_NEXT = "joined_to_next"
    JOINED_TO_PREVIOUS = "joined_to_previous"
    SYSTEM = "system"
    LEFT_OUT = "left_out"


def turn_kinds(roles: Sequence[str]) -> list[str]:
    """Each turn's role, a gpt turn right before a tool turn read as ``calling``."""
    kinds = list(roles)
    for index in range(len(kinds) - 1):
        if kinds[index] == "gpt" and kinds[index + 1] == "tool":
            kinds[index] = "calling"
    return kinds


def may_follow(before: str | None, after: str | None) -> bool:
    """Whether a turn of kind ``after`` may come right after one of kind ``before``
    (``None``: the start of the record before, its end after)."""
    if after is None:
        return before in ("gpt", "calling")  # a trajectory ends on a response
    if after == "system":
        return before is None
    if before is None or before == "system":
        return after == "human"
    if before == "calling":
        return after == "tool"
    if after == "tool":
        return False  # a tool turn answers the calling turn right before it
    return (before in PROMPTS) != (after in PROMPTS)


def placements(kinds: Sequence[str], turns: range, role: str) -> list[Placement]:
    """The placements of a summary of ``role`` (``human``, ``gpt`` or ``system``) that
    keep the order when ``turns`` are replaced, best first; ``left_out`` last, when the
    span may simply go."""
    before = kinds[turns.start - 1] if turns.start > 0 else None
    after = kinds[turns.stop] if turns.stop < len(kinds) else None
    found: list[Placement] = []
    if role != "system" and may_follow(before, role) and may_follow(role, after):
        found.append(Placement.TURN)
    if role == "human" and after == "human" and may_follow(before, "human"):
        found.append(Placement.JOINED_TO_NEXT)
    if role == "human" and before == "human" and may_follow("human", after):
        found.append(Placement.JOINED_TO_PREVIOUS)
    if may_follow(before, after):
        if role == "system" and (kinds[0] == "system" or may_follow("system", kinds[0])):
            found.append(Placement.SYSTEM)
        found.append(Placement.LEFT_OUT)
    return found


def trainable_span(
    plan: Plan,
    span: range,
    kinds: Sequence[str],
    *,
    role: str,
    slack: int,
    unit_tokens: Callable[[int], int],
    text_fits: bool = True,
) -> tuple[range, list[Placement]] | None:
    """The span of units to replace (``span``, the planner's, when a summary can be
    placed there) and its placements; ``None`` when no span near it keeps the order.

    The first candidate (see :func:`_candidates`) where a summary can stand wins; only
    when none has such a place is a span that may merely be left out taken, and with
    ``text_fits=False`` (no room for any text) only such a span. A candidate that keeps
    units of ``span`` must leave the same room: they may add ``slack`` tokens at most
    (``unit_tokens(i)`` counts unit ``i``, only for a candidate that keeps the order)."""
    silent: tuple[range, list[Placement]] | None = None
    too_far = len(plan.units)  # keeping units from here on exceeds the slack
    for candidate, kept in _candidates(plan, span, kinds):
        if kept.stop > too_far:
            continue
        found = placements(kinds, plan.messages_of(candidate), role)
        written = text_fits and bool(found) and found[0] is not Placement.LEFT_OUT
        if not written and (silent is not None or Placement.LEFT_OUT not in found):
            continue
        if kept and (over := _beyond(kept, slack, unit_tokens)) is not None:
            too_far = over
            continue
        if written:
            return candidate, found
        if not text_fits:
            return candidate, [Placement.LEFT_OUT]
        silent = candidate, found
    return silent


def _beyond(units: range, slack: int, unit_tokens: Callable[[int], int]) -> int | None:
    """The first of ``units`` by which they add up to more than ``slack`` (counted in
    order, none past it), or ``None`` when they all fit in it."""
    for unit in units:
        slack -= unit_tokens(unit)
        if slack < 0:
            return unit
    return None


def _candidates(plan: Plan, span: range, kinds: Sequence[str]) -> Iterator[tuple[range, range]]:
    """Spans to try, each with the units of ``span`` it keeps: ``span``, then spans that
    replace more of the middle after it, then spans that keep more of its start, then
    spans that begin earlier, in the protected head after the first ask; last, those
    spans reaching into the protected tail (never its last unit: the record still ends
    on its final response). Whether a span keeps the order depends only on the kinds of
    the turns around it, so of the ends with one kind after them only the first is
    tried."""
    end = span.stop
    while end < plan.layout.tail_start and plan.layout.reducible(end):
        end += 1  # the reducible units right after the span
    ends = _first_of_each_kind(plan, range(span.stop, end + 1), kinds)
    into_tail = _first_of_each_kind(plan, range(end + 1, len(plan.units)), kinds)
    first_ask = next(
        (i for i, unit in enumerate(plan.units) if unit.kind is UnitKind.USER), span.start
    )
    earlier = []
    for start in range(span.start - 1, first_ask, -1):
        if plan.units[start].kind is UnitKind.SYSTEM:
            break
        earlier.append(start)
    none = range(0)
    for stop in ends:
        yield range(span.start, stop), none
    for start in range(span.start + 1, span.stop):
        for stop in ends:
            yield range(start, stop), range(span.start, start)
    for start in earlier:
        for stop in ends:
            yield range(start, stop), none
    for start in (span.start, *earlier):
        for stop in into_tail:
            yield range(start, stop), none


def _first_of_each_kind(plan: Plan, stops: range, kinds: Sequence[str]) -> list[int]:
    """Of ``stops`` (unit indices a span may end before), the first followed by each
    kind of turn (or by the end of the record), in order."""
    seen: set[str | None] = set()
    first: list[int] = []
    for stop in stops:
        after = kinds[plan.units[stop].start] if stop < len(plan.units) else None
        if after not in seen:
            seen.add(after)
            first.append(stop)
    return first
