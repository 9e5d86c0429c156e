"""Replace older copies of an identical tool output with a pointer to the newest copy."""

from __future__ import annotations

from collections.abc import Sequence

from condense.reduce.base import MARKER, Cost, Reduction, replace_oldest_first
from condense.types import RawMessage

MIN_DEDUPE_CHARS = 120


def dedupe_tool_outputs(
    messages: Sequence[RawMessage],
    candidates: Sequence[int],
    *,
    need: int,
    cost: Cost,
) -> Reduction:
    """Point each older duplicate among ``candidates`` at its newest copy (anywhere later
    in ``messages``), oldest first, until ``need`` tokens are saved."""
    newest: dict[str, int] = {}
    first = min(candidates, default=len(messages))  # only later copies can be pointed at
    for index in range(first, len(messages)):
        message = messages[index]
        if message.get("role") == "tool":
            content = message.get("content")
            if isinstance(content, str) and len(content) >= MIN_DEDUPE_CHARS:
                newest[content] = index

    def pointer(index: int, message: RawMessage) -> RawMessage | None:
        content = message.get("content")
        if not isinstance(content, str) or content.startswith(MARKER):
            return None
        latest = newest.get(content)
        if latest is None or latest <= index:
            return None
        later_id = messages[latest].get("tool_call_id")
        text = f"{MARKER} same output as the later tool call {later_id}]"
        return {**message, "content": text} if len(text) < len(content) else None

    return replace_oldest_first(messages, candidates, need=need, cost=cost, smaller=pointer)
