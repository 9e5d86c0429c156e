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

import json
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from condense._input import MAX_DEPTH, too_deep
from condense.compress.assemble import MIN_SUMMARY_TOKENS
from condense.compress.assemble import notice as left_out_notice
from condense.compress.plan import Plan, SpanChoice, Verdict, choose_span, make_plan
from condense.datasets.options import DatasetOptions
from condense.datasets.summaries import SummaryFailed, summarize_sync
from condense.datasets.tokenizer import Tokenizer, load_tokenizer
from condense.datasets.trajectory import Trajectory, canonical, read_trajectory, summary_turn
from condense.exceptions import FormatError
from condense.formats.openai import list_key
from condense.reduce.summary import summary_block
from condense.summarizers import Summarizer, SummaryOutcome
from condense.tokens import estimate_text
from condense.types import RawMessage
from condense.units import Unit

STATS_KEY = "condense"
TOO_DEEP = f"nested deeper than {MAX_DEPTH} levels"
_RECURRING_CHARS = 20_000  # texts up to this long have their counts remembered ...
_RECURRING_TEXTS = 1_024  # ... this many at a time


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
    """A record's plan (units over its turns) and the span chosen on it: the units
    ``span`` replaced (empty unless summarizing)."""

    plan: Plan
    choice: SpanChoice
    span: range

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
        return self._assemble(raw, parsed, chosen, outcome)

    def _finish(
        self, raw: bytes, request: SummaryRequest, outcome: SummaryOutcome | SummaryFailed
    ) -> RecordResult:
        parsed = self._parse(raw)
        if isinstance(parsed, RecordResult):  # cannot happen for a line that was planned
            return parsed
        if isinstance(outcome, SummaryFailed):
            return self._flag(raw, parsed, request.plan, Status.FAILED, outcome.reason)
        return self._assemble(raw, parsed, request.plan, outcome)

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
            """One estimate of the texts joined (it samples a long text: cheaper than one
            estimate a turn), plus the overhead of each turn."""
            turns = [t for unit in units for t in range(unit.start, unit.stop)]
            return estimate_text("\n".join(texts[t] for t in turns)) + overhead * len(turns)

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
        span = range(0)
        if choice.replaced:
            (span,) = plan.spans(choice.replaced)  # the middle is one run of units
        return Chosen(plan=plan, choice=choice, span=span)

    def _request(self, parsed: _Parsed, chosen: Chosen) -> SummaryRequest:
        room = chosen.choice.reserve - self.options.turn_overhead
        if self.options.notice:
            room -= self.tokenizer.count(self.options.notice + "\n")
        trajectory = parsed.trajectory
        turns = [trajectory.turns[i] for i in self._window(trajectory, chosen.plan, chosen.span)]
        messages = canonical(trajectory, turns).messages
        return SummaryRequest(messages=messages, target_tokens=max(0, room), plan=chosen)

    def _window(self, trajectory: Trajectory, plan: Plan, span: range) -> list[int]:
        """The turns the summarizer reads: the span's first unit and its newest units
        within ``summary_input_chars`` (all of the span when it is that small)."""
        units = plan.units
        budget = self.options.summary_input_chars
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
        self, raw: bytes, parsed: _Parsed, chosen: Chosen, outcome: SummaryOutcome | None
    ) -> RecordResult:
        """Write the record with the span replaced by the summary turn; with no
        ``outcome`` (no room for a summary) by the one-line notice, and with no room for
        that either, by nothing (the span is left out, and the stats say so)."""
        trajectory = parsed.trajectory
        start, stop = chosen.turns.start, chosen.turns.stop
        room = chosen.choice.reserve - self.options.turn_overhead
        summary = None
        if outcome is not None:
            summary = self._summary_text(outcome.text.strip(), covered=stop - start, room=room)
        text = left_out_notice(range(start, stop)) if summary is None else summary
        size = self.tokenizer.count(text)
        if size > room:  # not even the notice fits: leave the span out
            text, size = "", 0
        turns = trajectory.turns
        written = list(turns[:start])
        if text:
            written.append(summary_turn(trajectory, self.options.summary_role, text))
        else:
            size = -self.options.turn_overhead  # no summary turn at all
        written += turns[stop:]
        native = {**parsed.record, _list_key(trajectory): written}
        after = chosen.choice.kept_tokens + size + self.options.turn_overhead
        stats = self._stats(parsed, chosen, Status.COMPRESSED, after, len(written))
        stats.update(
            span=[start, stop],
            summary_tokens=size + self.options.turn_overhead,
            summarizer=outcome.summarizer if outcome is not None else None,
            attempts=outcome.attempts if outcome is not None else 0,
        )
        if summary is None:
            stats["left_out"] = [start, stop]
        if chosen.weakened:
            stats["protection_weakened"] = True
        native[STATS_KEY] = stats
        line = json.dumps(native, ensure_ascii=False).encode()
        return RecordResult(status=Status.COMPRESSED, line=line, stats=stats, tokens=after)

    def _summary_text(self, summary: str, *, covered: int, room: int) -> str | None:
        """The summary turn's text: the options' notice line, then the summary block
        ``compress`` writes (``condense.reduce.summary``), the summary cut to fit
        ``room`` tokens with its framing; ``None`` when no summary fits."""
        notice = self.options.notice

        def framed(inner: str) -> str:
            block = summary_block(inner, covered=covered)
            return f"{notice}\n{block}" if notice else block

        text = framed(summary)
        spare = room - self.tokenizer.count(framed(""))
        while self.tokenizer.count(text) > room and spare > 0:
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
        before = len(parsed.trajectory.turns)
        return {
            "status": str(status),
            "target": self.options.target_tokens,
            "tokens_before": chosen.choice.tokens_before,
            "tokens_before_exact": chosen.choice.exact,
            "tokens_after": after,
            "turns_before": before,
            "turns_after": turns_after,
            "turns_removed": before - turns_after,
        }


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
