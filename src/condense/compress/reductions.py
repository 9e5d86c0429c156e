"""Stage 2, reduce: run the reductions cheapest first, stopping as soon as the exact count
fits.

A reduction is one :class:`MessageReduction` (a strategy from ``condense.reduce`` and the
messages of a unit it may touch) or the :data:`SUMMARIZE` step (stage 3,
``condense.compress.assemble``, replaces whole spans). ``compress(..., reductions=...)``
takes any sequence of them; :data:`DEFAULT_REDUCTIONS` is dedupe → strip images → mask →
shrink → cut → summarize. Drop a step to forbid it; add your own ``MessageReduction`` (a
pure ``(messages, candidates, *, need, cost) -> Reduction`` function) where it belongs.

The steps but :data:`CUT` reduce the reducible units (their outputs are masked). The
units kept if at all possible (the first ask, the newest results, the latest reply) and
the tail (``condense.compress.plan``) are reduced only by :data:`DEDUPE` (lossless: the
newer copy is still there), :data:`SHRINK` and :data:`CUT`: gently (:func:`kept_steps`:
arguments down to ``DEFAULT_MAX_ARGUMENT_CHARS``, outputs down to ``GENTLE_CHARS``) once
every reducible unit had every step, and — once every
reducible unit is summarized — as far as needed (``condense.compress.last_resort``).
:data:`CUT` is also what cuts the running turn's own outputs, the very last resort.
Forbidding a step forbids it everywhere.

Every change is counted with the real tokenizer (per-message counts are cached and add
up: ``counter.messages(ms) == sum(counter.counts(ms)) + REPLY_PRIMING_TOKENS``), so the
run knows exactly when the history fits and stops there; a replacement that is not
smaller than what it replaces is undone, so no reduction ever grows the history. A
message the caller did not count is counted only where its count decides (what is kept
always is): whether a replacement is smaller than it, a guaranteed lower bound tells
first (``_Tally``). The
rungs run in a fixed order that does not depend on the budget, so a larger budget stops
at an earlier point of the same sequence and never keeps less.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from condense.compress.plan import Plan, shrinkable_calls, tool_results
from condense.message import carries_replay
from condense.reduce.base import Cost, Reduction
from condense.reduce.cut import GENTLE_CHARS, SHORT_CHARS, cut_tool_outputs
from condense.reduce.dedupe import dedupe_tool_outputs
from condense.reduce.images import strip_images
from condense.reduce.mask import mask_tool_outputs
from condense.reduce.shrink import (
    DEFAULT_MAX_ARGUMENT_CHARS,
    SHORT_ARGUMENT_CHARS,
    shrink_arguments_to_need,
    shrink_tool_arguments,
)
from condense.tokens import TokenCounter
from condense.tokens.estimate import lower_bound_message, upper_bound_message
from condense.tokens.pieces import REPLY_PRIMING_TOKENS
from condense.types import RawMessage
from condense.units import Unit


class Strategy(Protocol):
    """The shape every message reduction shares (see ``condense.reduce.base``)."""

    def __call__(
        self,
        messages: Sequence[RawMessage],
        candidates: Sequence[int],
        *,
        need: int,
        cost: Cost,
    ) -> Reduction: ...


Targets = Callable[[Sequence[RawMessage], Unit], list[int]]
"""The messages of one unit a strategy may replace."""


@dataclass(frozen=True, kw_only=True)
class MessageReduction:
    """A strategy that replaces single messages by smaller ones; ``action`` names it in
    the report."""

    action: str
    strategy: Strategy
    targets: Targets


@dataclass(frozen=True, kw_only=True)
class SpanSummary:
    """Replace the oldest reducible units by a summary (or a one-line notice)."""

    action: str = "summarized"


ReductionStep = MessageReduction | SpanSummary


def _with_images(messages: Sequence[RawMessage], unit: Unit) -> list[int]:
    return [
        i
        for i in range(unit.start, unit.stop)
        if isinstance(messages[i].get("content"), list) and not carries_replay(messages[i])
    ]


DEDUPE = MessageReduction(action="deduped", strategy=dedupe_tool_outputs, targets=tool_results)
STRIP_IMAGES = MessageReduction(
    action="images_removed", strategy=strip_images, targets=_with_images
)
MASK = MessageReduction(action="masked", strategy=mask_tool_outputs, targets=tool_results)
SHRINK = MessageReduction(action="shrunk", strategy=shrink_tool_arguments, targets=shrinkable_calls)
CUT = MessageReduction(action="cut", strategy=cut_tool_outputs, targets=tool_results)
SUMMARIZE = SpanSummary()
DEFAULT_REDUCTIONS: tuple[ReductionStep, ...] = (
    DEDUPE,
    STRIP_IMAGES,
    MASK,
    SHRINK,
    CUT,
    SUMMARIZE,
)
"""Cheapest first: what a user would miss least goes first."""


@dataclass(frozen=True, kw_only=True)
class Rung:
    """One step of the ladder: a reduction and the units it works on, oldest first."""

    step: MessageReduction
    units: tuple[int, ...]


Strength = Literal["gentle", "hard"]


def kept_steps(steps: Sequence[ReductionStep], strength: Strength) -> list[MessageReduction]:
    """The reductions of the units kept if at all possible, as far as ``steps`` allow
    them: :data:`DEDUPE` (an output pointed at its identical newer copy loses nothing),
    then :data:`SHRINK` and :data:`CUT`, each as far as needed, largest first, down to a
    floor: ``gentle`` (arguments to the shrink target, outputs to ``GENTLE_CHARS``) or
    ``hard`` (both to a short floor; images in outputs replaced)."""
    found: list[MessageReduction] = [DEDUPE] if DEDUPE in steps else []
    if SHRINK in steps:
        least = DEFAULT_MAX_ARGUMENT_CHARS if strength == "gentle" else SHORT_ARGUMENT_CHARS
        shrink = functools.partial(shrink_arguments_to_need, floor=least)
        found.append(MessageReduction(action="shrunk", strategy=shrink, targets=shrinkable_calls))
    if CUT in steps:
        floor = GENTLE_CHARS if strength == "gentle" else SHORT_CHARS
        cut = functools.partial(cut_tool_outputs, floor=floor, images=strength == "hard")
        found.append(MessageReduction(action="cut", strategy=cut, targets=tool_results))
    return found


def running_step(steps: Sequence[ReductionStep]) -> MessageReduction | None:
    """The last resort for the running turn's own outputs, if ``steps`` allow cuts: cut
    middle-out, largest first, down to ``SHORT_CHARS``; images in them replaced."""
    if CUT not in steps:
        return None
    cut = functools.partial(cut_tool_outputs, floor=SHORT_CHARS, images=True)
    return MessageReduction(action="cut", strategy=cut, targets=tool_results)


def reducible_steps(steps: Sequence[ReductionStep]) -> list[MessageReduction]:
    """The message reductions of the reducible units: every step but :data:`CUT` (their
    outputs are masked; a cut is for what is kept if at all possible)."""
    return [s for s in steps if isinstance(s, MessageReduction) and s is not CUT]


def ladder(plan: Plan, steps: Sequence[ReductionStep]) -> list[Rung]:
    """The message reductions in the order they run: every step on the reducible units
    (the tail aside), then the gentle reductions of the tail and of the units kept if at
    all possible."""
    rungs = [Rung(step=s, units=plan.cheap_order) for s in reducible_steps(steps)]
    rungs += [Rung(step=s, units=plan.gentle_order) for s in kept_steps(steps, "gentle")]
    return rungs


@dataclass(frozen=True, kw_only=True)
class Reduced:
    """The history after the message reductions, with its exact per-message counts."""

    messages: tuple[RawMessage, ...]
    counts: tuple[int, ...]
    actions: dict[int, str] = field(default_factory=dict)
    """Unit index → the first action applied to it."""
    short_of_target: tuple[int, ...] = ()
    """Messages a strategy left above its own target rather than destroy what it keeps."""

    @property
    def tokens(self) -> int:
        return sum(self.counts) + REPLY_PRIMING_TOKENS


def run_reductions(
    messages: Sequence[RawMessage],
    counts: Sequence[int | None],
    *,
    plan: Plan,
    rungs: Sequence[Rung],
    budget: int,
    counter: TokenCounter,
    original: Sequence[RawMessage] | None = None,
) -> Reduced:
    """Apply the ``rungs`` in order (see :func:`ladder`), each to its units oldest first,
    until the exact count is within ``budget``.

    Targets are chosen on ``original`` (default ``messages``): a turn whose thinking was
    stripped before planning was a replay turn and is still never edited.

    ``counts`` holds each message's exact tokens, or ``None`` where it was not counted
    yet: such a message is counted only where its count decides (:class:`_Tally`), so
    that what a reduction replaces is never tokenized. The result is the one the fully
    counted run gives (``tests/test_lazy_reductions.py``)."""
    source = messages if original is None else original
    tally = _Tally(messages, counts, counter)
    actions: dict[int, str] = {}
    short: set[int] = set()
    for rung in rungs:
        if not tally.over(budget):
            break
        step = rung.step
        candidates = [i for u in rung.units for i in step.targets(source, plan.units[u])]
        if not candidates:
            continue
        if step.strategy in _OLDEST_FIRST:
            changed, found = _oldest_first(step.strategy, candidates, tally, budget)
        else:
            tally.count_all()  # the strategy reads the need and the costs: exact ones
            reduction = step.strategy(
                tally.current, candidates, need=tally.known - budget, cost=counter.message
            )
            changed = [i for i in reduction.changed if tally.replace(i, reduction.messages[i])]
            found = set(reduction.short_of_target)
        for index in changed:
            actions.setdefault(plan.unit_of(index), step.action)
        short.update(i for i in found if tally.current[i] is not messages[i])
    return Reduced(
        messages=tuple(tally.current),
        counts=tuple(tally.counts()),
        actions=actions,
        short_of_target=tuple(sorted(short)),
    )


_OLDEST_FIRST: frozenset[Strategy] = frozenset(
    {dedupe_tool_outputs, strip_images, mask_tool_outputs, shrink_tool_arguments}
)
"""The strategies that replace each candidate, oldest first, by what it alone (and the
messages after it) make of it, keep a replacement when it costs less, and stop once
``need`` is saved (``condense.reduce.base.replace_oldest_first``): run on a part of the
candidates they replace that part as run on all of them, and only "is the replacement
smaller" reads a cost."""
_FIRST_PART = 16
"""Candidates an oldest-first strategy is run on at first; the parts then double."""


