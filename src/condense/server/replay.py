"""A guard: the proxy never sends a history whose replay state was edited.

Reasoning models make the client send back state it cannot change: Anthropic thinking
blocks and their signatures, Responses reasoning items (``encrypted_content``), DeepSeek
and Kimi ``reasoning_content``, Gemini thought signatures on tool calls
(``extra_content``). A provider refuses a request in which any of it was altered, so a
repair or compression that alters it turns an accepted request into a refused one.
``repair`` and ``compress`` keep it for the provider they work for; as a second line of
defence the proxy checks each rewrite before it goes out: a repair must keep all of it,
byte for byte; a compression may leave out earlier turns' state whole but must keep the
latest assistant turn's, and may change none; after a replay-identity refusal, the state
the provider refused may be left out, any turn's. A rewrite that fails the check is not
sent.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

from condense.providers.base import EXTRA_CONTENT, REPLAY_KEYS

__all__ = [
    "compression_keeps_replay",
    "repair_keeps_replay",
    "replay_only_dropped",
    "replay_state",
]

_MESSAGE_KEYS = tuple(sorted(REPLAY_KEYS))
_CALL_KEYS = (EXTRA_CONTENT,)


def _blobs(message: object) -> Iterator[str]:
    if not isinstance(message, dict):
        return
    for key in _MESSAGE_KEYS:
        value = message.get(key)
        items = value if isinstance(value, list) else [] if value is None else [value]
        for item in items:
            yield json.dumps([key, item], sort_keys=True, ensure_ascii=False, default=repr)
    calls = message.get("tool_calls")
    for call in calls if isinstance(calls, list) else ():
        for key in _CALL_KEYS:
            if isinstance(call, dict) and key in call:
                yield json.dumps([key, call[key]], sort_keys=True, ensure_ascii=False, default=repr)


def replay_state(messages: Sequence[Any]) -> Counter[str]:
    """Every piece of replay state in ``messages``, serialized, counted."""
    return Counter(blob for message in messages for blob in _blobs(message))


def repair_keeps_replay(before: Sequence[Any], after: Sequence[Any]) -> bool:
    """A repair may move replay state with its message, never drop or change it."""
    return replay_state(before) == replay_state(after)


def compression_keeps_replay(before: Sequence[Any], after: Sequence[Any]) -> bool:
    """A compression may leave out earlier turns' state whole, but changes none and keeps
    all of the latest assistant turn's."""
    kept = replay_state(after)
    if not kept <= replay_state(before):
        return False
    latest = next(
        (m for m in reversed(before) if isinstance(m, dict) and m.get("role") == "assistant"), None
    )
    return Counter(_blobs(latest)) <= kept


def replay_only_dropped(before: Sequence[Any], after: Sequence[Any]) -> bool:
    """After a replay-identity refusal, state may be left out (the provider refused it),
    never changed."""
    return replay_state(after) <= replay_state(before)
