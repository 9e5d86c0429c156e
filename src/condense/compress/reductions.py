"""Stage 2, reduce: run the reductions cheapest first, stopping as soon as the exact count
fits.

A reduction is one :class:`MessageReduction` (a strategy from ``condense.reduce`` and the
messages of a unit it may touch) or the :data:`SUMMARIZE` step (stage 3,
``condense.compress.assemble``, replaces whole spans). ``compress(..., reductions=...)``
takes any sequence of them; :data:`DEFAULT_REDUCTIONS` is dedupe → strip images → mask →
shrink → summarize. Drop a step to forbid it; add your own ``MessageReduction`` (a pure
``(messages, candidates, *, need, cost) -> Reduction`` function) where it belongs.

Every change is counted with the real tokenizer (per-message counts are cached and add
up: ``counter.messages(ms) == sum(counter.counts(ms)) + REPLY_PRIMING_TOKENS``), so the
run knows exactly when the history fits and stops there; a replacement that is not
smaller than what it replaces is undone, so no reduction ever grows the history. The
steps run in a fixed order over the reducible units oldest first, so a larger budget
stops at an earlier point of the same sequence and never keeps less.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from condense.compress.plan import Plan, shrinkable_calls, tool_results
from condense.reduce.base import Cost, Reduction
from condense.reduce.dedupe import dedupe_tool_outputs
from condense.reduce.images import strip_images
from condense.reduce.mask import mask_tool_outputs
from condense.reduce.shrink import shrink_tool_arguments
from condense.tokens import TokenCounter
from condense.tokens.pieces import REPLY_PRIMING_TOKENS
from condense.types import RawMessage
from condense.units import Unit, carries_replay


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
SUMMARIZE = SpanSummary()
DEFAULT_REDUCTIONS: tuple[ReductionStep, ...] = (DEDUPE, STRIP_IMAGES, MASK, SHRINK, SUMMARIZE)
"""Cheapest first: what a user would miss least goes first."""


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
    steps: Sequence[ReductionStep],
    budget: int,
    counter: TokenCounter,
    original: Sequence[RawMessage] | None = None,
) -> Reduced:
    """Apply the :class:`MessageReduction` steps in order to the reducible units, each
    oldest first, until the exact count is within ``budget``.

    Targets are chosen on ``original`` (default ``messages``): a turn whose thinking was
    stripped before planning was a replay turn and is still never edited."""
    source = messages if original is None else original
    current = list(messages)
    exact = list(counts)
    total = sum(exact) + REPLY_PRIMING_TOKENS
    actions: dict[int, str] = {}
    short: set[int] = set()
    for step in steps:
        if total <= budget:
            break
        if not isinstance(step, MessageReduction):
            continue
        candidates = [i for u in plan.order for i in step.targets(source, plan.units[u])]
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
