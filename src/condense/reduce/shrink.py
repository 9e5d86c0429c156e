"""Shrink long tool-call arguments structurally: the JSON stays valid, keys and numbers
stay intact, only long string leaves are cut (see ``condense.arguments``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from condense.arguments import shrink_arguments
from condense.reduce.base import Cost, Reduction
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
    out = list(messages)
    changed: list[int] = []
    saved = 0
    for index in sorted(candidates):
        if saved >= need:
            break
        message = messages[index]
        calls = message.get("tool_calls")
        if not isinstance(calls, list):
            continue
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
        if not touched:
            continue
        shrunk = {**message, "tool_calls": new_calls}
        gain = cost(message) - cost(shrunk)
        if gain <= 0:
            continue
        out[index] = shrunk
        changed.append(index)
        saved += gain
    return Reduction(messages=out, changed=tuple(changed), saved=saved)
