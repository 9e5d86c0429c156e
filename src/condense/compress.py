"""``compress``: fit a history to a token budget without ever breaking it.

The pipeline: repair for the profile → segment into units → protect the system prompt,
the first and latest user asks, the latest reply and a tail → reduce the rest cheapest
first, stopping as soon as the budget fits: (1) older duplicate tool outputs become
pointers, (2) old tool outputs are masked with one-line placeholders, (3) long tool-call
arguments are shrunk structurally, (4) one contiguous span of whole units is summarized
→ place the summary where the profile's role order allows → validate (raise rather than
return an invalid history) → count the result exactly.

Planning uses cheap estimates; only the kept messages are counted with the real
tokenizer, and those counts are cached per message, so a session that grew by one turn is
re-compressed for the cost of that turn.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from condense.exceptions import CondenseRuntimeError, InputError, InvalidOutputError
from condense.planning import cheap_savings, layout, quick_estimate, reducible_runs
from condense.profiles import DEFAULT_PROFILE, Profile, get_profile
from condense.reduce import dedupe_tool_outputs, mask_tool_outputs, shrink_tool_arguments
from condense.reduce.summary import choose_placement, find_summary, summary_block, with_block
from condense.repair import Change, repair
from condense.summarizers import Summarizer, get_summarizer, summarize_with_report
from condense.tokens import TokenCounter, encoding_for_model
from condense.tokens.counting import shared_counter
from condense.tokens.pieces import REPLY_PRIMING_TOKENS
from condense.types import RawMessage
from condense.units import Unit, UnitKind, segment
from condense.validate import validate

UnitAction = Literal["kept", "deduped", "masked", "shrunk", "summarized"]
SUMMARY_OVERHEAD = 24
"""Tokens of the summary message beyond its text: framing, header and footer lines."""
MIN_SUMMARY_TOKENS = 48


class BudgetError(CondenseRuntimeError):
    """``strict_budget=True`` and the protected part of the history alone exceeds the
    budget. ``result`` holds the best effort, so nothing is lost."""

    def __init__(self, result: CompressionResult) -> None:
        self.result = result
        report = result.report
        super().__init__(
            f"cannot fit the history in {report.budget} tokens: the best result has "
            f"{report.tokens_after} tokens, {report.protected_tokens} of them protected; "
            "raise the budget or lower tail_tokens"
        )


@dataclass(frozen=True, slots=True)
class UnitOutcome:
    """What happened to one unit; ``start``/``stop`` index the repaired history."""

    kind: UnitKind
    start: int
    stop: int
    action: UnitAction


@dataclass(frozen=True, kw_only=True)
class CompressionReport:
    """Tokens before and after (real tokens of ``encoding``) and what happened to each unit."""

    budget: int
    encoding: str
    tokens_after: int
    fits: bool
    protected_tokens: int
    units: tuple[UnitOutcome, ...]
    summarizer: str | None
    summarizer_fell_back: bool
    fallback_reason: str | None
    repairs: tuple[Change, ...]
    incremental: bool
    _input: Sequence[RawMessage] = field(repr=False, compare=False)

    @functools.cached_property
    def tokens_before(self) -> int:
        """Exact tokens of the input (counted on first access, then cached)."""
        return shared_counter(self.encoding).messages(self._input)

    @property
    def actions(self) -> Mapping[str, int]:
        """How many units got each action."""
        return dict(Counter(unit.action for unit in self.units))

    def describe(self) -> str:
        """One human line: tokens before → after and units per action."""
        counts = ", ".join(f"{n} {action}" for action, n in sorted(self.actions.items()))
        verdict = "fits" if self.fits else "OVER BUDGET"
        line = (
            f"{self.tokens_before} → {self.tokens_after} tokens (budget {self.budget}, "
            f"{verdict}); units: {counts or 'none'}"
        )
        if self.summarizer:
            line += f"; summarizer {self.summarizer}"
            if self.summarizer_fell_back:
                line += f" (fell back: {self.fallback_reason})"
        if self.repairs:
            line += f"; {len(self.repairs)} repair(s)"
        return line


@dataclass(frozen=True, kw_only=True)
class CompressionState:
    """What a later ``compress(previous=state)`` call reuses: the summary so far, and the
    input and output of this call so a grown history is only compressed for its growth."""

    summary: str | None
    source: tuple[RawMessage, ...] = field(repr=False)
    output: tuple[RawMessage, ...] = field(repr=False)
    budget: int
    provider: str
    encoding: str


@dataclass(frozen=True, kw_only=True)
class CompressionResult:
    messages: list[RawMessage]
    summary: str | None
    report: CompressionReport
    state: CompressionState


def compress(
    messages: Sequence[Any],
    *,
    budget: int,
    model: str | None = None,
    encoding: str | None = None,
    provider: str | Profile = DEFAULT_PROFILE,
    summarizer: str | Summarizer = "extractive",
    previous: CompressionState | None = None,
    tail_tokens: int | None = None,
    summary_tokens: int | None = None,
    strict_budget: bool = False,
) -> CompressionResult:
    """Return ``messages`` reduced to at most ``budget`` tokens, valid for ``provider``.

    ``tail_tokens`` (default: a quarter of the budget) protects the most recent units;
    ``summary_tokens`` caps the summary (default: an eighth of the budget, 256–4096).
    ``previous`` is the ``state`` of an earlier call on the same session. When even the
    protected part cannot fit, the report says so (``fits`` is False) and
    ``strict_budget=True`` raises ``BudgetError``. The input is never mutated.
    """
    if isinstance(budget, bool) or not isinstance(budget, int) or budget <= 0:
        raise InputError(f"budget must be a positive number of tokens, not {budget!r}")
    if isinstance(messages, str | bytes | dict) or not isinstance(messages, Sequence):
        raise InputError("compress expects a list of messages; use condense.load() for files")
    profile = get_profile(provider)
    encoding_name = encoding or encoding_for_model(model)
    counter = shared_counter(encoding_name) if encoding or model else shared_counter()
    work, incremental = _resume_from(previous, messages, budget, profile, counter.encoding)
    job = _Job(
        repair(work, profile),
        profile=profile,
        counter=counter,
        budget=budget,
        tail_tokens=budget // 4 if tail_tokens is None else tail_tokens,
        summary_cap=summary_tokens or min(4096, max(256, budget // 8)),
        summarizer=summarizer,
        previous_text=previous.summary if previous is not None else None,
    )
    result = job.run(source=messages, incremental=incremental)
    if strict_budget and not result.report.fits:
        raise BudgetError(result)
    return result


def _resume_from(
    previous: CompressionState | None,
    messages: Sequence[Any],
    budget: int,
    profile: Profile,
    encoding: str,
) -> tuple[Sequence[Any], bool]:
    """The history to work on: the previous output plus what was appended since, when
    ``messages`` extends the previous call's input; else ``messages`` itself."""
    if previous is None or (previous.budget, previous.provider, previous.encoding) != (
        budget,
        profile.name,
        encoding,
    ):
        return messages, False
    for known in (previous.source, previous.output):
        if len(messages) >= len(known) and all(map(_same, messages, known)):
            return [*previous.output, *messages[len(known) :]], True
    return messages, False


