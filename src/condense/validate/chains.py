"""Responses reasoning minted in another continuation chain.

A reasoning item's ``encrypted_content`` is bound to the chain of responses that minted
it. A ``compaction`` item starts a new chain: it stands for everything before it, and
Codex's own compacted history keeps no reasoning item before it (openai/codex
``core/src/compact_remote.rs``, ``should_keep_compacted_history_item``: ``Reasoning`` is
not kept). A reasoning item before the newest compaction item was therefore minted in
the chain the compaction replaced. Azure Foundry's Responses endpoint refuses a request
that mixes chains — ``Conflicting authenticated continuation identities.``
(anomalyco/opencode #48942, NousResearch/hermes-agent #106718), permanently, since every
later request replays the same items — and no endpoint needs them, so they are reported
here and left out by ``repair``.

What the history alone cannot tell: reasoning minted by a separate call whose output a
client folded into the main chain (opencode's compaction agent, a sub-agent's turn)
looks like any other reasoning item. That case is left to recovery from the provider's
error (``condense.errors``), which knows the error text; Azure Foundry also refuses
reasoning from more than one response of the same chain (hermes-agent #106718), which
no history-only rule can tell from OpenAI's, which accepts it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from condense.message import RESPONSES_ITEMS
from condense.providers import Profile
from condense.turns import COMPACTION_TYPES
from condense.validate.report import Violation, violation


def foreign_reasoning(messages: Sequence[Any]) -> dict[int, list[int]]:
    """Message index → the positions (in its ``responses_items``) of the reasoning items
    that come before the newest compaction item of ``messages``."""
    newest: tuple[int, int] | None = None
    for index, message in enumerate(messages):
        for position, item in enumerate(_items(message)):
            if item.get("type") in COMPACTION_TYPES:
                newest = (index, position)
    if newest is None:
        return {}
    found: dict[int, list[int]] = {}
    for index in range(newest[0] + 1):
        items = _items(messages[index])
        limit = newest[1] if index == newest[0] else len(items)
        positions = [p for p in range(limit) if items[p].get("type") == "reasoning"]
        if positions:
            found[index] = positions
    return found


def chain_violations(messages: Sequence[Any], profile: Profile) -> Iterator[Violation]:
    """A violation for each message carrying reasoning from a replaced chain, under a
    profile that takes Responses items."""
    if RESPONSES_ITEMS not in profile.allowed_keys.get("assistant", ()):
        return
    for index, positions in foreign_reasoning(messages).items():
        first = _items(messages[index])[positions[0]]
        yield violation(
            profile,
            index,
            "foreign_reasoning",
            f"{len(positions)} reasoning item(s) from before the newest compaction item "
            "(minted in the chain it replaced)",
            id=str(first.get("id") or "rs_…"),
        )


def _items(message: Any) -> list[dict[str, Any]]:
    """The Responses items of an assistant message (an item that is not an object is
    left to the other rules)."""
    if type(message) is not dict or message.get("role") != "assistant":
        return []
    items = message.get(RESPONSES_ITEMS)
    if not isinstance(items, list):
        return []
    return [item if isinstance(item, dict) else {} for item in items]
