"""One retry after a refusal that arrives before the first response byte.

When the upstream refuses a request the proxy read (a 400 that ``classify`` says repair
can fix, a 413, a context overflow, an output limit), the history is repaired or
compressed and sent once more: at most two upstream requests per client request, never
the refused body again. The change itself is decided by :func:`condense.recover` — the
same ladder (repair for the profile, then for ``strict``, then compress to the room the
error states, less a margin) and the same "never re-send a refused payload" rule as for
library users — run here without I/O: its first "call" replays the refusal that already
happened and its second records the history it would send.

An overflow error also teaches the proxy the window of that upstream and model
(``windows.LearnedWindows``), so the next turn is compressed before it is sent.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from condense.errors import Action, Category, Diagnosis, RecoveryError, classify, recover
from condense.exceptions import CondenseError, UpstreamRefusal
from condense.retry import RetryPolicy
from condense.server.codec import BodyDecodingError, decode
from condense.server.prepare import Prepared, dump_body
from condense.server.replay import (
    compression_keeps_replay,
    repair_keeps_replay,
    replay_only_dropped,
)
from condense.server.windows import LearnedWindows
from condense.tokens import count_tokens
from condense.types import RawMessage

__all__ = ["Retry", "UpstreamRefusal", "plan_retry"]

_CHANGEABLE = frozenset({Action.REPAIR, Action.DROP_REPLAY, Action.COMPRESS, Action.REDUCE_OUTPUT})
_SIZE = frozenset({Category.CONTEXT_OVERFLOW, Category.OUTPUT_LIMIT, Category.PAYLOAD_TOO_LARGE})


@dataclass(frozen=True, kw_only=True)
class Retry:
    """The second request: its body and history, and why and how it differs."""

    body: bytes
    messages: list[RawMessage]
    diagnosis: Diagnosis
    detail: str
    repairs: int
    tokens_after: int | None


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
    calls: list[list[Any]] = []

    def call(messages: list[Any]) -> None:
        if not calls:
            calls.append(messages)
            raise refusal
        calls.append(messages)

    try:
        result = recover(
            call,
            prepared.messages,
            provider=prepared.provider,
            max_attempts=2,
            model=prepared.model,
            context_window=prepared.window,
            backoff=RetryPolicy(max_attempts=1),
            sleep=lambda _: None,
        )
    except (RecoveryError, CondenseError):
        return None
    attempt = result.attempts[0]
    if attempt.action is Action.COMPRESS and diagnosis.category not in _SIZE:
        return None  # an unexplained refusal is no reason to cut the history
    messages = result.messages
    keeps = {
        Action.REPAIR: repair_keeps_replay,
        Action.DROP_REPLAY: replay_only_dropped,  # the provider refused that state
    }.get(attempt.action or Action.COMPRESS, compression_keeps_replay)
    if not keeps(prepared.messages, messages):
        return None  # the provider would refuse edited replay state anyway
    try:
        body = dump_body(prepared.conversation, messages)
    except CondenseError:
        return None
    if body == prepared.body:
        return None
    try:
        after: int | None = count_tokens(messages, model=prepared.model)
    except (CondenseError, TypeError, ValueError):
        after = None
    return Retry(
        body=body,
        messages=messages,
        diagnosis=diagnosis,
        detail=attempt.detail,
        repairs=len(result.repairs),
        tokens_after=after,
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
    if diagnosis.category not in _SIZE or diagnosis.allowed_tokens is None:
        return
    if diagnosis.category is Category.OUTPUT_LIMIT and diagnosis.requested_tokens is None:
        return  # a cap on the output alone says nothing about the window
    ours, theirs = prepared.tokens_after, diagnosis.input_tokens
    ratio = theirs / ours if ours and theirs else 1.0
    learned.learn(
        prepared.upstream.url, prepared.model, window=diagnosis.allowed_tokens, ratio=ratio
    )
