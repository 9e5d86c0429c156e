"""Repair: leave out Responses reasoning minted in another continuation chain.

The reasoning items before the newest compaction item (``condense.validate.chains``) are
removed from their messages, each drop listed with the items it removed. A message left
with nothing (no content, no calls, no other item) is dropped whole; an output item
whose reasoning went is replayed without its ``msg_…``/``fc_…`` id (an item without an
id is new input and needs no reasoning item).
"""

from __future__ import annotations

from typing import Any

from condense.message import ITEM_ID, RESPONSES_ITEMS
from condense.repair.ledger import Log, Slot
from condense.validate.chains import foreign_reasoning


def drop_foreign_reasoning(slots: list[Slot], log: Log) -> list[Slot]:
    """``slots`` without reasoning items from a chain a compaction item replaced."""
    found = foreign_reasoning([slot.message for slot in slots])
    if not found:
        return slots
    kept: list[Slot] = []
    for position, slot in enumerate(slots):
        drop = found.get(position)
        if drop is None:
            kept.append(slot)
            continue
        original = slot.message
        items = original[RESPONSES_ITEMS]
        removed = [items[p] for p in drop]
        left = [item for p, item in enumerate(items) if p not in drop]
        reason = (
            f"{len(removed)} reasoning item(s) from before the newest compaction item left "
            "out: they were minted in the chain the compaction replaced"
        )
        edited = slot.edit()
        if left:
            edited[RESPONSES_ITEMS] = left
        else:
            del edited[RESPONSES_ITEMS]
        _without_item_ids(edited)
        if edited.get("content") is None and not edited.get("tool_calls") and not left:
            log.add("drop", slot, "foreign_reasoning", reason, message=original)
            continue
        log.add("rewrite", slot, "foreign_reasoning", reason, message=removed)
        kept.append(slot)
    return kept


def _without_item_ids(message: dict[str, Any]) -> None:
    """Drop the item ids of the message and its calls, whose reasoning item is gone."""
    message.pop(ITEM_ID, None)
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        message["tool_calls"] = [
            {k: v for k, v in call.items() if k != ITEM_ID} if isinstance(call, dict) else call
            for call in calls
        ]
