"""Bookkeeping for repair: messages on their way through the passes, and the changes.

A ``Slot`` carries one message and the index it had in the input; the ``Log`` records
every change against slots and turns them into ``Change`` records once the final order
is known, so each change names both the input index and the output index.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from condense.types import RawMessage

Action = Literal["drop", "insert", "move", "merge", "rewrite"]
Side = Literal["at", "first", "last"]


class Locate(Protocol):
    """Names the place of input message ``index`` in the user's file: the message
    (``"at"``), or its first or last native object (an insertion goes before or after)."""

    def __call__(self, index: int, side: Side) -> str | None: ...


@dataclass(frozen=True, kw_only=True)
class Change:
    """One thing repair did.

    ``index`` is the message's index in the input (``None`` for an inserted message) and
    ``output_index`` its index in the output (``None`` for a dropped one; for a merge,
    the message it was merged into). ``message`` carries a dropped message whole.
    ``location`` names the message's place in the user's file when the history was
    repaired as a ``Conversation`` (``messages[3].content[1]``, ``input[7]``; for an
    inserted message, where it goes: ``before messages[4]``).
    """

    action: Action
    index: int | None
    output_index: int | None
    code: str
    reason: str
    message: Any = None
    location: str | None = None

    def __str__(self) -> str:
        return change_text(
            self.action, self.location, self.index, self.output_index, self.reason, self.code
        )


def change_text(
    action: str,
    location: str | None,
    index: int | None,
    output_index: int | None,
    reason: str,
    code: str,
) -> str:
    """One change on one line: its place in the user's file when known (``rewrite
    messages[10].content[1]: …``), else its message index (``insert new message (now 7)``)."""
    if location is not None:
        return f"{action} {location}: {reason} [{code}]"
    where = f"message {index}" if index is not None else "new message"
    if output_index is not None and output_index != index:
        where += f" (now {output_index})"
    return f"{action} {where}: {reason} [{code}]"


@dataclass(frozen=True, kw_only=True)
class RepairResult:
    """The healed history and every change made to reach it.

    ``messages`` is in the input's shape: canonical messages for canonical input (and
    for a loaded ``Conversation``), the native message list for native input; ``native``
    is then the whole native form (the body for a body), else ``None``
    (``condense.formats.native``)."""

    messages: list[RawMessage]
    changes: tuple[Change, ...]
    provider: str
    """The profile the history was repaired for."""
    provider_reason: str = "given"
    """Why that profile (``provider="auto"`` says what in the history chose it)."""
    native: Any = None
    """For native input: the healed request in its own format (see the class docstring)."""

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

    def changes(self, final: Sequence[Slot], *, locate: Locate | None = None) -> tuple[Change, ...]:
        """The changes, given the final order of the slots. ``locate`` names the place of
        an input message in the user's file; an inserted message is then placed before
        (or after) the nearest message that came from the input."""
        position = {id(slot): i for i, slot in enumerate(final)}
        out = []
        for action, slot, into, code, reason, message in self._entries:
            at = position.get(id(into if into is not None else slot))
            location = None
            if locate is not None:
                location = _where(slot, at, final, locate)
            out.append(
                Change(
                    action=action,
                    index=slot.origin,
                    output_index=at,
                    code=code,
                    reason=reason,
                    message=message,
                    location=location,
                )
            )
        return tuple(out)


def _where(slot: Slot, at: int | None, final: Sequence[Slot], locate: Locate) -> str | None:
    """The place of ``slot``'s message in the user's file, or the place it goes."""
    if slot.origin is not None:
        return locate(slot.origin, "at")
    if at is None:
        return None
    after = next((s.origin for s in final[at + 1 :] if s.origin is not None), None)
    if after is not None:
        where = locate(after, "first")
        return None if where is None else f"before {where}"
    before = next((s.origin for s in reversed(final[:at]) if s.origin is not None), None)
    where = None if before is None else locate(before, "last")
    return None if where is None else f"after {where}"
