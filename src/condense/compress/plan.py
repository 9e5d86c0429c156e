"""Stage 1, plan: how much each unit may be reduced, in what order, and which units to
replace: one mechanism, the protection passed in as a policy.

Units fall in three tiers (``provider-rules.md``; DESIGN, "plan"):

- **untouchable** (:attr:`Layout.protected`): never reduced. Under the session policy:
  the system prompt, the latest ask, the running turn (``condense.turns``: its
  assistant messages come back byte-identical; its own tool outputs may only be cut
  middle-out as the very last resort, ``condense.compress.last_resort``), compaction
  state, and a finished current turn that carries replay state;
- **kept if at all possible** (:attr:`Layout.kept`): the first ask, the newest tool
  exchange and the latest reply. Reduced last and only gently — an output repeated word
  for word later pointed at its copy, long arguments shrunk, long outputs cut
  middle-out — and summarized only once every other unit is;
- **reducible**: everything else, oldest first, cheapest reduction first — but the
  recent tail (:attr:`Layout.tail`) is only ever reduced gently, like the kept units,
  before it is summarized in its turn.

Two policies ship:

- :class:`SessionProtection` (``compress``): the tiers above; the tail is the newest
  units, the untouchable and kept ones aside, that fit in ``tail_tokens`` together. It
  does not depend on the budget, so a larger budget runs the same sequence of
  reductions and stops earlier: it never keeps less (``tests/test_sessions_properties.py``);
- :class:`HeadTailProtection` (training trajectories): the head — every unit up to the
  first message of each of ``head_roles`` — and the tail — the units holding the last
  ``tail_messages`` messages — are untouchable, nothing is kept-if-possible; while those
  alone exceed the budget, the protection weakens (the tail to the last message, then
  the head to the first system and user messages).

Whatever the policy, the units in ``pinned`` are untouchable: ``compress`` pins the
running turn (:func:`turn_units`), the latest ask and every unit holding a compaction
(:func:`compaction_units`). A unit holding a summary condense wrote is always reducible:
the next summary folds it in, so summaries never stack.

The span rule is one: replace the fewest oldest reducible units such that the kept part
plus a reserve for what replaces them fits the budget. :func:`choose_span` applies it
directly (the dataset path: no cheap reductions come first); ``compress`` applies it in
``measure`` and ``assemble``, after the cheap reductions and with a reserve per span.
``tests/test_plan_shared.py`` checks that both paths pick the same span for the same
messages, budget and policy. A plan is a frozen value made once per call; the later
stages only read it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from condense.exceptions import InputError
from condense.message import carries_replay
from condense.reduce.summary import holds_summary, written_by_condense
from condense.turns import carries_compaction, opens_turn
from condense.types import RawMessage
from condense.units import Unit, UnitKind

UnitTokens = Callable[[Unit], int]
"""The exact tokens of one unit (callers cache: the planner may ask twice)."""
UnitsEstimate = Callable[[Sequence[Unit]], int]
"""An estimate of the tokens of some units together (``condense.tokens`` estimates)."""


@dataclass(frozen=True, kw_only=True)
class Layout:
    """The tier of each unit (indices into the unit list): ``protected`` units are
    untouchable, ``kept`` ones kept if at all possible, and the rest before
    ``tail_start`` reducible (under :class:`HeadTailProtection` the units from
    ``tail_start`` on are its untouchable tail)."""

    protected: frozenset[int]
    tail_start: int
    kept: frozenset[int] = frozenset()
    tail: frozenset[int] = frozenset()
    """Reducible units of the session policy's tail: reduced only gently, like the kept
    ones, then summarized in age order."""
    weakened: bool = False
    """True when the policy's protection was weakened for the kept part to fit."""

    def gentle(self, unit_index: int) -> bool:
        """Only the gentle reductions (shrink, cut) ever touch this unit's messages."""
        return unit_index in self.kept or unit_index in self.tail

    def reducible(self, unit_index: int) -> bool:
        return (
            unit_index < self.tail_start
            and unit_index not in self.protected
            and unit_index not in self.kept
        )


DEFAULT_TAIL_TOKENS = 2_000
"""The session policy's tail when the caller names none: the newest units worth about
this many tokens are reduced only gently. A fixed size, not a share of the budget, so
that a larger budget never keeps less."""


@dataclass(frozen=True, kw_only=True)
class SessionProtection:
    """The session policy: see the module docstring."""

    tail_tokens: int = DEFAULT_TAIL_TOKENS

    def __post_init__(self) -> None:
        if isinstance(self.tail_tokens, bool) or not isinstance(self.tail_tokens, int):
            raise InputError(f"tail_tokens must be a number of tokens, not {self.tail_tokens!r}")
        if self.tail_tokens < 0:
            raise InputError(f"tail_tokens must be ≥ 0, not {self.tail_tokens}")


