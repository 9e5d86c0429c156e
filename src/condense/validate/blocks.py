"""Content-block rules of providers with typed blocks (Anthropic): no extra keys on a text
block, no empty text block, at most N ``cache_control`` breakpoints, each server tool
use with its result in the same turn, ``tool_result`` blocks only in user turns, and a
user turn answering calls starting with its ``tool_result`` blocks."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from condense.message import call_ids
from condense.providers import Profile
from condense.providers.base import BlockRules
from condense.validate.report import Violation, violation


def block_violations(messages: Sequence[Any], profile: Profile) -> Iterator[Violation]:
    """Every content-block rule of ``profile`` that ``messages`` breaks."""
    rules = profile.blocks
    if rules is None:
        return
    yield from text_before_results(messages, profile)
    breakpoints = 0
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        parts = content if isinstance(content, list) else []
        for position, part in enumerate(parts):
            if isinstance(part, dict):
                yield from _part_violations(
                    index, position, part, message.get("role"), rules, profile
                )
        counted = _breakpoints(message)
        if breakpoints <= rules.max_cache_breakpoints < breakpoints + counted:
            yield violation(
                profile,
                index,
                "too_many_cache_breakpoints",
                f"more than {rules.max_cache_breakpoints} blocks carry cache_control",
                found=str(_total_breakpoints(messages)),
            )
        breakpoints += counted
        if message.get("role") == "assistant":
            yield from _server_tool_violations(index, parts, rules, profile)


def _part_violations(
    index: int,
    position: int,
    part: dict[str, Any],
    role: object,
    rules: BlockRules,
    profile: Profile,
) -> Iterator[Violation]:
    kind = part.get("type")
    at = str(position)
    if not isinstance(kind, str):
        return  # reported by the content-shape rule
    if kind == "tool_result" and role == "user":
        return
    if kind == "tool_result":
        yield violation(
            profile,
            index,
            "tool_result_in_assistant",
            f"content block {position} is a tool_result outside a user turn",
            block=at,
        )
        return
    if kind != "text":  # any other type, known or new, is the provider's to judge
        return
    for key in part:
        if key not in rules.text_keys:
            yield violation(
                profile,
                index,
                "unknown_key",
                f"text block {position} has key {key!r}",
                key=f"content.{position}.text.{key}",
                block=at,
            )
    text = part.get("text")
    if not isinstance(text, str) or not text.strip():
        yield violation(
            profile, index, "empty_text_block", f"text block {position} is empty", block=at
        )


def _breakpoints(message: dict[str, Any]) -> int:
    count = int("cache_control" in message and message.get("role") == "tool")
    content = message.get("content")
    for part in content if isinstance(content, list) else ():
        count += isinstance(part, dict) and "cache_control" in part
    calls = message.get("tool_calls")
    for call in calls if isinstance(calls, list) else ():
        count += isinstance(call, dict) and "cache_control" in call
    return count


def _total_breakpoints(messages: Sequence[Any]) -> int:
    return sum(_breakpoints(m) for m in messages if isinstance(m, dict))


def _server_tool_violations(
    index: int, parts: list[Any], rules: BlockRules, profile: Profile
) -> Iterator[Violation]:
    uses: dict[str, str] = {}
    results: set[str] = set()
    for part in parts:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind in rules.server_tool_types and isinstance(part.get("id"), str):
            uses[part["id"]] = str(part.get("name") or kind)
        elif isinstance(kind, str) and kind.endswith("_tool_result") and kind != "tool_result":
            results.add(str(part.get("tool_use_id")))
            if part.get("tool_use_id") not in uses:
                yield violation(
                    profile,
                    index,
                    "server_tool_unpaired",
                    f"{kind} block answers no server tool use before it in this turn",
                    id=str(part.get("tool_use_id")),
                    name=kind.removesuffix("_tool_result"),
                )
    for use_id, name in uses.items():
        if use_id not in results:
            yield violation(
                profile,
                index,
                "server_tool_unpaired",
                f"server tool use {use_id!r} has no result in the same turn",
                id=use_id,
                name=name,
            )


def text_before_results(messages: Sequence[Any], profile: Profile) -> Iterator[Violation]:
    """A user turn that answers calls but puts other blocks before its ``tool_result``
    blocks: read canonically, user messages between an assistant message with calls and
    the results answering them. Reported once, at the first such user message, with the
    number of results the API looked for at the start of the turn."""
    for index, message in enumerate(messages):
        calls = message.get("tool_calls") if type(message) is dict else None
        if not isinstance(calls, list) or not calls:
            continue
        ids = {i for call in calls for i in call_ids(call)}
        after = index + 1
        while after < len(messages) and _role(messages[after]) == "user":
            after += 1
        if after == index + 1:
            continue
        results = 0
        while after < len(messages) and _role(messages[after]) == "tool":
            results += messages[after].get("tool_call_id") in ids
            after += 1
        if results:
            yield violation(
                profile,
                index + 1,
                "text_before_tool_result",
                f"this user turn puts other blocks before the {results} tool result(s) that "
                f"answer message {index}",
                found=str(results),
            )


def _role(message: object) -> object:
    return message.get("role") if isinstance(message, dict) else None
