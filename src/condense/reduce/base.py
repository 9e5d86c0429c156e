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

from condense.message import TEXT_PARTS as TEXT_PARTS  # the text part types, read here too
from condense.message import content_text, is_text_part
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


text_of = content_text
"""The text of a message's content: ``condense.message.content_text``."""


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
