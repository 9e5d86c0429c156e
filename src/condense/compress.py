"""``compress``: fit a history to a token budget without ever breaking it.

The pipeline: repair for the profile → segment into units → protect the system prompt,
the first and latest user asks, the latest reply and a tail → reduce the rest cheapest
first, stopping as soon as the budget fits: (1) older duplicate tool outputs become
pointers, (2) old tool outputs are masked with one-line placeholders, (3) long tool-call
arguments are shrunk structurally, (4) one contiguous span of whole units is summarized
(``condense.compressor`` explains the rare case that needs a second span) → place the
summary where the profile's role order allows → for Anthropic, remove the thinking that
the edits unbound (``condense.reduce.thinking``) → validate (raise rather than return an
invalid history) → count the result exactly.

Replay state belongs to its unit: a message carrying it (thinking blocks, Responses
items, thought signatures, ``reasoning_content``) is returned as the same object or left
out with its whole unit; it is never shrunk, merged into or split from its calls. The
running tool loop's exchange (its assistant turn and the results the agent has not read
yet) is protected like the latest user ask.

Planning uses cheap estimates; only the kept messages are counted with the real
tokenizer, and those counts are cached per message, so a session that grew by one turn is
re-compressed for the cost of that turn.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from condense._input import check_history
from condense.compressor import Compressor, UnitAction
from condense.exceptions import BudgetError as BudgetError  # its home before exceptions.py
from condense.exceptions import InputError, InvalidOutputError
from condense.providers import (
    DEFAULT_PROVIDER,
    Profile,
    ProviderChoice,
    choose_provider,
    media_billing,
)
from condense.providers.base import MediaBilling
from condense.reduce.thinking import ThinkingRemoval, unbind_thinking
from condense.repair import Change, repair
from condense.summarizers import Summarizer, get_summarizer
from condense.tokens import encoding_for_model
from condense.tokens.counting import shared_counter
from condense.types import RawMessage
from condense.units import UnitKind
from condense.validate import check


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
    provider: str
    """The profile the output was made valid for."""
    provider_reason: str
    """Why that profile (with ``provider="auto"``: what in the history chose it)."""
    media: MediaBilling = "openai"
    """How images and documents are counted: the way that provider bills them."""
    tokens_after: int
    fits: bool
    protected_tokens: int
    units: tuple[UnitOutcome, ...]
    summarizer: str | None
    summarizer_fell_back: bool
    fallback_reason: str | None
    repairs: tuple[Change, ...]
    replay_removed: tuple[ThinkingRemoval, ...] = ()
    """Replay state left out whole: the thinking blocks removed from kept Anthropic
    turns after the first edit (each with its index in the output, the blocks and why)."""
    incremental: bool
    _input: Sequence[RawMessage] = field(repr=False, compare=False)

    @functools.cached_property
    def tokens_before(self) -> int:
        """Exact tokens of the input (counted on first access, then cached)."""
        return shared_counter(self.encoding, media=self.media).messages(self._input)

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
        if self.replay_removed:
            line += (
                f"; thinking removed from {len(self.replay_removed)} turn(s) after the "
                f"first edit (message {self.replay_removed[0].edited_at})"
            )
        return f"{line}; provider {self.provider} ({self.provider_reason})"


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
    """The compressed history, the summary text (``None`` if nothing was summarized), the
    report, and the state to pass as ``previous=`` on the next call."""

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
    provider: str | Profile | ProviderChoice = DEFAULT_PROVIDER,
    summarizer: str | Summarizer = "extractive",
    previous: CompressionState | None = None,
    tail_tokens: int | None = None,
    summary_tokens: int | None = None,
    strict_budget: bool = False,
    keep_bound_thinking: bool = False,
) -> CompressionResult:
    """Return ``messages`` reduced to at most ``budget`` tokens, valid for ``provider``.

    ``tail_tokens`` (default: a quarter of the budget) protects the most recent units;
    ``summary_tokens`` caps the summary; by default the summary takes the room the kept
    part leaves, up to half the budget (at most 32,768 tokens).
    ``previous`` is the ``state`` of an earlier call on the same session. When even the
    protected part cannot fit, the report says so (``fits`` is False) and
    ``strict_budget=True`` raises ``BudgetError``. The input is never mutated.

    Under a profile with Anthropic's thinking rules, the thinking blocks of the turns
    after the first edit are removed (and listed in ``report.replay_removed``), except
    the running tool loop's turn, which comes back as it was; ``keep_bound_thinking=True``
    keeps them, for accounts that do not enforce thinking-block binding.
    """
    if isinstance(budget, bool) or not isinstance(budget, int) or budget <= 0:
        raise InputError(f"budget must be a positive number of tokens, not {budget!r}")
    check_history(messages, depth=False)  # repair checks the depth of what it works on
    for name, value in (("tail_tokens", tail_tokens), ("summary_tokens", summary_tokens)):
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 0
        ):
            raise InputError(f"{name} must be a number of tokens ≥ 0, not {value!r}")
    summarizer = get_summarizer(summarizer)  # an unknown name fails now, not at first summary
    choice = choose_provider(provider, messages=messages, model=model)
    profile = choice.profile
    media = media_billing(profile)
    counter = shared_counter(encoding or encoding_for_model(model), media=media)
    work, incremental = _resume_from(previous, messages, budget, profile, counter.encoding)
    engine = Compressor(
        repaired := repair(work, provider=choice),
        profile=profile,
        counter=counter,
        budget=budget,
        tail_tokens=budget // 4 if tail_tokens is None else tail_tokens,
        summary_cap=summary_tokens or min(4096, max(256, budget // 8)),
        summary_limit=summary_tokens,
        summarizer=summarizer,
        previous_text=previous.summary if previous is not None else None,
        bind_thinking=profile.thinking_in_running_loop and not keep_bound_thinking,
    )
    outcome = engine.run()
    output = outcome.messages
    removed: tuple[ThinkingRemoval, ...] = ()
    if profile.thinking_in_running_loop and not keep_bound_thinking:
        output, removed = unbind_thinking(outcome.messages, messages, stripped=outcome.stripped)
    if outcome.tokens is None or removed:  # changed: check and count what is returned
        problems = check(output, profile)
        if problems:
            raise InvalidOutputError(profile.name, problems, messages=outcome.messages)
        after = counter.messages(output)
    else:  # the repaired input itself, already validated by repair and counted
        after = outcome.tokens
    report = CompressionReport(
        budget=budget,
        encoding=counter.encoding,
        provider=profile.name,
        provider_reason=choice.reason,
        media=media,
        tokens_after=after,
        fits=after <= budget,
        protected_tokens=outcome.protected_tokens,
        units=tuple(
            UnitOutcome(unit.kind, unit.start, unit.stop, outcome.unit_actions.get(i, "kept"))
            for i, unit in enumerate(outcome.units)
        ),
        summarizer=outcome.summarizer,
        summarizer_fell_back=outcome.fell_back,
        fallback_reason=outcome.fallback_reason,
        repairs=repaired.changes,
        replay_removed=removed,
        incremental=incremental,
        _input=messages,
    )
    state = CompressionState(
        summary=outcome.summary if outcome.summary is not None else outcome.previous_summary,
        source=tuple(messages),
        output=tuple(output),
        budget=budget,
        provider=profile.name,
        encoding=counter.encoding,
    )
    result = CompressionResult(messages=output, summary=outcome.summary, report=report, state=state)
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
