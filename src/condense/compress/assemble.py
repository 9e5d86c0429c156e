"""Stage 3, assemble: replace the oldest reducible units by a summary, or by a one-line
notice when even the shortest summary does not fit.

The number ``k`` of reducible units replaced is the smallest for which the kept part
(counted exactly) plus what replaces them fits the budget; the first ``k`` reducible
units form one contiguous span unless a protected unit sits among them, and each
contiguous span gets its own block. A summary never costs more than the span it replaces
(else the span gets the notice), and the notice — ``[condense: 12 earlier messages
(3–14) left out to fit the budget]`` — is the last resort. Images are stripped from a
span before it is summarized, so a summarizer never pays for pixels.

How large a summary may be is :func:`summary_size`, one function of the room left and
the user's cap. A summary that writes far less than that (it keeps only what is worth
keeping) gives the room back: fewer units are replaced, from the same reading of the
span (:func:`_room_used`, :func:`~condense.summarizers.extractive.reading_once`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from condense.compress.gate import InputSize
from condense.compress.plan import Plan, reducible_runs
from condense.message import join_content
from condense.providers import Profile
from condense.reduce.images import without_images
from condense.reduce.summary import (
    choose_placement,
    find_summary,
    mergeable,
    placed,
    stands_for,
    summary_block,
    with_block,
)
from condense.reduce.summary import notice as notice
from condense.reduce.summary import without_notices as without_notices
from condense.repair.order import BRIDGE_TEXT, OPENING_USER
from condense.summarizers import (
    ExtractiveSummarizer,
    Summarizer,
    get_summarizer,
    summarize_with_report,
)
from condense.summarizers.extractive import reading_once
from condense.tokens import TokenCounter
from condense.tokens.estimate import lower_bound_message
from condense.types import RawMessage
from condense.validate import check

SUMMARY_OVERHEAD = 24
"""Tokens of the summary message beyond its text: framing, header and footer lines."""
MIN_SUMMARY_TOKENS = 48
"""Below this a summary says too little: the span gets the one-line notice instead."""
NOTICE_TOKENS = 32
"""A generous bound of a notice message (text and message framing)."""


SUMMARY_TOKENS_CEILING = 32_768
"""Without a cap from the user, a summary may take up to two thirds of the budget
(:func:`summary_cap`; never more than this) when the kept part leaves that much room."""


def summary_cap(budget: int) -> int:
    """The most a summary may take of ``budget`` without a cap from the user: two thirds
    of it, at most :data:`SUMMARY_TOKENS_CEILING` (a history many times its budget is
    mostly in the summary; the verbatim part keeps the rest). Measured with
    ``bench/bench_probe.py`` and ``bench/bench_compress.py``: three quarters kept no more
    facts; half kept 10 points fewer facts of real sessions. A summary writes only what
    is worth it, and what it leaves of this room goes back to the newest units it
    covered (:func:`_room_used`: a 400k-token generated session at 32k was sent as 16.3k
    tokens before, 26.6k now)."""
    return min(SUMMARY_TOKENS_CEILING, budget * 2 // 3)


def summary_size(room: int, user_cap: int | None, *, budget: int) -> int:
    """Tokens a summary's text may take: the ``room`` the kept part leaves, within a cap.

    The cap is ``user_cap`` (``compress(summary_tokens=...)``) when given, else
    :func:`summary_cap`. Using the room instead of a small fixed
    target keeps more facts; the budget holds because ``room`` is what the exact count of
    the kept part leaves.
    """
    cap = user_cap if user_cap else summary_cap(budget)
    return min(cap, room)


SPAN_SHARE = 4
"""Without a cap from the user, planning reserves for a summary a quarter of what the
history holds beyond the budget (:func:`summary_reserve`)."""


def summary_reserve(
    user_cap: int | None, previous_tokens: int, *, budget: int, history_tokens: int
) -> int:
    """What planning reserves for a summary.

    ``user_cap`` (``compress(summary_tokens=...)``) when given. Else room that grows with
    what must be summarized: a quarter of ``history_tokens`` beyond the budget, between a
    fifth of the budget and :func:`summary_cap` (a history just over its budget keeps its
    tail; one many times over it gives the summary most of the budget, because the
    summary is then the only place most of the session's facts and asks can be —
    ``bench/bench_probe.py``); and at least room for the previous summary
    (``previous_tokens``) to carry over whole, up to :func:`summary_cap`, so a session's
    summary does not shrink turn after turn (whether the agent sends its whole history
    again or the compressed one). Never more than :data:`SUMMARY_TOKENS_CEILING`, never
    less than 256 tokens.
    """
    if user_cap:
        return user_cap
    grown = min(summary_cap(budget), max(budget // 5, (history_tokens - budget) // SPAN_SHARE))
    carried = min(previous_tokens + previous_tokens // 2, summary_cap(budget))
    return min(SUMMARY_TOKENS_CEILING, max(256, grown, carried))


@dataclass(frozen=True, kw_only=True)
class LeftOut:
    """A span replaced by the one-line notice: messages ``start``–``stop - 1`` of the
    repaired input."""

    start: int
    stop: int


@dataclass(frozen=True, kw_only=True)
class Assembly:
    """The assembled history and what the summaries did."""

    messages: tuple[RawMessage, ...]
    summarized: tuple[int, ...]
    """Unit indices replaced by a summary or a notice."""
    summary: str | None
    left_out: tuple[LeftOut, ...]
    summarizer: str | None
    fell_back: bool
    fallback_reason: str | None


@dataclass(frozen=True, kw_only=True)
class SummaryInputs:
    """What summarizing needs besides the history: the original messages (summaries are
    written from them, not from their masked copies) and the caller's choices."""

    original: Sequence[RawMessage]
    profile: Profile
    counter: TokenCounter
    summarizer: str | Summarizer
    cap: int
    """Tokens planning reserves for a summary (see :func:`summary_reserve`)."""
    limit: int | None
    """The user's cap on a summary (``summary_tokens``), if any (see :func:`summary_size`)."""
    previous: str | None
    frozen: Sequence[RawMessage]
    """Messages a block is never merged into nor joined with (the untouchable ones, those
    kept if at all possible, turns whose thinking was removed)."""
    stripped: Sequence[RawMessage] = ()
    """The turns whose thinking was removed: never joined with another message."""
    ask: int | None = None
    """The index of the latest ask: the summary goes before it, never after, and nothing
    condense writes after it speaks as the user (it would take the ask's place)."""


