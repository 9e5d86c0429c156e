"""Stage 3b, the last resort: what runs when the history does not fit with every reducible
unit summarized (graded protection, ``condense.compress.plan``), in this order, each
step only as far as needed:

1. the units kept if at all possible (the first ask, the newest results, the latest
   reply, the tail) are reduced hard: arguments shrunk and outputs cut middle-out as far
   as needed, down to a short floor (images in their outputs replaced);
2. they are summarized too, oldest first, into the one summary (never a second one);
3. the running turn's own tool outputs are cut middle-out, largest first, down to a short
   head (``condense.reduce.cut.SHORT_CHARS``), images in them replaced: the calls, their
   ids and every assistant message of the turn stay as they were.

So the result fits whenever the untouchable part does with the running turn's outputs cut
to a short head (plus a one-line notice where leaving the rest out would break the role
order). The sequence is the same for every budget, so a larger budget stops earlier.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from condense.compress.assemble import (
    MIN_SUMMARY_TOKENS,
    NOTICE_TOKENS,
    SUMMARY_OVERHEAD,
    Assembly,
)
from condense.compress.plan import Plan
from condense.compress.reductions import (
    MessageReduction,
    ReductionStep,
    kept_steps,
    running_step,
)
from condense.tokens import TokenCounter
from condense.tokens.pieces import REPLY_PRIMING_TOKENS
from condense.types import RawMessage

Assembler = Callable[[Sequence[RawMessage], Plan, int], Assembly | None]
"""``(messages, plan, first) -> assembly``: replace at least ``first`` units of the plan's
order, as few as fit (``condense.compress.assemble``)."""


@dataclass(frozen=True, kw_only=True)
class Resort:
    """The history before assembly, reduced further, and its assembly (``None``: nothing
    replaced); ``actions`` by unit index, ``fits`` whether the assembled history does."""

    messages: tuple[RawMessage, ...]
    assembly: Assembly | None
    tokens: int
    actions: dict[int, str] = field(default_factory=dict)
    short_of_target: tuple[int, ...] = ()
    """Calls whose arguments stay above what was asked, their short strings kept."""

    def fits(self, budget: int) -> bool:
        return self.tokens <= budget


def last_resort(
    current: Sequence[RawMessage],
    *,
    plan: Plan,
    steps: Sequence[ReductionStep],
    running: Sequence[int],
    budget: int,
    counter: TokenCounter,
    original: Sequence[RawMessage],
    assemble_with: Assembler | None,
) -> Resort:
    """Run the three steps of the module docstring on ``current`` (every reducible unit
    already had every cheap reduction, the kept ones the gentle ones), stopping at the
    first that fits. ``running`` are the indices of the running turn's tool outputs;
    ``assemble_with`` is ``None`` when summaries are forbidden (units are then never
    replaced); targets are chosen on ``original``."""
    messages = list(current)
    counts = counter.counts(messages)
    actions: dict[int, str] = {}
    short: set[int] = set()
    wide = plan.widened()

    def apply(step: MessageReduction, candidates: Sequence[int], need: int) -> None:
        if need <= 0 or not candidates:
            return
        result = step.strategy(messages, candidates, need=need, cost=counter.message)
        for index in result.changed:
            tokens = counter.message(result.messages[index])
            if tokens < counts[index]:
                messages[index], counts[index] = result.messages[index], tokens
                actions.setdefault(plan.unit_of(index), step.action)
        short.update(result.short_of_target)

    def left_after(order: Sequence[int], block: int) -> int:
        """Tokens of ``messages`` with the units of ``order`` replaced by a block of
        ``block`` tokens (only when summaries are allowed)."""
        total = sum(counts) + REPLY_PRIMING_TOKENS
        if assemble_with is None or not order:
            return total
        gone = sum(sum(counts[plan.units[u].start : plan.units[u].stop]) for u in order)
        return total - gone + block

    def assembled(order_plan: Plan, first: int) -> Resort:
        assembly = assemble_with(messages, order_plan, first) if assemble_with else None
        result = assembly.messages if assembly is not None else tuple(messages)
        return Resort(
            messages=tuple(messages),
            assembly=assembly,
            tokens=counter.messages(result),
            actions=dict(actions),
            short_of_target=tuple(sorted(short)),
        )

    def smallest(order_plan: Plan) -> int:
        """What replacing every unit of ``order_plan.order`` takes at least, as
        ``assemble`` reserves it: the shortest summary, and a notice for each other span
        where it cannot be joined over."""
        spans = len(order_plan.spans(len(order_plan.order)))
        return SUMMARY_OVERHEAD + MIN_SUMMARY_TOKENS + max(0, spans - 1) * NOTICE_TOKENS

    # 1. the kept units, hard, as far as the room left by summarizing the rest needs
    for step in kept_steps(steps, "hard"):
        candidates = [i for u in plan.kept_order for i in step.targets(original, plan.units[u])]
        apply(step, candidates, left_after(plan.order, smallest(plan)) - budget)
    # 2. the kept units summarized too, oldest first, into the one summary
    if plan.order or assemble_with is None:
        best = assembled(wide, len(plan.order))
    else:  # nothing reducible: what the kept units' reductions gave, if it fits
        best = Resort(
            messages=tuple(messages),
            assembly=None,
            tokens=counter.messages(messages),
            actions=dict(actions),
            short_of_target=tuple(sorted(short)),
        )
        if not best.fits(budget):
            best = assembled(wide, 1)
    if best.fits(budget):
        return best
    # 3. the running turn's own outputs, cut middle-out, largest first, only as far as
    # the notice needs: they are never cut further to make room for a summary (that would
    # cut more under a larger budget), which gets what room is left
    cut = running_step(steps)
    if cut is not None and running:
        block = NOTICE_TOKENS if wide.order else 0
        apply(cut, list(running), left_after(wide.order, block) - budget)
        again = assembled(wide, len(wide.order))
        if again.tokens < best.tokens:
            best = again
    return best
