"""The turn model: where the current turn starts, what it holds, and which messages stand
for all the context before them.

A **turn** opens with a user message that carries content and runs to the next one. The
current turn is everything after the last such message: in a tool loop, the assistant
steps, their calls and every result since the user last spoke. A user message that only
answers calls is no such message: in canonical form an Anthropic user turn holding only
``tool_result`` blocks is a run of tool messages, and they belong to the running turn.
(Anthropic: "a tool-use loop is one assistant turn", platform.claude.com/docs
build-with-claude/thinking-tool-workflows; real Claude Code requests in
``tests/data/corpus/agents/cc_spotter_*`` carry thinking on the first step of a turn
only.)

The running turn is untouchable: its assistant messages come back as the same objects and
every message in order. (The only reduction planned for it is cutting its own tool outputs
middle-out, as the last resort before a budget is called impossible; see
:attr:`Turn.outputs`.)

A **compaction** — an Anthropic ``compaction`` content block, or a Responses
``compaction`` item (which the Responses reader carries in ``responses_items`` of an
assistant message of its own) — holds all the context before it: it is never summarized,
masked or dropped (see :func:`carries_compaction`).

Everything here only reads messages, runs in one backward pass at most, and never
raises on odd input.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from condense.message import RESPONSES_ITEMS, is_empty_content

COMPACTION = "compaction"
"""The type of an Anthropic compaction block and of a Responses compaction item."""
COMPACTION_TYPES = frozenset({COMPACTION, "compaction_summary"})
"""The block and item types that are a compaction (Codex reads ``compaction_summary`` as
an alias of ``compaction``: openai/codex ``codex-rs/protocol/src/models.rs``)."""


def _role(message: object) -> object:
    return message.get("role") if type(message) is dict else None


def opens_turn(message: object) -> bool:
    """A user message that carries content: the message a turn starts after."""
    return (
        type(message) is dict
        and message.get("role") == "user"
        and not is_empty_content(message.get("content"))
    )


def turn_start(messages: Sequence[Any]) -> int:
    """The index of the first message of the current turn: just after the last user
    message that carries content; with no such message, just after the leading system
    messages (the whole conversation is one turn)."""
    for index in range(len(messages) - 1, -1, -1):
        if opens_turn(messages[index]):
            return index + 1
    lead = 0
    while lead < len(messages) and _role(messages[lead]) in ("system", "developer"):
        lead += 1
    return lead


@dataclass(frozen=True, slots=True)
class Turn:
    """The current turn of a history: messages ``start`` to the end."""

    start: int
    stop: int
    first_assistant: int | None
    """The first assistant message of the turn: under budgeted thinking, the one that
    must start with thinking."""
    last_assistant: int | None
    running: bool
    """The history ends with tool results of this turn: the agent is in a tool loop and
    the provider will answer with the next step."""

    opened: bool = False
    """A user message that carries content opened the turn (``start - 1``)."""

    @property
    def ask(self) -> int | None:
        """The index of the user message that opened the turn (the latest ask), if any."""
        return self.start - 1 if self.opened else None

    def __contains__(self, index: object) -> bool:
        return isinstance(index, int) and self.start <= index < self.stop

    def outputs(self, messages: Sequence[Any]) -> list[int]:
        """The tool results of the turn: the only part of it that may ever be reduced,
        cut middle-out as the last resort before a budget is declared impossible."""
        return [i for i in range(self.start, self.stop) if _role(messages[i]) == "tool"]


def current_turn(messages: Sequence[Any]) -> Turn:
    """The current turn of ``messages`` (see the module docstring)."""
    start = turn_start(messages)
    opened = start > 0 and opens_turn(messages[start - 1])
    first = last = None
    for index in range(start, len(messages)):
        if _role(messages[index]) == "assistant":
            first = index if first is None else first
            last = index
    running = bool(messages) and start < len(messages) and _role(messages[-1]) == "tool"
    return Turn(
        start=start,
        stop=len(messages),
        first_assistant=first,
        last_assistant=last,
        running=running,
        opened=opened,
    )


def in_tool_loop(messages: Sequence[Any]) -> bool:
    """The history ends with tool results of the current turn."""
    return current_turn(messages).running


def carries_compaction(message: object) -> bool:
    """``message`` carries a compaction: an Anthropic ``compaction`` content block, or a
    Responses ``compaction`` item among the ``responses_items`` it carries."""
    if type(message) is not dict:
        return False
    for key in ("content", RESPONSES_ITEMS):
        value = message.get(key)
        if isinstance(value, list) and any(
            isinstance(part, dict) and part.get("type") in COMPACTION_TYPES for part in value
        ):
            return True
    return False


def newest_compaction(messages: Sequence[Any]) -> int | None:
    """The index of the last message that carries a compaction, if any."""
    for index in range(len(messages) - 1, -1, -1):
        if carries_compaction(messages[index]):
            return index
    return None
