"""The checks every entry point makes on a history before working on it.

``check_history`` refuses what no provider accepts and what condense cannot read: a
history that is not a list, an empty one (every provider refuses a request without
messages), one without a single message object (when the caller needs one to work
with), and a message nested deeper than :data:`MAX_DEPTH` levels — including JSON
nested that deep inside a tool call's ``arguments`` string. Deeper structures cannot be
sent (JSON encoders and decoders give up around 1,000 levels, Python's with a bare
``RecursionError``) and no real history comes near the limit.

``too_deep`` is the same depth test for any parsed JSON value, for loaders.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from condense.exceptions import FormatError, InputError

MAX_DEPTH = 128
"""Nesting levels one message may have (serde_json's default limit); a message dict is 1."""

_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')
_CONTAINERS = (dict, list)


def check_history(messages: object, *, need_message: bool = True, depth: bool = True) -> None:
    """Raise :class:`InputError` unless ``messages`` is a history condense can work on.

    ``need_message``: at least one item must be a message object (``repair`` and
    ``compress`` drop the others; ``validate`` reports them instead). ``depth``: also
    refuse a message nested deeper than :data:`MAX_DEPTH` (a :class:`FormatError` naming
    its index); this walks every message, about 1 µs each.
    """
    if isinstance(messages, str | bytes | dict) or not isinstance(messages, Sequence):
        raise InputError(
            f"expected a list of messages, got {type(messages).__name__}; "
            "use condense.load() to read a file or another wire format"
        )
    if not messages:
        raise InputError(
            "the history holds no message; every provider refuses a request without one"
        )
    if need_message and not any(isinstance(message, dict) for message in messages):
        raise InputError(
            f"the history holds {len(messages)} item(s) but not one message object "
            "({'role': ..., 'content': ...}); there is nothing to work on"
        )
    if depth:
        for index, message in enumerate(messages):
            if _message_too_deep(message):
                raise FormatError(f"is nested deeper than {MAX_DEPTH} levels", index=index)


def _message_too_deep(message: object) -> bool:
    """:func:`too_deep` for one message, quick for the common flat one (no walk at all
    when none of its values is a dict or a list)."""
    if isinstance(message, list):
        return too_deep(message)
    if not isinstance(message, dict):
        return False
    for key, value in message.items():
        if type(value) is list and key == "tool_calls" and _flat_calls(value):
            continue  # the common shape, checked without a walk
        if isinstance(value, _CONTAINERS):
            if too_deep(value, limit=MAX_DEPTH - 1):
                return True
        elif key == "arguments" and isinstance(value, str) and _text_too_deep(value, MAX_DEPTH - 1):
            return True
    return False


def _flat_calls(calls: list[Any]) -> bool:
    """Whether ``calls`` are tool calls of plain values and one ``function`` of plain
    values, whose ``arguments`` nest within the limit (a message's 5th level on)."""
    for call in calls:
        if type(call) is not dict:
            return False
        for value in call.values():
            if type(value) is dict:
                for key, inner in value.items():
                    if type(inner) is str:
                        if key == "arguments" and _text_too_deep(inner, MAX_DEPTH - 4):
                            return False
                    elif isinstance(inner, _CONTAINERS):
                        return False
            elif isinstance(value, _CONTAINERS):
                return False
    return True


def too_deep(value: Any, *, limit: int = MAX_DEPTH) -> bool:
    """Whether ``value`` nests more than ``limit`` levels of dicts and lists (``value``
    itself is level 1), counting the JSON inside ``arguments`` strings too. Walks level
    by level, so it never recurses however deep ``value`` is."""
    level = [value]
    depth = 1
    while level:
        if depth > limit:
            return True
        below: list[Any] = []
        for item in level:
            if isinstance(item, dict):
                for key, child in item.items():
                    if isinstance(child, _CONTAINERS):
                        below.append(child)
                    elif (
                        key == "arguments"
                        and isinstance(child, str)
                        and _text_too_deep(child, limit - depth)
                    ):
                        return True
            elif isinstance(item, list):
                below.extend(child for child in item if isinstance(child, _CONTAINERS))
        level = below
        depth += 1
    return False


def _text_too_deep(text: str, limit: int) -> bool:
    """Whether JSON ``text`` opens more than ``limit`` levels (strings skipped)."""
    if text.count("[") + text.count("{") <= limit:
        return False  # the common case, without a scan
    depth = 0
    for token in _JSON_TOKEN.finditer(text):
        mark = token.group()
        if mark in "[{":
            depth += 1
            if depth > limit:
                return True
        elif mark in "]}":
            depth -= 1
    return False
