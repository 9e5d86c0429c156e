"""ShareGPT trajectories (Hermes tool-call style) ⇄ canonical messages.

Native: ``{"conversations": [{"from": ..., "value": str}], ...}`` or a bare turn list.
``from`` is ``system``, ``human``, ``gpt`` or ``tool`` (``user`` and ``assistant`` are
read too, and a record's own names are reused when turns are written fresh).

Reading (``from_sharegpt``):

- A gpt turn becomes one assistant message. Each ``<tool_call>\\n{"name": ...,
  "arguments": {...}}\\n</tool_call>`` block becomes a tool call with the deterministic id
  ``call_<turn>_<block>`` (turn index in the trajectory, block index in the turn) and
  ``arguments = json.dumps(arguments, ensure_ascii=False)`` (a string is kept as it is);
  other keys of the block's JSON are carried in ``function``. A block whose text is not a
  JSON object with a string ``name`` is not a call and stays text. The text outside the
  call blocks (``<think>`` blocks included) is the content, without the newline that
  separated each block; ``None`` when nothing is left.
- A tool turn's ``<tool_response>\\n…\\n</tool_response>`` blocks become one tool message
  each, answering the calls of the latest gpt turn in order (consecutive tool turns
  continue where the previous one stopped). A tool turn without tags, or with other
  text outside its tags, is one response. A response with no call left to answer gets
  the id ``call_<turn>_<block>`` of its own tool turn, which answers no call (the
  untagged prose calls of some datasets); calls without a response stay unanswered.
- Parallel results packed LLaMA-Factory style — one ``<tool_response>`` holding a JSON
  array with exactly one item per call of a batch of two or more — become one tool
  message per item (content: the item as JSON text). Fresh tool turns of a record that
  packs its results are packed the same way.
- Other keys of a turn (``weight``, …) are carried on each message made from it.

Writing (``to_sharegpt``) inverts this: content, then one block per call, joined by
``\\n``; consecutive tool messages make one tool turn, ordered like the calls they
answer (ShareGPT pairs results with calls by position). Normalizations: tool call ids
are not stored (they are re-made on reading); content parts are joined as text and
non-text parts are dropped; ``None`` content is written as ``""`` and an empty content
next to tool calls reads back as ``None``; an argument string that is not JSON is
written as a JSON string; a call left unanswered in the middle of a parallel batch
cannot be represented (repair the history first); keys of several tool messages merge
into their one turn; ShareGPT has no escape for its tags, so content that itself holds
``<tool_call>``/``<tool_response>`` tags may read back differently.
"""

from __future__ import annotations

import json
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
    plan,
    require_dict,
    require_list,
    tool_call_parts,
)
from condense.formats.locate import Place
from condense.message import content_text
from condense.types import RawMessage

ROOT = "conversations"

_ROLES = {
    "system": "system",
    "human": "user",
    "user": "user",
    "gpt": "assistant",
    "assistant": "assistant",
    "tool": "tool",
}
_NAMES = {"system": "system", "user": "human", "assistant": "gpt", "tool": "tool"}
_CALL = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)
_OPEN, _CLOSE = "<tool_response>", "</tool_response>"
_PAYLOAD_KEYS = ("name", "arguments")
PACKED = "packed"  # the kind of a group read from one response packing parallel results


def from_sharegpt(obj: object) -> list[RawMessage]:
    """Canonical messages for a ShareGPT record or turn list."""
    return read(obj).messages


def to_sharegpt(messages: Sequence[RawMessage]) -> list[dict[str, Any]]:
    """ShareGPT turns (``[{"from", "value"}]``) for canonical messages."""
    turns: list[dict[str, Any]] = write(None, (), messages)
    return turns


def call_id(turn: int, block: int) -> str:
    """The id given to block ``block`` of turn ``turn`` (``^[A-Za-z0-9_-]+$``)."""
    return f"call_{turn}_{block}"


# --- reading ----------------------------------------------------------------------------


def turns_of(obj: object) -> list[Any]:
    """The turn list of a record (``conversations``) or of a bare list."""
    if isinstance(obj, dict):
        return require_list(obj.get("conversations"), "the 'conversations' of a ShareGPT record")
    return require_list(obj, "a ShareGPT trajectory")


