"""What every adapter shares: groups of native turns and the plan that reuses them.

An adapter reads a native record into canonical messages and remembers, for each native
turn (or run of items), which canonical messages it became: a ``Group``. When the
conversation is dumped, ``plan`` walks the messages to dump and finds every group whose
messages are still the *same objects*, in the same order; those turns are emitted
verbatim, and only the runs in between are serialized fresh. That is what makes
``load(x).dump() == x`` exact and keeps an unchanged history byte-identical.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from condense.exceptions import FormatError
from condense.formats.locate import Place
from condense.types import RawMessage


@dataclass(frozen=True, slots=True)
class Group:
    """The canonical messages made from one native turn, and that turn verbatim.

    ``native`` holds the native objects (turns or items) to emit when every message of
    ``messages`` reaches ``dump`` unchanged. ``kind`` tells an adapter's special groups
    (such as Anthropic's top-level ``system``) from ordinary turns.
    """

    messages: tuple[RawMessage, ...]
    native: tuple[Any, ...]
    kind: str = "turn"


@dataclass(frozen=True, slots=True)
class Parsed:
    """What an adapter's ``read`` returns: canonical messages, their groups and, one per
    message, the place in the native record it came from (empty when the messages are
    the native ones)."""

    messages: list[RawMessage]
    groups: tuple[Group, ...] = ()
    places: tuple[Place, ...] = ()


@dataclass(frozen=True, slots=True)
class Fresh:
    """A run of messages to serialize anew; ``start`` is the index of its first message."""

    start: int
    messages: Sequence[RawMessage]


def plan(messages: Sequence[RawMessage], groups: Sequence[Group]) -> Iterator[Group | Fresh]:
    """Split ``messages`` into verbatim groups and the fresh runs between them.

    A group is reused only when all of its messages appear here as the identical objects
    (``is``), contiguous and in their original order; anything else is fresh.
    """
    by_first = {id(group.messages[0]): group for group in groups if group.messages}
    start = index = 0
    while index < len(messages):
        group = by_first.get(id(messages[index]))
        size = len(group.messages) if group else 0
        window = messages[index : index + size]
        if (
            group
            and len(window) == size
            and all(a is b for a, b in zip(window, group.messages, strict=True))
        ):
            if start < index:
                yield Fresh(start, messages[start:index])
            yield group
            index += size
            start = index
        else:
            index += 1
    if start < len(messages):
        yield Fresh(start, messages[start:])


def joined(runs: Iterator[Group | Fresh]) -> list[Group | Fresh]:
    """``runs`` with the unchanged turns next to a fresh message made fresh too where
    the two would otherwise be two user turns in a row: a fresh tool result after a turn
    of results or user text, or fresh user text after a turn of results. Formats whose
    results ride in user turns and whose roles must alternate (Bedrock Converse, Gemini)
    write every result of one call turn, and the text right after them, as one turn."""
    out: list[Group | Fresh] = []
    position = 0
    for run in runs:
        start = run.start if isinstance(run, Fresh) else position
        position = start + len(run.messages)
        previous = out[-1] if out else None
        if previous is not None and _would_repeat_user(previous, run):
            out.pop()
            start -= len(previous.messages)
            run = Fresh(start, [*previous.messages, *run.messages])
        out.append(run)
    return out


def _would_repeat_user(earlier: Group | Fresh, later: Group | Fresh) -> bool:
    if isinstance(earlier, Group) and isinstance(later, Group):
        return False  # an unchanged record stays as it was
    last, first = _role(earlier.messages[-1]), _role(later.messages[0])
    return (first == "tool" and last in ("tool", "user")) or (
        last == "tool" and first in ("user", "system", "developer")
    )


def _role(message: object) -> object:
    return message.get("role") if isinstance(message, dict) else None


def extras(obj: Mapping[str, Any], known: Collection[str]) -> dict[str, Any]:
    """The keys of ``obj`` an adapter does not map, to be carried unchanged."""
    return {key: value for key, value in obj.items() if key not in known}


def require_dict(value: object, what: str, *, index: int | None = None) -> dict[str, Any]:
    """``value`` if it is a JSON object, else a FormatError naming ``what`` it should be."""
    if not isinstance(value, dict):
        raise FormatError(f"{what} must be a JSON object, got {describe(value)}", index=index)
    return value


def require_list(value: object, what: str, *, index: int | None = None) -> list[Any]:
    """``value`` if it is a JSON array, else a FormatError naming ``what`` it should be."""
    if not isinstance(value, list):
        raise FormatError(f"{what} must be a JSON array, got {describe(value)}", index=index)
    return value


def describe(value: object) -> str:
    """A short JSON-flavoured name of ``value``'s type, for error messages."""
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return "a number"
    return names.get(type(value), type(value).__name__)


def dump_json(value: object) -> str:
    """JSON text the way the adapters write arguments: compact spacing, UTF-8 kept."""
    return json.dumps(value, ensure_ascii=False)


def parse_arguments(arguments: object, *, index: int, call: int) -> Any:
    """The JSON value of a canonical ``function.arguments`` (a string, or already a value).

    Missing or null arguments read as ``{}``. Text that is not JSON is a FormatError:
    native formats that store arguments as objects cannot hold it.
    """
    if arguments is None:
        return {}
    if not isinstance(arguments, str):
        return arguments
    try:
        return json.loads(arguments)
    except ValueError as error:
        raise FormatError(
            f"tool call {call} has arguments that are not valid JSON ({error}); "
            "repair the history before converting it",
            index=index,
        ) from None


def tool_call_parts(call: object, *, index: int, position: int) -> tuple[dict[str, Any], ...]:
    """``(call, function)`` of a canonical tool call, checked to be objects."""
    what = f"tool call {position}"
    checked = require_dict(call, what, index=index)
    function = require_dict(checked.get("function"), f"'function' of {what}", index=index)
    return checked, function
