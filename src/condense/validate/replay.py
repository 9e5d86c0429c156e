"""Replay-state rules: what a reasoning model's provider needs sent back.

- DeepSeek / Kimi thinking mode: once the history carries ``reasoning_content``, every
  assistant message with tool calls carries it too;
- Anthropic thinking, under budgeted thinking only (a known ``enabled`` mode): the first
  assistant message of the current turn starts with its thinking. With adaptive thinking
  a turn may carry none, and later steps of a turn may carry none in any mode (real
  Claude Code loops in ``tests/data/corpus/agents``); an unknown mode reports nothing,
  since one of the modes accepts the history;
- Gemini 3: once the history carries thought signatures, the first call of every step of
  the current turn carries one;
- Responses: a reasoning item keeps the item that followed it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from condense.message import (
    REASONING_CONTENT,
    RESPONSES_ITEMS,
    THINKING_BLOCKS,
    carries_reasoning,
    replayed_item_ids,
    thought_signature,
)
from condense.providers import Profile
from condense.turns import current_turn, turn_start
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
    if profile.thinking_start and profile.thinking_mode == "enabled":
        yield from _thinking_at_turn_start(messages, profile)
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


def _thinking_at_turn_start(messages: Sequence[Any], profile: Profile) -> Iterator[Violation]:
    first = current_turn(messages).first_assistant
    if first is None or messages[first].get(THINKING_BLOCKS):
        return
    yield violation(
        profile,
        first,
        "thinking_missing_in_loop",
        "the first assistant message of the current turn has no thinking block, though "
        "budgeted thinking is enabled",
        found=first_block_type(messages[first]),
    )


def first_block_type(message: dict[str, Any]) -> str:
    """The type of the first block an assistant message is written with (after its
    thinking): its first content part, else ``tool_use``."""
    content = message.get("content")
    if isinstance(content, str) and content:
        return "text"
    if isinstance(content, list) and content and isinstance(content[0], dict):
        return str(content[0].get("type"))
    return "tool_use" if message.get("tool_calls") else "text"


def _thought_signatures(messages: Sequence[Any], profile: Profile) -> Iterator[Violation]:
    signed = any(
        thought_signature(call) is not None
        for message in messages
        if isinstance(message, dict) and isinstance(message.get("tool_calls"), list)
        for call in message["tool_calls"]
    )
    if not signed:
        return
    for index in range(turn_start(messages), len(messages)):
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