def read(obj: object) -> Parsed:
    """Canonical messages and their groups; see the module docstring."""
    messages: list[RawMessage] = []
    groups: list[Group] = []
    places: list[Place] = []
    waiting: list[str] = []  # ids of the latest gpt turn's calls not answered yet
    for index, turn in enumerate(turns_of(obj)):
        role, value = _role_value(turn, index)
        carried = extras(turn, ("from", "value"))
        made: list[RawMessage]
        kind = "turn"
        if role == "assistant":
            content, calls = _parse_gpt(value, index)
            message: RawMessage = {"role": "assistant", "content": content}
            if calls:
                message["tool_calls"] = calls
            made = [{**message, **carried}]
            waiting = [call["id"] for call in calls]
        elif role == "tool":
            texts = _responses(value)
            unpacked = _unpack(texts, len(waiting))
            if unpacked is not None:
                texts, kind = unpacked, PACKED
            made = []
            for block, text in enumerate(texts):
                answered = waiting.pop(0) if waiting else call_id(index, block)
                made.append({"role": "tool", "tool_call_id": answered, "content": text, **carried})
        else:
            made = [{"role": role, "content": value, **carried}]
            waiting = []
        messages.extend(made)
        groups.append(Group(tuple(made), (turn,), kind=kind))
        places.extend(Place((ROOT, index)) for _ in made)
    return Parsed(messages, tuple(groups), tuple(places))


def _role_value(turn: object, index: int) -> tuple[str, str]:
    checked = require_dict(turn, "a turn", index=index)
    name = checked.get("from")
    role = _ROLES.get(name) if isinstance(name, str) else None
    if role is None:
        raise FormatError(
            f"unknown 'from' {name!r}; expected one of {', '.join(_ROLES)}", index=index
        )
    value = checked.get("value")
    if not isinstance(value, str):
        raise FormatError(f"'value' must be a string, got {describe(value)}", index=index)
    return role, value


def _parse_gpt(value: str, index: int) -> tuple[str | None, list[dict[str, Any]]]:
    calls: list[dict[str, Any]] = []
    kept: list[str] = []
    position = 0  # end of the text already handled
    for match in _CALL.finditer(value):
        call = _payload_call(match[1], call_id(index, len(calls)))
        if call is None:
            continue
        start, end = match.span()
        if start > position and value[start - 1] == "\n":
            start -= 1  # the newline before the block separates it from the text
        elif start == position and value.startswith("\n", end):
            end += 1  # a block opening the text takes the newline after it
        kept.append(value[position:start])
        position = end
        calls.append(call)
    if not calls:
        return value, []
    kept.append(value[position:])
    return "".join(kept) or None, calls


def _payload_call(text: str, identifier: str) -> dict[str, Any] | None:
    try:
        payload = json.loads(text)
    except ValueError:
        return None
    if not isinstance(payload, dict) or not isinstance(payload.get("name"), str):
        return None
    arguments = payload.get("arguments", {})
    if not isinstance(arguments, str):
        arguments = dump_json(arguments)
    function = {"name": payload["name"], "arguments": arguments}
    return {
        "id": identifier,
        "type": "function",
        "function": {**function, **extras(payload, _PAYLOAD_KEYS)},
    }


def _responses(value: str) -> list[str]:
    """The texts of a tool turn's ``<tool_response>`` blocks (each up to the first
    closing tag after it); the whole value when it has none, an unclosed one, or text
    outside them. Found with ``str.find``: a tool output can be megabytes."""
    blocks: list[str] = []
    position = 0
    while (start := value.find(_OPEN, position)) >= 0:
        end = value.find(_CLOSE, start + len(_OPEN))
        gap = value[position:start]
        if end < 0 or (gap and not gap.isspace()):
            break
        blocks.append(_strip_newlines(value[start + len(_OPEN) : end]))
        position = end + len(_CLOSE)
    if not blocks or value[position:].strip():
        return [value]
    return blocks


def _unpack(texts: list[str], calls: int) -> list[str] | None:
    """The items of one response that packs the results of ``calls`` ≥ 2 parallel calls
    as a JSON array with one item per call, each as JSON text; else None."""
    if len(texts) != 1 or calls < 2:
        return None
    try:
        items = json.loads(texts[0])
    except ValueError:
        return None
    if not isinstance(items, list) or len(items) != calls:
        return None
    return [dump_json(item) for item in items]


