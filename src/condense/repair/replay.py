"""Repair pass 4: replay state and typed blocks — what reasoning models' providers need.

Replay state is never edited; this pass only adds what a provider requires and cannot be
recovered, removes what may be left out whole, and says so:

- DeepSeek / Kimi: a tool-call turn without ``reasoning_content`` in a thinking-mode
  history gets an empty one (its reasoning is unknown; the field is required);
- Anthropic, under budgeted thinking only (a known ``enabled`` mode; a loop the provider
  accepts is never touched): when the first assistant message of the current turn has
  no thinking, the turn is closed after that step's results by a one-line user message
  (written into the same user turn, after the results), so the next step opens a new
  turn — repeated until a step that has its thinking opens the turn, or the turn is
  empty. No block is rewritten and no thinking is made up. A final assistant message
  without thinking (a prefill) is dropped (it travels in its change);
- Gemini: the first call of a step of the current turn without a thought signature gets
  the documented dummy signature;
- Responses: reasoning items whose following item is gone are dropped whole;
- typed blocks (any type is kept as it is: new block types are the provider's to
  judge): extra keys of a text block and empty text blocks are removed,
  ``cache_control`` beyond the limit is removed from the earliest blocks, and a server
  tool block without its partner is removed (it travels in its change).
"""

from __future__ import annotations

from typing import Any

from condense.message import (
    EXTRA_CONTENT,
    ITEM_ID,
    REASONING_CONTENT,
    THINKING_BLOCKS,
    carries_reasoning,
    replayed_item_ids,
    thought_signature,
)
from condense.providers import Profile
from condense.providers.gemini import DUMMY_THOUGHT_SIGNATURE
from condense.repair.ledger import Log, Slot
from condense.repair.order import bridge
from condense.turns import current_turn, turn_start
from condense.validate import check

_CODES = frozenset(
    {
        "missing_reasoning_content",
        "thinking_missing_in_loop",
        "missing_thought_signature",
        "reasoning_without_following_item",
        "item_without_reasoning",
        "empty_text_block",
        "too_many_cache_breakpoints",
        "server_tool_unpaired",
        "unknown_key",
    }
)


def fix_replay(slots: list[Slot], profile: Profile, log: Log) -> list[Slot]:
    """``slots`` with the replay and block rules of ``profile`` satisfied."""
    codes = {v.code for v in check([s.message for s in slots], profile)} & _CODES
    if not codes:
        return slots
    if "reasoning_without_following_item" in codes:
        slots = _drop_lone_reasoning(slots, log)
    if "item_without_reasoning" in codes:
        _strip_item_ids(slots, log)
    if "missing_reasoning_content" in codes:
        _add_empty_reasoning(slots, log)
    if "thinking_missing_in_loop" in codes:
        slots = _open_turn_with_thinking(slots, log)
    if "missing_thought_signature" in codes:
        _add_dummy_signatures(slots, log)
    if profile.blocks is not None:
        slots = _fix_blocks(slots, profile, log)
    return slots


def _drop_lone_reasoning(slots: list[Slot], log: Log) -> list[Slot]:
    """Leave out the reasoning items at the end of a message with nothing else after
    them; the items before them (a compaction item, a web search) stay."""
    kept = []
    for slot in slots:
        message = slot.message
        items = message.get("responses_items")
        if (
            slot.role != "assistant"
            or not isinstance(items, list)
            or message.get("content") is not None
            or message.get("tool_calls")
        ):
            kept.append(slot)
            continue
        end = len(items)
        while end and _is_reasoning(items[end - 1]):
            end -= 1
        if end == len(items):
            kept.append(slot)
        elif end == 0:
            log.add(
                "drop",
                slot,
                "reasoning_without_following_item",
                "reasoning item(s) whose following item is gone, left out whole",
                message=message,
            )
        else:
            slot.edit()["responses_items"] = items[:end]
            log.add(
                "rewrite",
                slot,
                "reasoning_without_following_item",
                "reasoning item(s) at its end whose following item is gone, left out whole",
                message=items[end:],
            )
            kept.append(slot)
    return kept


def _is_reasoning(item: object) -> bool:
    return isinstance(item, dict) and item.get("type") == "reasoning"


def _strip_item_ids(slots: list[Slot], log: Log) -> None:
    """Replay output items whose reasoning item is gone without their ids: items without
    ids are taken as new input, which needs no reasoning item."""
    for slot in slots:
        message = slot.message
        if slot.role != "assistant" or carries_reasoning(message):
            continue
        ids = replayed_item_ids(message)
        if not ids:
            continue
        edited = slot.edit()
        edited.pop(ITEM_ID, None)
        calls = edited.get("tool_calls")
        if isinstance(calls, list):
            edited["tool_calls"] = [
                {k: v for k, v in c.items() if k != ITEM_ID} if isinstance(c, dict) else c
                for c in calls
            ]
        log.add(
            "rewrite",
            slot,
            "item_without_reasoning",
            f"item id(s) {', '.join(ids)} removed: their reasoning item is gone, so they are "
            "replayed as new input",
        )


def _add_empty_reasoning(slots: list[Slot], log: Log) -> None:
    for slot in slots:
        message = slot.message
        if message.get("tool_calls") and message.get(REASONING_CONTENT) is None:
            slot.edit()[REASONING_CONTENT] = ""
            log.add(
                "rewrite",
                slot,
                "missing_reasoning_content",
                "empty reasoning_content added: the provider requires the field on "
                "tool-call turns in thinking mode and this turn's reasoning is unknown",
            )


