"""OpenAI Chat Completions: the canonical form itself, so this adapter is the identity.

Native: a message list, or a record holding one under ``"messages"`` (or
``"conversations"``, as many datasets name it) next to other fields such as ``id`` and
``meta``. The canonical messages are the record's own message objects (never copied,
never mutated); ``dump`` puts the list back into a copy of the record. Nothing is
checked beyond the list itself: broken messages are carried, for ``repair`` to mend.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from condense.exceptions import FormatError
from condense.formats._common import Group, Parsed, require_list
from condense.types import RawMessage

LIST_KEYS = ("messages", "conversations")


def list_key(record: dict[str, Any]) -> str:
    """The key of ``record`` holding the message list (``"messages"`` when both exist)."""
    return next((key for key in LIST_KEYS if key in record), LIST_KEYS[0])


def read(obj: object) -> Parsed:
    """The messages of a message list or of a record holding one."""
    if isinstance(obj, dict):
        if not any(key in obj for key in LIST_KEYS):
            raise FormatError("an OpenAI chat record needs a 'messages' array")
        obj = obj[list_key(obj)]
    return Parsed(list(require_list(obj, "an OpenAI chat history")))


def write(record: object, groups: Sequence[Group], messages: Sequence[RawMessage]) -> Any:
    """``messages`` as a list, or in a copy of ``record`` with its other fields kept."""
    del groups  # every message is its own native form
    if isinstance(record, dict):
        return {**record, list_key(record): list(messages)}
    return list(messages)