def _strip_newlines(text: str) -> str:
    text = text.removeprefix("\n")
    return text.removesuffix("\n")


# --- writing ----------------------------------------------------------------------------


def write(record: object, groups: Sequence[Group], messages: Sequence[RawMessage]) -> Any:
    """The native form of ``messages``, reusing unchanged turns of ``record`` verbatim."""
    names = dict(_NAMES)
    if record is not None:  # write fresh turns with the names the record already uses
        for turn in reversed(turns_of(record)):
            if isinstance(turn, dict) and isinstance(turn.get("from"), str):
                names[_ROLES.get(turn["from"], "")] = turn["from"]
    packed = any(group.kind == PACKED for group in groups)
    turns: list[Any] = []
    for run in plan(messages, groups):
        if isinstance(run, Group):
            turns.extend(run.native)
        else:
            stop = run.start + len(run.messages)
            turns.extend(_turns(messages, run.start, stop, names, packed=packed))
    if isinstance(record, dict):
        return {**record, "conversations": turns}
    return turns


def _turns(
    messages: Sequence[RawMessage],
    start: int,
    stop: int,
    names: dict[str, str],
    *,
    packed: bool,
) -> list[Any]:
    turns: list[dict[str, Any]] = []
    index = start
    while index < stop:
        message = require_dict(messages[index], "a message", index=index)
        role = message.get("role")
        if role == "tool":
            end = index
            while end < stop and _is_tool(messages[end]):
                end += 1
            turns.append(_tool_turn(messages, index, end, names["tool"], packed=packed))
            index = end
            continue
        carried = extras(message, ("role", "content", "tool_calls"))
        if role == "assistant":
            value = _gpt_value(message, index)
            turns.append({"from": names["assistant"], "value": value, **carried})
        elif role in ("system", "developer", "user"):
            name = names["user" if role == "user" else "system"]
            turns.append({"from": name, "value": _text(message.get("content")), **carried})
        else:
            raise FormatError(f"unknown role {role!r}", index=index)
        index += 1
    return turns


def _is_tool(message: object) -> bool:
    return isinstance(message, dict) and message.get("role") == "tool"


def _gpt_value(message: RawMessage, index: int) -> str:
    text = _text(message.get("content"))
    blocks = []
    calls = require_list(message.get("tool_calls") or [], "'tool_calls'", index=index)
    for position, call in enumerate(calls):
        checked, function = tool_call_parts(call, index=index, position=position)
        payload = {"name": function.get("name"), "arguments": _arguments(function.get("arguments"))}
        payload.update(extras(checked, ("id", "type", "function", *payload)))
        payload.update(extras(function, payload))
        blocks.append(f"<tool_call>\n{dump_json(payload)}\n</tool_call>")
    return "\n".join([text, *blocks] if text else blocks) if blocks else text


def _arguments(arguments: object) -> Any:
    if arguments is None:
        return {}
    if not isinstance(arguments, str):
        return arguments
    try:
        return json.loads(arguments)
    except ValueError:
        return arguments  # written as a JSON string: no call is dropped for bad JSON


def _tool_turn(
    messages: Sequence[RawMessage], start: int, stop: int, name: str, *, packed: bool
) -> dict[str, Any]:
    results = list(messages[start:stop])
    before = messages[start - 1] if start else None
    if isinstance(before, dict) and before.get("role") == "assistant":
        order = [
            call.get("id") for call in before.get("tool_calls") or [] if isinstance(call, dict)
        ]
        rank = {identifier: position for position, identifier in enumerate(order)}
        results.sort(key=lambda result: rank.get(result.get("tool_call_id"), len(rank)))
    carried: dict[str, Any] = {}
    for result in results:
        for key, value in extras(result, ("role", "content", "tool_call_id")).items():
            carried.setdefault(key, value)
    texts = [_text(result.get("content")) for result in results]
    if packed and len(texts) > 1:  # the record packs parallel results into one array
        texts = [dump_json([_json_or_text(text) for text in texts])]
    value = "\n".join(f"<tool_response>\n{text}\n</tool_response>" for text in texts)
    return {"from": name, "value": value, **carried}


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _text(content: object) -> str:
    """A ShareGPT value for ``content``: its text; another JSON value as JSON."""
    if content is None or isinstance(content, str | list):
        return content_text(content)
    return dump_json(content)
