"""One input line in, one result out: the per-record function every engine runs.

``RecordProcessor.process(raw)`` parses a line, plans it and returns a
:class:`RecordResult`:

- ``passed`` — at or under the target: the engine writes the input line as it was;
- ``compressed`` — the whole-unit span replaced by one summary turn; the record's other
  fields carried, its kept turns verbatim, per-record stats under ``"condense"``;
- ``still_over_limit`` / ``failed`` — the record unchanged, flagged with the reason under
  ``"condense"`` (spliced into the original line, so every other byte stays);
- ``rejected`` — the line is not a record (bad JSON, missing fields): no output line.

With an async summarizer the processor returns a :class:`SummaryRequest` instead of a
``compressed`` result; the engine awaits the summary and calls ``finish``.
Nothing here raises for bad input: every line gets a result.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from condense._input import MAX_DEPTH, too_deep
from condense.compress.assemble import MIN_SUMMARY_TOKENS
from condense.compress.assemble import notice as left_out_notice
from condense.compress.plan import Plan, SpanChoice, Verdict, choose_span, make_plan
from condense.datasets.options import DatasetOptions
from condense.datasets.placement import Placement, trainable_span, turn_kinds
from condense.datasets.summaries import SummaryFailed, summarize_sync
from condense.datasets.tokenizer import Tokenizer, load_tokenizer
from condense.datasets.trajectory import (
    Trajectory,
    canonical,
    joined_turn,
    read_trajectory,
    summary_turn,
    turn_text,
)
from condense.exceptions import FormatError
from condense.formats.openai import list_key
from condense.reduce.summary import summary_block
from condense.summarizers import Summarizer, SummaryOutcome
from condense.tokens import estimate_text
from condense.types import RawMessage
from condense.units import Unit

STATS_KEY = "condense"
UNTRAINABLE = "no span around the middle can be replaced and keep the turns in a trainable order"
NO_ROOM = "no room for the summary or the notice where the turns keep a trainable order"
TOO_DEEP = f"nested deeper than {MAX_DEPTH} levels"
_RECURRING_CHARS = 20_000  # texts up to this long have their counts remembered ...
_RECURRING_TEXTS = 1_024  # ... this many at a time
_CALIBRATION_TOKENS = 200  # counted text that corrects the estimate of the rest


class Status(StrEnum):
    PASSED = "passed"
    COMPRESSED = "compressed"
    OVER_LIMIT = "still_over_limit"
    FAILED = "failed"
    REJECTED = "rejected"


@dataclass(frozen=True, slots=True)
class RecordResult:
    """``line``: the output line (no newline); ``None`` means "write the input line".
    ``stats``: what went under ``"condense"`` (``None`` for passed and rejected lines).
    ``reason``: why a line was rejected or failed. ``tokens``: the record's tokens as
    written."""

    status: Status
    line: bytes | None = None
    stats: dict[str, Any] | None = None
    reason: str | None = None
    tokens: int = 0


@dataclass(frozen=True, slots=True)
class SummaryRequest:
    """A record waiting for an async summary of ``messages``."""

    messages: list[RawMessage]
    target_tokens: int
    plan: Chosen


@dataclass(frozen=True, slots=True)
class Chosen:
    """A record's plan (units over its turns), the planner's choice on it, and the span
    to replace: ``span`` units (empty unless summarizing), the ``placements`` a summary
    may take there (best first; none: no span keeps the record trainable), the exact
    ``kept`` tokens of every other turn and the ``room`` what replaces the span may take.
    ``planned`` is the planner's span, which ``span`` differs from only to keep the role
    order (:mod:`condense.datasets.placement`)."""

    plan: Plan
    choice: SpanChoice
    span: range = range(0)
    placements: tuple[Placement, ...] = ()
    kept: int = 0
    room: int = 0
    planned: range = range(0)

    @property
    def verdict(self) -> Verdict:
        return self.choice.verdict

    @property
    def turns(self) -> range:
        """The turns the span covers."""
        return self.plan.messages_of(self.span) if self.span else range(0)

    @property
    def weakened(self) -> bool:
        return self.plan.layout.weakened


@dataclass(frozen=True, slots=True)
class _Parsed:
    record: dict[str, Any]
    trajectory: Trajectory
    counts: dict[int, int]


class RecordProcessor:
    """Runs the per-record function with one tokenizer and (for plain summarizers) one
    summarizer; build one per process. ``summarizer=None``: summaries are requested."""

    def __init__(self, options: DatasetOptions, summarizer: Summarizer | None) -> None:
        self.options = options
        self.summarizer = summarizer
        self.tokenizer: Tokenizer = load_tokenizer(options.tokenizer)
        # Counts of short texts that recur across records (system prompts, tool schemas).
        self._known: dict[str, int] = {}

    # -- the two entry points ---------------------------------------------------------

    def process(self, raw: bytes) -> RecordResult | SummaryRequest:
        """The result for one line, or what to summarize before it can be finished."""
        try:
            return self._process(raw)
        except Exception as error:  # a bug costs one record (flagged), not the whole run
            return _internal_error(raw, error)

    def finish(
        self, raw: bytes, request: SummaryRequest, outcome: SummaryOutcome | SummaryFailed
    ) -> RecordResult:
        """The result of a record whose summary (or failure) arrived."""
        try:
            return self._finish(raw, request, outcome)
        except Exception as error:  # as in process()
            return _internal_error(raw, error)

    # -- steps ------------------------------------------------------------------------

    def _process(self, raw: bytes) -> RecordResult | SummaryRequest:
        parsed = self._parse(raw)
        if isinstance(parsed, RecordResult):
            return parsed
        chosen = self._plan(parsed)
        if chosen.verdict is Verdict.FITS:
            return RecordResult(status=Status.PASSED, tokens=chosen.choice.tokens_before)
        if chosen.verdict is Verdict.NO_SPAN:
            return self._flag(raw, parsed, chosen, Status.OVER_LIMIT, None)
        if not chosen.placements:
            return self._flag(raw, parsed, chosen, Status.OVER_LIMIT, UNTRAINABLE)
        try:
            request = self._request(parsed, chosen)
        except FormatError as error:
            return RecordResult(status=Status.REJECTED, reason=_reason(error))
        if request.target_tokens < MIN_SUMMARY_TOKENS:  # no room for a summary: the notice
            return self._assemble(raw, parsed, chosen, None)
        if self.summarizer is None:
            return request
        try:
            outcome = summarize_sync(
                self.summarizer,
                request.messages,
                target_tokens=request.target_tokens,
                policy=self.options.retry,
            )
        except SummaryFailed as failure:
            return self._flag(raw, parsed, chosen, Status.FAILED, failure.reason)
        return self._assemble(raw, parsed, chosen, outcome, messages=len(request.messages))

    def _finish(
        self, raw: bytes, request: SummaryRequest, outcome: SummaryOutcome | SummaryFailed
    ) -> RecordResult:
        parsed = self._parse(raw)
        if isinstance(parsed, RecordResult):  # cannot happen for a line that was planned
            return parsed
        if isinstance(outcome, SummaryFailed):
            return self._flag(raw, parsed, request.plan, Status.FAILED, outcome.reason)
        return self._assemble(raw, parsed, request.plan, outcome, messages=len(request.messages))

    def _parse(self, raw: bytes) -> _Parsed | RecordResult:
        if not raw.strip():
            return _reject("blank line")
        try:
            record = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as error:
            return _reject(f"not UTF-8 text ({error.reason} at byte {error.start})")
        except RecursionError:
            return _reject(TOO_DEEP)
        except ValueError as error:
            return _reject(f"invalid JSON ({error})")
        if not isinstance(record, dict):
            return _reject(f"expected a JSON object, got {type(record).__name__}")
        if too_deep(record, limit=MAX_DEPTH + 2):  # the record and its turn list: +2
            return _reject(TOO_DEEP)
        try:
            trajectory = read_trajectory(record)
        except FormatError as error:
            return RecordResult(status=Status.REJECTED, reason=_reason(error))
        return _Parsed(record=record, trajectory=trajectory, counts={})

    def _plan(self, parsed: _Parsed) -> Chosen:
        """The shared planner (``condense.compress.plan``) under the options' policy,
        with units over the record's turns and the turns counted as the trainer sees
        them: text plus ``turn_overhead``."""
        texts = parsed.trajectory.texts
        counts = parsed.counts
        overhead = self.options.turn_overhead
        count = self.tokenizer.count
        known = self._known

        def turn_tokens(turn: int) -> int:
            cached = counts.get(turn)
            if cached is None:
                text = texts[turn]
                if len(text) > _RECURRING_CHARS:
                    cached = count(text)
                elif (cached := known.get(text)) is None:
                    if len(known) >= _RECURRING_TEXTS:
                        known.clear()
                    cached = known[text] = count(text)
                cached = counts[turn] = cached + overhead
            return cached

        def unit_tokens(unit: Unit) -> int:
            return sum(turn_tokens(turn) for turn in range(unit.start, unit.stop))

        def estimate(units: Sequence[Unit]) -> int:
            """An estimate of the turns of ``units`` (their overhead included), corrected
            by how far the same estimator is off on the turns of this record that were
            counted: it errs alike on alike text (10 % low on agent sessions, within
            1–3 % once corrected on the corpus)."""
            turns = [t for unit in units for t in range(unit.start, unit.stop)]
            guess = estimate_text("\n".join(texts[t] for t in turns))
            counted = estimate_text("\n".join(texts[t] for t in counts))
            if counted >= _CALIBRATION_TOKENS:
                exact = sum(counts.values()) - overhead * len(counts)
                guess = round(guess * min(2.0, max(0.5, exact / counted)))
            return guess + overhead * len(turns)

        trajectory = parsed.trajectory
        target = self.options.target_tokens
        plan = make_plan(
            trajectory.units,
            unit_tokens=unit_tokens,
            protection=self.options.protection,
            messages=trajectory.skeleton,
            budget=target,
        )
        choice = choose_span(
            plan,
            unit_tokens=unit_tokens,
            estimate=estimate,
            budget=target,
            reserve=self.options.reserve,
            exact=self.options.exact_counts,
        )
        if choice.verdict is not Verdict.SUMMARIZE:
            return Chosen(plan=plan, choice=choice)
        return self._placed(parsed, plan, choice, unit_tokens)

    def _placed(
        self, parsed: _Parsed, plan: Plan, choice: SpanChoice, unit_tokens: Callable[[Unit], int]
    ) -> Chosen:
        """The planner's span, moved where needed so that a summary keeps the record
        trainable (:func:`condense.datasets.placement.trainable_span`), with the exact
        tokens of what it keeps."""
        (planned,) = plan.spans(choice.replaced)  # the middle is one run of units
        target = self.options.target_tokens

        def tokens_of(unit: int) -> int:
            return unit_tokens(plan.units[unit])

        found = trainable_span(
            plan,
            planned,
            turn_kinds(parsed.trajectory.roles),
            role=self.options.summary_role,
            slack=target - choice.reserve - choice.kept_tokens,
            unit_tokens=tokens_of,
            text_fits=choice.reserve >= self._smallest_text,
        )
        if found is None:
            return Chosen(plan=plan, choice=choice, planned=planned)
        span, placements = found
        kept = (
            choice.kept_tokens
            + sum(tokens_of(unit) for unit in planned if unit not in span)
            - sum(tokens_of(unit) for unit in span if unit not in planned)
        )
        return Chosen(
            plan=plan,
            choice=choice,
            span=span,
            placements=tuple(placements),
            kept=kept,
            room=max(0, min(self.options.reserve, target - kept)),
            planned=planned,
        )

    @functools.cached_property
    def _smallest_text(self) -> int:
        """What the shortest text in place of a span costs: the one-line notice, as a
        turn of its own, for a span of five-digit turn numbers."""
        return self.tokenizer.count(left_out_notice(range(10_000, 99_999))) + (
            self.options.turn_overhead
        )

    def _request(self, parsed: _Parsed, chosen: Chosen) -> SummaryRequest:
        room = chosen.room - self.options.turn_overhead
        if self.options.notice:
            room -= self.tokenizer.count(self.options.notice + "\n")
        trajectory = parsed.trajectory
        turns = [trajectory.turns[i] for i in self._window(trajectory, chosen.plan, chosen.span)]
        messages = canonical(trajectory, turns).messages
        return SummaryRequest(messages=messages, target_tokens=max(0, room), plan=chosen)

    def _window(self, trajectory: Trajectory, plan: Plan, span: range) -> list[int]:
        """The turns the summarizer reads: every turn of the span; with a bound
        (``summary_input_chars``), the span's first unit and its newest units within it
        (all of the span when it is that small)."""
        units = plan.units
        budget = self.options.summary_input_chars
        if budget is None:
            return list(range(units[span.start].start, units[span.stop - 1].stop))
        newest = span.stop  # the newest units read are span[newest - span.start:]
        while newest > span.start + 1:
            unit = units[newest - 1]
            size = sum(len(trajectory.texts[t]) for t in range(unit.start, unit.stop))
            if size > budget:
                break
            budget -= size
            newest -= 1
        first = units[span.start]
        tail = range(units[newest].start, units[span.stop - 1].stop) if newest < span.stop else ()
        return [*range(first.start, first.stop), *tail]

    def _assemble(
        self,
        raw: bytes,
        parsed: _Parsed,
        chosen: Chosen,
        outcome: SummaryOutcome | None,
        *,
        messages: int = 0,
    ) -> RecordResult:
        """Write the record with the span replaced: by the summary (framed as ``compress``
        frames it, as a summary of ``messages``, the canonical messages it was made of:
        the count its own scope states) at the first of the chosen placements where it
        fits, cut to the room; with no ``outcome`` or no room for it, by the one-line
        notice; with no room for that either, by nothing where the span may simply go.
        When nothing fits, the record is kept and flagged."""
        trajectory = parsed.trajectory
        turns = chosen.turns
        placed = self._place(parsed, chosen, outcome, messages)
        if placed is None:
            return self._flag(raw, parsed, chosen, Status.OVER_LIMIT, NO_ROOM)
        placement, text, size = placed
        written = _written(trajectory, turns, placement, text, self.options.summary_role)
        native = {**parsed.record, _list_key(trajectory): written}
        after = chosen.kept + size
        stats = self._stats(parsed, chosen, Status.COMPRESSED, after, len(written))
        stats.update(
            span=[turns.start, turns.stop],
            turns_removed=len(turns),
            placement=str(placement),
            summary_tokens=size,
            summarizer=outcome.summarizer if outcome is not None else None,
            attempts=outcome.attempts if outcome is not None else 0,
        )
        if chosen.planned != chosen.span:
            planned = chosen.plan.messages_of(chosen.planned)
            stats["planned_span"] = [planned.start, planned.stop]
        if outcome is None or text in ("", left_out_notice(turns)):
            stats["left_out"] = [turns.start, turns.stop]
        if chosen.weakened:
            stats["protection_weakened"] = True
        native[STATS_KEY] = stats
        line = json.dumps(native, ensure_ascii=False).encode()
        return RecordResult(status=Status.COMPRESSED, line=line, stats=stats, tokens=after)

    def _place(
        self, parsed: _Parsed, chosen: Chosen, outcome: SummaryOutcome | None, messages: int
    ) -> tuple[Placement, str, int] | None:
        """What replaces the span, where, and what it costs: the summary (framed as one of
        ``messages``) at the first placement where it fits (cut to the room), else the
        notice, else nothing."""
        turns = chosen.turns
        costs = {
            placement: _once_per_text(self._cost(parsed, turns, placement))
            for placement in chosen.placements
            if placement is not Placement.LEFT_OUT
        }
        if outcome is not None:
            summary = outcome.text.strip()
            for placement, cost in costs.items():
                text = self._summary_text(summary, covered=messages, room=chosen.room, cost=cost)
                if text is not None:
                    return placement, text, cost(text)
        notice = left_out_notice(turns)
        for placement, cost in costs.items():
            if (size := cost(notice)) <= chosen.room:
                return placement, notice, size
        if Placement.LEFT_OUT in chosen.placements:
            return Placement.LEFT_OUT, "", 0
        return None

    def _cost(self, parsed: _Parsed, turns: range, placement: Placement) -> Callable[[str], int]:
        """What ``text`` costs placed so: a turn of its own costs its tokens and the turn
        overhead; joined to a kept turn, what it adds to that turn's count."""
        trajectory = parsed.trajectory
        count = self.tokenizer.count
        overhead = self.options.turn_overhead
        joined = {
            Placement.JOINED_TO_NEXT: turns.stop,
            Placement.JOINED_TO_PREVIOUS: turns.start - 1,
            Placement.SYSTEM: 0 if trajectory.roles[0] == "system" else None,
        }.get(placement)
        if placement is Placement.LEFT_OUT:
            return lambda text: 0
        if joined is None:
            return lambda text: count(text) + overhead
        first = placement is Placement.JOINED_TO_NEXT
        counted = parsed.counts.get(joined)  # a kept turn: counted when it was planned
        alone = count(trajectory.texts[joined]) if counted is None else counted - overhead

        def added(text: str) -> int:
            turn = joined_turn(trajectory, joined, text, first=first)
            return count(turn_text(trajectory, turn)) - alone

        return added

    def _summary_text(
        self, summary: str, *, covered: int, room: int, cost: Callable[[str], int]
    ) -> str | None:
        """The summary's text: the options' notice line, then the summary block
        ``compress`` writes (``condense.reduce.summary``), the summary cut so that the
        text ``cost``s at most ``room``; ``None`` when no summary fits."""
        notice = self.options.notice

        def framed(inner: str) -> str:
            block = summary_block(inner, covered=covered)
            return f"{notice}\n{block}" if notice else block

        text = framed(summary)
        spare = room - cost(framed(""))
        while cost(text) > room and spare > 0:
            text = framed(self.tokenizer.truncate(summary, spare))
            spare -= 2  # a cut can merge with the footer's first token
        return text if spare > 0 else None

    def _flag(
        self, raw: bytes, parsed: _Parsed, chosen: Chosen, status: Status, reason: str | None
    ) -> RecordResult:
        turns = len(parsed.trajectory.turns)
        stats = self._stats(parsed, chosen, status, chosen.choice.tokens_before, turns)
        if reason is not None:
            stats["reason"] = reason
        return RecordResult(
            status=status,
            line=_with_key(raw, parsed.record, stats),
            stats=stats,
            reason=reason,
            tokens=chosen.choice.tokens_before,
        )

    def _stats(
        self, parsed: _Parsed, chosen: Chosen, status: Status, after: int, turns_after: int
    ) -> dict[str, Any]:
        """The record's statistics; ``turns_removed`` counts the input turns that are no
        longer there word for word (0 here, the span's turns once it is replaced)."""
        before = len(parsed.trajectory.turns)
        return {
            "status": str(status),
            "target": self.options.target_tokens,
            "tokens_before": chosen.choice.tokens_before,
            "tokens_before_exact": chosen.choice.exact,
            "tokens_after": after,
            "turns_before": before,
            "turns_after": turns_after,
            "turns_removed": 0,
        }


