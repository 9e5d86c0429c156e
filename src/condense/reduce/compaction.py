"""Leave out what an Anthropic compaction block supersedes: the cheapest reduction there is.

A ``compaction`` block (Anthropic server-side compaction, ``compact_20260112``) carries a
summary of everything before it, and the API itself ignores what precedes it: "In
subsequent requests, append the response to your messages. The API automatically drops
all message blocks before the compaction block, continuing the conversation from the
summary" (platform.claude.com/docs build-with-claude/compaction). Those messages cost the
client bandwidth and cost condense's count, and tell the model nothing; leaving them out
changes nothing the model sees.

A Responses ``compaction`` item is not treated so: the standalone ``/responses/compact``
endpoint returns the new window as the user messages it keeps verbatim *followed by* the
item (real Codex CLI requests in ``tests/data/corpus/agents/codex_localpush_019c8a59*``
carry 39 such items before it), so what precedes an item may be part of the window. Only
server-side compaction lets clients "drop items that came before the most recent
compaction item" (developers.openai.com/api/docs/guides/context-management), and the
request does not say which of the two wrote the item.

The compaction block itself, and everything from its message on, is kept; when the
profile wants the conversation to open with a user message and the compaction sits in an
assistant message, the user message right before it is kept too, or a one-line opener
stands in (``condense.repair.OPENING_USER``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from condense.providers import Profile
from condense.repair.order import OPENING_USER
from condense.turns import COMPACTION
from condense.types import RawMessage


@dataclass(frozen=True, kw_only=True)
class Superseded:
    """Messages ``start``–``stop - 1`` of the repaired history, left out because a
    compaction block after them carries them (``opener``: a one-line user message stands
    in their place)."""

    start: int
    stop: int
    opener: bool

    def __str__(self) -> str:
        count = self.stop - self.start
        noun = "message" if count == 1 else "messages"
        return (
            f"{count} {noun} ({self.start}–{self.stop - 1}) before the newest compaction "
            "block left out (the API drops them)"
        )


def _holds_block(message: object) -> bool:
    content = message.get("content") if isinstance(message, dict) else None
    return isinstance(content, list) and any(
        isinstance(part, dict) and part.get("type") == COMPACTION for part in content
    )


def supersede(
    messages: Sequence[RawMessage], profile: Profile
) -> tuple[list[RawMessage], Superseded | None]:
    """``messages`` without what the newest compaction block supersedes, and what was left
    out (``None``, and ``messages`` as they are, when nothing is)."""
    newest = next((i for i in range(len(messages) - 1, -1, -1) if _holds_block(messages[i])), None)
    if newest is None:
        return list(messages), None
    lead = 0
    while lead < len(messages) and messages[lead].get("role") in ("system", "developer"):
        lead += 1
    keep = newest
    opener = False
    if profile.first_user and messages[keep].get("role") != "user":
        if keep > lead and messages[keep - 1].get("role") == "user":
            keep -= 1
        else:
            opener = True
    if keep - lead <= int(opener):  # nothing (or only what the opener would replace) to gain
        return list(messages), None
    stand_in = [{"role": "user", "content": OPENING_USER}] if opener else []
    out = [*messages[:lead], *stand_in, *messages[keep:]]
    return out, Superseded(start=lead, stop=keep, opener=opener)