def _oldest_first(
    strategy: Strategy, candidates: Sequence[int], tally: _Tally, budget: int
) -> tuple[list[int], set[int]]:
    """Run an :data:`_OLDEST_FIRST` strategy as ``replace_oldest_first`` runs it with the
    exact need and costs, without counting what it replaces where a bound decides: on
    growing parts of the candidates, with costs that may only overstate a message not
    counted yet (so it proposes every replacement the exact run makes, and more), each
    proposal then checked exactly smaller (``_Tally.replace``), stopping before the first
    candidate met with the total within ``budget``. Returns the changed indices and the
    strategy's ``short_of_target`` among the candidates it looked at."""
    ordered = sorted(candidates)
    changed: list[int] = []
    short: set[int] = set()
    start, size = 0, _FIRST_PART
    while start < len(ordered):
        part = ordered[start : start + size]
        reduction = strategy(tally.current, part, need=1 << 62, cost=tally.ceiling)
        proposed = set(reduction.changed)
        over_target = set(reduction.short_of_target)
        for index in part:
            if not tally.over(budget):
                return changed, short
            if index in over_target:
                short.add(index)
            if index in proposed and tally.replace(index, reduction.messages[index]):
                changed.append(index)
        start, size = start + size, size * 2
    return changed, short


class _Tally:
    """The current messages and their exact total, where some were not counted yet.

    ``known`` is the exact tokens of the counted messages (reply priming included); a
    message not counted adds at least its guaranteed lower bound
    (``condense.tokens.estimate.lower_bound_message``). It is counted only when the total
    is within reach of the budget, or to tell whether a replacement is smaller than it
    where its lower bound does not."""

    def __init__(
        self, messages: Sequence[RawMessage], counts: Sequence[int | None], counter: TokenCounter
    ) -> None:
        self.current = list(messages)
        self.counter = counter
        self._counts = list(counts)
        self.known = REPLY_PRIMING_TOKENS + sum(n for n in counts if n is not None)
        self._missing = {i for i, n in enumerate(counts) if n is None}
        # held by ``messages`` for the whole run, so no id here is reused by a replacement
        self._uncounted = {id(messages[i]) for i in self._missing}
        self._floors: dict[int, int] = {}  # a lower bound of a message not counted
        self._floor = 0  # their sum
        self._unbounded = sorted(self._missing)  # not counted and not bounded yet
        self._newest = sorted(self._missing)  # not counted (and some counted since)

    def over(self, budget: int) -> bool:
        """Whether the current messages exceed ``budget``, exactly: the messages not
        counted are bounded from below (each once) until their bounds tell; while they do
        not, the newest of them (what the oldest-first reductions keep) are counted."""
        media = self.counter.media
        while self.known + self._floor <= budget:
            if self._unbounded:  # newest first: bound one more
                index = self._unbounded.pop()
                if index in self._missing:
                    above = budget - self.known - self._floor
                    floor = lower_bound_message(self.current[index], media=media, above=above)
                    self._floors[index] = floor
                    self._floor += floor
            elif self._missing:  # every one bounded, and not enough: count the newest
                while self._newest[-1] not in self._missing:
                    self._newest.pop()
                self._count(self._newest.pop())
            else:
                return False
        return True

    def ceiling(self, message: Mapping[str, Any]) -> int:
        """The exact tokens of ``message``; of an input message that was not counted a
        guaranteed upper bound (``upper_bound_message``), which never hides a saving."""
        if id(message) in self._uncounted:
            return upper_bound_message(message, media=self.counter.media)
        return self.counter.message(message)

    def replace(self, index: int, new: RawMessage) -> bool:
        """Put ``new`` at ``index`` if it costs fewer tokens than the message there (that
        one counted only if its lower bound does not tell); whether it was put."""
        after = self.counter.message(new)
        before = self._counts[index]
        if before is None:
            media = self.counter.media
            if lower_bound_message(self.current[index], media=media, above=after) <= after:
                before = self._count(index)
        if before is not None:
            if after >= before:
                return False
            self.known -= before
        self._counted(index, after)
        self.current[index] = new
        return True

    def count_all(self) -> None:
        """Count every message not counted yet."""
        missing = sorted(self._missing)
        for index, tokens in zip(
            missing, self.counter.counts([self.current[i] for i in missing]), strict=True
        ):
            self._counted(index, tokens)

    def counts(self) -> list[int]:
        """Every message's exact tokens (what is kept is sent: all counted now)."""
        self.count_all()
        return [n or 0 for n in self._counts]

    def _count(self, index: int) -> int:
        tokens = self.counter.message(self.current[index])
        self._counted(index, tokens)
        return tokens

    def _counted(self, index: int, tokens: int) -> None:
        """``index`` now holds a message of ``tokens``, counted."""
        if index in self._missing:
            self._missing.discard(index)
            self._floor -= self._floors.pop(index, 0)
        self._counts[index] = tokens
        self.known += tokens
