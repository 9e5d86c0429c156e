"""Shrink long tool-call arguments structurally: the JSON stays valid, keys and numbers
stay intact, only long string leaves are cut (see ``condense.arguments``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from condense.arguments import shrink_arguments
from condense.reduce.base import Cost, Reduction, replace_oldest_first
from condense.types import RawMessage

DEFAULT_MAX_ARGUMENT_CHARS = 800


def shrink_tool_arguments(
    messages: Sequence[RawMessage],
    candidates: Sequence[int],
    *,
    need: int,
    cost: Cost,
    max_chars: int = DEFAULT_MAX_ARGUMENT_CHARS,
) -> Reduction:
    """Shrink every argument string over ``max_chars`` of the assistant messages at
    ``candidates``, oldest first, until ``need`` tokens are saved."""

    def shrunk(index: int, message: RawMessage) -> RawMessage | None:
        calls = message.get("tool_calls")
        if not isinstance(calls, list):
            return None
        new_calls: list[Any] = []
        touched = False
        for call in calls:
            arguments = call["function"]["arguments"]
            if len(arguments) > max_chars:
                shorter = shrink_arguments(arguments, max_chars)
                if len(shorter) < len(arguments):
                    call = {**call, "function": {**call["function"], "arguments": shorter}}
                    touched = True
            new_calls.append(call)
        return {**message, "tool_calls": new_calls} if touched else None

    return replace_oldest_first(messages, candidates, need=need, cost=cost, smaller=shrunk)