HEAD_ROLES = ("system", "user", "assistant", "tool")


@dataclass(frozen=True, kw_only=True)
class HeadTailProtection:
    """The training-set policy: see the module docstring. ``head_roles`` are canonical
    roles (``developer`` counts as ``system``)."""

    tail_messages: int
    head_roles: tuple[str, ...] = HEAD_ROLES
    weaken: bool = True

    def __post_init__(self) -> None:
        count = self.tail_messages
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise InputError(f"tail_messages must be a number of messages ≥ 0, not {count!r}")
        roles: object = self.head_roles  # checked: a user may pass anything
        if not isinstance(roles, tuple) or any(role not in HEAD_ROLES for role in roles):
            raise InputError(
                f"head_roles must be a tuple of {', '.join(HEAD_ROLES)}; not {self.head_roles!r}"
            )

    def tiers(self) -> list[HeadTailProtection]:
        """This protection, then its weaker forms, strongest first."""
        if not self.weaken:
            return [self]
        last = min(self.tail_messages, 1)
        short = tuple(r for r in self.head_roles if r in ("system", "user"))
        return [
            self,
            HeadTailProtection(tail_messages=last, head_roles=self.head_roles, weaken=False),
            HeadTailProtection(tail_messages=last, head_roles=short, weaken=False),
        ]


Protection = SessionProtection | HeadTailProtection


def check_protection(protection: object) -> None:
    """Raise :class:`InputError` unless ``protection`` is a policy (or ``None``)."""
    if protection is not None and not isinstance(
        protection, SessionProtection | HeadTailProtection
    ):
        raise InputError(
            "protection must be SessionProtection(...) or HeadTailProtection(...) "
            f"from condense.compress, not {protection!r}"
        )


@dataclass(frozen=True, kw_only=True)
class Plan:
    """The units of the repaired history, the layout, the reducible units oldest first
    (``order``) and the units kept if at all possible, oldest first (``kept_order``)."""

    units: tuple[Unit, ...]
    layout: Layout
    order: tuple[int, ...]
    kept_order: tuple[int, ...] = ()

    @property
    def cheap_order(self) -> tuple[int, ...]:
        """The reducible units every cheap reduction may touch (the tail aside)."""
        tail = self.layout.tail
        return tuple(u for u in self.order if u not in tail) if tail else self.order

    @property
    def gentle_order(self) -> tuple[int, ...]:
        """The units only the gentle reductions touch, oldest first: the kept and the tail."""
        return tuple(sorted((*self.kept_order, *self.layout.tail)))

    def widened(self) -> Plan:
        """This plan with the units kept if at all possible reducible after every
        reducible one (the order the last resort summarizes in)."""
        order = (*self.order, *self.kept_order)
        return Plan(units=self.units, layout=self.layout, order=order, kept_order=())

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
        """The first ``k`` units of ``order`` as contiguous unit ranges, oldest first."""
        spans: list[range] = []
        for unit in sorted(self.order[:k]):
            if spans and spans[-1].stop == unit:
                spans[-1] = range(spans[-1].start, unit + 1)
            else:
                spans.append(range(unit, unit + 1))
        return spans

    def span_counts(self) -> list[int]:
        """``[len(self.spans(k)) for k in 0..len(order)]``, in one pass."""
        chosen: set[int] = set()
        counts = [0]
        for unit in self.order:
            joins = (unit - 1 in chosen) + (unit + 1 in chosen)
            chosen.add(unit)
            counts.append(counts[-1] + 1 - joins)
        return counts

    def messages_of(self, span: range) -> range:
        """The message indices a unit range covers."""
        return range(self.units[span.start].start, self.units[span.stop - 1].stop)


def make_plan(
    units: Sequence[Unit],
    *,
    unit_tokens: UnitTokens,
    protection: Protection | None = None,
    tail_tokens: int | None = None,
    messages: Sequence[Any] = (),
    pinned: Collection[int] = (),
    budget: int | None = None,
) -> Plan:
    """The :class:`Plan` for ``units`` under ``protection`` (``tail_tokens=N`` is short
    for ``SessionProtection(tail_tokens=N)``). :class:`HeadTailProtection` reads the roles
    of ``messages`` (the list ``units`` segments) and weakens only with a ``budget``."""
    if protection is None:
        if tail_tokens is None:
            raise TypeError("make_plan needs a protection or tail_tokens")
        protection = SessionProtection(tail_tokens=tail_tokens)
    if isinstance(protection, SessionProtection):
        plan_layout = layout(
            units,
            tail_tokens=protection.tail_tokens,
            unit_tokens=unit_tokens,
            pinned=pinned,
            messages=messages,
        )
    else:
        plan_layout = head_tail_layout(
            units, messages, protection, unit_tokens=unit_tokens, pinned=pinned, budget=budget
        )
    order = tuple(i for run in reducible_runs(units, plan_layout) for i in run)
    kept_order = tuple(sorted(plan_layout.kept))
    return Plan(units=tuple(units), layout=plan_layout, order=order, kept_order=kept_order)


