"""Shrink long tool-call arguments structurally: the JSON stays valid, keys and numbers
stay intact, only long string leaves are cut (see ``condense.arguments``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from condense.arguments import shrink_arguments_report
from condense.arguments.calls import function_arguments
from condense.reduce.base import Cost, Reduction, replace_oldest_first, replace_to_a_cap
from condense.types import RawMessage

DEFAULT_MAX_ARGUMENT_CHARS = 800
SHORT_ARGUMENT_CHARS = 160
"""The least a need-driven shrink leaves of one call's arguments (more when its short
strings — paths, ids — need more: they are never cut)."""


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


def shrink_arguments_to_need(
    messages: Sequence[RawMessage],
    candidates: Sequence[int],
    *,
    need: int,
    cost: Cost,
    floor: int = SHORT_ARGUMENT_CHARS,
) -> Reduction:
    """Shrink the arguments of the calls at ``candidates`` to a common cap, largest first:
    the largest cap (at least ``floor`` characters per call) that saves ``need`` tokens.
    The JSON stays valid and short strings are never cut (``shrink_arguments``)."""

    sizes = {
        i: max(map(len, found))
        for i in candidates
        if (found := _arguments(messages[i])) and max(map(len, found)) > floor
    }
    above: dict[int, bool] = {}  # at the last cap tried: arguments kept above it

    def smaller(index: int, message: RawMessage, cap: int) -> RawMessage | None:
        new_calls: list[Any] = []
        touched = above[index] = False
        for call in message["tool_calls"]:
            text = function_arguments(call)  # a custom call's free text is not JSON
            function = call.get("function") if text is not None else None
            if isinstance(function, dict) and text is not None and len(text) > cap:
                shorter = shrink_arguments_report(text, cap)
                above[index] = above[index] or not shorter.fits
                if len(shorter.text) < len(text):
                    call = {**call, "function": {**function, "arguments": shorter.text}}
                    touched = True
            new_calls.append(call)
        return {**message, "tool_calls": new_calls} if touched else None

    reduction = replace_to_a_cap(
        messages, sizes, need=need, cost=cost, floor=floor, smaller=smaller, overhead=8
    )
    short = tuple(i for i in reduction.changed if above.get(i))
    return replace(reduction, short_of_target=short) if short else reduction


def _arguments(message: RawMessage) -> list[str]:
    """The arguments strings of ``message``'s tool calls."""
    calls = message.get("tool_calls")
    found = (function_arguments(call) for call in (calls if isinstance(calls, list) else ()))
    return [text for text in found if text is not None]
