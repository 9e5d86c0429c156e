"""Segment a history into units: the smallest runs of messages that can be kept, dropped,
masked or summarized as a whole without breaking any provider's rules.

=================  ================================================================
unit kind          messages
=================  ================================================================
``system``         one system or developer message
``user``           one user message
``reply``          one assistant message without tool calls
``tool_exchange``  one assistant message with ``tool_calls`` and every tool result
                   that follows it (parallel calls included)
``stray``          tool results that follow no tool call (only in unrepaired input)
=================  ================================================================

A unit owns the replay state of its messages (see :func:`carries_replay`). One model
response that the Responses adapter read into several assistant messages (a reasoning
item before each of a ``msg_…`` and an ``fc_…`` item) is one unit: consecutive assistant
messages are joined when one of them carries Responses items, so a reasoning item never
leaves the items of its response.

Every keep/cut/summarize decision in condense is made on units, never on message
indices, so a split tool exchange cannot be expressed.

A tool result answers a call when its ``tool_call_id`` is one of the call's ids
(``call_ids``): its ``id`` and, as SDKs that bridge the Responses API write it, its
``call_id``. ``validate`` and ``repair`` pair results with calls by these ids.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from condense.providers.base import EXTRA_CONTENT, ITEM_ID, REPLAY_KEYS, RESPONSES_ITEMS
from condense.types import RawMessage


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


def carries_replay(message: Any) -> bool:
    """True when ``message`` holds state its provider needs replayed unchanged: thinking
    blocks, Responses items (reasoning items, an item ``id``), ``reasoning_content``, or a
    tool call carrying a thought signature or an item id.

    Such a message is kept as the same object or left out with its whole unit: condense
    never edits it, never merges text into it and never shrinks its calls (Anthropic
    thinking of earlier turns may be removed whole, see ``condense.reduce.thinking``).
    """
    if type(message) is not dict or message.get("role") != "assistant":
        return False
    if not REPLAY_KEYS.isdisjoint(message) or ITEM_ID in message:
        return True
    calls = message.get("tool_calls")
    return isinstance(calls, list) and any(
        isinstance(call, dict) and (EXTRA_CONTENT in call or ITEM_ID in call) for call in calls
    )


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
    of its last assistant message. Messages with an unknown role count as user units.
    Runs in one linear pass and never raises.
    """
    units: list[Unit] = []
    index, total = 0, len(messages)
    exchange, stray, reply = UnitKind.TOOL_EXCHANGE, UnitKind.STRAY, UnitKind.REPLY
    while index < total:
        kind = _kind_of(messages[index])
        stop = index + 1
        while (
            kind is reply
            and stop < total
            and _kind_of(messages[stop]) in (reply, exchange)
            and (_responses_turn(messages[stop - 1]) or _responses_turn(messages[stop]))
        ):
            kind = _kind_of(messages[stop])
            stop += 1
        if kind is exchange or kind is stray:
            while stop < total and _is_tool(messages[stop]):
                stop += 1
        units.append(Unit(kind, index, stop))
        index = stop
    return units


def _is_tool(message: Any) -> bool:
    return type(message) is dict and message.get("role") == "tool"


CALL_ID_ALIAS = "call_id"
"""The second id a tool call may carry: Responses-bridging SDKs write the item id
(``fc_…``) as ``id`` and the id results answer (``call_…``) as ``call_id``."""


def call_ids(call: object) -> tuple[str, ...]:
    """The ids that identify one tool call: its ``id``, then its ``call_id`` alias.

    Only non-empty strings count, each once; a call that is not a dict has none.
    """
    if not isinstance(call, dict):
        return ()
    primary, alias = call.get("id"), call.get(CALL_ID_ALIAS)
    ids: tuple[str, ...] = (primary,) if isinstance(primary, str) and primary else ()
    if isinstance(alias, str) and alias and alias not in ids:
        ids += (alias,)
    return ids
