"""Amazon Bedrock Converse ⇄ canonical messages.

Native: ``{"messages": [turns], "system": [blocks], "toolConfig": …, "inferenceConfig":
…, …}`` or a bare list of turns. A turn is ``{"role": "user" | "assistant", "content":
[blocks]}``, and every block is a union object holding exactly one member, named by its
key (AWS Bedrock API reference, ``ContentBlock``): ``{"text": str}``, ``{"image":
{"format", "source": {"bytes"}}}``, ``{"document": …}``, ``{"toolUse": {"toolUseId",
"name", "input"}}``, ``{"toolResult": {"toolUseId", "content": [blocks], "status"}}``,
``{"reasoningContent": {"reasoningText": {"text", "signature"}} | {"redactedContent":
…}}``, ``{"cachePoint": {"type": "default"}}``, ``{"guardContent": …}``,
``{"citationsContent": …}``, … It is a format of its own: read as OpenAI chat, its blocks
would be typeless parts (and text holding JSON once repaired).

Reading (``from_bedrock``):

- ``system`` becomes one leading system message whose content is its blocks as parts.
- A block ``{K: V}`` becomes the part ``{"type": K, K: V}`` — so a text block is a chat
  text part — except an image with inline ``bytes`` (base64 in JSON), which becomes an
  ``image_url`` part holding a data URL; writing inverts both.
- An assistant turn becomes one assistant message: ``toolUse`` blocks become
  ``tool_calls`` (``toolUseId`` → ``id``, ``input`` → JSON ``arguments``),
  ``reasoningContent`` blocks (Claude's thinking, with its signature) are kept verbatim,
  in order, under ``thinking_blocks``, every other block is a content part.
- A user turn's ``toolResult`` blocks become one tool message each, in order
  (``toolUseId`` → ``tool_call_id``, its content blocks as parts, ``status`` carried),
  followed by one user message with the rest of the turn, if there is any.
- Other keys of a turn are carried on the messages made from it.

Writing (``to_bedrock``) inverts this; unchanged turns are the record's own. Fresh turns:
leading system/developer messages become ``system`` (a later one a user turn); an
assistant turn is its reasoning blocks, content, then ``toolUse`` blocks; every tool
result answering a turn and the user text right after them make one user turn, results
first (Converse wants them all in the next message, and roles to alternate); string
content is one text block, an empty one none. Only members the API knows are written: a
text part is ``{"text"}`` (its other keys, such as Anthropic's ``cache_control``, have
no slot), a ``toolResult`` has ``toolUseId``, ``content``, ``status``. A part of another
format's type is written as it is.

``read`` records where each canonical message came from (``messages[3]``,
``messages[3].content[1]`` for a ``toolUse`` or ``toolResult`` block, ``system``).
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
    joined,
    parse_arguments,
    plan,
    require_dict,
    require_list,
    tool_call_parts,
)
from condense.formats.locate import THINKING_KEY, Path, Place
from condense.types import RawMessage

ROOT = "messages"
BLOCK_KEYS = frozenset(
    {
        "text",
        "image",
        "document",
        "video",
        "audio",
        "toolUse",
        "toolResult",
        "reasoningContent",
        "cachePoint",
        "guardContent",
        "citationsContent",
        "searchResult",
    }
)
"""The members of Converse's ``ContentBlock`` union (AWS Bedrock API reference)."""
BODY_KEYS = frozenset({"toolConfig", "inferenceConfig", "additionalModelRequestFields"})
"""Top-level keys only a Converse request has."""
_DATA_URL = re.compile(r"data:image/([A-Za-z0-9.+-]+);base64,(.*)", re.DOTALL)
_SYSTEM_ROLES = ("system", "developer")


def from_bedrock(obj: object) -> list[RawMessage]:
    """Canonical messages for a Bedrock Converse request body or message list."""
    return read(obj).messages


def to_bedrock(messages: Sequence[RawMessage]) -> dict[str, Any]:
    """``{"system"?: [...], "messages": [...]}`` for canonical messages."""
    native = write(None, (), messages)
    return native if isinstance(native, dict) else {"messages": native}


def is_block(value: object) -> bool:
    """Whether ``value`` looks like a Converse content block (one known member, no
    ``type``)."""
    return isinstance(value, dict) and len(value) == 1 and next(iter(value)) in BLOCK_KEYS


# --- reading ----------------------------------------------------------------------------


