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
    message; tool messages that follow anything else form a ``stray`` unit. Messages with
    an unknown role count as user units. Runs in one linear pass and never raises.
    """
    units: list[Unit] = []
    index, total = 0, len(messages)
    exchange, stray = UnitKind.TOOL_EXCHANGE, UnitKind.STRAY
    while index < total:
        kind = _kind_of(messages[index])
        stop = index + 1
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
