"""Shrink long tool-call arguments structurally: the JSON stays valid, keys and numbers
stay intact, only long string leaves are cut (see ``condense.arguments``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from condense.arguments import shrink_arguments_report
from condense.arguments.calls import function_arguments
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
    ``candidates``, oldest first, until ``need`` tokens are saved.

    Strings of up to ``KEEP_CHARS`` characters are never cut, so some arguments stay
    above ``max_chars``: the messages looked at that hold them are in ``short_of_target``.
    """
    short: set[int] = set()

    def shrunk(index: int, message: RawMessage) -> RawMessage | None:
        calls = message.get("tool_calls")
        if not isinstance(calls, list):
            return None
        new_calls: list[Any] = []
        touched = over = False
        for call in calls:
            arguments = function_arguments(call)  # a custom call's free text is not JSON
            if arguments is not None and len(arguments) > max_chars:
                shorter = shrink_arguments_report(arguments, max_chars)
                over = over or not shorter.fits
                if len(shorter.text) < len(arguments):
                    function = {**call["function"], "arguments": shorter.text}
                    call = {**call, "function": function}
                    touched = True
            new_calls.append(call)
        if over:
            short.add(index)
        return {**message, "tool_calls": new_calls} if touched else None

    reduction = replace_oldest_first(messages, candidates, need=need, cost=cost, smaller=shrunk)
    return replace(reduction, short_of_target=tuple(sorted(short))) if short else reduction