def read(obj: object) -> Parsed:
    """Canonical messages, their groups and places; see the module docstring."""
    messages: list[RawMessage] = []
    groups: list[Group] = []
    places: list[Place] = []
    if isinstance(obj, dict):
        turns = require_list(obj.get("messages"), "the 'messages' of a Converse request")
        if obj.get("system") is not None:
            system = require_list(obj["system"], "the 'system' of a Converse request")
            message: RawMessage = {"role": "system", "content": [part_of(b) for b in system]}
            messages.append(message)
            groups.append(Group((message,), (), kind="system"))
            places.append(
                Place(("system",), parts=tuple(("system", j) for j in range(len(system))))
            )
    else:
        turns = require_list(obj, "a Converse message list")
    for index, turn in enumerate(turns):
        turn = require_dict(turn, "a message", index=index)
        role = turn.get("role")
        content = require_list(
            turn.get("content"), "the content of a Converse message", index=index
        )
        base: Path = (ROOT, index)
        if role == "assistant":
            made = [_assistant(turn, content, base)]
        elif role == "user":
            made = _user(turn, content, base)
        else:
            raise FormatError(
                f"unknown role {role!r}; Converse messages are 'user' or 'assistant'", index=index
            )
        messages.extend(message for message, _ in made)
        places.extend(place for _, place in made)
        groups.append(Group(tuple(message for message, _ in made), (turn,)))
    return Parsed(messages, tuple(groups), tuple(places))


def _assistant(turn: dict[str, Any], content: list[Any], base: Path) -> tuple[RawMessage, Place]:
    calls: list[dict[str, Any]] = []
    thinking: list[Any] = []
    parts: list[Any] = []
    spots: dict[str, list[Path]] = {"calls": [], "replay": [], "parts": []}
    for position, block in enumerate(content):
        spot = (*base, "content", position)
        if isinstance(block, dict) and isinstance(block.get("toolUse"), dict):
            calls.append(_tool_call(block["toolUse"]))
            spots["calls"].append(spot)
        elif isinstance(block, dict) and "reasoningContent" in block:
            thinking.append(block)
            spots["replay"].append(spot)
        else:
            parts.append(part_of(block))
            spots["parts"].append(spot)
    message: RawMessage = {"role": "assistant", "content": parts or None}
    if not calls and not thinking:
        message["content"] = parts
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


def _tool_call(use: dict[str, Any]) -> dict[str, Any]:
    call: dict[str, Any] = {}
    if "toolUseId" in use:
        call["id"] = use["toolUseId"]
    call["type"] = "function"
    arguments = dump_json(use["input"]) if "input" in use else "{}"
    call["function"] = {"name": use.get("name"), "arguments": arguments}
    call.update(extras(use, ("toolUseId", "name", "input", "type")))
    return call


def _user(turn: dict[str, Any], content: list[Any], base: Path) -> list[tuple[RawMessage, Place]]:
    carried = extras(turn, ("role", "content"))
    made: list[tuple[RawMessage, Place]] = []
    rest: list[Any] = []
    spots: list[Path] = []
    for position, block in enumerate(content):
        spot = (*base, "content", position)
        if isinstance(block, dict) and isinstance(block.get("toolResult"), dict):
            result = block["toolResult"]
            inner = result.get("content")
            message: RawMessage = {"role": "tool"}
            if "toolUseId" in result:
                message["tool_call_id"] = result["toolUseId"]
            message["content"] = [part_of(b) for b in inner] if isinstance(inner, list) else inner
            message.update(extras(result, ("toolUseId", "content")))
            parts = tuple((*spot, "toolResult", "content", j) for j in range(len(inner or [])))
            made.append((message, Place(spot, parts=parts)))
        else:
            rest.append(part_of(block))
            spots.append(spot)
    if rest or carried or not made:
        made.append(({"role": "user", "content": rest, **carried}, Place(base, parts=tuple(spots))))
    return made


def part_of(block: Any) -> Any:
    """A Converse block as a chat content part (see the module docstring)."""
    if not isinstance(block, dict) or len(block) != 1:
        return block
    [(key, value)] = block.items()
    if key == "image" and isinstance(value, dict) and value.keys() == {"format", "source"}:
        source = value["source"]
        if (
            isinstance(source, dict)
            and source.keys() == {"bytes"}
            and isinstance(source["bytes"], str)
            and isinstance(value["format"], str)
        ):
            url = f"data:image/{value['format']};base64,{source['bytes']}"
            return {"type": "image_url", "image_url": {"url": url}}
    return {"type": key, key: value}


# --- writing ----------------------------------------------------------------------------


def write(record: object, groups: Sequence[Group], messages: Sequence[RawMessage]) -> Any:
    """The native form of ``messages``, reusing unchanged turns of ``record`` verbatim."""
    native, _ = _write(record, groups, messages)
    return native


def layout(messages: Sequence[Any]) -> tuple[Any, tuple[Place | None, ...]]:
    """The request a fresh write of ``messages`` makes, and where each message lands in
    it (``None`` for one that cannot be written). Never raises."""
    return _write(None, (), messages, lenient=True)


