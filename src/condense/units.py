"""Segment a history into units: the smallest runs of messages that can be kept, dropped,
masked or summarized as a whole without breaking any provider's rules.

=================  ================================================================
unit kind          messages
=================  ================================================================
``system``         one system or developer message
``user``           one user message
``reply``          one assistant message without tool calls
``tool_exchange``  one assistant message with ``tool_calls`` and every tool result
                   that follows it (parallel calls included), and — where results
                   come later, as the Responses API allows — every message up to the
                   last result answering it
``stray``          tool results that follow no tool call (only in unrepaired input)
=================  ================================================================

A unit owns the replay state of its messages (``condense.message.carries_replay``). One model
response that the Responses adapter read into several assistant messages (a reasoning
item before each of a ``msg_…`` and an ``fc_…`` item) is one unit: consecutive assistant
messages are joined when one of them carries Responses items, so a reasoning item never
leaves the items of its response. A message holding a Responses ``compaction`` item is
never joined with its neighbours: it stands for the history before it, not for a
response.

A call and its results are never in different units. The Responses API pairs outputs
with calls by ``call_id`` wherever they sit after the call, and Codex puts ``developer``
and ``user`` messages between them; such a unit runs from the call to its last result,
the messages between included (kind ``tool_exchange``). Calls and results count by id:
a tool call and the tool message naming it, and also the Responses call items
(``local_shell_call``, ``shell_call``, …) and their output items that ride in
``responses_items`` (``condense.message.calls_made`` and ``answers``).

Every keep/cut/summarize decision in condense is made on units, never on message
indices, so a split tool exchange cannot be expressed.

A tool result answers a call when its ``tool_call_id`` is one of the call's ids
(``call_ids``): its ``id`` and, as SDKs that bridge the Responses API write it, its
``call_id``. ``validate`` and ``repair`` pair results with calls by these ids.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from condense.message import (
    CALL_ID_ALIAS,
    ITEM_ID,
    RESPONSES_ITEMS,
    answers,
    call_ids,
    calls_made,
    carries_replay,
)
from condense.turns import carries_compaction
from condense.types import RawMessage

__all__ = [  # the message facts units are made of live in condense.message
    "CALL_ID_ALIAS",
    "Unit",
    "UnitKind",
    "answers",
    "call_ids",
    "calls_made",
    "carries_replay",
    "segment",
]


class UnitKind(StrEnum):
    SYSTEM = "system"
    USER = "user"
    REPLY = "reply"
    TOOL_EXCHANGE = "tool_exchange"
    STRAY = "stray"


@dataclass(frozen=True, slots=True)
class Unit:
    """Messages ``start`` (inclusive) to ``stop`` (exclusive) of the segmented list."""

    kind: UnitKind
    start: int
    stop: int

    def __len__(self) -> int:
        return self.stop - self.start

    def messages(self, history: Sequence[RawMessage]) -> Sequence[RawMessage]:
        """This unit's messages, sliced out of the list it was segmented from."""
        return history[self.start : self.stop]


def _responses_turn(message: Any) -> bool:
    """An assistant message read from Responses output items."""
    if RESPONSES_ITEMS in message or ITEM_ID in message:
        return True
    calls = message.get("tool_calls")
    return isinstance(calls, list) and any(
        isinstance(call, dict) and ITEM_ID in call for call in calls
    )


def _kind_of(message: Any) -> UnitKind:
    role = message.get("role") if isinstance(message, dict) else None
    if role in ("system", "developer"):
        return UnitKind.SYSTEM
    if role == "assistant":
        return UnitKind.TOOL_EXCHANGE if message.get("tool_calls") else UnitKind.REPLY
    if role == "tool":
        return UnitKind.STRAY
    return UnitKind.USER


def segment(messages: Sequence[Any]) -> list[Unit]:
    """Split ``messages`` into consecutive units covering every message exactly once.

    A tool exchange absorbs every tool message that directly follows its assistant
    message; tool messages that follow anything else form a ``stray`` unit. An assistant
    message without tool calls absorbs the assistant messages right after it when they
    are one Responses response (see the module docstring); the unit then takes the kind
    of its last assistant message. A unit whose calls are answered further on runs to
    the last answer (the messages between included) and is a tool exchange. Messages
    with an unknown role count as user units. Runs in linear time and never raises.
    """
    units: list[Unit] = []
    index, total = 0, len(messages)
    exchange, stray, reply = UnitKind.TOOL_EXCHANGE, UnitKind.STRAY, UnitKind.REPLY
    answered_at = _answer_positions(messages)
    while index < total:
        kind = _kind_of(messages[index])
        stop = index + 1
        while (
            kind is reply
            and stop < total
            and _kind_of(messages[stop]) in (reply, exchange)
            and (_responses_turn(messages[stop - 1]) or _responses_turn(messages[stop]))
            and not (carries_compaction(messages[stop - 1]) or carries_compaction(messages[stop]))
        ):
            kind = _kind_of(messages[stop])
            stop += 1
        if kind is exchange or kind is stray:
            while stop < total and _is_tool(messages[stop]):
                stop += 1
        reach = _reach(messages, index, stop, answered_at)
        if reach >= stop:  # answers further on: the unit runs to the last of them
            kind = exchange
            while reach >= stop:
                scanned, stop = stop, reach + 1
                while stop < total and _is_tool(messages[stop]):
                    stop += 1
                reach = max(reach, _reach(messages, scanned, stop, answered_at))
        units.append(Unit(kind, index, stop))
        index = stop
    return units


def _answer_positions(messages: Sequence[Any]) -> dict[str, list[int]]:
    """Each answered id → the positions of the messages answering it, in order."""
    found: dict[str, list[int]] = {}
    for position, message in enumerate(messages):
        for ident in answers(message):
            found.setdefault(ident, []).append(position)
    return found


def _reach(
    messages: Sequence[Any], start: int, stop: int, answered_at: dict[str, list[int]]
) -> int:
    """The position of the furthest answer to a call made by a message in ``start``–
    ``stop`` (``-1`` when there is none). A call's answer is the first message after it
    naming its id (OpenAI accepts ids reused in later turns)."""
    reach = -1
    if not answered_at:
        return reach
    for position in range(start, stop):
        for ident in calls_made(messages[position]):
            later = answered_at.get(ident)
            if later and later[-1] > position:
                reach = max(reach, later[bisect_right(later, position)])
    return reach


def _is_tool(message: Any) -> bool:
    return type(message) is dict and message.get("role") == "tool"
