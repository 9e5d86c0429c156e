"""OpenAI Responses input items ⇄ canonical messages.

Native: a list of input items, or a request body ``{"input": [items] | str, ...}`` (an
``input`` string is one user message; ``instructions`` and every other field of the body
are carried unchanged and are not messages).

Reading (``from_responses``):

- A ``message`` item (``type`` may be omitted) becomes a message of its role; string
  content stays a string, and parts map to chat parts: ``input_text``/``output_text`` →
  ``text`` (``annotations`` and other keys carried), ``input_image`` with an
  ``image_url`` → ``image_url``; other parts are carried unchanged.
- An assistant ``message`` item and the call items right after it form one assistant
  message (content + parallel ``tool_calls``); call items with no message before them
  form one assistant message with ``content: None``. A ``function_call`` becomes a
  function tool call (``arguments`` kept verbatim), a ``custom_tool_call`` (Codex's
  ``apply_patch``) a custom tool call ``{"type": "custom", "custom": {"name", "input"}}``
  (chat's own form for it; ``input`` is free text, never JSON). The item's ``call_id``
  is the tool call ``id``.
- A ``function_call_output`` or ``custom_tool_call_output`` becomes a tool message
  (``call_id`` → ``tool_call_id``, ``output`` → ``content``), where it sits: the
  Responses API pairs outputs with calls by ``call_id``, and Codex puts ``developer`` and
  ``user`` messages between a call and its output, so messages may sit between an
  assistant message and the tool messages answering it (``condense.units`` keeps them in
  one unit; chat profiles report and repair the gap).
- ``reasoning`` items, and items of any other type (``web_search_call``,
  ``item_reference``, ``local_shell_call``, …), must stay with the item after them: they
  are kept verbatim, in order, under ``responses_items`` of the next canonical assistant
  message. When no assistant item follows before the next user/tool item (or the end),
  they form an assistant message of their own with ``content: None``.
- A ``compaction`` item (it stands for everything before it) ends the run of waiting
  items it closes: it and the items waiting before it form an assistant message of their
  own, so it never joins the next response's message. ``compaction_trigger`` (a request
  control, sent last) is an item like any other.
- Item keys with no chat slot are carried on the message or tool call; the item ``id`` is
  carried as ``item_id`` (``id`` means something else on a tool call, and strict chat
  validators reject ``id`` on messages).

Writing (``to_responses``) inverts this and always writes ``"type"``. Normalizations:

- Text parts are written as ``output_text`` in assistant messages and ``input_text``
  elsewhere.
- An assistant message with ``content: None`` and tool calls is written without a message
  item; its other keys (if any) move to the first ``function_call``.
- Two consecutive assistant messages, the first without tool calls and the second without
  content, read back as one (Responses cannot tell them from one turn).
- A custom tool call is written as a ``custom_tool_call``, and a tool message answering
  one (by id, anywhere in the messages) as a ``custom_tool_call_output``.
- Only what the Responses API accepts is written (the keys ``providers/responses.py``
  lists with its sources): a message item has ``role``, ``content``, ``id``, ``status``
  and ``phase``; a ``function_call`` ``call_id``, ``name``, ``arguments``, ``id``,
  ``status``, ``namespace``, ``caller``; a ``custom_tool_call`` ``call_id``, ``name``,
  ``input``, ``id``, ``status``, ``namespace``, ``caller``; a ``function_call_output``
  ``call_id``, ``output``, ``id``, ``status``, ``namespace``, ``caller``; a
  ``custom_tool_call_output`` ``call_id``, ``output``, ``id``, ``caller``; an
  ``input_text`` part ``text``, an ``output_text``
  part ``text``, ``annotations``, ``logprobs``; an ``input_image`` ``image_url``,
  ``detail``, ``file_id``. So these are dropped: a tool message's ``name``, ``name`` and
  ``reasoning_content`` / ``refusal`` / ``audio`` on messages, Gemini's
  ``extra_content`` and other extra keys on calls, Anthropic's ``cache_control`` /
  ``is_error`` / ``citations``, and any unknown key. Other part and item types (and the
  ``responses_items`` a message carries) are written as they are. Items read from a
  Responses file that reach the writer unchanged are emitted verbatim, keys and all.

``read`` also records where each canonical message came from (``Place``: the message
item, or the first ``function_call``; each call's item; its reasoning items); ``layout``
says where a fresh write puts each message.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from condense.arguments.calls import CUSTOM, is_custom
from condense.exceptions import FormatError
from condense.formats._common import (
    Group,
    Parsed,
    describe,
    extras,
    plan,
    require_dict,
    require_list,
    tool_call_parts,
)
from condense.formats.locate import ITEM_ID_KEY, ITEMS_KEY, Path, Place
from condense.turns import COMPACTION_TYPES
from condense.types import RawMessage

ROOT = "input"
_TEXT_PARTS = ("input_text", "output_text")
_OUTPUTS = ("function_call_output", "custom_tool_call_output")


def from_responses(obj: object) -> list[RawMessage]:
    """Canonical messages for a list of Responses input items (or a request body)."""
    return read(obj).messages


def to_responses(messages: Sequence[RawMessage]) -> list[Any]:
    """Responses input items for canonical messages."""
    items: list[Any] = write(None, (), messages)
    return items


# --- reading ----------------------------------------------------------------------------


def read(obj: object) -> Parsed:
    """Canonical messages, their groups and places; see the module docstring."""
    if isinstance(obj, dict):
        if "input" not in obj:
            raise FormatError("a Responses request needs an 'input' array")
        items = obj["input"]
        if isinstance(items, str):
            message: RawMessage = {"role": "user", "content": items}
            group = Group((message,), (_message_item(message),))
            return Parsed([message], (group,), (Place((ROOT,)),))
    else:
        items = obj
    reader = _Reader()
    for index, item in enumerate(require_list(items, "Responses input")):
        reader.add(require_dict(item, "an input item", index=index), index)
    return reader.finish()


Indexed = tuple[int, Any]
"""An item with its index in the input list."""


class _Reader:
    """Folds items into messages; only assistant output needs state across items."""

    def __init__(self) -> None:
        self.messages: list[RawMessage] = []
        self.groups: list[Group] = []
        self.places: list[Place] = []
        self.pending: list[Indexed] = []  # reasoning/opaque items waiting for the next item
        self.prefix: list[Indexed] = []  # the waiting items the open assistant message took
        self.reply: Indexed | None = None  # its assistant message item, if any
        self.calls: list[Indexed] = []  # its function_call items

    def add(self, item: dict[str, Any], index: int) -> None:
        kind = item.get("type", "message" if "role" in item else None)
        if kind == "message" and item.get("role") == "assistant":
            self.close()
            self.open()
            self.reply = (index, item)
        elif kind in _CALLS:
            if self.reply is None and not self.calls:
                self.open()
            self.calls.append((index, item))
        elif kind == "message":
            self.close(alone=True)
            self.emit(_message(item, index), [(index, item)], _content_place(index, item))
        elif kind in _OUTPUTS:
            self.close(alone=True)
            self.emit(_tool_message(item), [(index, item)], Place((ROOT, index)))
        elif kind in COMPACTION_TYPES:  # a message of its own, with what waited before it
            self.close()
            self.pending.append((index, item))
            self.close(alone=True)
        elif isinstance(kind, str):  # reasoning and the item types chat has no form for
            self.close()
            self.pending.append((index, item))
        else:
            raise FormatError(
                f"input item has no 'type' and no 'role' (keys: {sorted(item)})", index=index
            )

    def open(self) -> None:
        self.prefix, self.pending = self.pending, []

    def close(self, *, alone: bool = False) -> None:
        """Finish the open assistant message; with ``alone``, also give waiting items a
        message of their own (no assistant item follows them)."""
        if self.reply is not None or self.calls:
            index, reply = self.reply or (-1, {})
            message: RawMessage = {"role": "assistant", "content": None}
            if "content" in reply:
                message["content"] = _content_in(reply["content"])
            if self.calls:
                message["tool_calls"] = [_CALLS[item["type"]](item) for _, item in self.calls]
            if self.prefix:
                message[ITEMS_KEY] = [item for _, item in self.prefix]
            message.update(_carried(reply, ("type", "role", "content")))
            own = self.reply or self.calls[0]
            place = Place(
                (ROOT, own[0]),
                calls=tuple((ROOT, at) for at, _ in self.calls),
                parts=_content_place(index, reply).parts if self.reply else (),
                replay=tuple((ROOT, at) for at, _ in self.prefix),
            )
            native = [*self.prefix, *([self.reply] if self.reply else []), *self.calls]
            self.emit(message, native, place)
            self.prefix, self.reply, self.calls = [], None, []
        if alone and self.pending:
            waiting, self.pending = self.pending, []
            message = {"role": "assistant", "content": None, ITEMS_KEY: [i for _, i in waiting]}
            replay = tuple((ROOT, at) for at, _ in waiting)
            self.emit(message, waiting, Place(replay[0], replay=replay))

    def emit(self, message: RawMessage, native: list[Indexed], place: Place) -> None:
        self.messages.append(message)
        self.groups.append(Group((message,), tuple(item for _, item in native)))
        self.places.append(place)

    def finish(self) -> Parsed:
        self.close(alone=True)
        return Parsed(self.messages, tuple(self.groups), tuple(self.places))


def _content_place(index: int, item: dict[str, Any]) -> Place:
    content = item.get("content")
    path: Path = (ROOT, index)
    if not isinstance(content, list):
        return Place(path)
    return Place(path, parts=tuple((*path, "content", j) for j in range(len(content))))


def _carried(item: dict[str, Any], mapped: Sequence[str]) -> dict[str, Any]:
    """Unmapped item keys, with the item ``id`` renamed to ``item_id``."""
    return {
        (ITEM_ID_KEY if key == "id" else key): value for key, value in extras(item, mapped).items()
    }


def _message(item: dict[str, Any], index: int) -> RawMessage:
    role = item.get("role")
    if not isinstance(role, str):
        raise FormatError(f"message item has role {describe(role)}", index=index)
    message: RawMessage = {"role": role}
    if "content" in item:
        message["content"] = _content_in(item["content"])
    message.update(_carried(item, ("type", "role", "content")))
    return message


def _tool_call(item: dict[str, Any]) -> dict[str, Any]:
    call: dict[str, Any] = {}
    if "call_id" in item:
        call["id"] = item["call_id"]
    call["type"] = "function"
    call["function"] = {"name": item.get("name"), "arguments": item.get("arguments")}
    call.update(_carried(item, ("type", "call_id", "name", "arguments")))
    return call


def _custom_call(item: dict[str, Any]) -> dict[str, Any]:
    call: dict[str, Any] = {}
    if "call_id" in item:
        call["id"] = item["call_id"]
    call["type"] = CUSTOM
    call[CUSTOM] = {"name": item.get("name"), "input": item.get("input")}
    call.update(_carried(item, ("type", "call_id", "name", "input")))
    return call


_CALLS = {"function_call": _tool_call, "custom_tool_call": _custom_call}
"""The call items chat has a tool-call form for, and how each reads."""


def _tool_message(item: dict[str, Any]) -> RawMessage:
    message: RawMessage = {"role": "tool"}
    if "call_id" in item:
        message["tool_call_id"] = item["call_id"]
    if "output" in item:
        message["content"] = _content_in(item["output"])
    message.update(_carried(item, ("type", "call_id", "output")))
    return message


def _content_in(content: object) -> Any:
    if not isinstance(content, list):
        return content
    return [_part_in(part) for part in content]


def _part_in(part: Any) -> Any:
    if not isinstance(part, dict):
        return part
    kind = part.get("type")
    if kind in _TEXT_PARTS:
        return {"type": "text", **extras(part, ("type",))}
    if kind == "input_image" and isinstance(part.get("image_url"), str):
        image = {
            "url": part["image_url"],
            **({"detail": part["detail"]} if "detail" in part else {}),
        }
        return {
            "type": "image_url",
            "image_url": image,
            **extras(part, ("type", "image_url", "detail")),
        }
    return part


# --- writing ----------------------------------------------------------------------------

MESSAGE_KEYS = ("type", "role", "content", "id", "status", "phase")
FUNCTION_CALL_KEYS = ("type", "call_id", "name", "arguments", "id", "status", "namespace", "caller")
CUSTOM_CALL_KEYS = ("type", "call_id", "name", "input", "id", "status", "namespace", "caller")
OUTPUT_KEYS = ("type", "call_id", "output", "id", "status", "namespace", "caller")
CUSTOM_OUTPUT_KEYS = ("type", "call_id", "output", "id", "caller")
TEXT_KEYS = {
    "input_text": ("type", "text"),
    "output_text": ("type", "text", "annotations", "logprobs"),
}
IMAGE_KEYS = ("type", "image_url", "detail", "file_id")
"""The keys the Responses API accepts on each item and part the writer makes."""


def write(record: object, groups: Sequence[Group], messages: Sequence[RawMessage]) -> Any:
    """The native form of ``messages``, reusing unchanged items of ``record`` verbatim."""
    runs = list(plan(messages, groups))
    unchanged = len(runs) == 1 and isinstance(runs[0], Group)
    if unchanged and isinstance(record, dict) and isinstance(record.get("input"), str):
        return dict(record)
    items: list[Any] = []
    custom = _custom_call_ids(messages)
    for run in runs:
        if isinstance(run, Group):
            items.extend(run.native)
            continue
        for offset, message in enumerate(run.messages):
            items.extend(_items(message, run.start + offset, len(items), custom)[0])
    if isinstance(record, dict):
        return {**record, "input": items}
    return items


def layout(messages: Sequence[Any]) -> tuple[Any, tuple[Place | None, ...]]:
    """The items a fresh write of ``messages`` makes, and where each message lands among
    them (``None`` for one that cannot be written). Never raises."""
    items: list[Any] = []
    places: list[Place | None] = []
    custom = _custom_call_ids(messages)
    for index, message in enumerate(messages):
        try:
            made, place = _items(message, index, len(items), custom)
        except FormatError:
            places.append(None)
            continue
        items.extend(made)
        places.append(place)
    return items, tuple(places)


def _custom_call_ids(messages: Sequence[Any]) -> frozenset[str]:
    """The ids of the custom tool calls among ``messages``: their results are written as
    ``custom_tool_call_output`` items."""
    return frozenset(
        call["id"]
        for message in messages
        if isinstance(message, dict) and isinstance(message.get("tool_calls"), list)
        for call in message["tool_calls"]
        if is_custom(call) and isinstance(call.get("id"), str)
    )


def _items(
    message: object, index: int, at: int, custom: frozenset[str] = frozenset()
) -> tuple[list[Any], Place]:
    """The items of one message (the first is item ``at``) and where its parts went;
    ``custom`` holds the ids of the custom calls (their results' item type differs)."""
    message = require_dict(message, "a message", index=index)
    role = message.get("role")
    own: Path = (ROOT, at)
    if role == "tool":
        answers_custom = message.get("tool_call_id") in custom
        kind = "custom_tool_call_output" if answers_custom else "function_call_output"
        item: dict[str, Any] = {"type": kind}
        if "tool_call_id" in message:
            item["call_id"] = message["tool_call_id"]
        if "content" in message:
            item["output"] = _content_out(message["content"], "tool")
        accepted = CUSTOM_OUTPUT_KEYS if answers_custom else OUTPUT_KEYS
        return [_with(item, _native_keys(message), accepted)], Place(own)
    if role != "assistant":
        if not isinstance(role, str):
            raise FormatError(f"message has role {describe(role)}", index=index)
        return [_message_item(message)], _content_place(at, message)
    prefix = message.get(ITEMS_KEY)
    calls = message.get("tool_calls")
    items = list(prefix) if isinstance(prefix, list) else []
    replay = tuple((ROOT, at + j) for j in range(len(items)))
    reply: Place | None = None
    carried = _native_keys(message)
    if message.get("content") is not None or not (calls or items):
        reply = _content_place(at + len(items), message)
        items.append(_message_item(message))
        carried = {}
    spots: list[Path] = []
    for position, call in enumerate(require_list(calls or [], "'tool_calls'", index=index)):
        item, keys = _call_item(call, index, position)
        items.append(_with(item, carried, keys))  # the message's keys, if it made no item
        carried = {}
        spots.append((ROOT, at + len(items) - 1))
    main = reply.path if reply else (spots or replay or [own])[0]
    parts = reply.parts if reply else ()
    return items, Place(main, calls=tuple(spots), parts=parts, replay=replay)


def _call_item(call: object, index: int, position: int) -> tuple[dict[str, Any], Sequence[str]]:
    """The ``function_call`` or ``custom_tool_call`` item of one tool call, and the keys
    that item type accepts."""
    if is_custom(call):
        checked = require_dict(call, f"tool call {position}", index=index)
        body = require_dict(checked.get(CUSTOM), f"'custom' of tool call {position}", index=index)
        item: dict[str, Any] = {"type": "custom_tool_call"}
        if "id" in checked:
            item["call_id"] = checked["id"]
        item["name"] = body.get("name")
        item["input"] = body.get("input")
        keys: tuple[str, ...] = CUSTOM_CALL_KEYS
    else:
        checked, function = tool_call_parts(call, index=index, position=position)
        item = {"type": "function_call"}
        if "id" in checked:
            item["call_id"] = checked["id"]
        item["name"] = function.get("name")
        item["arguments"] = function.get("arguments")
        keys = FUNCTION_CALL_KEYS
    return _with(item, _native_keys(extras(checked, ("id",))), keys), keys


def _message_item(message: RawMessage) -> dict[str, Any]:
    item: dict[str, Any] = {"type": "message", "role": message["role"]}
    if "content" in message:
        item["content"] = _content_out(message["content"], message["role"])
    return _with(item, _native_keys(message), MESSAGE_KEYS)


def _native_keys(message: dict[str, Any]) -> dict[str, Any]:
    """A canonical message's or call's keys under their item names (``item_id`` as ``id``)."""
    return {("id" if key == ITEM_ID_KEY else key): value for key, value in message.items()}


def _with(item: dict[str, Any], source: dict[str, Any], accepted: Sequence[str]) -> dict[str, Any]:
    """``item`` plus the keys of ``source`` the API accepts on it and ``item`` lacks."""
    item.update((key, source[key]) for key in accepted if key in source and key not in item)
    return item


def _content_out(content: object, role: str) -> Any:
    if not isinstance(content, list):
        return content
    text_type = "output_text" if role == "assistant" else "input_text"
    return [_part_out(part, text_type) for part in content]


def _part_out(part: Any, text_type: str) -> Any:
    if not isinstance(part, dict):
        return part
    kind = part.get("type")
    if kind == "text":
        return _with({"type": text_type}, part, TEXT_KEYS[text_type])
    image = part.get("image_url")
    if kind == "image_url" and isinstance(image, dict) and isinstance(image.get("url"), str):
        return _with({"type": "input_image", "image_url": image["url"]}, image, IMAGE_KEYS)
    return part