def _same(a: object, b: object) -> bool:
    return a is b


class _Job:
    """One compression: plan on estimates, reduce, summarize, assemble, verify."""

    def __init__(
        self,
        repaired: Any,
        *,
        profile: Profile,
        counter: TokenCounter,
        budget: int,
        tail_tokens: int,
        summary_cap: int,
        summarizer: str | Summarizer,
        previous_text: str | None,
    ) -> None:
        self.repairs: tuple[Change, ...] = repaired.changes
        self.messages: list[RawMessage] = repaired.messages
        self.profile = profile
        self.counter = counter
        self.budget = budget
        self.summary_cap = summary_cap
        self.summarizer = summarizer
        self.previous_text = previous_text
        self.units = segment(self.messages)
        self.estimate = [quick_estimate(m) for m in self.messages]
        self.layout = layout(self.units, tail_tokens=tail_tokens, unit_tokens=self._exact_unit)
        self.current = list(self.messages)
        self.actions: dict[int, UnitAction] = {}

    # -- token helpers -----------------------------------------------------------------

    def _exact_unit(self, unit: Unit) -> int:
        return self._exact(self.messages[unit.start : unit.stop]) - REPLY_PRIMING_TOKENS

    def _estimate_unit(self, unit: Unit) -> int:
        return sum(self.estimate[unit.start : unit.stop])

    def _exact(self, messages: Sequence[RawMessage]) -> int:
        return self.counter.messages(messages)

    # -- the run -----------------------------------------------------------------------

    def run(self, *, source: Sequence[Any], incremental: bool) -> CompressionResult:
        span = range(0)
        if (
            sum(self.estimate) + REPLY_PRIMING_TOKENS > self.budget
            or self._exact(self.messages) > self.budget
        ):
            span = self._plan_span()
            span = self._reduce_outside(span)
        summary_text, output, fell_back, reason = self._assemble(span)
        problems = validate(output, self.profile)
        if problems:
            raise InvalidOutputError(self.profile.name, problems)
        after = self._exact(output)
        protected = sum(
            self._exact_unit(u)
            for i, u in enumerate(self.units)
            if i in self.layout.protected or i >= self.layout.tail_start
        )
        report = CompressionReport(
            budget=self.budget,
            encoding=self.counter.encoding,
            tokens_after=after,
            fits=after <= self.budget,
            protected_tokens=protected,
            units=self._outcomes(span),
            summarizer=self._summarizer_name() if span else None,
            summarizer_fell_back=fell_back,
            fallback_reason=reason,
            repairs=self.repairs,
            incremental=incremental,
            _input=source,
        )
        summary = summary_text if summary_text is not None else self._previous_summary(span)
        state = CompressionState(
            summary=summary,
            source=tuple(source),
            output=tuple(output),
            budget=self.budget,
            provider=self.profile.name,
            encoding=self.counter.encoding,
        )
        return CompressionResult(messages=output, summary=summary_text, report=report, state=state)

    def _plan_span(self) -> range:
        """The shortest prefix of the oldest reducible run that, with every cheap
        reduction applied to the other reducible units, is estimated to fit."""
        runs = reducible_runs(self.units, self.layout)
        after_cheap = {
            i: self._estimate_unit(self.units[i])
            - cheap_savings(self.messages, self.units[i], self.estimate)
            for run in runs
            for i in run
        }
        fixed = sum(
            self._estimate_unit(u) for i, u in enumerate(self.units) if i not in after_cheap
        )
        total = fixed + sum(after_cheap.values()) + REPLY_PRIMING_TOKENS
        if total <= self.budget or not runs:
            return range(0)
        first = runs[0]
        for length in range(1, len(first) + 1):
            total -= after_cheap[first[length - 1]]
            if total + self._summary_allowance() <= self.budget:
                return range(first.start, first.start + length)
        return first

    def _summary_allowance(self) -> int:
        return self.summary_cap + SUMMARY_OVERHEAD

    def _reduce_outside(self, span: range) -> range:
        """Apply the cheap reductions to reducible units outside ``span`` until the kept
        part fits (counted exactly); extend ``span`` while it still does not."""
        runs = reducible_runs(self.units, self.layout)
        reducible = [i for run in runs for i in run]
        first_run = runs[0] if runs else range(0)
        for _ in range(len(self.units) + 1):
            kept = [i for i in reducible if i not in span]
            allowance = self._summary_allowance() if span else 0
            estimate = self._kept_estimate(span)
            if estimate <= 3 * self.budget:  # small enough to count exactly right away
                estimate = self._exact_kept(span)
            self._apply_cheap(kept, estimate + allowance - self.budget)
            exact_over = self._exact_kept(span) + allowance - self.budget
            if exact_over > 0:
                self._apply_cheap(kept, exact_over)
                exact_over = self._exact_kept(span) + allowance - self.budget
            if exact_over <= 0 or span.stop >= first_run.stop:
                return span
            span = self._extend(span, first_run, exact_over)
        return span

    def _extend(self, span: range, run: range, over: int) -> range:
        start = span.start if span else run.start
        stop = span.stop if span else run.start
        allowance = 0 if span else self._summary_allowance()
        freed = -allowance
        while stop < run.stop and freed < over:
            freed += self._exact_unit_current(self.units[stop])
            stop += 1
        return range(start, stop)

    def _exact_unit_current(self, unit: Unit) -> int:
        return self._exact(self.current[unit.start : unit.stop]) - REPLY_PRIMING_TOKENS

    def _kept_estimate(self, span: range) -> int:
        skip = self._span_messages(span)
        return REPLY_PRIMING_TOKENS + sum(
            quick_estimate(m) if m is not self.messages[i] else self.estimate[i]
            for i, m in enumerate(self.current)
            if i not in skip
        )

    def _exact_kept(self, span: range) -> int:
        skip = self._span_messages(span)
        return self._exact([m for i, m in enumerate(self.current) if i not in skip])

    def _span_messages(self, span: range) -> range:
        if not span:
            return range(0)
        return range(self.units[span.start].start, self.units[span.stop - 1].stop)

    def _apply_cheap(self, unit_indices: Sequence[int], need: int) -> None:
        if need <= 0 or not unit_indices:
            return
        results: list[int] = []
        assistants: list[int] = []
        for u in unit_indices:
            unit = self.units[u]
            if unit.kind is UnitKind.TOOL_EXCHANGE:
                assistants.append(unit.start)
                results.extend(range(unit.start + 1, unit.stop))
        cost = quick_estimate
        steps: list[tuple[UnitAction, Any, Sequence[int]]] = [
            ("deduped", dedupe_tool_outputs, results),
            ("masked", mask_tool_outputs, results),
            ("shrunk", shrink_tool_arguments, assistants),
        ]
        for action, strategy, candidates in steps:
            if need <= 0:
                break
            reduction = strategy(self.current, candidates, need=need, cost=cost)
            self.current = reduction.messages
            need -= reduction.saved
            for index in reduction.changed:
                self.actions.setdefault(self._unit_of(index), action)

    def _unit_of(self, message_index: int) -> int:
        low, high = 0, len(self.units) - 1
        while low < high:
            mid = (low + high + 1) // 2
            if self.units[mid].start <= message_index:
                low = mid
            else:
                high = mid - 1
        return low

    # -- summary and assembly ------------------------------------------------------------

    def _previous_summary(self, span: range) -> str | None:
        found = self._old_summary(span)
        return found if found is not None else self.previous_text

    def _old_summary(self, span: range) -> str | None:
        for index in self._span_messages(span):
            found = find_summary(self.messages[index])
            if found is not None:
                return found[0]
        return None

    def _summarizer_name(self) -> str:
        if isinstance(self.summarizer, str):
            return self.summarizer
        return str(getattr(self.summarizer, "name", type(self.summarizer).__name__))

    def _summarize(self, span: range, target: int) -> tuple[str, bool, str | None]:
        messages = [self.messages[i] for i in self._span_messages(span)]
        previous = self.previous_text
        cleaned: list[RawMessage] = []
        for message in messages:
            found = find_summary(message)
            if found is None:
                cleaned.append(message)
                continue
            previous = found[0]
            if found[1]:
                cleaned.append({**message, "content": found[1]})
        summarizer = get_summarizer(self.summarizer)
        try:
            outcome = summarize_with_report(
                summarizer, cleaned, previous=previous, target_tokens=target
            )
        except Exception as error:  # a plain summarizer failed: fall back, and say so
            fallback = get_summarizer("extractive")
            text = fallback.summarize(cleaned, previous=previous, target_tokens=target)
            return text, True, f"{type(error).__name__}: {error}"
        return outcome.text, outcome.fell_back, outcome.reason

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

    def _assemble(self, span: range) -> tuple[str | None, list[RawMessage], bool, str | None]:
        if not span:
            return None, self.current, False, None
        covered = self._span_messages(span)
        kept_tokens = self._exact_kept(span)
        target = min(self.summary_cap, self.budget - kept_tokens - SUMMARY_OVERHEAD)
        target = max(target, MIN_SUMMARY_TOKENS)
        text, fell_back, reason = self._summarize(span, target)
        text = self._fit_text(text.strip() or "(nothing to summarize)", target)
        block = summary_block(text, covered=len(covered))
        before = self.current[: covered.start]
        after = self.current[covered.stop :]
        placement = choose_placement(
            before[-1] if before else None, after[0] if after else None, self.profile
        )
        if placement in ("user", "assistant"):
            output = [*before, {"role": placement, "content": block}, *after]
        elif placement == "merge_next":
            output = [*before, with_block(after[0], block, first=True), *after[1:]]
        else:
            output = [*before[:-1], with_block(before[-1], block, first=False), *after]
        for unit_index in span:
            self.actions[unit_index] = "summarized"
        return text, output, fell_back, reason

    def _outcomes(self, span: range) -> tuple[UnitOutcome, ...]:
        return tuple(
            UnitOutcome(unit.kind, unit.start, unit.stop, self.actions.get(index, "kept"))
            for index, unit in enumerate(self.units)
        )
