"""``compress``: fit a history to a token budget without ever breaking it.

The stages, one module each, in pipeline order (all functions over frozen values):

1. ``plan`` — repair for the profile, segment into units, protect the system prompt, the
   first and latest user asks, the latest reply, the newest tool exchange, the current
   turn (``condense.turns``), compaction state and a tail; the rest is reducible, oldest
   first. Decide what to do with thinking the edits would unbind
   (``condense.reduce.thinking``).
2. ``reductions`` — the message reductions cheapest first (dedupe, strip images, mask,
   shrink), counted exactly, stopping as soon as the history fits.
3. ``assemble`` — replace the oldest reducible units by a summary, or a one-line notice.
4. ``gate`` — remove unbound Anthropic thinking (where that is the decision), validate,
   count, never return a larger history.
5. ``incremental`` — reuse the previous call's output for a session that grew.

The common case, a history that already fits, costs a repair (validation) pass and a
guaranteed bound (``condense.tokens.upper_bound_tokens``); exact counting happens only
where the bound comes close to the budget.

Replay state belongs to its unit: a message carrying it (thinking blocks, Responses
items, thought signatures, ``reasoning_content``) is returned as the same object or left
out with its whole unit; it is never shrunk, merged into or split from its calls.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from condense._input import check_history
from condense.compress.assemble import (
    Assembly,
    SummaryInputs,
    assemble,
    bridges_needed,
    summary_reserve,
)
from condense.compress.gate import InputSize, gate
from condense.compress.incremental import resume_from
from condense.compress.measure import measure
from condense.compress.plan import (
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
    run_reductions,
)
from condense.compress.result import (
    CompressionReport,
    CompressionResult,
    CompressionState,
    UnitOutcome,
)
from condense.exceptions import BudgetError, InputError
from condense.formats import Conversation
from condense.formats.native import answer, answer_messages, read_native
from condense.providers import (
    DEFAULT_PROVIDER,
    Profile,
    ProviderChoice,
    choose_provider,
    media_billing,
)
from condense.providers.anthropic import request_thinking
from condense.providers.base import MediaBilling
from condense.reduce.compaction import supersede
from condense.reduce.thinking import (
    BOUND_THINKING,
    Binding,
    BoundThinking,
    RequestSettings,
    Stripped,
    bound_after,
    decide,
    drop_block_settings,
    strip_thinking,
)
from condense.repair import repair
from condense.summarizers import Summarizer, get_summarizer
from condense.tokens import TokenCounter, encoding_for_model
from condense.tokens.counting import shared_counter
from condense.tokens.estimate import upper_bound_message
from condense.tokens.families import tokenizer_for_model
from condense.tokens.pieces import REPLY_PRIMING_TOKENS
from condense.tokens.request import Room, parts_tokens, plan_room, request_parts
from condense.turns import Turn, current_turn
from condense.types import RawMessage
from condense.units import segment
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
    tokenizer_margin: bool = False,
) -> CompressionResult:
    """Return ``messages`` reduced to at most ``budget`` tokens, valid for ``provider``.

    Nothing is reduced when the history fits, and reductions stop as soon as the exact
    count fits. ``tail_tokens`` (default: a quarter of the budget) protects the most
    recent units; ``summary_tokens`` caps the summary (by default it takes the room the
    kept part leaves, up to half the budget and 32,768 tokens). ``reductions`` is the
    sequence of steps to run, cheapest first (``condense.compress.DEFAULT_REDUCTIONS``:
    dedupe, strip images, mask, shrink, summarize); drop one to forbid it or add your own
    ``MessageReduction``.
    ``previous`` is the ``state`` of an earlier call on the same session. ``protection``
    replaces the session policy of what is never reduced (``SessionProtection``) with
    another, e.g. the training-set policy ``HeadTailProtection(tail_messages=4)`` that
    ``condense dataset`` uses (both in ``condense.compress``); ``tail_tokens`` is then
    unused.

    The result is never larger than the input, and fits whenever the protected part does
    (a span whose summary would not fit is replaced by a one-line notice, listed in
    ``report.left_out``). When even the protected part cannot fit, the report says so
    (``fits`` is False) and ``strict_budget=True`` raises ``BudgetError``. The input is
    never mutated.

    The current turn (everything after the last user message that carries content,
    ``condense.turns``) is never reduced: its messages come back as the same objects, in
    order. ``thinking`` is the request's thinking setting (its ``thinking`` object, or
    ``"enabled"``, ``"adaptive"``, ``"disabled"``; ``None``: unknown). Anthropic thinking
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
    The budget is in condense's tokens. With ``tokenizer_margin=True`` it is in the
    provider's: when ``model`` names a family whose tokenizer condense does not ship
    (Claude, Gemini), the messages are planned below the budget by the family's measured
    error (``condense.tokens.families``). ``report.room`` says how the budget was shared
    out.
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
    if isinstance(budget, bool) or not isinstance(budget, int) or budget <= 0:
        raise InputError(f"budget must be a positive number of tokens, not {budget!r}")
    check_history(given, depth=False)  # repair checks the depth of what it works on
    for name, value in (("tail_tokens", tail_tokens), ("summary_tokens", summary_tokens)):
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 0
        ):
            raise InputError(f"{name} must be a number of tokens ≥ 0, not {value!r}")
    check_protection(protection)
    if bound_thinking not in BOUND_THINKING:
        raise InputError(
            f"bound_thinking must be one of {', '.join(BOUND_THINKING)}, not {bound_thinking!r}"
        )
    bound: BoundThinking = "keep" if keep_bound_thinking else bound_thinking
    summarizer = get_summarizer(summarizer)  # an unknown name fails now, not at first summary
    if tools is not None and (
        isinstance(tools, str | bytes | Mapping) or not isinstance(tools, Sequence)
    ):
        raise InputError(f"tools must be a list of tool definitions, not {type(tools).__name__}")
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
    counter = shared_counter(encoding or encoding_for_model(model), media=media)
    room = _room(budget, conversation, tools, model, counter.encoding, margin=tokenizer_margin)
    budget = room.messages  # what the messages may take, in condense's tokens
    work, incremental = resume_from(previous, given, budget, profile, counter.encoding)
    # the user's own file, when the work is it: its repairs are named in its terms
    source = conversation if conversation is not None and work is given else work
    repaired = repair(source, provider=choice)
    history: list[RawMessage] = repaired.messages
    report_base: dict[str, Any] = {
        "budget": room.budget,
        "room": room,
        "encoding": counter.encoding,
        "provider": profile.name,
        "provider_reason": choice.reason,
        "media": media,
        "repairs": repaired.changes,
        "incremental": incremental,
        "_input": given,
    }

    def finish(result: CompressionResult) -> CompressionResult:
        if strict_budget and not result.report.fits:
            raise BudgetError(result)
        return result

    def unchanged(
        tokens: int | None,
        plan: Plan | None,
        protected: int | None,
        binding: Binding | None = None,
    ) -> CompressionResult:
        report = CompressionReport(
            **report_base,
            thinking=binding,
            fits=True if tokens is None else tokens <= budget,
            units=_outcomes(plan, {})
            if plan is not None
            else tuple(UnitOutcome(u.kind, u.start, u.stop, "kept") for u in segment(history)),
            summarizer=None,
            summarizer_fell_back=False,
            fallback_reason=None,
            _output=history,
            _tokens_after=tokens,
            _protected=history if protected is None else protected,
        )
        return finish(
            _result(history, None, report, previous, budget, profile.name, counter.encoding)
        )

    if _bounded_by(history, budget, media):  # fits for every encoding
        return unchanged(None, None, None)
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
        report_base["superseded"] = superseded
    turn = current_turn(history)
    tail = tail_tokens if tail_tokens is not None else budget // 4
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
    protected = measured.fixed + bridges_needed(history, plan, profile, counter)
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

    if measured.first_kept is None:  # everything counted: reduce cheapest first, in order
        # a message the walk left uncounted (its reduced copy was counted instead) is
        # counted now: the reductions start from what the history really costs
        counts = [
            n if n is not None else counter.message(message)
            for n, message in zip(measured.counts, current, strict=True)
        ]
        reduced = run_reductions(
            current,
            counts,
            plan=plan,
            steps=reductions,
            budget=budget,
            counter=counter,
            original=history,
        )
        after_cheap = reduced.tokens
        output: Sequence[RawMessage] = reduced.messages
        actions: dict[int, str] = dict(reduced.actions)
        short = reduced.short_of_target
        prefix = [0]
        for u in plan.order:
            prefix.append(
                prefix[-1] + sum(reduced.counts[plan.units[u].start : plan.units[u].stop])
            )

        def kept_tokens(k: int) -> int:
            return after_cheap - prefix[k]

        first = 1
    else:  # the oldest units must be summarized; the kept ones are fully reduced
        after_cheap = budget + 1
        output = measured.messages
        actions = dict(measured.actions)
        short = measured.short_of_target
        suffix, fixed = measured.suffix, measured.fixed

        def kept_tokens(k: int) -> int:
            return fixed + suffix[k]

        first = measured.first_kept
    # what the output must stay below: the repaired input, counted in full only if needed
    at_least = 0 if superseded is not None else measured.lower_bound
    input_size = InputSize(at_least=at_least, count=lambda: counter.messages(whole))
    assembly: Assembly | None = None
    if after_cheap > budget and summarizing:
        kept_from = _kept_from(turn, protection)
        frozen = [*history[kept_from:], *(message for message, _ in stripped.values())]
        carried = counter.text(previous.summary) if previous and previous.summary else 0
        assembly = assemble(
            output,
            kept_tokens=kept_tokens,
            first=first,
            input_size=input_size,
            plan=plan,
            budget=budget,
            inputs=SummaryInputs(
                original=history,
                profile=profile,
                counter=counter,
                summarizer=summarizer,
                # planning reserves a fifth of the budget for a summary (a smaller
                # reserve summarizes fewer units but leaves the summary too little room
                # for the span's facts: bench/bench_probe.py)
                cap=summary_reserve(
                    summary_tokens or min(8192, max(256, budget // 5)),
                    carried if summary_tokens is None else 0,
                    budget=budget,
                ),
                limit=summary_tokens,
                previous=previous.summary if previous is not None else None,
                frozen=frozen,
                stripped=[message for message, _ in stripped.values()],
            ),
        )
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
        report_base.pop("superseded", None)
        history = whole
        return unchanged(counter.messages(whole), None, protected, binding)
    if assembly is not None:
        actions.update((u, "summarized") for u in assembly.summarized)
    settings: RequestSettings | None = None
    dropping = binding is not None and binding.action == "drop_block"
    if dropping and bound_after(gated.messages, given):
        settings = drop_block_settings(thinking)
    report = CompressionReport(
        **report_base,
        thinking=binding,
        fits=gated.tokens <= budget,
        units=_outcomes(plan, actions),
        summarizer=assembly.summarizer if assembly is not None else None,
        summarizer_fell_back=assembly.fell_back if assembly is not None else False,
        fallback_reason=assembly.fallback_reason if assembly is not None else None,
        replay_removed=gated.replay_removed,
        left_out=assembly.left_out if assembly is not None else (),
        short_of_target=short,
        _output=gated.messages,
        _tokens_after=gated.tokens,
        _protected=protected,
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
        pinned=turn_units(units, _kept_from(turn, protection)) | compaction_units(units, history),
    )


def _kept_from(turn: Turn, protection: Protection | None) -> int:
    """Where the part of the current turn that is never reduced (nor merged into) starts:
    the whole turn under the session policy; under the training-set policy only the
    running step (a trajectory has no next request; the dataset path plans the same)."""
    if protection is None or isinstance(protection, SessionProtection):
        return turn.start
    if turn.running and turn.last_assistant is not None:
        return turn.last_assistant
    return turn.stop


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
    )
    return CompressionResult(
        messages=output, summary=summary, report=report, state=state, request_settings=settings
    )
