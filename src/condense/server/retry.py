"""One retry after a refusal that arrives before the first response byte.

When the upstream refuses a request the proxy read (a 400 that ``classify`` says repair
can fix, a 413, a context overflow, an output limit), the history is repaired or
compressed and sent once more: at most two upstream requests per client request, never
the refused body again.

- A refusal for size is answered here: the provider's own figures (its count of the
  refused request, its window, the output it counted) give the ratio of its count to
  condense's, and the client's history is compressed afresh to the room they leave
  (``budget``), so the retry fits whatever tools and instructions the request carries.
  An error without figures (Responses says only "exceeds the context window") is taken
  with the ratio learned so far, or the model family's, and a retry at most 75 % of the
  refused request.
- Any other fixable refusal takes one step of :func:`condense.recover`'s ladder
  (:func:`condense.errors.next_attempt`: repair for the profile, then for ``strict``;
  replay state the provider refused as another conversation's left out), with the same
  "never re-send a refused payload" rule as for library users.

An overflow error also teaches the proxy the window and the count ratio of that upstream
and model (``windows.LearnedWindows``), so the next turn is compressed before it is sent.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from condense.compress import CompressionState
from condense.errors import Action, Category, Diagnosis, classify, next_attempt
from condense.exceptions import CondenseError, UpstreamRefusal
from condense.reduce.thinking import RequestSettings
from condense.server.codec import BodyDecodingError, decode
from condense.server.prepare import HEADROOM, Prepared, dump_body, keeps_ask, latest_ask
from condense.server.replay import (
    compression_keeps_replay,
    repair_keeps_replay,
    replay_only_dropped,
)
from condense.server.windows import LearnedWindows
from condense.types import RawMessage

__all__ = ["Retry", "UpstreamRefusal", "plan_retry"]

_CHANGEABLE = frozenset({Action.REPAIR, Action.DROP_REPLAY, Action.COMPRESS, Action.REDUCE_OUTPUT})
_SIZE = frozenset({Category.CONTEXT_OVERFLOW, Category.OUTPUT_LIMIT, Category.PAYLOAD_TOO_LARGE})
TIGHTER = 0.95
"""A retry's messages are at most this share of the refused request's, whatever the room."""
UNSTATED_SHARE = 0.75
"""…and at most this share when the refusal states no figures."""
UNSTATED_RATIO = 1.15
"""The ratio planned with is raised by this much when the refusal states no count."""


@dataclass(frozen=True, kw_only=True)
class Retry:
    """The second request: its body and history, and why and how it differs."""

    body: bytes
    messages: list[RawMessage]
    diagnosis: Diagnosis
    detail: str
    repairs: int
    tokens_after: int | None
    compressed: bool = False
    state: CompressionState | None = None
    target: int | None = None
    """The budget the history was compressed to (condense's tokens of the messages)."""
    settings: RequestSettings | None = None
    """Body fields and headers sent with the history (Anthropic's ``drop_block``)."""


def plan_retry(
    prepared: Prepared,
    status: int,
    raw: bytes,
    headers: Mapping[str, str],
    *,
    learned: LearnedWindows,
) -> Retry | None:
    """The request to send after the upstream refused ``prepared``, or ``None`` when the
    refusal is not one a changed history can fix (the client then gets it as it came)."""
    refusal = _refusal(status, raw, headers)
    diagnosis = classify(refusal, context_window=prepared.window)
    _learn(prepared, diagnosis, learned)
    if (
        diagnosis.action not in _CHANGEABLE
        or prepared.messages is None
        or prepared.conversation is None
    ):
        return None
    if diagnosis.category is Category.OUTPUT_LIMIT and diagnosis.requested_tokens is None:
        return None  # a cap on max_tokens alone: no history is short enough to help
    if diagnosis.category in _SIZE:
        return _smaller(prepared, diagnosis, learned)
    return _recovered(prepared, diagnosis, refusal)


def _smaller(prepared: Prepared, diagnosis: Diagnosis, learned: LearnedWindows) -> Retry | None:
    """The client's history compressed afresh to the room the provider's figures leave."""
    budget, conversation = prepared.budget, prepared.conversation
    if budget is None or conversation is None or prepared.tokens_after is None:
        return None
    sent = prepared.tokens_after
    window = diagnosis.allowed_tokens if diagnosis.allowed_tokens is not None else budget.window
    output = diagnosis.output_tokens if diagnosis.output_tokens is not None else budget.output
    known = learned.get(prepared.upstream.url, prepared.model)
    ratio = known.ratio if known is not None and known.ratio is not None else budget.ratio
    stated = diagnosis.input_tokens is not None
    if not stated:
        ratio *= UNSTATED_RATIO  # nothing says how far off the count was: assume further
    planned = budget.replace(window=window, output=output, ratio=ratio)
    messages = conversation.messages
    room = planned.room(len(messages))
    ceiling = int((sent - budget.fixed) * (TIGHTER if stated else UNSTATED_SHARE))
    target = max(1, min(ceiling, int(room.messages * HEADROOM) if room is not None else ceiling))
    fitting = prepared.fitting
    if fitting is None:
        return None
    try:
        result = fitting.compress(messages, target, None)
    except CondenseError:
        return None
    if not compression_keeps_replay(messages, result.messages):
        return None  # the provider would refuse edited replay state anyway
    if not keeps_ask(latest_ask(messages), result.messages):
        return None
    try:
        body = dump_body(conversation.rewritten(result.messages), settings=result.request_settings)
    except CondenseError:
        return None
    if body == prepared.body:
        return None
    after = budget.count(result.messages)
    return Retry(
        body=body,
        messages=result.messages,
        diagnosis=diagnosis,
        detail=f"compressed to {after} tokens ({target} planned for the messages)",
        repairs=len(result.report.repairs),
        tokens_after=after,
        compressed=True,
        state=result.state,
        target=target,
        settings=result.request_settings,
    )


def _recovered(prepared: Prepared, diagnosis: Diagnosis, refusal: UpstreamRefusal) -> Retry | None:
    """The repaired history (or the one without the replay state the provider refused)
    :func:`condense.errors.next_attempt` says to send next."""
    assert prepared.messages is not None and prepared.conversation is not None
    try:
        attempt = next_attempt(
            refusal,
            prepared.messages,
            provider=prepared.provider,
            model=prepared.model,
            context_window=prepared.window,
        )
    except CondenseError:
        return None
    if attempt is None or attempt.action is Action.COMPRESS:
        return None  # an unexplained refusal is no reason to cut the history
    messages = attempt.messages
    keeps = {
        Action.REPAIR: repair_keeps_replay,
        Action.DROP_REPLAY: replay_only_dropped,  # the provider refused that state
    }.get(attempt.action, compression_keeps_replay)
    if not keeps(prepared.messages, messages):
        return None  # the provider would refuse edited replay state anyway
    try:
        body = dump_body(prepared.conversation.rewritten(messages))
    except CondenseError:
        return None
    if body == prepared.body:
        return None
    budget = prepared.budget
    return Retry(
        body=body,
        messages=messages,
        diagnosis=diagnosis,
        detail=attempt.detail,
        repairs=len(attempt.repairs),
        tokens_after=budget.count(messages) if budget is not None else None,
    )


def _refusal(status: int, raw: bytes, headers: Mapping[str, str]) -> UpstreamRefusal:
    try:
        text = decode(raw, headers.get("content-encoding"))
    except BodyDecodingError:
        text = b""
    try:
        body: Any = json.loads(text)
    except ValueError:
        body = text.decode("utf-8", "replace")
    return UpstreamRefusal(status, body, headers)


def _learn(prepared: Prepared, diagnosis: Diagnosis, learned: LearnedWindows) -> None:
    """What an overflow error says about the upstream: its window (or, when it states
    none and none is known, that the window is below the refused request), and its count
    of the refused request against condense's."""
    if diagnosis.category not in _SIZE:
        return
    if diagnosis.category is Category.OUTPUT_LIMIT and diagnosis.requested_tokens is None:
        return  # a cap on the output alone says nothing about the window
    ours, theirs = prepared.tokens_after, diagnosis.input_tokens
    ratio = theirs / ours if ours and theirs else None
    upstream, model = prepared.upstream.url, prepared.model
    if diagnosis.category is Category.PAYLOAD_TOO_LARGE:
        learned.learn(upstream, model, ratio=ratio)  # a limit on bytes, not tokens
    elif diagnosis.allowed_tokens is not None:
        learned.learn(upstream, model, window=diagnosis.allowed_tokens, ratio=ratio)
    elif ours and prepared.budget is not None:
        below = int(ours * prepared.budget.ratio * UNSTATED_SHARE)
        learned.learn(upstream, model, ceiling=below, ratio=ratio)