def layout(
    units: Sequence[Unit],
    *,
    tail_tokens: int,
    unit_tokens: UnitTokens,
    pinned: Collection[int] = (),
    messages: Sequence[Any] = (),
) -> Layout:
    """The session policy: system units and the units in ``pinned`` (the running turn,
    the latest ask, compaction state) are untouchable; the first ask, the latest reply
    and the newest tool exchange are kept if at all possible; the tail — the newest other
    units that fit in ``tail_tokens`` together — is reduced only gently. A unit holding a
    summary condense wrote (found in ``messages``, the list ``units`` segments) is never
    kept nor in the tail: the next summary folds it in; once the first ask is in a
    summary, no later ask takes its place (the session's first ask is the one that
    opened it). Without ``messages`` the first user unit is the first ask."""
    protected: set[int] = {i for i, u in enumerate(units) if u.kind is UnitKind.SYSTEM}
    protected.update(pinned)
    summaries = _summary_units(units, messages)
    kept: set[int] = set()
    asks = (i for i, u in enumerate(units) if u.kind is UnitKind.USER and i not in summaries)
    if messages:  # read only as far as the first (a chat of 25,000 asks is not read whole)
        asks = (i for i in asks if _is_ask(messages[units[i].start]))
    first_ask = next(asks, None)
    if summaries and first_ask is not None and min(summaries) < first_ask:
        first_ask = None  # the first ask is in the summary: a later ask does not take its place
    for found in (
        [] if first_ask is None else [first_ask],
        [i for i, u in enumerate(units) if u.kind is UnitKind.REPLY][-1:],
        [i for i, u in enumerate(units) if u.kind is UnitKind.TOOL_EXCHANGE][-1:],
    ):
        kept.update(found)
    kept -= protected | summaries
    tail: set[int] = set()
    spent = 0
    for index in range(len(units) - 1, -1, -1):
        if index in protected or index in kept:
            continue
        spent += unit_tokens(units[index])
        if spent > tail_tokens:
            break
        tail.add(index)
    return Layout(
        protected=frozenset(protected),
        kept=frozenset(kept),
        tail=frozenset(tail - summaries),
        tail_start=len(units),
    )


def _is_ask(message: Any) -> bool:
    """A user message that says something, written by the user (not a block condense
    put there: a summary, a notice or a bridge)."""
    return opens_turn(message) and not written_by_condense(message)


def _summary_units(units: Sequence[Unit], messages: Sequence[Any]) -> set[int]:
    """The units holding a summary condense wrote (read only where one can be)."""
    if not messages:
        return set()
    return {
        i
        for i, unit in enumerate(units)
        if unit.kind in (UnitKind.USER, UnitKind.REPLY)
        and any(holds_summary(messages[j]) for j in range(unit.start, unit.stop))
    }


def head_tail_layout(
    units: Sequence[Unit],
    messages: Sequence[Any],
    protection: HeadTailProtection,
    *,
    unit_tokens: UnitTokens,
    pinned: Collection[int] = (),
    budget: int | None = None,
) -> Layout:
    """The training-set policy, at the strongest tier whose protected units fit
    ``budget`` (the weakest when none does; the first when ``budget`` is ``None``)."""
    tiers = protection.tiers() if budget is not None else [protection]
    chosen = Layout(protected=frozenset(pinned), tail_start=len(units))
    for tier, policy in enumerate(tiers):
        head_end, tail_start = _head_and_tail(units, messages, policy)
        protected = frozenset({*range(head_end), *range(tail_start, len(units)), *pinned})
        chosen = Layout(protected=protected, tail_start=tail_start, weakened=tier > 0)
        if budget is None or sum(unit_tokens(units[i]) for i in protected) <= budget:
            break
    return chosen


def _head_and_tail(
    units: Sequence[Unit], messages: Sequence[Any], policy: HeadTailProtection
) -> tuple[int, int]:
    """``(head_end, tail_start)``: units before ``head_end`` and from ``tail_start`` on
    are protected; ``head_end <= tail_start``."""
    wanted = set(policy.head_roles)
    last_first = -1
    for index, message in enumerate(messages):
        if not wanted:
            break
        role = canonical_role(message)
        if role in wanted:
            wanted.discard(role)
            last_first = index
    head_end = 0
    if last_first >= 0:
        head_end = next(i for i, unit in enumerate(units) if unit.stop > last_first) + 1
    tail_start = len(units)
    first_kept_message = (units[-1].stop if units else 0) - policy.tail_messages
    while (
        tail_start > 0
        and policy.tail_messages > 0
        and units[tail_start - 1].stop > first_kept_message
    ):
        tail_start -= 1
    return head_end, max(head_end, tail_start)


