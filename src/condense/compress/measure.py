"""Stage 1b, measure: count exactly only what decides, newest first.

The protected units are counted first, then the reducible units from the newest back.
Once the part counted so far is over the budget as it stands (so the whole history is),
the walk starts again from the newest unit with every cheap reduction applied, and
counting stops as soon as it proves that the oldest units must be summarized: even with
every cheap reduction applied to what it has seen, plus a one-line notice, it does not
fit. The units older than that point are replaced in stage 3 without ever being
tokenized, so the cost of compressing a long session grows with the budget, not with the
session. Counting is by unit: no unit past the one that proves the history over is
counted, and an original a cheap reduction replaces is estimated, never tokenized.

Where the history is likely to fit once every reducible unit is reduced (an estimate
says so), that is proven first from the oldest unit on, the newer units bounded by what
the walk could leave of them: the walk then ends as it would have, having reduced only
the units it took to tell (the stage-2 reductions, oldest first, need about those).

The result is the one the plain sequence would give: when summarizing is needed at all,
every cheap reduction has been applied to every kept reducible unit first, and every
gentle reduction to the units kept if at all possible (stage 2 stops early only when the
history fits without a summary).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from condense.compress.assemble import NOTICE_TOKENS
from condense.compress.plan import Plan
from condense.compress.reductions import ReductionStep, kept_steps, reducible_steps
from condense.reduce.base import Cost
from condense.tokens import TokenCounter, quick_estimate
from condense.tokens.pieces import REPLY_PRIMING_TOKENS
from condense.types import RawMessage

CHUNK = 16
"""Reducible units counted (and, once over, reduced) per step of the walk: small, since
the units of the last step that turn out to be summarized were reduced for nothing."""


@dataclass(frozen=True, kw_only=True)
class Measured:
    """What the walk found. ``first_kept is None``: every message was counted
    (``counts`` complete) and nothing was reduced. Else the units ``plan.order[first_kept:]``
    are kept with every cheap reduction applied (in ``messages``), the older ones are to be
    summarized, and ``suffix[j]`` is the exact tokens of the kept reducible units from
    ``plan.order[j]`` on (for ``j >= first_kept``)."""

    messages: tuple[RawMessage, ...]
    counts: tuple[int | None, ...]
    fixed: int
    """Exact tokens of the units that are not reducible, reply priming included."""
    first_kept: int | None
    suffix: tuple[int, ...]
    lower_bound: int
    """Exact tokens of a part of the history: never more than the whole."""
    actions: dict[int, str]
    short_of_target: tuple[int, ...]


def measure(
    messages: Sequence[RawMessage],
    *,
    plan: Plan,
    steps: Sequence[ReductionStep],
    budget: int,
    counter: TokenCounter,
    original: Sequence[RawMessage],
    summarize: bool,
) -> Measured:
    """Walk ``messages`` as the module docstring says (``summarize=False``: no summary
    step, so everything is counted)."""
    current = list(messages)
    counts: list[int | None] = [None] * len(current)

    def count(start: int, stop: int) -> int:
        missing = [i for i in range(start, stop) if counts[i] is None]
        if missing:
            lo, hi = missing[0], missing[-1] + 1
            for i, n in zip(range(lo, hi), counter.counts(current[lo:hi]), strict=True):
                counts[i] = n
        return sum(counts[i] or 0 for i in range(start, stop))

    reducible = set(plan.order)
    raw_fixed = REPLY_PRIMING_TOKENS + sum(
        count(u.start, u.stop) for i, u in enumerate(plan.units) if i not in reducible
    )
    fixed = raw_fixed  # once proven over: with the kept units gently reduced
    order = plan.order
    raw_suffix = 0
    cheap_suffix = 0
    suffix = [0] * (len(order) + 1)
    actions: dict[int, str] = {}
    short: set[int] = set()
    reduced: dict[int, RawMessage] = {}
    reduced_counts: dict[int, int] = {}
    position = len(order)
    proven = False  # the part counted so far is over the budget: so is the history

    estimates: dict[int, tuple[Mapping[str, Any], int]] = {}
    given = {id(m) for m in messages}  # held by ``messages``: no id is reused

    def estimate(message: Mapping[str, Any]) -> int:
        """``quick_estimate`` of a message of the history, once per message object (a
        strategy and the check after it both ask; the message is held so that its id is
        not reused); a replacement (small, and what is kept) is counted exactly, so that
        whether a reduction saves is decided as the exact walk decides it."""
        if id(message) not in given:
            return counter.message(message)
        known = estimates.get(id(message))
        if known is not None and known[0] is message:
            return known[1]
        value = quick_estimate(message, media=counter.media)
        estimates[id(message)] = (message, value)
        return value

    walked: dict[int, int] = {}  # a reducible unit -> its tokens, cheaply reduced

    def cheap_of(units: Sequence[int]) -> list[int]:
        """The exact tokens of ``units`` (of ``order``, a step of the walk) with every
        cheap reduction applied: the replacements counted, the originals that stay as
        they are counted, the originals replaced only estimated (what is masked is never
        tokenized). Each unit once: the walk may meet it twice."""
        todo = [u for u in units if u not in walked]
        if todo:
            _cheap(
                current,
                todo,
                plan,
                steps,
                counter,
                original,
                (reduced, reduced_counts),
                actions,
                short,
                estimate,
            )
            unchanged = [
                i
                for u in todo
                for i in range(plan.units[u].start, plan.units[u].stop)
                if i not in reduced and counts[i] is None
            ]
            for i, n in zip(
                unchanged, counter.counts([current[i] for i in unchanged]), strict=True
            ):
                counts[i] = n
            for u in todo:
                walked[u] = sum(
                    reduced_counts[i] if i in reduced else counts[i] or 0
                    for i in range(plan.units[u].start, plan.units[u].stop)
                )
        return [walked[u] for u in units]

    def walk_reduced() -> bool:
        """The history is over the budget: the kept units gently reduced, then whether
        every reducible unit reduced fits (the walk then ends without summarizing),
        where that is likely, proven oldest first (:func:`_fits_reduced`)."""
        nonlocal fixed
        if plan.kept_order:
            fixed -= _gentle(current, plan, steps, counter, original, reduced, actions, short)
            for i in reduced.keys() - reduced_counts.keys():
                reduced_counts[i] = counter.message(reduced[i])
        return _likely_fits(plan, current, fixed, budget, estimate) and _fits_reduced(
            plan, current, counts, fixed, budget, estimate, cheap_of
        )

    while position > 0:
        low = max(0, position - CHUNK)
        chunk = order[low:position]
        counted = not (summarize and proven)  # once proven, originals are not tokenized
        if summarize and not proven:  # newest first, no unit past the one that proves it
            raw = [0] * len(chunk)
            so_far = raw_fixed + raw_suffix
            for offset in range(len(chunk) - 1, -1, -1):
                unit = plan.units[chunk[offset]]
                raw[offset] = count(unit.start, unit.stop)
                so_far += raw[offset]
                if so_far > budget:
                    break
        else:
            raw = [count(plan.units[u].start, plan.units[u].stop) if counted else 0 for u in chunk]
        if not proven and raw_fixed + raw_suffix + sum(raw) > budget:
            proven = True
            if summarize:
                # the newer units were walked as they are: walk them again, reduced, so
                # that what is kept is measured as it will be sent (counts are cached)
                raw_suffix += sum(raw)
                cheap_suffix = 0
                position = len(order)
                if walk_reduced():
                    break  # every reducible unit reduced fits: the walk would end so
                continue
        cheap = cheap_of(chunk) if summarize and proven else raw
        for offset in range(len(chunk) - 1, -1, -1):
            j = low + offset
            raw_suffix += raw[offset]
            cheap_suffix += cheap[offset]
            suffix[j] = cheap_suffix
            if summarize and proven and fixed + cheap_suffix + NOTICE_TOKENS > budget:
                kept_messages = {
                    i
                    for u in (*order[j + 1 :], *plan.kept_order)
                    for i in range(plan.units[u].start, plan.units[u].stop)
                }
                for i in kept_messages & reduced.keys():
                    current[i] = reduced[i]
                    counts[i] = reduced_counts[i]
                kept_units = {*order[j + 1 :], *plan.kept_order}
                return Measured(
                    messages=tuple(current),
                    counts=tuple(counts),
                    fixed=fixed,
                    first_kept=j + 1,
                    suffix=tuple(suffix),
                    lower_bound=raw_fixed + raw_suffix,
                    actions={u: a for u, a in actions.items() if u in kept_units},
                    short_of_target=tuple(sorted(i for i in short if i in kept_messages)),
                )
        position = low
    return Measured(
        messages=tuple(messages),
        counts=tuple(counts),
        fixed=raw_fixed,
        first_kept=None,
        suffix=tuple(suffix),
        lower_bound=raw_fixed + raw_suffix,
        actions={},
        short_of_target=(),
    )


_PLACEHOLDER_GUESS = 100
"""About what a masked output costs (its placeholder), to guess whether a history fits
once every cheap reduction is applied."""


def _likely_fits(
    plan: Plan,
    messages: Sequence[RawMessage],
    fixed: int,
    budget: int,
    estimate: Cost,
) -> bool:
    """A guess, without BPE or reductions: whether every reducible unit with every cheap
    reduction applied fits with a notice (tool outputs guessed masked, the rest
    estimated). It only chooses which way the walk goes first (:func:`_fits_reduced`,
    for a history that fits so, else newest first), never what it finds."""
    total = fixed + NOTICE_TOKENS
    for u in plan.order:
        unit = plan.units[u]
        for i in range(unit.start, unit.stop):
            guess = estimate(messages[i])
            if messages[i].get("role") == "tool":
                guess = min(guess, _PLACEHOLDER_GUESS)
            total += guess
            if total > budget:
                return False
    return True


def _fits_reduced(
    plan: Plan,
    messages: Sequence[RawMessage],
    counts: Sequence[int | None],
    fixed: int,
    budget: int,
    estimate: Cost,
    cheap_of: Callable[[Sequence[int]], list[int]],
) -> bool:
    """Whether every reducible unit with every cheap reduction applied fits with a notice
    — the walk would then end without summarizing —, proven from the oldest step of the
    walk on (``cheap_of``), so that only as many units are reduced as it takes to tell:
    the units reduced so far as they are, the newer ones at most what the walk could
    leave of them (a message stays as it is, at its exact count, or is replaced by one
    that costs less than its estimate). False as soon as the units reduced alone do not
    fit (then a summary is needed, and the walk goes on newest first, each step reduced
    once)."""
    order = plan.order
    ceiling = [0] * (len(order) + 1)  # ceiling[j]: at most what units order[j:] cost
    counted_from = len(order)  # units order[counted_from:] are counted, every message
    for j in range(len(order) - 1, -1, -1):
        unit = plan.units[order[j]]
        found = [counts[i] for i in range(unit.start, unit.stop)]
        if any(n is None for n in found):
            break
        most = sum(
            max(n or 0, estimate(messages[i]) - 1)
            for n, i in zip(found, range(unit.start, unit.stop), strict=True)
        )
        ceiling[j] = ceiling[j + 1] + most
        counted_from = j
    steps = [(max(0, p - CHUNK), p) for p in range(len(order), 0, -CHUNK)]
    reduced = fixed + NOTICE_TOKENS
    for low, position in reversed(steps):  # oldest first, the walk's own steps
        reduced += sum(cheap_of(order[low:position]))
        if reduced > budget:
            return False
        if position >= counted_from and reduced + ceiling[position] <= budget:
            return True
    return reduced <= budget


def _cheap(
    current: Sequence[RawMessage],
    chunk: Sequence[int],
    plan: Plan,
    steps: Sequence[ReductionStep],
    counter: TokenCounter,
    original: Sequence[RawMessage],
    record: tuple[dict[int, RawMessage], dict[int, int]],
    actions: dict[int, str],
    short: set[int],
    cost: Cost,
) -> None:
    """Every cheap reduction applied to the units ``chunk`` (recorded in ``record``: each
    replacement and its exact count), the gentle ones only to those of the tail; a
    replacement that is not smaller than ``cost`` of what it replaces is not kept
    (``cost``: the exact count, or, once the history is proven over the budget, an
    estimate, so that what is masked is never tokenized; what is kept is counted exactly
    either way)."""
    reduced, counts = record
    scratch = list(current)  # the raw history: dedupe points at raw later copies
    gentle = plan.layout.gentle
    rounds = [(step, False) for step in reducible_steps(steps)]
    rounds += [(step, True) for step in kept_steps(steps, "gentle")]
    for step, tail in rounds:
        candidates = [
            i for u in chunk if gentle(u) == tail for i in step.targets(original, plan.units[u])
        ]
        if not candidates:
            continue
        result = step.strategy(scratch, candidates, need=1 << 62, cost=cost)
        for index in result.changed:
            new = result.messages[index]
            tokens = counter.message(new)
            if tokens >= cost(scratch[index]):
                continue
            scratch[index] = reduced[index] = new
            counts[index] = tokens
            actions.setdefault(plan.unit_of(index), step.action)
        short.update(result.short_of_target)


def _gentle(
    current: Sequence[RawMessage],
    plan: Plan,
    steps: Sequence[ReductionStep],
    counter: TokenCounter,
    original: Sequence[RawMessage],
    reduced: dict[int, RawMessage],
    actions: dict[int, str],
    short: set[int],
) -> int:
    """Every gentle reduction applied to the units kept if at all possible (recorded in
    ``reduced``); the tokens it saved, counted exactly."""
    scratch = list(current)
    saved = 0
    for step in kept_steps(steps, "gentle"):
        candidates = [i for u in plan.kept_order for i in step.targets(original, plan.units[u])]
        if not candidates:
            continue
        result = step.strategy(scratch, candidates, need=1 << 62, cost=counter.message)
        for index in result.changed:
            new = result.messages[index]
            gain = counter.message(scratch[index]) - counter.message(new)
            if gain <= 0:
                continue
            scratch[index] = reduced[index] = new
            saved += gain
            actions.setdefault(plan.unit_of(index), step.action)
        short.update(result.short_of_target)
    return saved
