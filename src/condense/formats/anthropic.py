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
  and any other key carried on the tool message), followed by one user message with the
  rest of the turn, if there is any.
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
- Consecutive tool messages share one user turn, and a user message right after them
  joins that turn as text after the results (the API requires results in the next turn).
  Other consecutive same-role messages stay separate turns (the API merges them).
- A missing or null content is written as ``[]``.
- Keys Anthropic has no slot for (a tool message's ``name``, ``detail`` of an image, any
  unknown key) are carried onto the turn or block, so the round trip is lossless; the
  Messages API rejects unknown keys, so strip them before sending a converted history.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from condense.exceptions import FormatError
from condense.formats._common import (
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
from condense.types import RawMessage

ROOT = "messages"
_THINKING_TYPES = frozenset({"thinking", "redacted_thinking"})
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
        elif kind in _THINKING_TYPES:
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
    results: list[tuple[RawMessage, Place]] = []
    rest: list[Any] = []
    parts: list[Path] = []
    for position, block in enumerate(content):
        spot = (*base, "content", position)
        if isinstance(block, dict) and block.get("type") == "tool_result":
            place = _place(spot, block.get("content"), (*spot, "content"))
            results.append((_tool_message(block), place))
        else:
            rest.append(block_to_part(block))
            parts.append(spot)
    if not results:
        return [({"role": "user", "content": rest, **carried}, Place(base, parts=tuple(parts)))]
    leftover = _leftover(rest)
    if leftover is not None or carried:
        message = {"role": "user", "content": [] if leftover is None else leftover, **carried}
        results.append((message, Place(base, parts=tuple(parts))))
    return results


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


def write(record: object, groups: Sequence[Group], messages: Sequence[RawMessage]) -> Any:
    """The native form of ``messages``, reusing unchanged turns of ``record`` verbatim."""
    lead = 0
    while lead < len(messages) and _role(messages[lead], lead) in _SYSTEM_ROLES:
        lead += 1
    system_groups = [group for group in groups if group.kind == "system"]
    turn_groups = [group for group in groups if group.kind != "system"]
    turns: list[Any] = []
    for run in plan(messages[lead:], turn_groups):
        if isinstance(run, Group):
            turns.extend(run.native)
        else:
            turns.extend(_turns(run.messages, lead + run.start))
    out: dict[str, Any] = dict(record) if isinstance(record, dict) else {}
    if lead:
        header = list(plan(messages[:lead], system_groups))
        if isinstance(record, dict) and len(header) == 1 and isinstance(header[0], Group):
            out["system"] = record["system"]
        else:
            out["system"] = _system_value(messages[:lead])
    elif out.get("system") is not None:
        del out["system"]  # the system prompt was removed
    if not isinstance(record, dict) and not lead and record is not None:
        return turns
    out["messages"] = turns
    return out


def _role(message: object, index: int) -> object:
    return require_dict(message, "a message", index=index).get("role")


def _system_value(messages: Sequence[RawMessage]) -> Any:
    if len(messages) == 1:
        content = messages[0].get("content")
        if isinstance(content, list):
            return [part_to_block(part) for part in content]
        return "" if content is None else content
    blocks: list[Any] = []
    for index, message in enumerate(messages):
        blocks.extend(_blocks(message.get("content"), index))
    return blocks


def _blocks(content: object, index: int) -> list[Any]:
    """Content as a list of blocks: a non-empty string is one text block."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    if isinstance(content, list):
        return [part_to_block(part) for part in content]
    if content is None:
        return []
    raise FormatError(f"content must be a string or an array, got {describe(content)}", index=index)


def _content(content: object) -> Any:
    if isinstance(content, list):
        return [part_to_block(part) for part in content]
    return [] if content is None else content


def _turns(messages: Sequence[RawMessage], start: int) -> list[Any]:
    turns: list[Any] = []
    results: dict[str, Any] | None = None  # the user turn holding the latest tool results
    for offset, message in enumerate(messages):
        index = start + offset
        role = _role(message, index)
        carried = extras(message, ("role", "content"))
        if role == "tool":
            if results is None:
                results = {"role": "user", "content": []}
                turns.append(results)
            results["content"].append(_tool_result(message))
            continue
        content = message.get("content")
        if role == "user" and results is not None and content and isinstance(content, str | list):
            results["content"].extend(_blocks(content, index))
            results.update(carried)
            results = None
            continue
        results = None
        if role == "assistant":
            turns.append(_assistant_turn(message, index))
        elif role == "user" or role in _SYSTEM_ROLES:
            turns.append({"role": "user", "content": _content(message.get("content")), **carried})
        else:
            raise FormatError(f"unknown role {role!r}", index=index)
    return turns


def _assistant_turn(message: RawMessage, index: int) -> dict[str, Any]:
    thinking = message.get(THINKING_KEY)
    calls = message.get("tool_calls")
    blocks: list[Any] = list(thinking) if isinstance(thinking, list) else []
    mapped = ["role", "content"]
    if blocks:
        mapped.append(THINKING_KEY)
    if calls:
        mapped.append("tool_calls")
    carried = extras(message, mapped)
    content = message.get("content")
    if not blocks and not calls:
        return {"role": "assistant", "content": _content(content), **carried}
    blocks.extend(_blocks(content, index))
    for position, call in enumerate(require_list(calls or [], "'tool_calls'", index=index)):
        blocks.append(_tool_use(call, index, position))
    return {"role": "assistant", "content": blocks, **carried}


def _tool_use(call: object, index: int, position: int) -> dict[str, Any]:
    checked, function = tool_call_parts(call, index=index, position=position)
    block: dict[str, Any] = {"type": "tool_use"}
    if "id" in checked:
        block["id"] = checked["id"]
    block["name"] = function.get("name")
    block["input"] = parse_arguments(function.get("arguments"), index=index, call=position)
    block.update(extras(function, ("name", "arguments", *block)))
    block.update(extras(checked, ("id", "type", "function", *block)))
    return block


def _tool_result(message: RawMessage) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result"}
    if "tool_call_id" in message:
        block["tool_use_id"] = message["tool_call_id"]
    content = message.get("content")
    if content is not None:
        block["content"] = (
            [part_to_block(part) for part in content] if isinstance(content, list) else content
        )
    block.update(extras(message, ("role", "tool_call_id", "content")))
    return block


def part_to_block(part: Any) -> Any:
    """An OpenAI ``image_url`` part as an Anthropic image block; other parts unchanged."""
    if not isinstance(part, dict) or part.get("type") != "image_url":
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
    return {
        "type": "image",
        "source": source,
        **extras(image, ("url",)),
        **extras(part, ("type", "image_url")),
    }
