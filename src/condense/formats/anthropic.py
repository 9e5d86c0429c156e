"""Anthropic Messages ⇄ canonical messages.

Native: ``{"system": str | [blocks], "messages": [turns], ...}`` or a bare list of turns.
Each turn is ``{"role": "user" | "assistant", "content": str | [blocks]}``.

Reading (``from_anthropic``):

- ``system`` becomes one leading system message (a block list stays a list of parts).
- An assistant turn becomes one assistant message: ``tool_use`` blocks become
  ``tool_calls`` (``arguments = json.dumps(input, ensure_ascii=False)``), ``thinking``
  and ``redacted_thinking`` blocks are kept verbatim, in order, under the message's
  ``thinking_blocks`` key (the name LiteLLM uses), and every other block stays in
  ``content``.
- A user turn's ``tool_result`` blocks become one tool message each, in order
  (``tool_use_id`` → ``tool_call_id``; ``content`` as is; ``is_error``, ``cache_control``
  and any other key carried on the tool message); the other blocks between and after
  them become one user message per run, where they were. So a turn that puts text
  before its results (which the API refuses: "Did not find 1 `tool_result` block(s) at
  the beginning of this message") reads as a user message between the call and its
  results, which ``validate`` reports and ``repair`` heals; a well-formed turn reads as
  its results, then one user message with the rest, if there is any.
- When blocks moved out of a content list (tool_use, thinking, tool_result), what is left
  becomes ``None`` if empty, a string if it is exactly one plain text block, and a list
  otherwise. A content list nothing moved out of stays a list.
- Image blocks with a ``base64`` or ``url`` source become ``image_url`` parts (a data URL
  for base64); text blocks are already OpenAI text parts. Other blocks (documents, server
  tool blocks, …) and unknown keys (``cache_control``, …) are carried unchanged.

Writing (``to_anthropic``) inverts this. Normalizations (all invisible to
``Conversation.dump`` for turns that were not changed):

- Leading system/developer messages become ``system`` (several are joined into one
  block list; ``developer`` is not kept; their extra keys have no place and are dropped).
  A system/developer message after the first turn becomes a user turn.
- An assistant turn is written as thinking blocks, then content, then tool_use blocks;
  an empty-string ``content`` next to tool calls is dropped (the API rejects empty text
  blocks), so it reads back as ``None``. Content that is a list of one plain text part
  next to tool calls reads back as a string.
- ``arguments`` is parsed and stored as ``input``; it reads back re-encoded (same JSON
  value, possibly different spacing). Arguments that are not JSON raise FormatError.
- Every tool result answering an assistant turn, and the user text among or right after
  them, make one user turn: all results first, in order, then the text (the API wants
  every result in the next turn, before any text). A new result or new user text next
  to an unchanged turn of results joins it, and that turn is then written fresh. An
  empty user message stays a turn of its own. Other consecutive same-role messages stay
  separate turns (the API merges them).
- A missing or null content is written as ``[]``.
- Only what the Messages API accepts is written: a turn has ``role`` and ``content``; a
  ``tool_use`` block ``id``, ``name``, ``input``, ``cache_control``; a ``tool_result``
  block ``tool_use_id``, ``content``, ``is_error``, ``cache_control``; a text block
  ``text``, ``cache_control``, ``citations``; an image block ``source``,
  ``cache_control``. So these are dropped: ``name`` on any message (tau-bench, OpenHands
  and SWE-agent put it on tool results), ``reasoning_content`` (DeepSeek/Kimi reasoning
  has no signature, so it cannot be replayed as thinking), ``refusal``, ``audio``,
  Gemini's ``extra_content`` on calls, Responses item ids and ``status``, an image's
  ``detail``, the keys of a non-leading system message, and any unknown key. Blocks of
  other types (documents, server tool blocks) are written as they are. Turns read from
  an Anthropic file that reach the writer unchanged are emitted verbatim, keys and all.

``read`` also records where each canonical message came from (``Place``: the turn, the
``tool_result`` block of a tool message, the block of each call, part and thinking
block); ``layout`` says where a fresh write puts each message.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from condense.exceptions import FormatError
from condense.formats._common import (
    Fresh,
    Group,
    Parsed,
    describe,
    dump_json,
    extras,
    parse_arguments,
    plan,
    require_dict,
    require_list,
    tool_call_parts,
)
from condense.formats.locate import THINKING_KEY, Path, Place
from condense.providers.anthropic import TEXT_BLOCK_KEYS, THINKING_TYPES
from condense.types import RawMessage

ROOT = "messages"
_SYSTEM_ROLES = ("system", "developer")
_DATA_URL = re.compile(r"data:([^;,]+);base64,(.*)", re.DOTALL)


def from_anthropic(obj: object) -> list[RawMessage]:
    """Canonical messages for an Anthropic request body or message list."""
    return read(obj).messages


def to_anthropic(messages: Sequence[RawMessage]) -> dict[str, Any]:
    """``{"system": ..., "messages": [...]}`` for canonical messages (no system: no key)."""
    native = write(None, (), messages)
    return native if isinstance(native, dict) else {"messages": native}


# --- reading ----------------------------------------------------------------------------


def read(obj: object) -> Parsed:
    """Canonical messages, their groups and places; see the module docstring."""
    messages: list[RawMessage] = []
    groups: list[Group] = []
    places: list[Place] = []
    if isinstance(obj, dict):
        turns = require_list(obj.get("messages"), "the 'messages' of an Anthropic request")
        if obj.get("system") is not None:
            system = _system_message(obj["system"])
            messages.append(system)
            groups.append(Group((system,), (), kind="system"))
            places.append(_place(("system",), obj["system"], ("system",)))
    else:
        turns = require_list(obj, "an Anthropic message list")
    for index, turn in enumerate(turns):
        turn = require_dict(turn, "a message", index=index)
        role = turn.get("role")
        if role == "assistant":
            made = [_assistant_message(turn, (ROOT, index))]
        elif role == "user":
            made = _user_messages(turn, (ROOT, index))
        else:
            raise FormatError(
                f"unknown role {role!r}; Anthropic messages are 'user' or 'assistant'",
                index=index,
            )
        messages.extend(message for message, _ in made)
        places.extend(place for _, place in made)
        groups.append(Group(tuple(message for message, _ in made), (turn,)))
    return Parsed(messages, tuple(groups), tuple(places))


def _place(path: Path, content: object, blocks: Path) -> Place:
    """The place of a message at ``path`` whose content is the block list at ``blocks``."""
    if not isinstance(content, list):
        return Place(path)
    return Place(path, parts=tuple((*blocks, j) for j in range(len(content))))


def _system_message(system: object) -> RawMessage:
    if isinstance(system, list):
        return {"role": "system", "content": [block_to_part(block) for block in system]}
    return {"role": "system", "content": system}


def _assistant_message(turn: dict[str, Any], base: Path) -> tuple[RawMessage, Place]:
    content = turn.get("content")
    message: RawMessage = {"role": "assistant"}
    if not isinstance(content, list):
        message["content"] = content
        message.update(extras(turn, ("role", "content")))
        return message, Place(base)
    calls: list[dict[str, Any]] = []
    thinking: list[Any] = []
    rest: list[Any] = []
    spots: dict[str, list[Path]] = {"calls": [], "replay": [], "parts": []}
    for position, block in enumerate(content):
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "tool_use":
            calls.append(_tool_call(block))
            spots["calls"].append((*base, "content", position))
        elif kind in THINKING_TYPES:
            thinking.append(block)
            spots["replay"].append((*base, "content", position))
        else:
            rest.append(block_to_part(block))
            spots["parts"].append((*base, "content", position))
    message["content"] = _leftover(rest) if calls or thinking else rest
    if calls:
        message["tool_calls"] = calls
    if thinking:
        message[THINKING_KEY] = thinking
    message.update(extras(turn, ("role", "content")))
    place = Place(
        base,
        calls=tuple(spots["calls"]),
        parts=tuple(spots["parts"]),
        replay=tuple(spots["replay"]),
    )
    return message, place


def _tool_call(block: dict[str, Any]) -> dict[str, Any]:
    call: dict[str, Any] = {}
    if "id" in block:
        call["id"] = block["id"]
    call["type"] = "function"
    arguments = dump_json(block["input"]) if "input" in block else "{}"
    call["function"] = {"name": block.get("name"), "arguments": arguments}
    call.update(extras(block, ("type", "id", "name", "input")))
    return call


def _user_messages(turn: dict[str, Any], base: Path) -> list[tuple[RawMessage, Place]]:
    content = turn.get("content")
    carried = extras(turn, ("role", "content"))
    if not isinstance(content, list):
        return [({"role": "user", "content": content, **carried}, Place(base))]
    if not any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
        blocks = [block_to_part(block) for block in content]
        parts = tuple((*base, "content", j) for j in range(len(content)))
        return [({"role": "user", "content": blocks, **carried}, Place(base, parts=parts))]
    made: list[tuple[RawMessage, Place]] = []
    rest: list[Any] = []
    spots: list[Path] = []

    def flush(*, last: bool) -> None:
        """The blocks gathered since the last result, as one user message (the turn's
        own keys ride on the last one)."""
        leftover = _leftover(list(rest))
        if leftover is not None or (last and carried):
            message = {"role": "user", "content": [] if leftover is None else leftover}
            message.update(carried if last else {})
            made.append((message, Place(base, parts=tuple(spots))))
        rest.clear()
        spots.clear()

    for position, block in enumerate(content):
        spot = (*base, "content", position)
        if isinstance(block, dict) and block.get("type") == "tool_result":
            if rest:  # text before a result: kept where it was, for validate to see
                flush(last=False)
            place = _place(spot, block.get("content"), (*spot, "content"))
            made.append((_tool_message(block), place))
        else:
            rest.append(block_to_part(block))
            spots.append(spot)
    flush(last=True)
    return made


def _tool_message(block: dict[str, Any]) -> RawMessage:
    message: RawMessage = {"role": "tool"}
    if "tool_use_id" in block:
        message["tool_call_id"] = block["tool_use_id"]
    if "content" in block:
        content = block["content"]
        message["content"] = (
            [block_to_part(part) for part in content] if isinstance(content, list) else content
        )
    message.update(extras(block, ("type", "tool_use_id", "content")))
    return message


def _leftover(parts: list[Any]) -> str | list[Any] | None:
    if not parts:
        return None
    only = parts[0]
    plain = isinstance(only, dict) and only.keys() == {"type", "text"} and only["type"] == "text"
    if len(parts) == 1 and plain and isinstance(only["text"], str):
        return str(only["text"])
    return parts


def block_to_part(block: Any) -> Any:
    """An Anthropic image block with a base64/url source as an OpenAI ``image_url`` part;
    any other block unchanged (text blocks already are OpenAI text parts)."""
    if not isinstance(block, dict) or block.get("type") != "image":
        return block
    source = block.get("source")
    if not isinstance(source, dict) or not all(isinstance(v, str) for v in source.values()):
        return block
    if source.keys() == {"type", "media_type", "data"} and source["type"] == "base64":
        url = f"data:{source['media_type']};base64,{source['data']}"
    elif source.keys() == {"type", "url"} and source["type"] == "url":
        url = source["url"]
    else:
        return block
    carried = extras(block, ("type", "source"))
    image: dict[str, Any] = {"url": url}
    if "detail" in carried:
        image["detail"] = carried.pop("detail")
    return {"type": "image_url", "image_url": image, **carried}


# --- writing ----------------------------------------------------------------------------

TOOL_USE_KEYS = ("type", "id", "name", "input", "cache_control")
TOOL_RESULT_KEYS = ("type", "tool_use_id", "content", "is_error", "cache_control")
IMAGE_KEYS = ("type", "source", "cache_control")
TEXT_KEYS = tuple(sorted(TEXT_BLOCK_KEYS))
"""The keys the Messages API accepts on each object the writer makes."""


def write(record: object, groups: Sequence[Group], messages: Sequence[RawMessage]) -> Any:
    """The native form of ``messages``, reusing unchanged turns of ``record`` verbatim."""
    native, _ = _write(record, groups, messages)
    return native


def layout(messages: Sequence[Any]) -> tuple[Any, tuple[Place | None, ...]]:
    """The request a fresh write of ``messages`` makes, and where each message lands in
    it (``None`` for one that cannot be written). Never raises: what the writer would
    refuse (arguments that are not JSON, malformed calls) is laid out as best it can."""
    return _write(None, (), messages, lenient=True)


def _write(
    record: object,
    groups: Sequence[Group],
    messages: Sequence[Any],
    *,
    lenient: bool = False,
) -> tuple[Any, tuple[Place | None, ...]]:
    lead = 0
    while lead < len(messages) and _role(messages[lead], lead, lenient) in _SYSTEM_ROLES:
        lead += 1
    system_groups = [group for group in groups if group.kind == "system"]
    turn_groups = [group for group in groups if group.kind != "system"]
    turns: list[Any] = []
    places: list[Place | None] = []
    for run in _joined(plan(messages[lead:], turn_groups)):
        if isinstance(run, Group):
            turns.extend(run.native)
            places.extend([None] * len(run.messages))  # their places are the record's own
            continue
        before = messages[lead + run.start - 1] if lead + run.start > 0 else None
        made, made_places = _turns(
            run.messages, lead + run.start, base=len(turns), collect=_calls(before), lenient=lenient
        )
        turns.extend(made)
        places.extend(made_places)
    out: dict[str, Any] = dict(record) if isinstance(record, dict) else {}
    if lead:
        header = list(plan(messages[:lead], system_groups))
        system, system_places = _system_value(messages[:lead], lenient)
        if isinstance(record, dict) and len(header) == 1 and isinstance(header[0], Group):
            system = record["system"]
        out["system"] = system
        places[:0] = system_places
    elif out.get("system") is not None:
        del out["system"]  # the system prompt was removed
    if not isinstance(record, dict) and not lead and record is not None:
        return turns, tuple(places)
    out["messages"] = turns
    return out, tuple(places)


def _joined(runs: Iterable[Group | Fresh]) -> list[Group | Fresh]:
    """``runs`` with each verbatim turn that a fresh tool result must join made fresh
    too: every result answering one assistant turn goes in one user turn."""
    out: list[Group | Fresh] = []
    position = 0
    for run in runs:
        start = run.start if isinstance(run, Fresh) else position
        position = start + len(run.messages)
        if out and _joins(out[-1], run):
            previous = out.pop()
            start -= len(previous.messages)
            run = Fresh(start, [*previous.messages, *run.messages])
        out.append(run)
    return out


def _joins(earlier: Group | Fresh, later: Group | Fresh) -> bool:
    if isinstance(earlier, Group) and isinstance(later, Group):
        return False  # an unchanged file stays as it was
    last, first = earlier.messages[-1], later.messages[0]
    if _role_of(first) == "tool":
        return _role_of(last) in ("tool", "user")
    # user text right after results belongs in their turn (else two user turns in a row)
    return _role_of(first) == "user" and _role_of(last) == "tool" and _text(first)


def _text(message: dict[str, Any]) -> bool:
    """True when a user message has content to add to a turn (an empty one stays a turn
    of its own, so that no message is lost)."""
    content = message.get("content")
    return bool(content) and isinstance(content, str | list)


def _ends_with_user(gathering: list[tuple[int, Any]]) -> bool:
    """True when a user message joined since the latest result: the next one has a turn
    of its own (only text among or right after the results joins them)."""
    return bool(gathering) and gathering[-1][1].get("role") == "user"


def _role_of(message: object) -> object:
    return message.get("role") if isinstance(message, dict) else None


def _calls(message: object) -> bool:
    """True for an assistant message with tool calls (its results open the next turn)."""
    return (
        isinstance(message, dict)
        and message.get("role") == "assistant"
        and bool(message.get("tool_calls"))
    )


def _role(message: object, index: int, lenient: bool = False) -> object:
    if lenient:
        return _role_of(message)
    return require_dict(message, "a message", index=index).get("role")


def _system_value(messages: Sequence[Any], lenient: bool = False) -> tuple[Any, list[Place | None]]:
    if len(messages) == 1:
        content = messages[0].get("content")
        if isinstance(content, list):
            place = Place(("system",), parts=tuple(("system", j) for j in range(len(content))))
            return [part_to_block(part) for part in content], [place]
        return ("" if content is None else content), [Place(("system",))]
    blocks: list[Any] = []
    places: list[Place | None] = []
    for index, message in enumerate(messages):
        made = _blocks(message.get("content"), index, lenient)
        parts = tuple(("system", len(blocks) + j) for j in range(len(made)))
        places.append(Place(parts[0] if parts else ("system",), parts=parts))
        blocks.extend(made)
    return blocks, places


def _blocks(content: object, index: int, lenient: bool = False) -> list[Any]:
    """Content as a list of blocks: a non-empty string is one text block."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    if isinstance(content, list):
        return [part_to_block(part) for part in content]
    if content is None or lenient:
        return []
    raise FormatError(f"content must be a string or an array, got {describe(content)}", index=index)


