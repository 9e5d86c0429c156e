"""A guard: the proxy never sends a history whose replay state was edited.

Reasoning models make the client send back state it cannot change: Anthropic thinking
blocks and their signatures, Responses reasoning items (``encrypted_content``), DeepSeek
and Kimi ``reasoning_content``, Gemini thought signatures on tool calls
(``extra_content``). A provider refuses a request in which any of it was altered, so a
repair or compression that alters it turns an accepted request into a refused one.
``repair`` and ``compress`` keep it for the provider they work for; as a second line of
defence the proxy checks each rewrite before it goes out, with the library's one
definition of replay state (``condense.message.keeps_replay``; item ids included): a
repair must keep all of it, byte for byte (an item id may go with the reasoning item it
needed); a compression may leave out earlier turns' state whole but must keep the
latest assistant turn's, and may change none; after a replay-identity refusal, the state
the provider refused may be left out, any turn's. A rewrite that fails the check is not
sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from condense.message import keeps_replay

__all__ = ["compression_keeps_replay", "repair_keeps_replay", "replay_only_dropped"]


def repair_keeps_replay(before: Sequence[Any], after: Sequence[Any]) -> bool:
    """A repair may move replay state with its message, never drop or change it (an item
    id may go with the reasoning item it needed)."""
    return keeps_replay(before, after, may_lose="none")


def compression_keeps_replay(before: Sequence[Any], after: Sequence[Any]) -> bool:
    """A compression may leave out earlier turns' state whole, but changes none and keeps
    all of the latest assistant turn's."""
    return keeps_replay(before, after, may_lose="earlier")


def replay_only_dropped(before: Sequence[Any], after: Sequence[Any]) -> bool:
    """After a replay-identity refusal, state may be left out (the provider refused it),
    never changed."""
    return keeps_replay(before, after, may_lose="any")
