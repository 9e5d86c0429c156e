"""Anthropic preserved thinking: a thinking block is bound to everything before it.

Anthropic binds each ``thinking`` / ``redacted_thinking`` block to the prefix of the
request before it (system prompt, tools, earlier messages; ``cache_control`` markers
excluded). Once compression edits that prefix — a summary, a masked tool result, a shrunk
argument, a repaired message, a changed system prompt — the blocks after the edit no
longer verify, and accounts that enforce binding refuse them ("The block is bound to a
different conversation"). The documented remedy for client-side compaction is to remove
the thinking of the kept turns; thinking of earlier turns may be left out whole.

:func:`unbind_thinking` does that: it finds the first message of the output that is not
the caller's own message at the same position, and removes the thinking blocks of every
later assistant turn — except the running tool loop's turn (or a final assistant
message), which Anthropic requires to come back byte-identical, thinking included. Each
removal is returned as a :class:`ThinkingRemoval` so the report can say what was left out
and why.

The engine knows before it plans that a history over budget will be edited from its
oldest reducible unit on, so it removes that thinking first with :func:`strip_thinking`
and plans on what will really be sent; :func:`unbind_thinking` then reports those
removals together with any its own pass finds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from condense.providers.base import THINKING_BLOCKS
from condense.reduce.base import MARKER
from condense.types import RawMessage
from condense.validate.messages import is_empty_content
from condense.validate.replay import running_loop_turn

EMPTY_TURN = f"{MARKER} this turn's thinking was left out]"
"""The text of a turn that held nothing but thinking (a turn may not be empty)."""


@dataclass(frozen=True, kw_only=True)
class ThinkingRemoval:
    """The thinking blocks removed from one assistant turn of the output."""

    index: int
    """The turn's index in the returned messages."""
    blocks: tuple[Any, ...]
    """The removed blocks, verbatim (nothing is lost without a trace)."""
    edited_at: int
    """The index of the first edited message, whose edit unbound these blocks."""

    @property
    def reason(self) -> str:
        return (
            f"thinking bound to an edited prefix (message {self.edited_at} changed); "
            "Anthropic refuses it once the prefix differs"
        )

    def __str__(self) -> str:
        noun = "block" if len(self.blocks) == 1 else "blocks"
        return f"message {self.index}: {len(self.blocks)} thinking {noun} removed: {self.reason}"


def first_edit(output: Sequence[RawMessage], original: Sequence[Any]) -> int | None:
    """The index of the first message of ``output`` that is not the same object as the
    message at that index of ``original`` (``None``: ``output`` starts with all of it and
    adds nothing before its end)."""
    for index, message in enumerate(output):
        if index >= len(original) or message is not original[index]:
            return index
    return None


Stripped = Mapping[int, tuple[RawMessage, tuple[Any, ...]]]
"""``id(message) -> (message, removed blocks)`` for turns :func:`strip_thinking` made."""


def final_turn(messages: Sequence[RawMessage]) -> int | None:
    """The assistant turn Anthropic wants back verbatim, thinking first: the running tool
    loop's turn, or the last message when it is an assistant message (a prefill)."""
    running = running_loop_turn(messages)
    if running is None and messages and messages[-1].get("role") == "assistant":
        return len(messages) - 1
    return running


def strip_thinking(messages: Sequence[RawMessage], start: int) -> tuple[list[RawMessage], Stripped]:
    """``messages`` with the thinking removed from every assistant turn from ``start`` on,
    except the :func:`final_turn`; and what was removed, by the new turn's id.

    A turn that held only thinking gets the one-line :data:`EMPTY_TURN` text, since a
    turn may not be empty. Turns without thinking are the same objects."""
    final = final_turn(messages)
    out = list(messages)
    stripped: dict[int, tuple[RawMessage, tuple[Any, ...]]] = {}
    for index in range(start, len(out)):
        message = out[index]
        blocks = message.get(THINKING_BLOCKS) if message.get("role") == "assistant" else None
        if not blocks or index == final:
            continue
        unbound = {key: value for key, value in message.items() if key != THINKING_BLOCKS}
        if not unbound.get("tool_calls") and is_empty_content(unbound.get("content")):
            unbound["content"] = EMPTY_TURN
        out[index] = unbound
        stripped[id(unbound)] = (unbound, tuple(blocks))
    return out, stripped


def unbind_thinking(
    output: Sequence[RawMessage], original: Sequence[Any], *, stripped: Stripped | None = None
) -> tuple[list[RawMessage], tuple[ThinkingRemoval, ...]]:
    """``output`` with the thinking removed from every assistant turn after its first
    edit relative to ``original``, except the :func:`final_turn`; and every removal,
    including those ``stripped`` names (turns the engine already stripped).

    Turns before the first edit are the caller's own objects and keep their thinking: its
    prefix is unchanged.
    """
    edited = first_edit(output, original)
    if edited is None:
        return list(output), ()
    messages, found = strip_thinking(output, edited)
    removals = []
    for index, message in enumerate(messages):
        entry = found.get(id(message)) or (stripped or {}).get(id(message))
        if entry is not None and entry[0] is message:
            removals.append(ThinkingRemoval(index=index, blocks=entry[1], edited_at=edited))
    return messages, tuple(removals)
