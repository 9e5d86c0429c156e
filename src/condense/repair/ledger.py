"""Bookkeeping for repair: messages on their way through the passes, and the changes.

A ``Slot`` carries one message and the index it had in the input; the ``Log`` records
every change against slots and turns them into ``Change`` records once the final order
is known, so each change names both the input index and the output index.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from condense.types import RawMessage

Action = Literal["drop", "insert", "move", "merge", "rewrite"]


@dataclass(frozen=True, kw_only=True)
class Change:
    """One thing repair did.

    ``index`` is the message's index in the input (``None`` for an inserted message) and
    ``output_index`` its index in the output (``None`` for a dropped one; for a merge,
    the message it was merged into). ``message`` carries a dropped message whole.
    """

    action: Action
    index: int | None
    output_index: int | None
    code: str
    reason: str
    message: Any = None

    def __str__(self) -> str:
        where = f"message {self.index}" if self.index is not None else "new message"
        if self.output_index is not None and self.output_index != self.index:
            where += f" (now {self.output_index})"
        return f"{self.action} {where}: {self.reason} [{self.code}]"


@dataclass(frozen=True, kw_only=True)
class RepairResult:
    """The healed history and every change made to reach it."""

    messages: list[RawMessage]
    changes: tuple[Change, ...]
    provider: str
    """The profile the history was repaired for."""
    provider_reason: str = "given"
    """Why that profile (``provider="auto"`` says what in the history chose it)."""

    @property
    def changed(self) -> bool:
        return bool(self.changes)


class Slot:
    """A message on its way through the passes, remembering where it came from."""

    __slots__ = ("clean", "message", "origin", "owned")

    def __init__(self, message: Any, origin: int | None, *, owned: bool = False) -> None:
        self.message = message
        self.origin = origin
        self.owned = owned  # True once ``message`` is our own copy, safe to edit
        self.clean = False  # True if the message broke no rule on its own

    def edit(self) -> dict[str, Any]:
        """The message as a dict we own (copied from the caller's on first edit)."""
        if not self.owned:
            self.message = dict(self.message)
            self.owned = True
        message: dict[str, Any] = self.message
        return message

    @property
    def role(self) -> str:
        role: str = self.message["role"]
        return role


class Log:
    def __init__(self) -> None:
        self._entries: list[tuple[Action, Slot, Slot | None, str, str, Any]] = []

    def add(
        self,
        action: Action,
        slot: Slot,
        code: str,
        reason: str,
        *,
        into: Slot | None = None,
        message: Any = None,
    ) -> None:
        self._entries.append((action, slot, into, code, reason, message))

    def changes(self, final: Sequence[Slot]) -> tuple[Change, ...]:
        position = {id(slot): i for i, slot in enumerate(final)}
        return tuple(
            Change(
                action=action,
                index=slot.origin,
                output_index=position.get(id(into if into is not None else slot)),
                code=code,
                reason=reason,
                message=message,
            )
            for action, slot, into, code, reason, message in self._entries
        )