def _open_turn_with_thinking(slots: list[Slot], log: Log) -> list[Slot]:
    """Budgeted thinking wants the first step of the current turn to start with thinking;
    close the turn after each leading step that has none (see the module docstring)."""
    while True:
        messages = [slot.message for slot in slots]
        first = current_turn(messages).first_assistant
        if first is None or messages[first].get(THINKING_BLOCKS):
            return slots
        after = first + 1
        while after < len(slots) and slots[after].role == "tool":
            after += 1
        if after == first + 1 and first == len(slots) - 1:
            log.add(
                "drop",
                slots[first],
                "thinking_missing_in_loop",
                "final assistant message without a thinking block dropped (budgeted "
                "thinking is enabled, and no thinking block can be made up)",
                message=slots[first].message,
            )
            slots = slots[:first]
            continue
        reason = (
            f"user message put after message {slots[first].origin}'s tool results: under "
            "budgeted thinking the first assistant message of a turn must start with "
            "thinking and that one has none (no thinking block can be made up), so the next "
            'step opens a new turn (with thinking {"type": "adaptive"} no change is needed)'
        )
        closing = bridge("user", "thinking_missing_in_loop", reason, log)
        slots = [*slots[:after], closing, *slots[after:]]


def _add_dummy_signatures(slots: list[Slot], log: Log) -> None:
    start = turn_start([slot.message for slot in slots])
    for slot in slots[start:]:
        calls = slot.message.get("tool_calls") if slot.role == "assistant" else None
        if not isinstance(calls, list) or not calls or not isinstance(calls[0], dict):
            continue
        if thought_signature(calls[0]) is not None:
            continue
        first = dict(calls[0])
        extra = dict(first.get(EXTRA_CONTENT) or {})
        extra["google"] = {
            **dict(extra.get("google") or {}),
            "thought_signature": DUMMY_THOUGHT_SIGNATURE,
        }
        first[EXTRA_CONTENT] = extra
        slot.edit()["tool_calls"] = [first, *calls[1:]]
        log.add(
            "rewrite",
            slot,
            "missing_thought_signature",
            "the first call of this step had no thought signature: Gemini's documented "
            f"dummy signature {DUMMY_THOUGHT_SIGNATURE!r} added",
        )


def _fix_blocks(slots: list[Slot], profile: Profile, log: Log) -> list[Slot]:
    rules = profile.blocks
    assert rules is not None
    kept: list[Slot] = []
    for slot in slots:
        content = slot.message.get("content")
        if isinstance(content, list):
            fixed, notes, removed = _fixed_parts(content, slot.role, rules)
            if notes:
                slot.edit()["content"] = fixed
                log.add(
                    "rewrite", slot, notes[0][0], "; ".join(n for _, n in notes), message=removed
                )
                if not fixed and slot.role != "tool" and not slot.message.get("tool_calls"):
                    log.add(
                        "drop", slot, "empty_message", "no block was left", message=slot.message
                    )
                    continue
        kept.append(slot)
    _limit_cache_breakpoints(kept, rules.max_cache_breakpoints, log)
    return kept


def _fixed_parts(
    parts: list[Any], role: str, rules: Any
) -> tuple[list[Any], list[tuple[str, str]], list[Any]]:
    used = {
        p.get("id")
        for p in parts
        if isinstance(p, dict) and p.get("type") in rules.server_tool_types
    }
    answered = {
        p.get("tool_use_id")
        for p in parts
        if isinstance(p, dict)
        and str(p.get("type", "")).endswith("_tool_result")
        and p.get("type") != "tool_result"
    }
    fixed: list[Any] = []
    notes: list[tuple[str, str]] = []
    removed: list[Any] = []
    for position, part in enumerate(parts):
        if not isinstance(part, dict) or not isinstance(part.get("type"), str):
            fixed.append(part)
            continue
        kind = part["type"]
        if role == "assistant" and (
            (kind in rules.server_tool_types and part.get("id") not in answered)
            or (
                kind.endswith("_tool_result")
                and kind != "tool_result"
                and part.get("tool_use_id") not in used
            )
        ):
            removed.append(part)
            notes.append(
                (
                    "server_tool_unpaired",
                    f"server tool block {position} without its partner removed",
                )
            )
            continue
        if kind == "text":
            extra = [k for k in part if k not in rules.text_keys]
            if extra:
                part = {k: v for k, v in part.items() if k in rules.text_keys}
                notes.append(
                    (
                        "unknown_key",
                        f"text block {position}: removed key(s) {', '.join(map(repr, extra))}",
                    )
                )
            if not isinstance(part.get("text"), str) or not part["text"].strip():
                removed.append(part)
                notes.append(("empty_text_block", f"empty text block {position} removed"))
                continue
        fixed.append(part)
    return fixed, notes, removed


def _limit_cache_breakpoints(slots: list[Slot], limit: int, log: Log) -> None:
    places: list[tuple[Slot, str, int]] = []  # (slot, where, position)
    for slot in slots:
        message = slot.message
        if slot.role == "tool" and "cache_control" in message:
            places.append((slot, "message", 0))
        content = message.get("content")
        for position, part in enumerate(content if isinstance(content, list) else []):
            if isinstance(part, dict) and "cache_control" in part:
                places.append((slot, "part", position))
        calls = message.get("tool_calls")
        for position, call in enumerate(calls if isinstance(calls, list) else []):
            if isinstance(call, dict) and "cache_control" in call:
                places.append((slot, "call", position))
    for slot, where, position in places[: max(0, len(places) - limit)]:
        edited = slot.edit()
        if where == "message":
            del edited["cache_control"]
        else:
            key = "content" if where == "part" else "tool_calls"
            items = list(edited[key])
            items[position] = {k: v for k, v in items[position].items() if k != "cache_control"}
            edited[key] = items
        log.add(
            "rewrite",
            slot,
            "too_many_cache_breakpoints",
            f"cache_control removed from an early block (at most {limit} are allowed; the "
            "latest are kept)",
        )
