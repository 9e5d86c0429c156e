"""Where each canonical message came from in the user's own file.

An adapter's ``read`` knows which native turn, block or item every canonical message came
from, and where each of its tool calls, content parts and replay items sits. It records
that as one ``Place`` per message; a ``Locator`` holds the places of one conversation and
renders them for people, as a path into the file:

- Anthropic: ``messages[3]`` (a turn), ``messages[3].content[1]`` (a ``tool_result`` or a
  ``tool_use`` block), ``system`` / ``system[0]`` (the top-level system prompt);
- Responses: ``input[7]`` (an item; one assistant message may span several items),
  ``input[7].content[0]``;
- OpenAI chat: ``messages[3]``, ``messages[3].tool_calls[0]`` (the canonical form itself);
- ShareGPT: ``conversations[5]`` (the turn; one tool turn may hold several results).

A bare list is named like the key a record would hold it under (``messages``, ``input``,
``conversations``). Paths are tuples of keys and indices (``("messages", 3, "content",
1)``); ``dotted`` spells one the way Anthropic's errors do (``messages.3.content.1``).

The canonical form carries some state under keys of condense's own (``EXTENSION_KEYS``);
``native_words`` rewrites any mention of them in a sentence into what the user's file
calls that state, so no report shows an internal name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from condense.message import ITEM_ID, RESPONSES_ITEMS, THINKING_BLOCKS

Path = tuple[str | int, ...]

THINKING_KEY = THINKING_BLOCKS
ITEMS_KEY = RESPONSES_ITEMS
ITEM_ID_KEY = ITEM_ID

EXTENSION_KEYS = frozenset({THINKING_KEY, ITEMS_KEY, ITEM_ID_KEY})
"""Keys the adapters add to canonical messages (see ``condense.formats``)."""

# What the user's file calls the state the adapters keep under their own keys; the
# longer spellings come first so "key 'thinking_blocks'" reads "thinking blocks".
_NATIVE_WORDS = (
    ("key 'thinking_blocks'", "thinking blocks"),
    ("key 'responses_items'", "reasoning items"),
    ("'thinking_blocks'", "thinking blocks"),
    ("'responses_items'", "reasoning items"),
    (THINKING_KEY, "thinking blocks"),
    (ITEMS_KEY, "reasoning items"),
    (ITEM_ID_KEY, "id"),
)


@dataclass(frozen=True, slots=True)
class Place:
    """Where one canonical message sits in the native record.

    ``path`` is the native turn or item the message came from (for a tool message read
    from an Anthropic ``tool_result`` block, that block). ``calls``, ``parts`` and
    ``replay`` give the place of each tool call, content part and replay item (thinking
    block, Responses reasoning item) of the message, in canonical order.
    """

    path: Path
    calls: tuple[Path, ...] = ()
    parts: tuple[Path, ...] = ()
    replay: tuple[Path, ...] = ()


def human(path: Path) -> str:
    """``messages[3].content[1]``: a path the way people write JSON paths."""
    text = ""
    for step in path:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else step)
    return text


def dotted(path: Path) -> str:
    """``messages.3.content.1``: a path the way Anthropic's error messages spell it."""
    return ".".join(str(step) for step in path)


def top(path: Path) -> Path:
    """The turn or item a path starts in: ``("messages", 3)``, ``("input", 7)`` or
    ``("system",)``."""
    if len(path) >= 2 and isinstance(path[1], int):
        return path[:2]
    return path[:1]


def native_words(text: str) -> str:
    """``text`` with every extension key replaced by what the native file calls it."""
    if "_" not in text:
        return text
    for internal, native in _NATIVE_WORDS:
        text = text.replace(internal, native)
    return text


@dataclass(frozen=True, slots=True)
class Locator:
    """The places of a conversation's canonical messages in its native record.

    ``places`` is aligned with the conversation's messages (``None`` where a message's
    place is not known); a canonical (OpenAI chat) record needs none, its paths are the
    canonical ones under ``root``. ``record`` is the native record, read to name the
    type of a block in a path.
    """

    format: str
    root: str = "messages"
    places: tuple[Place | None, ...] = ()
    record: Any = None

    def place(self, index: int) -> Place | None:
        """The place of canonical message ``index``, ``None`` when it is not known."""
        if self.format == "openai":
            return Place((self.root, index)) if index >= 0 else None
        if 0 <= index < len(self.places):
            return self.places[index]
        return None

    def spot(
        self,
        index: int,
        message: object = None,
        *,
        call: int | None = None,
        part: int | None = None,
        ident: str | None = None,
    ) -> Path | None:
        """The native path of message ``index``, or of its tool call ``call``, content
        part ``part``, or of the call, part or replay item whose id is ``ident``
        (``message`` is the canonical message, read to find ids)."""
        place = self.place(index)
        if place is None:
            return None
        if self.format == "openai":
            if call is not None:
                return (*place.path, "tool_calls", call)
            if part is not None:
                return (*place.path, "content", part)
            return place.path
        if call is not None and 0 <= call < len(place.calls):
            return place.calls[call]
        if part is not None and 0 <= part < len(place.parts):
            return place.parts[part]
        if ident is not None and isinstance(message, dict):
            found = _find_id(message, place, ident)
            if found is not None:
                return found
        return place.path

    def ends(self, index: int) -> tuple[Path, Path] | None:
        """The first and the last native object of message ``index`` (a Responses
        assistant message spans its reasoning, message and function_call items)."""
        place = self.place(index)
        if place is None:
            return None
        first = place.path
        if place.parts and place.parts[0][-1] != 0 and top(place.parts[0]) == place.path:
            first = place.parts[0]  # the user's text after the results of its turn
        spots = [first, *(top(p) for p in (*place.calls, *place.replay))]
        spots.sort(key=lambda path: [step for step in path if isinstance(step, int)])
        return spots[0], spots[-1]

    def first_replay(self, index: int) -> Path | None:
        """The place of the first replay item of message ``index``, if it has any."""
        place = self.place(index)
        return place.replay[0] if place is not None and place.replay else None

    def type_at(self, path: Path) -> str | None:
        """The ``type`` of the native object at ``path`` (a block's or an item's)."""
        node: Any = self.record
        steps: Sequence[str | int] = path
        if not isinstance(node, dict) and steps and isinstance(steps[0], str):
            steps = steps[1:]  # a bare list: the root name is not a key
        for step in steps:
            if isinstance(step, int) and isinstance(node, list) and 0 <= step < len(node):
                node = node[step]
            elif isinstance(step, str) and isinstance(node, dict):
                node = node.get(step)
            else:
                return None
        kind = node.get("type") if isinstance(node, dict) else None
        return kind if isinstance(kind, str) else None


def _find_id(message: dict[str, Any], place: Place, ident: str) -> Path | None:
    """The place of the call, part or replay item of ``message`` whose id is ``ident``
    (a Responses item id names the message's own item)."""
    if message.get(ITEM_ID_KEY) == ident:
        return place.path
    for key, paths, id_keys in (
        ("tool_calls", place.calls, ("id", ITEM_ID_KEY)),
        ("content", place.parts, ("id", "tool_use_id")),
        (THINKING_KEY, place.replay, ("id",)),
        (ITEMS_KEY, place.replay, ("id",)),
    ):
        values = message.get(key)
        if not isinstance(values, list):
            continue
        for position, value in enumerate(values[: len(paths)]):
            if isinstance(value, dict) and any(value.get(k) == ident for k in id_keys):
                return paths[position]
    return None