@reading_once()  # the extractive summarizer reads the span once per call
def assemble(
    current: Sequence[RawMessage],
    *,
    kept_tokens: Callable[[int], int],
    first: int,
    input_size: InputSize,
    plan: Plan,
    budget: int,
    inputs: SummaryInputs,
) -> Assembly | None:
    """Replace the oldest reducible units (at least ``first`` of them) so the history
    fits ``budget``: the fewest (``k``) that leave the summary its planned room (less
    when the kept part leaves less), by a summary of the room left, else a shorter
    summary, else the one-line notice; then every reducible unit; when nothing fits, the
    smallest history found that is smaller than the input (``input_size``). A summary
    that leaves much of the budget unused gives it back to the newest units it covered
    (:func:`_room_used`). ``kept_tokens(k)`` is the exact tokens of ``current`` without
    the first ``k`` reducible units. ``None`` when nothing smaller than the input was
    found."""
    last = len(plan.order)
    if not last:
        return None
    breaks = plan.span_counts()  # breaks[k]: how many spans the first k units form

    def blocks(k: int) -> int:
        """Tokens of the kept part at ``k``, with a notice for each span but the first."""
        return kept_tokens(k) + (breaks[k] - 1) * NOTICE_TOKENS

    # The room the summary is planned for: its cap; less where the kept part leaves less
    # (what replacing every reducible unit would leave, but always room for a notice).
    # The units replaced are the fewest that leave it, so that a larger budget never
    # replaces more (budget - reserve never falls as the budget grows).
    reserve = min(SUMMARY_OVERHEAD + inputs.cap, max(NOTICE_TOKENS, budget - blocks(last)))
    k = next((k for k in range(max(1, first), last + 1) if blocks(k) + reserve <= budget), last)
    best: tuple[int, Assembly] | None = None
    for at in dict.fromkeys((k, last)):  # then, if nothing fits, every reducible unit
        spans = plan.spans(at)
        for attempt in _attempts(kept_tokens(at), spans, budget, inputs.limit):
            built = _build(current, plan, spans, attempt, inputs)
            if built is None or (attempt == DROP and check(list(built.messages), inputs.profile)):
                continue  # leaving the span out would break the profile's rules
            tokens = inputs.counter.messages(built.messages)
            if (best is None or tokens < best[0]) and input_size.exceeds(tokens):
                best = (tokens, built)
                if tokens <= budget:
                    fewer = None
                    if attempt > 0 and at == k and _gives_room_back(built, inputs):
                        fewer = _room_used(budget - tokens, budget, at, max(1, first), blocks)
                    if fewer is None:
                        return built
                    # the room given back: fewer units summarized, in what their kept part
                    # leaves; kept only when that summary is written and it all fits
                    narrower = plan.spans(fewer)
                    target = _attempts(kept_tokens(fewer), narrower, budget, inputs.limit)[0]
                    again = _build(current, plan, narrower, target, inputs) if target > 0 else None
                    if again is None or not _gives_room_back(again, inputs):
                        return built
                    size = inputs.counter.messages(again.messages)
                    return again if size <= budget and input_size.exceeds(size) else built
    if best is None:
        return None
    return best[1]