def _content(content: object) -> Any:
    if isinstance(content, list):
        return [part_to_block(part) for part in content]
    return [] if content is None else content


def _turns(
    messages: Sequence[Any], start: int, *, base: int, collect: bool, lenient: bool
) -> tuple[list[Any], list[Place | None]]:
    """Fresh turns for ``messages`` (the first is message ``start``, written as turn
    ``base``). The tool results after an assistant turn, the user text among them and
    one user message right after them make one user turn, results first; ``collect``
    says the run starts right after an assistant turn with tool calls."""
    turns: list[Any] = []
    places: list[Place | None] = [None] * len(messages)
    gathering: list[tuple[int, Any]] = []  # the messages of the user turn being gathered
    for offset, message in enumerate(messages):
        index = start + offset
        role = _role(message, index, lenient)
        joins = role == "user" and (collect or gathering) and _text(message)
        if role == "tool" or (joins and not _ends_with_user(gathering)):
            gathering.append((offset, message))
            continue
        _gathered(gathering, turns, places, base, lenient)
        gathering, collect = [], False
        turn_path: Path = (ROOT, base + len(turns))
        if role == "assistant":
            turn, places[offset] = _assistant_turn(message, index, turn_path, lenient)
            collect = bool(message.get("tool_calls"))
        elif role == "user" or role in _SYSTEM_ROLES:
            content = message.get("content")
            turn = {"role": "user", "content": _content(content)}
            places[offset] = _place(turn_path, content, (*turn_path, "content"))
        elif lenient:
            continue
        else:
            raise FormatError(f"unknown role {role!r}", index=index)
        turns.append(turn)
    _gathered(gathering, turns, places, base, lenient)
    return turns, places


