"""``compress``: fit a history to a token budget without ever breaking it.

The stages, one module each, in pipeline order (all functions over frozen values):

0. ``incremental`` — a session that grew since the previous call is worked on as that
   call's output plus what was appended (``previous=``); then the history is repaired
   for the profile, and one that fits is returned as it is.
1. ``plan`` — segment into units and grade them: untouchable (the system prompt, the
   latest ask, the running turn — ``condense.turns`` —, compaction state), kept if at
   all possible (the first ask, the newest results, the latest reply), reducible (the
   rest, oldest first; a recent tail only gently), after deciding what to do with
   thinking the edits would unbind (``condense.reduce.thinking``); ``measure`` counts
   exactly only what decides.
2. ``reductions`` — the message reductions cheapest first (dedupe, strip images, mask,
   shrink) on the reducible units, then the gentle ones (shrink, cut) on the tail and
   the kept units, counted exactly, stopping as soon as the history fits.
3. ``assemble`` — replace the oldest reducible units by one summary, or a one-line notice;
   ``last_resort`` — the kept units reduced hard, then summarized too, then the running
   turn's own outputs cut middle-out.
4. ``gate`` — remove unbound Anthropic thinking (where that is the decision), validate,
   count, never return a larger history.

Every report carries the same facts (the budget and its room, the provider chosen, the
repairs) and what the call did, built from typed values (``_Known.report``).

The sequence of reductions does not depend on the budget: a larger budget stops earlier
in it, so it never keeps less. The common case, a history that already fits, costs a
repair (validation) pass and a guaranteed bound (``condense.tokens.upper_bound_tokens``);
exact counting happens only where the bound comes close to the budget.

Replay state belongs to its unit: a message carrying it (thinking blocks, Responses
items, thought signatures, ``reasoning_content``) is returned as the same object or left
out with its whole unit; it is never shrunk, merged into or split from its calls (so a
call's arguments on such a message cannot be shrunk: where they alone break the budget,
it is reported as not met).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from condense._input import check_history
from condense.compress.assemble import (
    MIN_SUMMARY_TOKENS,
    Assembly,
    SummaryInputs,
    assemble,
    bridges_needed,
    summary_reserve,
)
from condense.compress.gate import InputSize, gate
from condense.compress.incremental import resume_from
from condense.compress.last_resort import last_resort
from condense.compress.measure import Measured, measure
from condense.compress.plan import (
    DEFAULT_TAIL_TOKENS,
    Plan,
    Protection,
    SessionProtection,
    check_protection,
    compaction_units,
    make_plan,
    turn_units,
)
from condense.compress.reductions import (
    DEFAULT_REDUCTIONS,
    ReductionStep,
    SpanSummary,
    ladder,
    run_reductions,
)
from condense.compress.result import (
    CompressionReport,
    CompressionResult,
    CompressionState,
    OutputCut,
    UnitOutcome,
)
from condense.exceptions import BudgetError, InputError
from condense.formats import Conversation
from condense.formats.native import answer, answer_messages, read_native
from condense.message import carries_replay
from condense.providers import (
    DEFAULT_PROVIDER,
    Profile,
    ProviderChoice,
    choose_provider,
    media_billing,
)
from condense.providers.anthropic import request_thinking
from condense.providers.base import MediaBilling
from condense.reduce.compaction import Superseded, supersede
from condense.reduce.cut import SHORT_CHARS, cut_content, cut_size, tool_name
from condense.reduce.mask import calls_answered
from condense.reduce.thinking import (
    BOUND_THINKING,
    Binding,
    BoundThinking,
    RequestSettings,
    Stripped,
    ThinkingRemoval,
    bound_after,
    decide,
    drop_block_settings,
    strip_thinking,
)
from condense.repair import Change, repair
from condense.summarizers import Summarizer, get_summarizer
from condense.tokens import TokenCounter, encoding_for_model
from condense.tokens.counting import shared_counter
from condense.tokens.estimate import quick_estimate, upper_bound_message
from condense.tokens.families import tokenizer_for_model
from condense.tokens.pieces import REPLY_PRIMING_TOKENS
from condense.tokens.request import Room, parts_tokens, plan_room, request_parts
from condense.turns import Turn, current_turn
from condense.types import RawMessage
from condense.units import Unit, UnitKind, segment
from condense.validate import check


def compress(
    messages: Sequence[Any] | Conversation,
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
    bound_thinking: BoundThinking = "auto",
    thinking: object = None,
    reductions: Sequence[ReductionStep] = DEFAULT_REDUCTIONS,
    protection: Protection | None = None,
    tools: Sequence[Any] | None = None,
    tokenizer_margin: bool = True,
) -> CompressionResult:
    """Return ``messages`` reduced to at most ``budget`` tokens, valid for ``provider``.

    Nothing is reduced when the history fits, and reductions stop as soon as the exact
    count fits. Protection is graded (``condense.compress.plan``): the system prompt, the
    latest ask, the running turn and compaction state are untouchable; the first ask, the
    newest results and the latest reply are kept if at all possible — reduced last,
    gently (arguments shrunk, outputs cut middle-out with a marker saying how much),
    summarized only after everything else; the rest is reduced oldest first, cheapest
    first, but the newest units worth ``tail_tokens`` (default 2,000) only gently.
    ``summary_tokens`` caps the summary (by default it takes the room the kept part
    leaves, up to half the budget and 32,768 tokens). ``reductions`` is the sequence of
    steps to run, cheapest first (``condense.compress.DEFAULT_REDUCTIONS``: dedupe, strip
    images, mask, shrink, cut, summarize); drop one to forbid it or add your own
    ``MessageReduction``. The sequence
    does not depend on the budget, so a larger budget never keeps less.
    ``previous`` is the ``state`` of an earlier call on the same session: the call then
    works on that call's output plus what was appended since, and meets every guarantee a
    fresh call does (the previous summary is folded into the next, never stacked).
    ``protection`` replaces the session policy (``SessionProtection``) with another, e.g.
    the training-set policy ``HeadTailProtection(tail_messages=4)`` that ``condense
    dataset`` uses (both in ``condense.compress``); ``tail_tokens`` is then unused.

    The result is never larger than the input, and holds one summary at most. It fits
    whenever the untouchable part does with the running turn's tool outputs cut to a
    short head (a one-line notice aside, where leaving the rest out would break the role
    order): as the very last resort those outputs are cut middle-out, largest first
    (``report.cuts`` names every cut). When even that cannot fit, the report says so
    (``fits`` is False) and ``strict_budget=True`` raises ``BudgetError``. The input is
    never mutated.

    The running turn (everything after the last user message that carries content, when
    the history ends with its tool results, ``condense.turns``) comes back message by
    message in order, its assistant messages as the same objects; only its tool outputs
    may be cut, last. ``thinking`` is the request's thinking setting (its ``thinking``
    object, or ``"enabled"``, ``"adaptive"``, ``"disabled"``; ``None``: unknown). Anthropic thinking
    that an edit would unbind (models with preserved thinking check each block against
    everything before it) is handled per request, as ``report.thinking`` says
    (``condense.reduce.thinking``): kept where the model does not check; with
    ``bound_thinking="drop_block"`` kept, and ``result.request_settings`` holds the body
    fields and headers to send so that the API drops the blocks whose prefix changed;
    removed (the running turn's too, each removal in ``report.replay_removed``) where no
    turn needs thinking; else nothing before the current turn's opening thinking is
    changed and the budget is reported as not met. ``bound_thinking="keep"`` (or
    ``keep_bound_thinking=True``) keeps every block, for accounts that do not enforce
    the check.

    ``messages`` may be a loaded :class:`~condense.formats.Conversation`
    (``condense.load(path)``): its format then also chooses the profile, its body's
    ``thinking`` and ``model`` are the request's unless ``thinking``/``model`` say
    otherwise, and each repair in the report names its place in the user's file. The
    result is in the canonical form; write it back with
    ``conversation.dump(result.messages)`` (and ``result.request_settings.apply_body``).
    A native list or request body (Anthropic, Responses, Gemini, Bedrock …) is read the
    same way, and the result answers in its shape (``result.messages`` native,
    ``result.native`` the whole request, a body with the request settings' fields
    already merged in; see :mod:`condense.formats.native`).

    The budget is for the whole request: what a loaded request sends besides its messages
    (``tools``, Responses ``instructions``, a structured-output schema) and the tool
    definitions passed as ``tools`` are counted against it (``condense.tokens.request``).
    The budget is in the provider's tokens: when ``model`` (or, unless ``model`` is given,
    a loaded request's ``model``) names a family whose tokenizer condense does not ship
    (Claude ×1.30, Claude Opus 4.7 and later ×1.70, Gemini ×1.25), the request is planned
    below the budget by the family's measured error (``condense.tokens.families``), so
    that it fits the provider's own count; OpenAI models are counted with their own
    encoding, and without a model (or for a family not measured) the budget is in
    condense's tokens. ``tokenizer_margin=False`` takes the budget in condense's tokens
    whatever the model (for a caller that planned the margin itself, as the proxy does).
    ``report.room`` says how the budget was shared out.
    """
    native = read_native(messages)
    if native is not None:
        done = compress(
            native,
            budget=budget,
            model=model,
            encoding=encoding,
            provider=provider,
            summarizer=summarizer,
            previous=previous,
            tail_tokens=tail_tokens,
            summary_tokens=summary_tokens,
            strict_budget=strict_budget,
            keep_bound_thinking=keep_bound_thinking,
            bound_thinking=bound_thinking,
            thinking=thinking,
            reductions=reductions,
            protection=protection,
            tools=tools,
            tokenizer_margin=tokenizer_margin,
        )
        listed, whole = answer(native, done.messages)
        if done.request_settings is not None and isinstance(whole, dict):
            whole = done.request_settings.apply_body(whole)
            listed = answer_messages(native, whole, done.messages)
        return replace(done, messages=listed, native=whole)
    conversation: Conversation | None
    given: Sequence[Any]
    if isinstance(messages, Conversation):
        conversation, given = messages, messages.messages
    else:
        conversation, given = None, messages
    _check_options(
        given,
        budget=budget,
        tail_tokens=tail_tokens,
        summary_tokens=summary_tokens,
        protection=protection,
        bound_thinking=bound_thinking,
        tools=tools,
    )
    bound: BoundThinking = "keep" if keep_bound_thinking else bound_thinking
    summarizer = get_summarizer(summarizer)  # an unknown name fails now, not at first summary
    record = conversation.record if conversation is not None else None
    if thinking is None and conversation is not None:
        thinking = request_thinking(record, format=conversation.format)
    request_model = model
    if request_model is None and isinstance(record, dict) and isinstance(record.get("model"), str):
        request_model = record["model"]
    choice = choose_provider(
        provider,
        messages=given,
        format=conversation.format if conversation is not None else None,
        model=model,
        thinking=thinking,
    )
    profile = choice.profile
    media = media_billing(profile)
    counter = shared_counter(encoding or encoding_for_model(request_model), media=media)
    room = _room(
        budget, conversation, tools, request_model, counter.encoding, margin=tokenizer_margin
    )
    budget = room.messages  # what the messages may take, in condense's tokens
    work, incremental = resume_from(previous, given, budget, profile, counter.encoding)
    # the user's own file, when the work is it: its repairs are named in its terms
    source = conversation if conversation is not None and work is given else work
    repaired = repair(source, provider=choice)
    history: list[RawMessage] = repaired.messages
    known = _Known(
        budget=room.budget,
        room=room,
        encoding=counter.encoding,
        provider=profile.name,
        provider_reason=choice.reason,
        media=media,
        repairs=repaired.changes,
        incremental=incremental,
        given=given,
    )

    def finish(result: CompressionResult) -> CompressionResult:
        if strict_budget and not result.report.fits:
            raise BudgetError(result)
        return result

    def unchanged(
        tokens: int | None,
        plan: Plan | None,
        protected: int | Callable[[], int] | None,
        binding: Binding | None = None,
    ) -> CompressionResult:
        report = known.report(
            thinking=binding,
            fits=True if tokens is None else tokens <= budget,
            units=_outcomes(plan, {})
            if plan is not None
            else tuple(UnitOutcome(u.kind, u.start, u.stop, "kept") for u in segment(history)),
            output=history,
            tokens_after=tokens,
            protected=history if protected is None else protected,
        )
        return finish(
            _result(history, None, report, previous, budget, profile.name, counter.encoding)
        )

    if _bounded_by(history, budget, media):  # fits for every encoding
        return unchanged(None, None, None)
    grown = _grown_tokens(previous, history, incremental, bool(repaired.changes), counter)
    if grown is not None and grown <= budget:  # a session's growth fits: sent as it is
        return unchanged(grown, None, None)
    whole = history  # the repaired input: what the output must stay below
    # stage 1a: what a compaction block supersedes goes first (the API drops it itself)
    cut, superseded = supersede(history, profile)
    if superseded is not None and check(cut, profile):
        cut, superseded = history, None
    binding = decide(cut, profile=profile, model=request_model, choice=bound)
    if binding is not None and binding.action == "hold":
        # nothing before the current turn's opening thinking may change: hand it back
        tokens = counter.messages(history)
        return unchanged(tokens, None, tokens, binding)
    if superseded is not None:
        history = cut
        known = replace(known, superseded=superseded)
    turn = current_turn(history)
    tail = tail_tokens if tail_tokens is not None else DEFAULT_TAIL_TOKENS
    plan = _plan(history, counter, tail, turn, protection, budget)

    # stage 1b: reducing unbinds the thinking of the turns after the oldest reducible
    # unit's first message; where it is to be removed, plan on what will be sent
    bind = binding is not None and binding.action == "remove"
    summarizing = any(isinstance(step, SpanSummary) for step in reductions)
    measured = measure(
        history,
        plan=plan,
        steps=reductions,
        budget=budget,
        counter=counter,
        original=history,
        summarize=summarizing and not bind,
    )
    bridges = bridges_needed(history, plan, profile, counter)

    def protected() -> int:  # counted only when the report is asked
        floor = _untouchable_tokens(history, plan, turn, protection, counter, measured.fixed)
        return floor + bridges

    if measured.first_kept is None and measured.lower_bound <= budget and superseded is None:
        return unchanged(measured.lower_bound, plan, protected, binding)
    current: list[RawMessage] = history
    stripped: Stripped = {}
    edit_from = superseded.start if superseded is not None else None
    if edit_from is None and plan.order:
        edit_from = plan.units[plan.order[0]].start + 1
    if bind and edit_from is not None:
        current, stripped = strip_thinking(history, edit_from)
        measured = measure(
            current,
            plan=plan,
            steps=reductions,
            budget=budget,
            counter=counter,
            original=history,
            summarize=summarizing,
        )

    stage = _reduce(current, measured, plan, reductions, budget, counter, history)
    after_cheap, output, kept_tokens, first = stage.tokens, stage.messages, stage.kept, stage.first
    actions: dict[int, str] = dict(stage.actions)
    short = stage.short_of_target
    # what the output must stay below: the repaired input, counted in full only if needed
    at_least = 0 if superseded is not None else measured.lower_bound
    input_size = InputSize(at_least=at_least, count=lambda: counter.messages(whole))
    assembly: Assembly | None = None
    frozen = _frozen(output, plan, turn, protection, stripped)
    carried = counter.text(previous.summary) if previous and previous.summary else 0
    # what there is to summarize: estimated only when something will be (the cheap
    # reductions may already fit; then no summary is planned and nothing reads this)
    over = after_cheap > budget
    history_tokens = sum(quick_estimate(m, media=counter.media) for m in history) if over else 0
    inputs = SummaryInputs(
        original=history,
        profile=profile,
        counter=counter,
        summarizer=summarizer,
        cap=summary_reserve(
            summary_tokens,
            carried,
            budget=budget,
            history_tokens=history_tokens,
        ),
        limit=summary_tokens,
        previous=previous.summary if previous is not None else None,
        frozen=frozen,
        stripped=[message for message, _ in stripped.values()],
        ask=turn.ask if _graded(protection) else None,
    )
    if over and summarizing:
        assembly = assemble(
            output,
            kept_tokens=kept_tokens,
            first=first,
            input_size=input_size,
            plan=plan,
            budget=budget,
            inputs=inputs,
        )
    result_tokens = after_cheap
    if after_cheap > budget:
        result_tokens = counter.messages(assembly.messages if assembly else output)
    if result_tokens > budget and _graded(protection):
        # the last resort: the kept units reduced hard, then summarized, then the running
        # turn's own outputs cut (condense.compress.last_resort)
        assemble_with = _hard_summary(plan, turn, protection, stripped, input_size, inputs, budget)
        resort = last_resort(
            output,
            plan=plan,
            steps=reductions,
            running=_running_outputs(history, turn),
            budget=budget,
            counter=counter,
            original=history,
            assemble_with=assemble_with if summarizing else None,
        )
        if resort.tokens < result_tokens:
            output, assembly = resort.messages, resort.assembly
            actions.update(resort.actions)
            short = tuple(sorted({*short, *resort.short_of_target}))
    if assembly is not None:
        output = assembly.messages
    gated = gate(
        output,
        repaired=whole,
        input_size=input_size,
        original=given,
        profile=profile,
        counter=counter,
        unbind=bind,
        stripped=stripped,
    )
    if gated.reverted:
        known = replace(known, superseded=None)
        history = whole
        return unchanged(counter.messages(whole), None, protected, binding)
    if assembly is not None:
        actions.update((u, "summarized") for u in assembly.summarized)
    settings: RequestSettings | None = None
    dropping = binding is not None and binding.action == "drop_block"
    if dropping and bound_after(gated.messages, given):
        settings = drop_block_settings(thinking)
    report = known.report(
        cuts=_cuts(gated.messages, given, history, turn),
        thinking=binding,
        fits=gated.tokens <= budget,
        units=_outcomes(plan, actions),
        assembly=assembly,
        replay_removed=gated.replay_removed,
        short_of_target=short,
        output=gated.messages,
        tokens_after=gated.tokens,
        protected=protected,
    )
    summary = assembly.summary if assembly is not None else None
    return finish(
        _result(
            gated.messages,
            summary,
            report,
            previous,
            budget,
            profile.name,
            counter.encoding,
            settings,
        )
    )


def _hard_summary(
    plan: Plan,
    turn: Turn,
    protection: Protection | None,
    stripped: Stripped,
    input_size: InputSize,
    inputs: SummaryInputs,
    budget: int,
) -> Callable[[Sequence[RawMessage], Plan, int], Assembly | None]:
    """How the last resort summarizes (``assemble_with``): the units of a wider plan
    (the kept ones too) replaced oldest first, from the ``at_least``-th, where what is
    kept if at all possible goes only to make room for the shortest summary, which then
    takes the room left."""
    counter = inputs.counter

    def assemble_with(messages: Sequence[RawMessage], wide: Plan, at_least: int) -> Assembly | None:
        counts = counter.counts(messages)
        total = sum(counts) + REPLY_PRIMING_TOKENS
        gone = [0]
        for u in wide.order:
            gone.append(gone[-1] + sum(counts[wide.units[u].start : wide.units[u].stop]))
        return assemble(
            messages,
            kept_tokens=lambda k: total - gone[k],
            first=at_least,
            input_size=input_size,
            plan=wide,
            budget=budget,
            inputs=replace(
                inputs,
                cap=MIN_SUMMARY_TOKENS,
                frozen=_frozen(messages, plan, turn, protection, stripped),
            ),
        )

    return assemble_with


@dataclass(frozen=True, kw_only=True)
class _Stage2:
    """The history after the cheap reductions (stage 2), and what the summary is planned
    from: ``kept(k)`` is the tokens kept when the first ``k`` units of the plan's order
    are summarized (``first``: the fewest that may be), ``tokens`` the total (over the
    budget when the oldest units must be summarized)."""

    tokens: int
    messages: Sequence[RawMessage]
    actions: Mapping[int, str]
    short_of_target: tuple[int, ...]
    kept: Callable[[int], int]
    first: int


def _reduce(
    current: list[RawMessage],
    measured: Measured,
    plan: Plan,
    reductions: Sequence[ReductionStep],
    budget: int,
    counter: TokenCounter,
    history: list[RawMessage],
) -> _Stage2:
    """Stage 2: when the walk found no summary needed, the reductions cheapest first;
    else the oldest units must be summarized, the kept ones as ``measure`` reduced them."""
    if measured.first_kept is not None:
        suffix, fixed = measured.suffix, measured.fixed
        return _Stage2(
            tokens=budget + 1,
            messages=measured.messages,
            actions=measured.actions,
            short_of_target=measured.short_of_target,
            kept=lambda k: fixed + suffix[k],
            first=measured.first_kept,
        )
    # a message the walk left uncounted (its reduced copy was counted instead) is
    # counted only where its count decides (what a reduction replaces is not)
    reduced = run_reductions(
        current,
        measured.counts,
        plan=plan,
        rungs=ladder(plan, reductions),
        budget=budget,
        counter=counter,
        original=history,
    )
    prefix = [0]
    for u in plan.order:
        prefix.append(prefix[-1] + sum(reduced.counts[plan.units[u].start : plan.units[u].stop]))
    total = reduced.tokens
    return _Stage2(
        tokens=total,
        messages=reduced.messages,
        actions=reduced.actions,
        short_of_target=reduced.short_of_target,
        kept=lambda k: total - prefix[k],
        first=1,
    )


def _check_options(
    given: Sequence[Any],
    *,
    budget: object,
    tail_tokens: object,
    summary_tokens: object,
    protection: Protection | None,
    bound_thinking: object,
    tools: object,
) -> None:
    """Refuse, with a clear :class:`InputError`, what ``compress`` cannot work with."""
    if isinstance(budget, bool) or not isinstance(budget, int) or budget <= 0:
        raise InputError(f"budget must be a positive number of tokens, not {budget!r}")
    check_history(given, depth=False)  # repair checks the depth of what it works on
    for name, value in (("tail_tokens", tail_tokens), ("summary_tokens", summary_tokens)):
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 0
        ):
            raise InputError(f"{name} must be a number of tokens ≥ 0, not {value!r}")
    if summary_tokens == 0:  # not "no cap": a summary of no tokens cannot be written
        raise InputError(
            "summary_tokens=0 leaves a summary no room; give it at least 1 token, or leave "
            "it out to let the summary take the room the kept part leaves"
        )
    check_protection(protection)
    if bound_thinking not in BOUND_THINKING:
        raise InputError(
            f"bound_thinking must be one of {', '.join(BOUND_THINKING)}, not {bound_thinking!r}"
        )
    if tools is not None and (
        isinstance(tools, str | bytes | Mapping) or not isinstance(tools, Sequence)
    ):
        raise InputError(f"tools must be a list of tool definitions, not {type(tools).__name__}")


@dataclass(frozen=True, kw_only=True)
class _Known:
    """What every report of one call says, whatever the call then does: the budget and
    its room, how it counts, the provider chosen and why, the repairs, whether it resumed
    a session, the caller's history, and the compaction block's superseded turns."""

    budget: int
    room: Room
    encoding: str
    provider: str
    provider_reason: str
    media: MediaBilling
    repairs: tuple[Change, ...]
    incremental: bool
    given: Sequence[RawMessage]
    superseded: Superseded | None = None

    def report(
        self,
        *,
        fits: bool,
        units: tuple[UnitOutcome, ...],
        thinking: Binding | None,
        output: Sequence[RawMessage],
        tokens_after: int | None,
        protected: Sequence[RawMessage] | int | Callable[[], int],
        assembly: Assembly | None = None,
        replay_removed: tuple[ThinkingRemoval, ...] = (),
        short_of_target: tuple[int, ...] = (),
        cuts: tuple[OutputCut, ...] = (),
    ) -> CompressionReport:
        """The report of an outcome: these facts, and what the call did."""
        return CompressionReport(
            budget=self.budget,
            room=self.room,
            encoding=self.encoding,
            provider=self.provider,
            provider_reason=self.provider_reason,
            media=self.media,
            repairs=self.repairs,
            incremental=self.incremental,
            superseded=self.superseded,
            fits=fits,
            units=units,
            thinking=thinking,
            summarizer=assembly.summarizer if assembly is not None else None,
            summarizer_fell_back=assembly.fell_back if assembly is not None else False,
            fallback_reason=assembly.fallback_reason if assembly is not None else None,
            left_out=assembly.left_out if assembly is not None else (),
            replay_removed=replay_removed,
            short_of_target=short_of_target,
            cuts=cuts,
            _input=self.given,
            _output=output,
            _tokens_after=tokens_after,
            _protected=protected,
        )


def _room(
    budget: int,
    conversation: Conversation | None,
    tools: Sequence[Any] | None,
    model: str | None,
    encoding: str,
    *,
    margin: bool,
) -> Room:
    """The budget less what the request sends besides its messages (and, with
    ``margin``, planned below by the tokenizer's measured error for ``model``)."""
    record = conversation.record if conversation is not None else None
    parts = request_parts(record) if isinstance(record, Mapping) else {}
    if tools is not None:
        parts["tools"] = tools
    tokenizer = tokenizer_for_model(model)
    fixed = parts_tokens(parts, encoding=encoding, tokenizer=tokenizer)
    ratio = tokenizer.ratio if margin else 1.0
    return plan_room(budget, ratio=ratio, fixed=fixed, tokenizer=tokenizer.name)


def _bounded_by(history: Sequence[RawMessage], budget: int, media: MediaBilling) -> bool:
    """Whether the guaranteed bound of ``history`` (``upper_bound_tokens``) is within
    ``budget``; stops adding as soon as it is not, so a long history costs little."""
    total = REPLY_PRIMING_TOKENS
    for message in history:
        total += upper_bound_message(message, media=media)
        if total > budget:
            return False
    return True


def _plan(
    history: Sequence[RawMessage],
    counter: TokenCounter,
    tail_tokens: int,
    turn: Turn,
    protection: Protection | None,
    budget: int,
) -> Plan:
    """Segment and plan, the current turn and compaction state pinned; the tail is
    measured exactly from the newest unit back (only as far as ``tail_tokens`` reaches).

    Under the training-set policy (``HeadTailProtection``) only the running step (the
    last assistant message and the results it awaits) is pinned of the current turn: a
    trajectory has no next request, and the dataset path plans the same span."""
    units = segment(history)
    return make_plan(
        units,
        protection=protection,
        tail_tokens=tail_tokens,
        messages=history,
        budget=budget - REPLY_PRIMING_TOKENS,
        unit_tokens=lambda unit: sum(counter.counts(history[unit.start : unit.stop])),
        pinned=turn_units(units, _kept_from(turn, protection, history))
        | compaction_units(units, history)
        | _ask_unit(units, turn, protection),
    )


def _ask_unit(units: Sequence[Unit], turn: Turn, protection: Protection | None) -> set[int]:
    """The unit of the latest ask, untouchable under the session policy; and a user
    message that ends the history (the message the model answers, even a blank one)."""
    if not _graded(protection):
        return set()
    found = {
        i
        for i, unit in enumerate(units)
        if turn.ask is not None and unit.start <= turn.ask < unit.stop
    }
    if units and units[-1].kind is UnitKind.USER:
        found.add(len(units) - 1)
    return found


def _cuts(
    output: Sequence[RawMessage], given: Sequence[Any], history: Sequence[RawMessage], turn: Turn
) -> tuple[OutputCut, ...]:
    """Every tool output this call cut middle-out, named (outputs that came in cut, as a
    previous call left them, are not cut again by this one)."""
    came = {id(message) for message in given}
    running = {str(history[i].get("tool_call_id")) for i in _running_outputs(history, turn)}
    found = []
    for index, message in enumerate(output):
        if id(message) in came or message.get("role") != "tool":
            continue
        cut = cut_size(message)
        if cut is not None:
            call_id = str(message.get("tool_call_id"))
            found.append(
                OutputCut(
                    index=index,
                    tool_call_id=call_id,
                    removed=cut[0],
                    total=cut[1],
                    running=call_id in running,
                )
            )
    return tuple(found)


def _untouchable_tokens(
    history: Sequence[RawMessage],
    plan: Plan,
    turn: Turn,
    protection: Protection | None,
    counter: TokenCounter,
    fixed: int,
) -> int:
    """What the result needs at least: the untouchable units, the running turn's outputs
    cut to a short head (the session policy), reply priming included; under the
    training-set policy, every unit that is not reducible (``fixed``)."""
    if not _graded(protection):
        return fixed
    running = set(_running_outputs(history, turn))
    names = calls_answered(history, sorted(running))
    messages = []
    for index, unit in enumerate(plan.units):
        if index not in plan.layout.protected:
            continue
        for i in range(unit.start, unit.stop):
            message = history[i]
            if i in running:
                tool = tool_name(names.get(str(message.get("tool_call_id"))))
                content = cut_content(message.get("content"), SHORT_CHARS, tool, images=True)
                cut = {**message, "content": content}
                if counter.message(cut) < counter.message(message):
                    message = cut
            messages.append(message)
    return counter.messages(messages)


def _graded(protection: Protection | None) -> bool:
    """The session policy: graded protection, the running turn's outputs the last resort."""
    return protection is None or isinstance(protection, SessionProtection)


def _kept_from(turn: Turn, protection: Protection | None, history: Sequence[RawMessage]) -> int:
    """Where the part of the current turn that is never reduced (nor merged into) starts.

    Under the session policy: the running turn (the history ends with its tool results)
    whole, and a finished turn whole when it carries replay state (its thinking must
    reach the provider as it was); a finished turn without it is graded like any other.
    Under the training-set policy only the running step (a trajectory has no next
    request; the dataset path plans the same)."""
    if _graded(protection):
        if turn.running or any(carries_replay(m) for m in history[turn.start : turn.stop]):
            return turn.start
        return turn.stop
    if turn.running and turn.last_assistant is not None:
        return turn.last_assistant
    return turn.stop


def _running_outputs(history: Sequence[RawMessage], turn: Turn) -> list[int]:
    """The tool outputs of an untouchable current turn: the last resort's to cut."""
    if _kept_from(turn, None, history) >= turn.stop:
        return []
    return turn.outputs(history)


def _frozen(
    messages: Sequence[RawMessage],
    plan: Plan,
    turn: Turn,
    protection: Protection | None,
    stripped: Stripped,
) -> list[RawMessage]:
    """The messages of ``messages`` a summary or notice is never merged into nor joined
    with: under the session policy every unit that is not reducible (what is untouchable
    and what is kept if at all possible must come back as it was); under the
    training-set policy the running step. Turns whose thinking was removed too."""
    removed = [message for message, _ in stripped.values()]
    if not _graded(protection):
        return [*messages[_kept_from(turn, protection, messages) :], *removed]
    return [
        messages[i]
        for index, unit in enumerate(plan.units)
        if not plan.layout.reducible(index)
        for i in range(unit.start, unit.stop)
    ] + removed


def _outcomes(plan: Plan, actions: dict[int, str]) -> tuple[UnitOutcome, ...]:
    return tuple(
        UnitOutcome(unit.kind, unit.start, unit.stop, actions.get(i, "kept"))
        for i, unit in enumerate(plan.units)
    )


def _result(
    output: list[RawMessage],
    summary: str | None,
    report: CompressionReport,
    previous: CompressionState | None,
    budget: int,
    provider: str,
    encoding: str,
    settings: RequestSettings | None = None,
) -> CompressionResult:
    carried = previous.summary if previous is not None else None
    state = CompressionState(
        summary=summary if summary is not None else carried,
        source=tuple(report._input),
        output=tuple(output),
        budget=budget,
        provider=provider,
        encoding=encoding,
        tokens=report._tokens_after,
    )
    return CompressionResult(
        messages=output, summary=summary, report=report, state=state, request_settings=settings
    )


def _grown_tokens(
    previous: CompressionState | None,
    history: Sequence[RawMessage],
    incremental: bool,
    repaired: bool,
    counter: TokenCounter,
) -> int | None:
    """The exact tokens of ``history`` when it is the previous output (as the same
    objects, repair changed nothing) plus what was appended: the previous count plus the
    new messages' (``None`` when that is not known)."""
    if not incremental or repaired or previous is None or previous.tokens is None:
        return None
    known = len(previous.output)
    if len(history) < known or any(
        a is not b for a, b in zip(history, previous.output, strict=False)
    ):
        return None
    return previous.tokens + sum(counter.counts(history[known:]))