UNUSED_SHARE = 8
"""A summary that leaves more than an eighth of the budget unused (it wrote only what
was worth it, far less than its room) gives the room back: fewer units are summarized,
and the newest of those it covered are kept verbatim (:func:`_room_used`)."""


def _gives_room_back(built: Assembly, inputs: SummaryInputs) -> bool:
    """Whether ``built``'s summary may give back the room it left unused, by a second
    summary of fewer units: when its room was planned from the budget (no cap from the
    user: a cap is the user's plan, and the span the dataset path replaces too) and
    written without a model call (the extractive summarizer, not as a fallback)."""
    return (
        built.summary is not None
        and inputs.limit is None
        and not built.fell_back
        and isinstance(get_summarizer(inputs.summarizer), ExtractiveSummarizer)
    )


def _room_used(
    unused: int, budget: int, at: int, first: int, blocks: Callable[[int], int]
) -> int | None:
    """How many units to summarize instead of ``at`` when the summary of ``at`` left
    ``unused`` tokens of ``budget``: the fewest (at least ``first``) whose kept part grows
    by at most three quarters of that (the rest covers a summary of fewer units that
    comes out larger); ``None`` when that is no more than :data:`UNUSED_SHARE` of the
    budget, or no fewer fit."""
    if unused * UNUSED_SHARE <= budget:
        return None
    grown = blocks(at) + unused - unused // 4
    fewer = next((j for j in range(first, at) if blocks(j) <= grown), at)
    return fewer if fewer < at else None


NOTICE = 0
DROP = -1