def _write(
    record: object, groups: Sequence[Group], messages: Sequence[Any], *, lenient: bool = False
) -> tuple[Any, tuple[Place | None, ...]]:
    lead = 0
    while lead < len(messages) and _role(messages[lead]) in _SYSTEM_ROLES:
        lead += 1
    system_groups = [group for group in groups if group.kind == "system"]
    turn_groups = [group for group in groups if group.kind != "system"]
    turns: list[Any] = []
    places: list[Place | None] = []
    for run in joined(plan(messages[lead:], turn_groups)):
        if isinstance(run, Group):
            turns.extend(run.native)
            places.extend([None] * len(run.messages))  # their places are the record's own
            continue
        made, made_places = _turns(run.messages, lead + run.start, len(turns), lenient)
        turns.extend(made)
        places.extend(made_places)
    out: dict[str, Any] = dict(record) if isinstance(record, dict) else {}
    if lead:
        header = list(plan(messages[:lead], system_groups))
        if isinstance(record, dict) and len(header) == 1 and isinstance(header[0], Group):
            out["system"] = record["system"]
        else:
            out["system"] = [b for m in messages[:lead] for b in _blocks(_get(m, "content"))]
        places[:0] = [Place(("system",))] * lead
    else:
        out.pop("system", None)
    if not isinstance(record, dict) and not lead:
        return turns, tuple(places)
    out["messages"] = turns
    return out, tuple(places)


def _turns(
    messages: Sequence[Any], start: int, base: int, lenient: bool
) -> tuple[list[Any], list[Place | None]]:
    """Fresh turns for ``messages`` (the first is message ``start``, written as turn
    ``base``): tool results and one user message right after them make one user turn,
    results first."""
    turns: list[Any] = []
    places: list[Place | None] = []
    gathering: list[Any] | None = None  # the blocks of the user turn holding results
    text_joined = False
    for offset, message in enumerate(messages):
        role = _role(message)
        if role == "tool" and gathering is not None and not text_joined:
            gathering.append({"toolResult": _tool_result(message)})
            places.append(Place((ROOT, base + len(turns) - 1, "content", len(gathering) - 1)))
            continue
        if role in ("user", *_SYSTEM_ROLES) and gathering is not None and not text_joined:
            gathering.extend(_blocks(_get(message, "content"), lenient, start + offset))
            text_joined = True  # only the text right after the results joins them
            places.append(Place((ROOT, base + len(turns) - 1)))
            continue
        gathering, text_joined = None, False
        path: Path = (ROOT, base + len(turns))
        if role == "tool":
            gathering = [{"toolResult": _tool_result(message)}]
            turns.append({"role": "user", "content": gathering})
            places.append(Place((*path, "content", 0)))
        elif role == "assistant":
            turns.append(_assistant_turn(message, start + offset, lenient))
            places.append(Place(path))
        elif role in ("user", *_SYSTEM_ROLES):
            content = _blocks(_get(message, "content"), lenient, start + offset)
            turns.append({"role": "user", "content": content})
            places.append(Place(path))
        elif lenient:
            places.append(None)
        else:
            raise FormatError(f"unknown role {role!r}", index=start + offset)
    return turns, places


def _assistant_turn(message: Any, index: int, lenient: bool) -> dict[str, Any]:
    thinking = _get(message, THINKING_KEY)
    blocks: list[Any] = list(thinking) if isinstance(thinking, list) else []
    blocks.extend(_blocks(_get(message, "content"), lenient, index))
    calls = _get(message, "tool_calls")
    for position, call in enumerate(calls if isinstance(calls, list) else []):
        try:
            checked, function = tool_call_parts(call, index=index, position=position)
            arguments = parse_arguments(function.get("arguments"), index=index, call=position)
        except FormatError:
            if not lenient:
                raise
            continue
        use: dict[str, Any] = {}
        if "id" in checked:
            use["toolUseId"] = checked["id"]
        use["name"] = function.get("name")
        use["input"] = arguments
        blocks.append({"toolUse": use})
    return {"role": "assistant", "content": blocks}


def _tool_result(message: Any) -> dict[str, Any]:
    result: dict[str, Any] = {}
    if "tool_call_id" in message:
        result["toolUseId"] = message["tool_call_id"]
    result["content"] = _blocks(message.get("content")) or [{"text": ""}]  # never empty
    if message.get("status") in ("success", "error"):
        result["status"] = message["status"]
    return result


def _blocks(content: object, lenient: bool = True, index: int | None = None) -> list[Any]:
    """Content as Converse blocks: a non-empty string is one text block. Content of
    another type is a FormatError unless ``lenient`` (then it has no blocks)."""
    if isinstance(content, str):
        return [{"text": content}] if content else []
    if isinstance(content, list):
        return [block_of(part) for part in content]
    if content is None or lenient:
        return []
    raise FormatError(f"content must be a string or an array, got {describe(content)}", index=index)


def block_of(part: Any) -> Any:
    """A chat content part as a Converse block (the inverse of :func:`part_of`)."""
    if not isinstance(part, dict):
        return part
    kind = part.get("type")
    if kind == "text" and isinstance(part.get("text"), str):
        return {"text": part["text"]}
    if kind == "image_url":
        image = part.get("image_url")
        url = image.get("url") if isinstance(image, dict) else None
        match = _DATA_URL.fullmatch(url) if isinstance(url, str) else None
        if match:
            return {"image": {"format": match[1], "source": {"bytes": match[2]}}}
    if isinstance(kind, str) and kind in part and len(part) == 2:
        return {kind: part[kind]}
    return part


def _role(message: object) -> object:
    return message.get("role") if isinstance(message, dict) else None


def _get(message: object, key: str) -> Any:
    return message.get(key) if isinstance(message, dict) else None