def _gathered(
    gathering: list[tuple[int, Any]],
    turns: list[Any],
    places: list[Place | None],
    base: int,
    lenient: bool,
) -> None:
    """Append the gathered messages: with tool results, one user turn holding every
    result, then the text of the user messages; without, one turn per user message."""
    if not any(message.get("role") == "tool" for _, message in gathering):
        for offset, message in gathering:
            turn_path: Path = (ROOT, base + len(turns))
            content = message.get("content")
            turns.append({"role": "user", "content": _content(content)})
            places[offset] = _place(turn_path, content, (*turn_path, "content"))
        return
    turn_path = (ROOT, base + len(turns))
    blocks: list[Any] = []
    for offset, message in gathering:
        if message.get("role") == "tool":
            spot = (*turn_path, "content", len(blocks))
            places[offset] = _place(spot, message.get("content"), (*spot, "content"))
            blocks.append(_tool_result(message))
    for offset, message in gathering:
        if message.get("role") != "tool":
            made = _blocks(message.get("content"), offset, lenient)
            parts = tuple((*turn_path, "content", len(blocks) + j) for j in range(len(made)))
            places[offset] = Place(turn_path, parts=parts)
            blocks.extend(made)
    turns.append({"role": "user", "content": blocks})


def _assistant_turn(
    message: RawMessage, index: int, path: Path, lenient: bool
) -> tuple[dict[str, Any], Place]:
    thinking = message.get(THINKING_KEY)
    calls = message.get("tool_calls")
    blocks: list[Any] = list(thinking) if isinstance(thinking, list) else []
    content = message.get("content")
    if not blocks and not calls:
        return {"role": "assistant", "content": _content(content)}, _place(
            path, content, (*path, "content")
        )
    replay = tuple((*path, "content", j) for j in range(len(blocks)))
    made = _blocks(content, index, lenient)
    parts = tuple((*path, "content", len(blocks) + j) for j in range(len(made)))
    blocks.extend(made)
    if not isinstance(calls, list) and lenient:
        calls = []
    spots: list[Path] = []
    for position, call in enumerate(require_list(calls or [], "'tool_calls'", index=index)):
        spots.append((*path, "content", len(blocks)))
        blocks.append(_tool_use(call, index, position, lenient))
    place = Place(path, calls=tuple(spots), parts=parts, replay=replay)
    return {"role": "assistant", "content": blocks}, place