def _attempts(kept: int, spans: Sequence[range], budget: int, user_cap: int | None) -> list[int]:
    """Summary targets to try, largest first; then :data:`NOTICE` (the one-line notice)
    and :data:`DROP` (the span left out with no message, where the profile allows it;
    still recorded in the report)."""
    room = budget - kept - SUMMARY_OVERHEAD - (len(spans) - 1) * NOTICE_TOKENS
    target = summary_size(room, user_cap, budget=budget)
    if target < MIN_SUMMARY_TOKENS:
        return [NOTICE, DROP]
    return [target, max(MIN_SUMMARY_TOKENS, target * 3 // 4 - 8), NOTICE, DROP]


def _build(
    current: Sequence[RawMessage],
    plan: Plan,
    spans: Sequence[range],
    target: int,
    inputs: SummaryInputs,
) -> Assembly | None:
    """Replace ``spans`` (unit ranges, oldest first) by one summary of ``target`` tokens of
    them all, by a notice each when ``target`` is :data:`NOTICE`, the summary is not
    smaller than what it replaces or no summary could be written (a failure of the
    fallback summarizer too: a bug, which the report names), or by nothing when it is
    :data:`DROP`.

    The summary goes where the first span was (after the latest ask only as the
    assistant's), else just before the latest ask; the other spans are left out (what
    they said is in it), each joined over where that keeps the roles apart, else given a
    notice. ``None`` when a span cannot be replaced without breaking the role order (two
    messages of one role that cannot be joined, or a block that would have to speak as
    the user after the latest ask)."""
    covers = [plan.messages_of(span) for span in spans]
    ask = inputs.ask
    before_ask = [c for c in covers if ask is None or c.stop <= ask]
    block: str | None = None
    texts: list[str] = []
    fell_back, reason = False, None
    if target > 0:
        indices = [i for covered in covers for i in covered]
        previous = inputs.previous
        try:
            text, fell_back, reason = _summarize(indices, target, previous, inputs)
        except Exception as error:  # a bug of condense's own: each span gets its notice
            fell_back, reason = True, f"{type(error).__name__}: {error}"
        else:
            text = _fit_text(text.strip() or "(nothing to summarize)", target, inputs.counter)
            candidate = summary_block(
                text, covered=sum(stands_for(inputs.original[i]) for i in indices)
            )
            size = inputs.counter.text(candidate) + 8 + NOTICE_TOKENS * (len(covers) - 1)
            if _more_than([current[i] for i in indices], size, inputs.counter):
                block, texts = candidate, [text]
    # the summary's place: the first span; when that comes after the latest ask and the
    # summary cannot stand there as the assistant's, just before the ask
    host = covers[0]
    at_ask = range(ask or 0, ask or 0)
    if (
        not before_ask
        and block is not None
        and _place(list(current), host, block, inputs, after_ask=True) is None
    ):
        host = at_ask
    output = list(current)
    left_out: list[LeftOut] = []
    for covered in reversed(covers):
        is_host = covered is host
        if block is not None and is_host:
            continue  # the summary takes its place last, so indices stay put
        if block is None and target != DROP:  # a notice for each span
            placed_at = _place(
                output, covered, notice(covered), inputs, after_ask=_after(covered, ask)
            )
            if placed_at is None:
                return None
            output = placed_at
            left_out.insert(0, LeftOut(start=covered.start, stop=covered.stop))
            continue
        joined = _joined(output[: covered.start], output[covered.stop :], inputs)
        if joined is None and target != DROP:
            # what it said is in the summary; where it cannot go without a trace, a notice
            joined = _place(
                output, covered, notice(covered), inputs, after_ask=_after(covered, ask)
            )
        if joined is None:
            return None
        if target == DROP:
            left_out.insert(0, LeftOut(start=covered.start, stop=covered.stop))
        output = joined
    if block is not None:
        placed_at = _place(output, host, block, inputs, after_ask=_after(host, ask))
        if placed_at is None:
            return None
        output = placed_at
    return Assembly(
        messages=tuple(output),
        summarized=tuple(u for span in spans for u in span),
        summary="\n\n".join(texts) or None,
        left_out=tuple(left_out),
        summarizer=_name(inputs.summarizer) if texts or fell_back else None,
        fell_back=fell_back,
        fallback_reason=reason,
    )


def _after(covered: range, ask: int | None) -> bool:
    return ask is not None and covered.start > ask


def _more_than(messages: Sequence[RawMessage], limit: int, counter: TokenCounter) -> bool:
    """Whether ``messages`` hold more than ``limit`` tokens, counting only as far as it
    takes to tell: first by a guaranteed lower bound (no BPE; a span is most often far
    larger than its summary), exactly only where that does not tell."""
    bound = 0
    for message in messages:
        bound += lower_bound_message(message, media=counter.media, above=limit - bound)
        if bound > limit:
            return True
    total = 0
    for message in messages:
        total += counter.message(message)
        if total > limit:
            return True
    return False


def _name(summarizer: str | Summarizer) -> str:
    if isinstance(summarizer, str):
        return summarizer
    return str(getattr(summarizer, "name", type(summarizer).__name__))


def _summarize(
    covered: Sequence[int], target: int, previous: str | None, inputs: SummaryInputs
) -> tuple[str, bool, str | None]:
    """Summarize the original messages ``covered`` (images stripped), folding in
    ``previous`` and any summary found inside them."""
    cleaned: list[RawMessage] = []
    for index in covered:
        message = inputs.original[index]
        stripped = without_images(message.get("content"))
        if stripped is not None:
            message = {**message, "content": stripped}
        found = find_summary(message)
        if found is None:
            cleaned.append(message)
            continue
        # Two summaries in one span (or one and the state's): fold both, lose neither.
        if previous is None or found[0] not in previous:
            previous = found[0] if previous is None else f"{previous}\n\n{found[0]}"
        if found[1]:
            cleaned.append({**message, "content": found[1]})
    summarizer = get_summarizer(inputs.summarizer)
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
        size = inputs.counter.text(text)
        if size > target:
            smaller = max(MIN_SUMMARY_TOKENS // 2, target * target // size - 8)
            extractive = get_summarizer("extractive")
            text = extractive.summarize(cleaned, previous=previous, target_tokens=smaller)
    return text, fell_back, reason


def _fit_text(text: str, target: int, counter: TokenCounter) -> str:
    """``text`` cut (at a line or word boundary where possible) to ``target`` tokens."""
    if counter.text(text) <= target:
        return text
    low, high = 0, len(text)
    while low < high:
        mid = (low + high + 1) // 2
        if counter.text(text[:mid]) + 1 <= target:
            low = mid
        else:
            high = mid - 1
    cut = text[:low]
    boundary = max(cut.rfind("\n"), cut.rfind(" "))
    if boundary > low * 0.8:
        cut = cut[:boundary]
    return cut.rstrip() + "…"


_FILLERS = frozenset({OPENING_USER, *BRIDGE_TEXT.values()})
TOOL_USER_BRIDGE: RawMessage = {"role": "assistant", "content": BRIDGE_TEXT["assistant"]}
"""What stands between a tool result and a user message where a profile refuses them side
by side and the span between them is left out (the bridge ``repair`` puts there)."""


def needs_bridge(before: RawMessage, after: RawMessage, profile: Profile) -> bool:
    """Whether ``profile`` refuses ``after`` right after ``before`` with nothing between
    (a user message after a tool result, under Mistral's rules)."""
    return (
        not profile.user_after_tool and before.get("role") == "tool" and after.get("role") == "user"
    )


def bridges_needed(
    messages: Sequence[RawMessage], plan: Plan, profile: Profile, counter: TokenCounter
) -> int:
    """Tokens of the bridges that leaving out every reducible run would need: part of
    what the protected units cost to send, since the run or its bridge must stay."""
    if profile.user_after_tool:
        return 0
    runs = [plan.messages_of(run) for run in reducible_runs(plan.units, plan.layout)]
    return sum(
        counter.message(TOOL_USER_BRIDGE)
        for run in runs
        if run.start > 0
        and run.stop < len(messages)
        and needs_bridge(messages[run.start - 1], messages[run.stop], profile)
    )


def _ends_badly(last: RawMessage, profile: Profile) -> bool:
    return last.get("role") == "assistant" and not profile.ends_with_assistant


def _tool_then_user(before: RawMessage, after: RawMessage) -> bool:
    return before.get("role") == "tool" and after.get("role") == "user"


def _joined(
    before: list[RawMessage], after: list[RawMessage], inputs: SummaryInputs
) -> list[RawMessage] | None:
    """``before + after``; where that puts two messages of one role side by side, they
    become one message holding both texts, unchanged, one after the other: the first must
    be plain text, the second may carry tool calls (they stay its own). ``None`` when two
    such messages cannot be joined — messages with replay state, turns whose thinking was
    removed and the current turn are never joined — since no profile gets a same-role run
    that condense made (see ``condense.reduce.summary.choose_placement``). A tool result
    and a user message that the span stood between get the one-line bridge, under every
    profile: where results travel as a user turn (Anthropic, Bedrock, Gemini), the two
    would be two user turns in a row."""
    if before and after and _tool_then_user(before[-1], after[0]):
        return [*before, dict(TOOL_USER_BRIDGE), *after]
    if before and not after and _ends_badly(before[-1], inputs.profile):
        return None  # the history would end where the profile refuses it
    if not before or not after:
        return [*before, *after]
    first, second = before[-1], after[0]
    if first.get("role") != second.get("role") or first.get("role") not in ("user", "assistant"):
        return [*before, *after]
    untouchable = [*inputs.stripped, *inputs.frozen]
    texts = [m.get("content") for m in (first, second)]
    joinable = (
        all(text is None or isinstance(text, str) for text in texts)
        and not first.get("tool_calls")
        and all(mergeable(m) and not any(m is f for f in untouchable) for m in (first, second))
    )
    if not joinable:
        return None
    # the filler repair opened or bridged with says nothing once real text follows
    said = [t for t in texts if t not in _FILLERS]
    content = functools.reduce(join_content, said, None) or functools.reduce(
        join_content, texts, None
    )
    joined = {**second, "content": content or None}
    return [*before[:-1], joined, *after[1:]]


def _place(
    output: list[RawMessage],
    covered: range,
    block: str,
    inputs: SummaryInputs,
    *,
    after_ask: bool,
) -> list[RawMessage] | None:
    """``output`` with the messages in ``covered`` replaced by ``block`` (never merged
    into one of ``inputs.frozen``; ``after_ask``: never as or into a user message).
    ``None`` when no placement keeps the role order."""
    before, after = output[: covered.start], output[covered.stop :]
    placement = choose_placement(
        before[-1] if before else None,
        after[0] if after else None,
        inputs.profile,
        frozen=[*inputs.frozen, *inputs.stripped],
        speaks_as_user=not after_ask,
    )
    if placement is None:
        return None
    if placement == "merge_next":
        return [*before, with_block(after[0], block, first=True), *after[1:]]
    if placement == "merge_previous":
        return [*before[:-1], with_block(before[-1], block, first=False), *after]
    return [*before, *placed(placement, block), *after]
