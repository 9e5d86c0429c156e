"""The engine behind ``compress``: plan on estimates, reduce, summarize, assemble.

Reducible units (neither protected nor in the tail) are taken oldest first. Under
Anthropic's thinking rules a history that must be reduced first loses the thinking of the
turns after the oldest reducible unit's first message (an edit there unbinds it; see
``condense.reduce.thinking``), so the plan is made on what will be sent. The first
``k`` of them are summarized and the rest get the cheap reductions as needed; ``k`` is
the smallest number for which the kept part, counted with the real tokenizer, plus the
summary fits the budget. The first ``k`` reducible units normally form one contiguous
span; only when the protected latest user message or reply sits in the middle and the
oldest run alone cannot make the history fit does the cut continue past it, and each
contiguous span then gets its own summary message.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from condense.planning import (
    cheap_savings,
    cheap_targets,
    layout,
    reducible_runs,
    running_exchange,
)
from condense.providers import Profile
from condense.reduce import dedupe_tool_outputs, mask_tool_outputs, shrink_tool_arguments
from condense.reduce.summary import (
    choose_placement,
    find_summary,
    placed,
    summary_block,
    with_block,
)
from condense.reduce.thinking import Stripped, strip_thinking
from condense.repair import RepairResult
from condense.summarizers import (
    ExtractiveSummarizer,
    Summarizer,
    get_summarizer,
    summarize_with_report,
)
from condense.tokens import TokenCounter, quick_estimate
from condense.tokens.pieces import REPLY_PRIMING_TOKENS
from condense.types import RawMessage
from condense.units import Unit, segment
from condense.validate.replay import running_loop_turn

UnitAction = Literal["kept", "deduped", "masked", "shrunk", "summarized"]
SUMMARY_OVERHEAD = 24
"""Tokens of the summary message beyond its text: framing, header and footer lines."""
MIN_SUMMARY_TOKENS = 48
# Without a cap from the user, a summary may take up to this share of the budget (and
# never more than SUMMARY_TOKENS_CEILING) when the kept part leaves that much room.
SUMMARY_SHARE = 2
SUMMARY_TOKENS_CEILING = 32_768


def summary_size(room: int, user_cap: int | None, *, budget: int) -> int:
    """The size of one summary: the ``room`` left after the kept part, within a cap.

    The cap is ``user_cap`` (``compress(summary_tokens=...)``) when given, else half the
    budget up to SUMMARY_TOKENS_CEILING; never below MIN_SUMMARY_TOKENS. Using the room
    instead of a small fixed target keeps more facts; the budget still holds because
    ``room`` is what the exact count of the kept part leaves.
    """
    cap = user_cap if user_cap else min(SUMMARY_TOKENS_CEILING, budget // SUMMARY_SHARE)
    return max(MIN_SUMMARY_TOKENS, min(cap, room))


def summary_reserve(default: int, previous_tokens: int, *, budget: int) -> int:
    """What planning reserves for a summary: ``default``, or room for the previous summary
    (``previous_tokens``, 0 when the user capped the summary) to carry over whole, up to
    a quarter of the budget, so that a session's summary does not shrink turn after turn.
    """
    return max(default, min(previous_tokens + previous_tokens // 8, budget // 4))


@dataclass(frozen=True, kw_only=True)
class Outcome:
    """What the engine produced, before it is wrapped into a ``CompressionResult``."""

    messages: list[RawMessage]
    summary: str | None
    previous_summary: str | None
    """The summary carried in from an earlier call (kept in the state when none is made)."""
    unit_actions: dict[int, UnitAction]
    units: list[Unit]
    protected_tokens: int
    summarizer: str | None
    fell_back: bool
    fallback_reason: str | None
    tokens: int | None
    """Exact tokens of ``messages`` when they are the repaired input unchanged, else None."""
    stripped: Stripped
    """The turns whose thinking the engine removed before planning (``bind_thinking``)."""


class Compressor:
    """One compression of one repaired history."""

    def __init__(
        self,
        repaired: RepairResult,
        *,
        profile: Profile,
        counter: TokenCounter,
        budget: int,
        tail_tokens: int,
        summary_cap: int,
        summary_limit: int | None = None,
        summarizer: str | Summarizer,
        previous_text: str | None,
        bind_thinking: bool = False,
    ) -> None:
        self.messages: list[RawMessage] = repaired.messages
        self.profile = profile
        self.counter = counter
        self.budget = budget
        # What planning reserves for a summary: room for the previous one to carry over.
        self.summary_cap = summary_reserve(
            summary_cap,
            counter.text(previous_text) if previous_text and summary_limit is None else 0,
            budget=budget,
        )
        self.summary_limit = summary_limit  # the user's cap on a summary, if any
        self.summarizer = summarizer
        self.previous_text = previous_text
        self.bind_thinking = bind_thinking
        self.stripped: Stripped = {}
        self.units = segment(self.messages)
        self.estimate = [self._quick(m) for m in self.messages]
        self.prefix = list(itertools.accumulate(self.estimate, initial=0))
        self.total_estimate = self.prefix[-1]
        self.adjusted: dict[int, int] = {}  # message index -> estimate change after a reduction
        self.exact: list[int] | None = None  # per-message counts, when all were counted
        if self.total_estimate + REPLY_PRIMING_TOKENS <= 2 * self.budget:
            # the estimate is too rough to tell: count, so a history that fits is kept
            self.exact = counter.counts(self.messages)
        running = running_loop_turn(self.messages)
        # the running tool loop's turn: protected with its results, never merged into
        self.running = None if running is None else self.messages[running]
        self.layout = layout(
            self.units,
            tail_tokens=tail_tokens,
            unit_tokens=self._exact_unit,
            pinned=running_exchange(self.units, running),
        )
        self.order = [i for run in reducible_runs(self.units, self.layout) for i in run]
        self.current = list(self.messages)
        self.actions: dict[int, UnitAction] = {}

    # -- tokens --------------------------------------------------------------------------

    def _quick(self, message: RawMessage) -> int:
        """A cheap estimate of ``message``, images billed like the exact count."""
        return quick_estimate(message, media=self.counter.media)

    def _exact(self, messages: Sequence[RawMessage]) -> int:
        return self.counter.messages(messages)

    def _exact_unit(self, unit: Unit) -> int:
        if self.exact is not None:
            return sum(self.exact[unit.start : unit.stop])
        return self._exact(self.messages[unit.start : unit.stop]) - REPLY_PRIMING_TOKENS

    def _estimate_unit(self, unit: Unit) -> int:
        return self.prefix[unit.stop] - self.prefix[unit.start]

    # -- the run -------------------------------------------------------------------------

    def run(self) -> Outcome:
        """Reduce until the history fits (or nothing reducible is left) and assemble it."""
        k = 0
        tokens = None if self.exact is None else sum(self.exact) + REPLY_PRIMING_TOKENS
        if tokens is None or tokens > self.budget:
            if self.bind_thinking:
                self._strip_thinking()
            k = self._reduce(self._plan())
            tokens = None
        spans = self._spans(k)
        output, text, fell_back, reason = self._assemble(spans)
        protected = sum(
            self._exact_unit(u)
            for i, u in enumerate(self.units)
            if i in self.layout.protected or i >= self.layout.tail_start
        )
        return Outcome(
            messages=output,
            summary=text,
            previous_summary=self.previous_text,
            unit_actions=self.actions,
            units=self.units,
            protected_tokens=protected,
            summarizer=self._summarizer_name() if spans else None,
            fell_back=fell_back,
            fallback_reason=reason,
            tokens=tokens,
            stripped=self.stripped,
        )

    def _frozen(self) -> list[RawMessage]:
        """Turns a summary is never merged into: the running loop's, and those whose
        thinking was stripped (they stay recognisable as such in the report)."""
        frozen = [message for message, _ in self.stripped.values()]
        return frozen if self.running is None else [self.running, *frozen]

    def _strip_thinking(self) -> None:
        """Remove the thinking that reducing will unbind (see ``condense.reduce.thinking``):
        every turn after the oldest reducible unit's first message, but the running
        loop's. That first message is either summarized with its unit or kept with an
        unchanged prefix, so its own thinking stays."""
        if not self.order:
            return
        start = self.units[self.order[0]].start + 1
        self.current, self.stripped = strip_thinking(self.current, start)
        for index, message in enumerate(self.current):
            if id(message) in self.stripped:
                self.estimate[index] = self._quick(message)
        self.prefix = list(itertools.accumulate(self.estimate, initial=0))
        self.total_estimate = self.prefix[-1]

    def _spans(self, k: int) -> list[range]:
        """The first ``k`` reducible units as contiguous unit ranges, oldest first."""
        spans: list[range] = []
        for unit in self.order[:k]:
            if spans and spans[-1].stop == unit:
                spans[-1] = range(spans[-1].start, unit + 1)
            else:
                spans.append(range(unit, unit + 1))
        return spans

    def _allowance(self, k: int) -> int:
        return len(self._spans(k)) * (self.summary_cap + SUMMARY_OVERHEAD)

    def _plan(self) -> int:
        """The smallest ``k`` estimated to fit once every cheap reduction is applied to the
        reducible units that are kept."""
        after_cheap = [
            self._estimate_unit(self.units[u])
            - cheap_savings(self.messages, self.units[u], self.estimate)
            for u in self.order
        ]
        reducible = set(self.order)
        fixed = sum(
            self._estimate_unit(unit) for i, unit in enumerate(self.units) if i not in reducible
        )
        total = fixed + sum(after_cheap) + REPLY_PRIMING_TOKENS
        spans = 0
        for k in range(len(self.order) + 1):
            if k:
                total -= after_cheap[k - 1]
                if k == 1 or self.order[k - 1] != self.order[k - 2] + 1:
                    spans += 1
            if total + spans * (self.summary_cap + SUMMARY_OVERHEAD) <= self.budget:
                return k
        return len(self.order)

    def _reduce(self, k: int) -> int:
        """Apply the cheap reductions to the kept reducible units until the kept part fits
        (counted exactly); summarize more units while it still does not."""
        while True:
            kept = self.order[k:]
            allowance = self._allowance(k)
            estimate = self._kept_estimate(k)
            if estimate <= 3 * self.budget:  # small enough to count exactly right away
                estimate = self._exact_kept(k)
            self._apply_cheap(kept, estimate + allowance - self.budget)
            over = self._exact_kept(k) + allowance - self.budget
            for attempt in range(8):  # estimates are rough: close the exact gap step by step
                if over <= 0 or not self._apply_cheap(kept, over * (1 + attempt)):
                    break
                over = self._exact_kept(k) + allowance - self.budget
            if over <= 0 or k >= len(self.order):
                return k
            k = self._extend(k, over)

    def _extend(self, k: int, over: int) -> int:
        """Summarize more of the oldest kept reducible units, enough to free ``over``."""
        freed = 0
        while k < len(self.order) and freed < over:
            unit = self.units[self.order[k]]
            freed += self._exact(self.current[unit.start : unit.stop]) - REPLY_PRIMING_TOKENS
            if k == 0 or self.order[k] != self.order[k - 1] + 1:  # this unit opens a span
                freed -= self.summary_cap + SUMMARY_OVERHEAD
            k += 1
        return k

    def _covered_ranges(self, k: int) -> list[range]:
        """The message ranges of the spans that the first ``k`` reducible units form."""
        return [self._span_messages(span) for span in self._spans(k)]

    def _kept(self, k: int) -> list[RawMessage]:
        """The current messages outside the first ``k`` reducible units."""
        kept: list[RawMessage] = []
        position = 0
        for covered in self._covered_ranges(k):
            kept.extend(self.current[position : covered.start])
            position = covered.stop
        kept.extend(self.current[position:])
        return kept

    def _kept_estimate(self, k: int) -> int:
        covered = self._covered_ranges(k)
        total = self.total_estimate - sum(
            self.prefix[r.stop] - self.prefix[r.start] for r in covered
        )
        for index, delta in self.adjusted.items():
            if not any(index in r for r in covered):
                total += delta
        return REPLY_PRIMING_TOKENS + total

    def _exact_kept(self, k: int) -> int:
        return self._exact(self._kept(k))

    def _apply_cheap(self, unit_indices: Sequence[int], need: int) -> int:
        """Dedupe, mask, then shrink within ``unit_indices`` until ``need`` tokens are
        (estimated to be) saved; return how many messages changed."""
        if need <= 0 or not unit_indices:
            return 0
        results: list[int] = []
        assistants: list[int] = []
        for u in unit_indices:
            unit_results, unit_assistants = cheap_targets(self.messages, self.units[u])
            results.extend(unit_results)
            assistants.extend(unit_assistants)
        steps: list[tuple[UnitAction, Any, Sequence[int]]] = [
            ("deduped", dedupe_tool_outputs, results),
            ("masked", mask_tool_outputs, results),
            ("shrunk", shrink_tool_arguments, assistants),
        ]
        changed = 0
        for action, strategy, candidates in steps:
            if need <= 0:
                break
            reduction = strategy(self.current, candidates, need=need, cost=self._quick)
            self.current = reduction.messages
            need -= reduction.saved
            changed += len(reduction.changed)
            for index in reduction.changed:
                self.actions.setdefault(self._unit_of(index), action)
                new_estimate = self._quick(self.current[index])
                self.adjusted[index] = new_estimate - self.estimate[index]
        return changed

    def _unit_of(self, message_index: int) -> int:
        low, high = 0, len(self.units) - 1
        while low < high:
            mid = (low + high + 1) // 2
            if self.units[mid].start <= message_index:
                low = mid
            else:
                high = mid - 1
        return low

    # -- summaries -----------------------------------------------------------------------

    def _span_messages(self, span: range) -> range:
        return range(self.units[span.start].start, self.units[span.stop - 1].stop)

    def _summarizer_name(self) -> str:
        if isinstance(self.summarizer, str):
            return self.summarizer
        return str(getattr(self.summarizer, "name", type(self.summarizer).__name__))

    def _summarize(
        self, span: range, target: int, previous: str | None
    ) -> tuple[str, bool, str | None]:
        """Summarize one span, folding in ``previous`` and any summary found inside it."""
        cleaned: list[RawMessage] = []
        for index in self._span_messages(span):
            message = self.messages[index]
            found = find_summary(message)
            if found is None:
                cleaned.append(message)
                continue
            # Two summaries in one span (or one and the state's): fold both, lose neither.
            if previous is None or found[0] not in previous:
                previous = found[0] if previous is None else f"{previous}\n\n{found[0]}"
            if found[1]:
                cleaned.append({**message, "content": found[1]})
        summarizer = get_summarizer(self.summarizer)
        try:
            outcome = summarize_with_report(
                summarizer, cleaned, previous=previous, target_tokens=target
            )
            text, fell_back, reason = outcome.text, outcome.fell_back, outcome.reason
        except Exception as error:  # a plain summarizer failed: fall back, and say so
            summarizer = get_summarizer("extractive")
            text = summarizer.summarize(cleaned, previous=previous, target_tokens=target)
            fell_back, reason = True, f"{type(error).__name__}: {error}"
        if fell_back or isinstance(summarizer, ExtractiveSummarizer):
            # A cheap summarizer that overshot (its sizes are estimates) is asked once more
            # for less, so the hard cut in _fit_text stays a last resort.
            size = self.counter.text(text)
            if size > target:
                smaller = max(MIN_SUMMARY_TOKENS // 2, target * target // size - 8)
                extractive = get_summarizer("extractive")
                text = extractive.summarize(cleaned, previous=previous, target_tokens=smaller)
        return text, fell_back, reason

    def _fit_text(self, text: str, target: int) -> str:
        """``text`` cut (at a line or word boundary where possible) to ``target`` tokens."""
        if self.counter.text(text) <= target:
            return text
        low, high = 0, len(text)
        while low < high:
            mid = (low + high + 1) // 2
            if self.counter.text(text[:mid]) + 1 <= target:
                low = mid
            else:
                high = mid - 1
        cut = text[:low]
        boundary = max(cut.rfind("\n"), cut.rfind(" "))
        if boundary > low * 0.8:
            cut = cut[:boundary]
        return cut.rstrip() + "…"

    def _assemble(
        self, spans: Sequence[range]
    ) -> tuple[list[RawMessage], str | None, bool, str | None]:
        """Replace each span with its summary, newest span first so indices stay put."""
        if not spans:
            return self.current, None, False, None
        k = sum(len(span) for span in spans)
        room = self.budget - self._exact_kept(k) - len(spans) * SUMMARY_OVERHEAD
        target = summary_size(room // len(spans), self.summary_limit, budget=self.budget)
        output = list(self.current)
        texts: list[str] = []
        fell_back, reason = False, None
        for position, span in reversed(list(enumerate(spans))):
            previous = self.previous_text if position == 0 else None
            text, failed, why = self._summarize(span, target, previous)
            fell_back, reason = fell_back or failed, reason or why
            text = self._fit_text(text.strip() or "(nothing to summarize)", target)
            texts.insert(0, text)
            covered = self._span_messages(span)
            block = summary_block(text, covered=len(covered))
            output = _place(output, covered, block, self.profile, self._frozen())
            for unit in span:
                self.actions[unit] = "summarized"
        return output, "\n\n".join(texts), fell_back, reason


def _place(
    output: list[RawMessage],
    covered: range,
    block: str,
    profile: Profile,
    frozen: Sequence[RawMessage],
) -> list[RawMessage]:
    """``output`` with the messages in ``covered`` replaced by the summary ``block``
    (never merged into one of ``frozen``)."""
    before, after = output[: covered.start], output[covered.stop :]
    placement = choose_placement(
        before[-1] if before else None,
        after[0] if after else None,
        profile,
        frozen=frozen,
    )
    if placement == "merge_next":
        return [*before, with_block(after[0], block, first=True), *after[1:]]
    if placement == "merge_previous":
        return [*before[:-1], with_block(before[-1], block, first=False), *after]
    return [*before, *placed(placement, block), *after]