def _written(
    trajectory: Trajectory, turns: range, placement: Placement, text: str, role: str
) -> list[Any]:
    """The record's turns with ``turns`` replaced by ``text`` placed so."""
    native = trajectory.turns
    start, stop = turns.start, turns.stop
    if placement is Placement.TURN:
        return [*native[:start], summary_turn(trajectory, role, text), *native[stop:]]
    if placement is Placement.JOINED_TO_NEXT:
        after = joined_turn(trajectory, stop, text, first=True)
        return [*native[:start], after, *native[stop + 1 :]]
    if placement is Placement.JOINED_TO_PREVIOUS:
        before = joined_turn(trajectory, start - 1, text, first=False)
        return [*native[: start - 1], before, *native[stop:]]
    written = [*native[:start], *native[stop:]]
    if placement is Placement.SYSTEM:
        if trajectory.roles[0] == "system":
            written[0] = joined_turn(trajectory, 0, text, first=False)
        else:
            written.insert(0, summary_turn(trajectory, "system", text))
    return written


def _once_per_text(cost: Callable[[str], int]) -> Callable[[str], int]:
    """``cost``, counting each text once: the text that fits is costed again where it
    is placed."""
    known: dict[str, int] = {}

    def once(text: str) -> int:
        value = known.get(text)
        if value is None:
            value = known[text] = cost(text)
        return value

    return once


