"""Replace older copies of an identical tool output with a pointer to the newest copy."""

from __future__ import annotations

from collections.abc import Sequence

from condense.reduce.base import MARKER, Cost, Reduction, text_of
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
    out = list(messages)
    changed: list[int] = []
    saved = 0
    for index in sorted(candidates):
        if saved >= need:
            break
        message = messages[index]
        content = message.get("content")
        if not isinstance(content, str) or content.startswith(MARKER):
            continue
        latest = newest.get(content)
        if latest is None or latest <= index:
            continue
        later_id = messages[latest].get("tool_call_id")
        pointer = f"{MARKER} same output as the later tool call {later_id}]"
        replaced = {**message, "content": pointer}
        gain = cost(message) - cost(replaced)
        if gain <= 0 or len(pointer) >= len(text_of(content)):
            continue
        out[index] = replaced
        changed.append(index)
        saved += gain
    return Reduction(messages=out, changed=tuple(changed), saved=saved)
