"""What every reduction strategy takes and returns.

A strategy is a pure function: it reads a message list, never mutates it, and returns a
new list in which some messages are replaced by smaller ones (same roles, same tool-call
ids, so the history stays valid), together with the indices it changed and the tokens it
estimates it saved. Strategies work oldest first and stop once they have saved ``need``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from condense.message import is_text_part
from condense.tokens.media import IMAGE_PARTS
from condense.types import RawMessage

Cost = Callable[[Mapping[str, Any]], int]
"""Tokens of one message (an estimate during planning)."""

MARKER = "[condense:"
"""Every placeholder condense writes starts with this, so later runs can recognise it."""


@dataclass(frozen=True, kw_only=True)
class Reduction:
    """A strategy's result: the new list, the indices it replaced, the tokens it saved.

    ``short_of_target`` lists messages the strategy looked at that stay larger than it
    aimed for, because going further would destroy what it must keep (argument shrinking
    never cuts a short string such as a path or an id): a best effort a report can
    surface.
    """

    messages: list[RawMessage]
    changed: tuple[int, ...]
    saved: int
    short_of_target: tuple[int, ...] = ()


def has_images(content: object) -> bool:
    """``content`` holds an image part (``condense.tokens.media.IMAGE_PARTS``)."""
    return isinstance(content, list) and any(
        isinstance(part, dict) and isinstance(part.get("type"), str) and part["type"] in IMAGE_PARTS
        for part in content
    )


def other_parts(content: object) -> dict[str, int]:
    """How many parts of each type other than text (``condense.message.is_text_part``)
    ``content`` holds (documents, search results, server tool blocks, …), for a
    placeholder that names what it stands for."""
    found: dict[str, int] = {}
    for part in content if isinstance(content, list) else ():
        if is_text_part(part):
            continue
        kind = part.get("type") if isinstance(part, dict) else None
        name = str(kind) if kind is not None else "value"
        found[name] = found.get(name, 0) + 1
    return found


def replace_oldest_first(
    messages: Sequence[RawMessage],
    candidates: Sequence[int],
    *,
    need: int,
    cost: Cost,
    smaller: Callable[[int, RawMessage], RawMessage | None],
) -> Reduction:
    """The loop every strategy shares: walk ``candidates`` oldest first, replace a message
    by ``smaller(index, message)`` (``None``: leave it) when that saves tokens, and stop
    once ``need`` tokens are saved."""
    out = list(messages)
    changed: list[int] = []
    saved = 0
    for index in sorted(candidates):
        if saved >= need:
            break
        original = messages[index]
        replacement = smaller(index, original)
        if replacement is None:
            continue
        gain = cost(original) - cost(replacement)
        if gain > 0:
            out[index] = replacement
            changed.append(index)
            saved += gain
    return Reduction(messages=out, changed=tuple(changed), saved=saved)


Capped = Callable[[int, RawMessage, int], RawMessage | None]
"""``(index, message, cap) -> smaller message`` (``None``: leave it) for a common cap."""
_ROUNDS = 8
"""Estimates of what a cap saves are checked with ``cost``; this many tries lower it."""


def replace_to_a_cap(
    messages: Sequence[RawMessage],
    sizes: Mapping[int, int],
    *,
    need: int,
    cost: Cost,
    floor: int,
    smaller: Capped,
    overhead: int = 0,
) -> Reduction:
    """The loop of the need-driven strategies (cut outputs, shrink arguments to a cap):
    water-filling. ``sizes`` gives, for each message it may replace, the size (in
    characters) of what a cap bounds; the largest cap, at least ``floor``, whose
    replacements ``smaller(index, message, cap)`` save ``need`` tokens is found from each
    message's tokens per character (less the ``overhead`` tokens a replacement adds: its
    marker), then checked with ``cost`` and lowered (a few times) while it saves too
    little. Largest first: a cap only touches what is above it."""
    rates = {i: cost(messages[i]) / max(1, size) for i, size in sizes.items()}

    def estimate(want: int) -> int:
        def saved(cap: int) -> float:
            return sum(max(0.0, rates[i] * (size - cap) - overhead) for i, size in sizes.items())

        low, high = floor, max(sizes.values(), default=floor)
        if saved(low) < want:
            return low
        while high - low > 1:  # saved(low) >= want, saved(high) < want
            middle = (low + high) // 2
            low, high = (middle, high) if saved(middle) >= want else (low, middle)
        return low

    def apply(cap: int) -> tuple[list[RawMessage], list[int], int]:
        out, changed, saved = list(messages), [], 0
        for index in sorted(sizes):
            message = messages[index]
            replacement = smaller(index, message, cap)
            if replacement is None:
                continue
            gain = cost(message) - cost(replacement)
            if gain > 0:
                out[index], saved = replacement, saved + gain
                changed.append(index)
        return out, changed, saved

    if not sizes:
        return Reduction(messages=list(messages), changed=(), saved=0)
    want = need
    cap = estimate(want)
    out, changed, saved = apply(cap)
    for round_ in range(1, _ROUNDS):
        if saved >= need or cap <= floor:
            break
        # the estimate was off: ask for what is missing on top, twice as much each time,
        # and at the last try go to the floor
        want += (need - saved) << (round_ - 1)
        last = round_ == _ROUNDS - 1
        cap = floor if last else max(floor, min(cap - 1, estimate(want)))
        out, changed, saved = apply(cap)
    return Reduction(messages=out, changed=tuple(changed), saved=saved)
