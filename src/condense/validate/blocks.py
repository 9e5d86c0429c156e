"""Content-block rules of providers with typed blocks (Anthropic): known block types, no
extra keys on a text block, no empty text block, at most N ``cache_control``
breakpoints, and each server tool use with its result in the same turn."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from condense.providers import Profile
from condense.providers.base import BlockRules
from condense.validate.report import Violation, violation


def block_violations(messages: Sequence[Any], profile: Profile) -> Iterator[Violation]:
    """Every content-block rule of ``profile`` that ``messages`` breaks."""
    rules = profile.blocks
    if rules is None:
        return
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
    if kind not in rules.types and not kind.endswith("_tool_result"):
        yield violation(
            profile,
            index,
            "unknown_block_type",
            f"content block {position} has type {kind!r}, which {profile.name} does not know",
            block=at,
            found=kind,
        )
        return
    if kind != "text":
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