def _list_key(trajectory: Trajectory) -> str:
    return "conversations" if trajectory.format == "sharegpt" else list_key(trajectory.record)


def _with_key(raw: bytes, record: dict[str, Any], stats: dict[str, Any]) -> bytes:
    """``raw`` with ``"condense": stats`` added, every other byte unchanged (re-written
    only when the record already has that key)."""
    body = raw.rstrip()
    if STATS_KEY in record or not body.endswith(b"}"):
        return json.dumps({**record, STATS_KEY: stats}, ensure_ascii=False).encode()
    inner = body[:-1].rstrip()
    separator = b"" if inner.endswith(b"{") else b", "
    value = json.dumps(stats, ensure_ascii=False).encode()
    return inner + separator + b'"' + STATS_KEY.encode() + b'": ' + value + b"}"


def _internal_error(raw: bytes, error: Exception) -> RecordResult:
    reason = f"internal error: {type(error).__name__}: {error}; please report this"
    try:
        record = json.loads(raw)
    except (ValueError, RecursionError):
        record = None
    if not isinstance(record, dict):
        return _reject(reason)
    stats = {"status": str(Status.FAILED), "reason": reason}
    line = _with_key(raw, record, stats)
    return RecordResult(status=Status.FAILED, line=line, stats=stats, reason=reason)


def _reject(reason: str) -> RecordResult:
    return RecordResult(status=Status.REJECTED, reason=reason)


def _reason(error: FormatError) -> str:
    return error.reason if error.index is None else f"message {error.index}: {error.reason}"
