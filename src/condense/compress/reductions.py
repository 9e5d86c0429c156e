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
smaller than what it replaces is undone, so no reduction ever grows the history. The
rungs run in a fixed order that does not depend on the budget, so a larger budget stops
at an earlier point of the same sequence and never keeps less.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

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
    counts: Sequence[int],
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
    stripped before planning was a replay turn and is still never edited."""
    source = messages if original is None else original
    current = list(messages)
    exact = list(counts)
    total = sum(exact) + REPLY_PRIMING_TOKENS
    actions: dict[int, str] = {}
    short: set[int] = set()
    for rung in rungs:
        if total <= budget:
            break
        step = rung.step
        candidates = [i for u in rung.units for i in step.targets(source, plan.units[u])]
        if not candidates:
            continue
        reduction = step.strategy(current, candidates, need=total - budget, cost=counter.message)
        for index in reduction.changed:
            after = counter.message(reduction.messages[index])
            if after >= exact[index]:  # not smaller: undo, whatever the strategy thought
                continue
            current[index] = reduction.messages[index]
            total -= exact[index] - after
            exact[index] = after
            actions.setdefault(plan.unit_of(index), step.action)
        short.update(i for i in reduction.short_of_target if current[i] is not messages[i])
    return Reduced(
        messages=tuple(current),
        counts=tuple(exact),
        actions=actions,
        short_of_target=tuple(sorted(short)),
    )
