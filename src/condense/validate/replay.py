"""Replay-state rules: what a reasoning model's provider needs sent back.

- DeepSeek / Kimi thinking mode: once the history carries ``reasoning_content``, every
  assistant message with tool calls carries it too;
- Anthropic thinking: once the history carries thinking blocks, the assistant turn of a
  running tool loop (the history ends with its results), or a final assistant message,
  starts with its thinking;
- Gemini 3: once the history carries thought signatures, the first call of every step of
  the current turn carries one;
- Responses: a reasoning item keeps the item that followed it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from condense.providers import Profile
from condense.providers.base import (
    EXTRA_CONTENT,
    ITEM_ID,
    REASONING_CONTENT,
    RESPONSES_ITEMS,
    THINKING_BLOCKS,
)
from condense.validate.messages import has_replay_only
from condense.validate.report import Violation, violation


def replay_violations(messages: Sequence[Any], profile: Profile) -> Iterator[Violation]:
    """Every replay-state rule of ``profile`` that ``messages`` breaks."""
    assistants = [
        (index, message)
        for index, message in enumerate(messages)
        if isinstance(message, dict) and message.get("role") == "assistant"
    ]
    if profile.reasoning_on_tool_calls:
        yield from _missing_reasoning(assistants, profile)
    if profile.thinking_in_running_loop:
        yield from _thinking_in_loop(messages, assistants, profile)
    if profile.thought_signatures:
        yield from _thought_signatures(messages, profile)
    if RESPONSES_ITEMS in profile.allowed_keys.get("assistant", ()):
        yield from _lone_reasoning(assistants, profile)
        yield from _replayed_items_without_reasoning(assistants, profile)


def _missing_reasoning(
    assistants: list[tuple[int, dict[str, Any]]], profile: Profile
) -> Iterator[Violation]:
    if not any(message.get(REASONING_CONTENT) is not None for _, message in assistants):
        return
    for index, message in assistants:
        if message.get("tool_calls") and message.get(REASONING_CONTENT) is None:
            yield violation(
                profile,
                index,
                "missing_reasoning_content",
                "assistant message with tool calls has no reasoning_content, though the "
                "history is in thinking mode",
            )


def running_loop_turn(messages: Sequence[Any]) -> int | None:
    """The index of the assistant turn of a running tool loop: the last assistant
    message, when it has tool calls and only its results (and user text of the same
    turn) follow it. ``None`` when the history does not end in a running loop."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        role = message.get("role") if isinstance(message, dict) else None
        if role == "assistant":
            if not message.get("tool_calls") or index == len(messages) - 1:
                return None
            return index
        if role not in ("tool", "user"):
            return None
        if role == "user" and (index == 0 or _role(messages[index - 1]) != "tool"):
            return None  # a new user turn: the loop is closed
    return None


def _role(message: object) -> object:
    return message.get("role") if isinstance(message, dict) else None


def _thinking_in_loop(
    messages: Sequence[Any], assistants: list[tuple[int, dict[str, Any]]], profile: Profile
) -> Iterator[Violation]:
    if not any(message.get(THINKING_BLOCKS) for _, message in assistants):
        return
    final = running_loop_turn(messages)
    found = "tool_use"
    if final is None and assistants and assistants[-1][0] == len(messages) - 1:
        final, found = assistants[-1][0], "text"
    if final is None or messages[final].get(THINKING_BLOCKS):
        return
    if messages[final].get("content"):
        found = "text"
    yield violation(
        profile,
        final,
        "thinking_missing_in_loop",
        "the final assistant turn has no thinking block, though thinking is on",
        found=found,
    )


def thought_signature(call: object) -> str | None:
    """The Gemini thought signature a tool call carries, if any."""
    extra = call.get(EXTRA_CONTENT) if isinstance(call, dict) else None
    google = extra.get("google") if isinstance(extra, Mapping) else None
    signature = google.get("thought_signature") if isinstance(google, Mapping) else None
    return signature if isinstance(signature, str) and signature else None


def current_turn_start(messages: Sequence[Any]) -> int:
    """The index just after the latest user message (0 if there is none)."""
    for index in range(len(messages) - 1, -1, -1):
        if _role(messages[index]) == "user":
            return index + 1
    return 0


def _thought_signatures(messages: Sequence[Any], profile: Profile) -> Iterator[Violation]:
    signed = any(
        thought_signature(call) is not None
        for message in messages
        if isinstance(message, dict) and isinstance(message.get("tool_calls"), list)
        for call in message["tool_calls"]
    )
    if not signed:
        return
    for index in range(current_turn_start(messages), len(messages)):
        message = messages[index]
        calls = message.get("tool_calls") if isinstance(message, dict) else None
        if not isinstance(calls, list) or not calls or not isinstance(calls[0], dict):
            continue
        if thought_signature(calls[0]) is None:
            function = calls[0].get("function")
            name = function.get("name") if isinstance(function, dict) else None
            yield violation(
                profile,
                index,
                "missing_thought_signature",
                "the first tool call of this step has no thought signature",
                name=str(name),
            )


def _lone_reasoning(
    assistants: list[tuple[int, dict[str, Any]]], profile: Profile
) -> Iterator[Violation]:
    for index, message in assistants:
        if not has_replay_only(message) or message.get("content") is not None:
            continue
        items = message.get(RESPONSES_ITEMS)
        last = items[-1] if isinstance(items, list) and items else None
        # only a reasoning item with nothing after it: one followed by another item
        # (a web_search_call, a compaction item) keeps its following item
        if isinstance(last, dict) and last.get("type") == "reasoning":
            item_id = last.get("id")
            yield violation(
                profile,
                index,
                "reasoning_without_following_item",
                "reasoning item(s) without the item that followed them",
                id=str(item_id or "rs_…"),
            )


def carries_reasoning(message: dict[str, Any]) -> bool:
    """The message carries a Responses ``reasoning`` item."""
    items = message.get(RESPONSES_ITEMS)
    return isinstance(items, list) and any(
        isinstance(item, dict) and item.get("type") == "reasoning" for item in items
    )


def replayed_item_ids(message: dict[str, Any]) -> list[str]:
    """The Responses item ids (``msg_…``, ``fc_…``) a message and its calls carry."""
    ids = [message[ITEM_ID]] if isinstance(message.get(ITEM_ID), str) else []
    calls = message.get("tool_calls")
    for call in calls if isinstance(calls, list) else ():
        if isinstance(call, dict) and isinstance(call.get(ITEM_ID), str):
            ids.append(call[ITEM_ID])
    return ids


def _replayed_items_without_reasoning(
    assistants: list[tuple[int, dict[str, Any]]], profile: Profile
) -> Iterator[Violation]:
    """With a reasoning model every response starts with a reasoning item: an output item
    replayed with its id needs that item before it."""
    if not any(carries_reasoning(message) for _, message in assistants):
        return
    for index, message in assistants:
        ids = replayed_item_ids(message)
        if ids and not carries_reasoning(message):
            kind = "function_call" if ids[0].startswith("fc") else "message"
            yield violation(
                profile,
                index,
                "item_without_reasoning",
                f"output item {ids[0]!r} is replayed with its id but without its reasoning item",
                id=ids[0],
                found=kind,
            )