def canonical_role(message: Any) -> str | None:
    """The role of a message, ``developer`` read as ``system``."""
    role = message.get("role") if isinstance(message, dict) else None
    return "system" if role == "developer" else role


class Verdict(StrEnum):
    FITS = "fits"
    SUMMARIZE = "summarize"
    NO_SPAN = "no_span"


@dataclass(frozen=True, kw_only=True)
class SpanChoice:
    """What :func:`choose_span` decided.

    ``replaced`` reducible units (``plan.order[:replaced]``, see ``Plan.spans``) are to be
    replaced (0 unless ``SUMMARIZE``). ``kept_tokens`` counts every kept unit exactly.
    ``tokens_before`` is the whole history, exact when ``exact`` (else the part of the
    span that did not need counting is estimated). ``reserve`` is what the replacement
    may take: the reserve asked for, or less when only less is left.
    """

    verdict: Verdict
    replaced: int
    kept_tokens: int
    tokens_before: int
    exact: bool
    reserve: int = 0


def choose_span(
    plan: Plan,
    *,
    unit_tokens: UnitTokens,
    estimate: UnitsEstimate,
    budget: int,
    reserve: int,
    fixed: int = 0,
    exact: bool = False,
) -> SpanChoice:
    """The span planner: the fewest oldest reducible units to replace so that the kept
    part (``fixed`` plus every kept unit) plus ``reserve`` fits ``budget``; when even
    replacing every reducible unit leaves less than ``reserve``, the reserve shrinks to
    what is left (down to nothing). ``NO_SPAN`` when the protected units alone exceed the
    budget, ``FITS`` when the whole history is within it.

    Counting is lazy: the protected units and the kept reducible units are counted with
    ``unit_tokens`` (newest first, one past what is kept), the span only until the
    history is proven over the budget, the rest of it with one call of ``estimate`` —
    unless ``exact``. A history that fits is always counted in full."""
    units, order = plan.units, plan.order
    protected = fixed + sum(
        unit_tokens(unit) for i, unit in enumerate(units) if not plan.layout.reducible(i)
    )

    def cost(j: int) -> int:
        return unit_tokens(units[order[j]])

    first = first_kept(len(order), cost, budget - reserve - protected)
    kept = protected + sum(cost(j) for j in range(first, len(order)))  # counted already
    if first == 0:  # nothing to replace: every unit was counted
        verdict = Verdict.FITS if kept <= budget else Verdict.NO_SPAN
        return SpanChoice(
            verdict=verdict, replaced=0, kept_tokens=kept, tokens_before=kept, exact=True
        )
    total, counted = kept, first
    while counted > 0 and (total <= budget or exact):
        counted -= 1
        total += cost(counted)
    if total <= budget:
        return SpanChoice(
            verdict=Verdict.FITS, replaced=0, kept_tokens=total, tokens_before=total, exact=True
        )
    if counted:
        total += estimate([units[order[j]] for j in range(counted)])
    fits = kept <= budget
    return SpanChoice(
        verdict=Verdict.SUMMARIZE if fits else Verdict.NO_SPAN,
        replaced=first if fits else 0,
        kept_tokens=kept,
        tokens_before=total,
        exact=counted == 0,
        reserve=max(0, min(reserve, budget - kept)),
    )


def first_kept(count: int, cost: Callable[[int], int], room: int) -> int:
    """The span rule's walk: the smallest ``k`` in ``[0, count]`` such that the items
    ``k..count-1`` (reducible units, oldest first) cost at most ``room`` together; items
    ``0..k-1`` are the span to replace.
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


def turn_units(units: Sequence[Unit], start: int) -> frozenset[int]:
    """The units of the current turn, which starts at message ``start``
    (``condense.turns.turn_start``): they are pinned, never reduced."""
    return frozenset(i for i, unit in enumerate(units) if unit.stop > start)


def compaction_units(units: Sequence[Unit], messages: Sequence[RawMessage]) -> frozenset[int]:
    """The units holding a compaction (``condense.turns.carries_compaction``): they stand
    for all the context before them and are pinned, never summarized or masked."""
    return frozenset(
        i
        for i, unit in enumerate(units)
        if any(carries_compaction(messages[j]) for j in range(unit.start, unit.stop))
    )


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