def _tool_use(call: object, index: int, position: int, lenient: bool) -> dict[str, Any]:
    try:
        checked, function = tool_call_parts(call, index=index, position=position)
        arguments = parse_arguments(function.get("arguments"), index=index, call=position)
    except FormatError:
        if not lenient:
            raise
        return {"type": "tool_use"}
    block: dict[str, Any] = {"type": "tool_use"}
    if "id" in checked:
        block["id"] = checked["id"]
    block["name"] = function.get("name")
    block["input"] = arguments
    return _with(block, checked, TOOL_USE_KEYS)


def _tool_result(message: RawMessage) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result"}
    if "tool_call_id" in message:
        block["tool_use_id"] = message["tool_call_id"]
    content = message.get("content")
    if content is not None:
        block["content"] = (
            [part_to_block(part) for part in content] if isinstance(content, list) else content
        )
    return _with(block, message, TOOL_RESULT_KEYS)


def _with(block: dict[str, Any], source: dict[str, Any], accepted: Sequence[str]) -> dict[str, Any]:
    """``block`` plus the keys of ``source`` the API accepts on it and ``block`` lacks."""
    block.update((key, source[key]) for key in accepted if key in source and key not in block)
    return block


def part_to_block(part: Any) -> Any:
    """An OpenAI part as an Anthropic block: ``image_url`` as an image block, a text part
    with only the keys a text block may have; any other part unchanged."""
    if not isinstance(part, dict):
        return part
    if part.get("type") == "text":
        return part if part.keys() <= TEXT_BLOCK_KEYS else _with({}, part, TEXT_KEYS)
    if part.get("type") != "image_url":
        return part
    image = part.get("image_url")
    if not isinstance(image, dict) or not isinstance(image.get("url"), str):
        return part
    url: str = image["url"]
    match = _DATA_URL.fullmatch(url)
    source = (
        {"type": "base64", "media_type": match[1], "data": match[2]}
        if match
        else {"type": "url", "url": url}
    )
    return _with({"type": "image", "source": source}, part, IMAGE_KEYS)
