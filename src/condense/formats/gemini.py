"""Gemini ``generateContent`` ⇄ canonical messages.

Native: ``{"contents": [turns], "systemInstruction": {"parts": [...]}, "tools": …,
"toolConfig": …, "generationConfig": …, …}`` or a bare list of turns. A turn is
``{"role": "user" | "model", "parts": [parts]}``; a part holds ``text`` (with
``thought: true`` for a thought summary), ``functionCall`` ``{"name", "args", "id"?}``,
``functionResponse`` ``{"name", "response", "id"?}``, ``inlineData``, ``fileData``,
``executableCode``, … and may carry a ``thoughtSignature`` (googleapis/python-genai
``types.Part``; the REST API spells keys in lowerCamelCase and also reads snake_case,
both are read here).

Reading (``from_gemini``):

- ``systemInstruction`` becomes one leading system message (one plain text part: a
  string; else its parts).
- A ``model`` turn becomes one assistant message: ``functionCall`` parts become
  ``tool_calls`` (``args`` → JSON ``arguments``); the part's ``thoughtSignature``
  rides on the call as ``extra_content.google.thought_signature``, byte-identical (the
  place Gemini's OpenAI-compatible endpoint uses, so the Gemini 3 signature rule reads
  it); thought parts (``thought: true``) are kept verbatim, in order, under
  ``thinking_blocks``; every other part is a content part.
- A part becomes a chat part by adding the name of its member as ``type``: ``{"text":
  "hi", "thoughtSignature": "…"}`` → ``{"type": "text", "text": "hi",
  "thoughtSignature": "…"}`` (so a signature stays with its part), except ``inlineData``
  holding an image, which becomes an ``image_url`` part with a data URL.
- A user turn's ``functionResponse`` parts become one tool message each, in order,
  followed by one user message with the rest of the turn, if there is any. A response
  ``{"output": text}`` reads as that text; any other response as its JSON text.
- Calls and responses pair by ``id`` where the history has ids. Without ids (Gemini pairs
  by position), a call gets the id ``call_<turn>_<part>`` and each response answers the
  first unanswered call of the latest model turn with its name (else the first
  unanswered one); these ids are condense's own and are never written.
- Other keys of a turn are carried on the messages made from it.

Writing (``to_gemini``) inverts this; unchanged turns are the record's own, byte for
byte. Fresh turns: leading system/developer messages become ``systemInstruction`` (a
later one a user turn); an assistant turn is its thought parts, content, then
``functionCall`` parts (each with its signature); tool results, and the user text right
after them, make one user turn of ``functionResponse`` parts (then the text), as Gemini
wants every response right after its call turn; a response is named after the call it
answers when the tool message has no ``name``. A string result is written as
``{"output": text}`` unless it is a JSON object's text, which is written as that object.
``id`` is written on calls and responses only when the record's own calls carried ids
(some Gemini endpoints refuse it: ``Unknown name "id" at 'contents[3].parts[1].
function_call'``, gemini-cli #13972). Keys are spelled lowerCamelCase unless the record
spells them snake_case.

``read`` records where each canonical message came from (``contents[3]``,
``contents[3].parts[1]`` for a call or a response, ``systemInstruction``).
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
    joined,
    parse_arguments,
    plan,
    require_dict,
    require_list,
    tool_call_parts,
)
from condense.formats.locate import THINKING_KEY, Path, Place
from condense.message import EXTRA_CONTENT
from condense.types import RawMessage

ROOT = "contents"
SYSTEM = "systemInstruction"
_DATA_URL = re.compile(r"data:(image/[A-Za-z0-9.+-]+);base64,(.*)", re.DOTALL)
_SYSTEM_ROLES = ("system", "developer")
_CAMEL = {
    "function_call": "functionCall",
    "function_response": "functionResponse",
    "thought_signature": "thoughtSignature",
    "inline_data": "inlineData",
    "file_data": "fileData",
    "mime_type": "mimeType",
    "system_instruction": SYSTEM,
    "executable_code": "executableCode",
    "code_execution_result": "codeExecutionResult",
}
_SNAKE = {camel: snake for snake, camel in _CAMEL.items()}
_MEMBERS = (
    "text",
    "functionCall",
    "functionResponse",
    "inlineData",
    "fileData",
    "executableCode",
    "codeExecutionResult",
)
"""Part members, in the order that names a part's ``type`` when it holds several."""
TEXT_PART_KEYS = frozenset(
    {"text", "thought", "thoughtSignature", "thought_signature", "partMetadata", "part_metadata"}
)
"""The keys of a text part Gemini accepts (a text part from another format may carry
others, such as Anthropic's ``cache_control``, which have no slot)."""


def from_gemini(obj: object) -> list[RawMessage]:
    """Canonical messages for a Gemini request body or ``contents`` list."""
    return read(obj).messages


def to_gemini(messages: Sequence[RawMessage]) -> dict[str, Any]:
    """``{"systemInstruction"?: …, "contents": [...]}`` for canonical messages."""
    native = write(None, (), messages)
    return native if isinstance(native, dict) else {"contents": native}


def _get(obj: dict[str, Any], camel: str) -> Any:
    """``obj``'s member ``camel``, spelled either way."""
    if camel in obj:
        return obj[camel]
    return obj.get(_SNAKE.get(camel, camel))


def _camel(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` with its known snake_case keys spelled lowerCamelCase (one level)."""
    return {_CAMEL.get(key, key): value for key, value in obj.items()}


# --- reading ----------------------------------------------------------------------------


def read(obj: object) -> Parsed:
    """Canonical messages, their groups and places; see the module docstring."""
    messages: list[RawMessage] = []
    groups: list[Group] = []
    places: list[Place] = []
    if isinstance(obj, dict):
        turns = require_list(_get(obj, "contents"), "the 'contents' of a Gemini request")
        system = _get(obj, SYSTEM)
        if system is not None:
            key = SYSTEM if SYSTEM in obj else "system_instruction"
            message, place = _system_message(system, key)
            messages.append(message)
            groups.append(Group((message,), (), kind="system"))
            places.append(place)
    else:
        turns = require_list(obj, "a Gemini contents list")
    reader = _Reader()
    for index, turn in enumerate(turns):
        turn = require_dict(turn, "a content", index=index)
        parts = require_list(_get(turn, "parts"), "the parts of a Gemini content", index=index)
        role = turn.get("role", "user")
        if role == "model":
            made = [reader.model_turn(turn, parts, index)]
        elif role in ("user", "function"):
            made = reader.user_turn(turn, parts, index)
        else:
            raise FormatError(
                f"unknown role {role!r}; Gemini contents are 'user' or 'model'", index=index
            )
        messages.extend(message for message, _ in made)
        places.extend(place for _, place in made)
        groups.append(Group(tuple(message for message, _ in made), (turn,)))
    return Parsed(messages, tuple(groups), tuple(places))


def _system_message(system: object, key: str) -> tuple[RawMessage, Place]:
    if isinstance(system, str):
        return {"role": "system", "content": system}, Place((key,))
    checked = require_dict(system, f"'{key}'")
    parts = require_list(_get(checked, "parts"), f"the parts of '{key}'")
    place = Place((key,), parts=tuple((key, "parts", j) for j in range(len(parts))))
    if len(parts) == 1 and isinstance(parts[0], dict) and parts[0].keys() == {"text"}:
        return {"role": "system", "content": parts[0]["text"]}, place
    return {"role": "system", "content": [part_of(part) for part in parts]}, place


class _Reader:
    """Reads turns in order; pairing id-less responses needs the latest model turn."""

    def __init__(self) -> None:
        self.open: list[dict[str, Any]] = []  # the latest model turn's unanswered calls

    def model_turn(
        self, turn: dict[str, Any], parts: list[Any], index: int
    ) -> tuple[RawMessage, Place]:
        base: Path = (ROOT, index)
        calls: list[dict[str, Any]] = []
        thoughts: list[Any] = []
        content: list[Any] = []
        spots: dict[str, list[Path]] = {"calls": [], "replay": [], "parts": []}
        for position, part in enumerate(parts):
            spot = (*base, "parts", position)
            call = _get(part, "functionCall") if isinstance(part, dict) else None
            if isinstance(call, dict):
                calls.append(_tool_call(part, call, index, position))
                spots["calls"].append(spot)
            elif isinstance(part, dict) and part.get("thought") is True:
                thoughts.append(part)
                spots["replay"].append(spot)
            else:
                content.append(part_of(part))
                spots["parts"].append(spot)
        message: RawMessage = {"role": "assistant", "content": content or None}
        if not calls and not thoughts:
            message["content"] = content
        if calls:
            message["tool_calls"] = calls
        if thoughts:
            message[THINKING_KEY] = thoughts
        message.update(extras(turn, ("role", "parts")))
        self.open = list(calls)
        place = Place(
            base,
            calls=tuple(spots["calls"]),
            parts=tuple(spots["parts"]),
            replay=tuple(spots["replay"]),
        )
        return message, place

    def user_turn(
        self, turn: dict[str, Any], parts: list[Any], index: int
    ) -> list[tuple[RawMessage, Place]]:
        base: Path = (ROOT, index)
        carried = extras(turn, ("role", "parts"))
        made: list[tuple[RawMessage, Place]] = []
        rest: list[Any] = []
        spots: list[Path] = []
        for position, part in enumerate(parts):
            spot = (*base, "parts", position)
            response = _get(part, "functionResponse") if isinstance(part, dict) else None
            if isinstance(response, dict):
                made.append((self._tool_message(response, index, position), Place(spot)))
            else:
                rest.append(part_of(part))
                spots.append(spot)
        if rest or carried or not made:
            message = {"role": "user", "content": _plain(rest), **carried}
            made.append((message, Place(base, parts=tuple(spots))))
        return made

    def _tool_message(self, response: dict[str, Any], index: int, position: int) -> RawMessage:
        name = response.get("name")
        ident = response.get("id")
        if not isinstance(ident, str) or not ident:
            ident = self._answered(name) or f"call_{index}_{position}"
        else:
            self.open = [c for c in self.open if c.get("id") != ident]
        message: RawMessage = {"role": "tool", "tool_call_id": ident}
        if isinstance(name, str):
            message["name"] = name
        message["content"] = _output_text(response.get("response"))
        return message

    def _answered(self, name: object) -> str | None:
        """The id of the call an id-less response answers (see the module docstring)."""
        if not self.open:
            return None
        chosen = next((c for c in self.open if c["function"].get("name") == name), self.open[0])
        self.open.remove(chosen)
        ident: str = chosen["id"]
        return ident


def _tool_call(
    part: dict[str, Any], call: dict[str, Any], turn: int, position: int
) -> dict[str, Any]:
    ident = call.get("id")
    made: dict[str, Any] = {
        "id": ident if isinstance(ident, str) and ident else f"call_{turn}_{position}",
        "type": "function",
        "function": {"name": call.get("name"), "arguments": dump_json(call.get("args") or {})},
    }
    signature = _get(part, "thoughtSignature")
    if signature is not None:
        made[EXTRA_CONTENT] = {"google": {"thought_signature": signature}}
    return made


def _output_text(response: object) -> Any:
    """A function response as tool-message content: the text of ``{"output": text}``,
    else its JSON text."""
    if (
        isinstance(response, dict)
        and response.keys() == {"output"}
        and isinstance(response["output"], str)
    ):
        return response["output"]
    return dump_json(response if response is not None else {})


def _plain(parts: list[Any]) -> Any:
    """One plain text part as a string; other content as parts."""
    only = parts[0] if len(parts) == 1 else None
    if isinstance(only, dict) and only.keys() == {"type", "text"} and only["type"] == "text":
        return only["text"] if isinstance(only["text"], str) else parts
    return parts


def part_of(part: Any) -> Any:
    """A Gemini part as a chat part (see the module docstring)."""
    if not isinstance(part, dict):
        return part
    native = _camel(part)
    blob = native.get("inlineData")
    if native.keys() == {"inlineData"} and isinstance(blob, dict):
        blob = _camel(blob)
        mime, data = blob.get("mimeType"), blob.get("data")
        if (
            blob.keys() == {"mimeType", "data"}
            and isinstance(mime, str)
            and mime.startswith("image/")
            and isinstance(data, str)
        ):
            return {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{data}"}}
    member = next((m for m in _MEMBERS if m in native), None)
    if member is None or "type" in part:
        return {"type": "gemini_part", "part": part}
    return {"type": member, **part}


# --- writing ----------------------------------------------------------------------------


def write(record: object, groups: Sequence[Group], messages: Sequence[RawMessage]) -> Any:
    """The native form of ``messages``, reusing unchanged turns of ``record`` verbatim."""
    native, _ = _write(record, groups, messages)
    return native


def layout(messages: Sequence[Any]) -> tuple[Any, tuple[Place | None, ...]]:
    """The request a fresh write of ``messages`` makes, and where each message lands in
    it (``None`` for one that cannot be written). Never raises."""
    return _write(None, (), messages, lenient=True)


class _Style:
    """How fresh parts are written for a record: key spelling, whether ids go out, and
    the name of each call by id (a response names the function it answers)."""

    def __init__(self, record: object, messages: Sequence[Any]) -> None:
        self.names = {
            call["id"]: call["function"]["name"]
            for message in messages
            if isinstance(message, dict) and isinstance(message.get("tool_calls"), list)
            for call in message["tool_calls"]
            if isinstance(call, dict)
            and isinstance(call.get("id"), str)
            and isinstance(call.get("function"), dict)
            and isinstance(call["function"].get("name"), str)
        }
        turns = _get(record, "contents") if isinstance(record, dict) else record
        parts = [
            part
            for turn in (turns if isinstance(turns, list) else [])
            if isinstance(turn, dict)
            for part in (_get(turn, "parts") or [])
            if isinstance(part, dict)
        ]
        self.snake = any(key in _CAMEL for part in parts for key in part)
        self.ids = any(
            isinstance(_get(part, "functionCall"), dict) and "id" in _get(part, "functionCall")
            for part in parts
        )

    def key(self, camel: str) -> str:
        return _SNAKE.get(camel, camel) if self.snake else camel


def _write(
    record: object, groups: Sequence[Group], messages: Sequence[Any], *, lenient: bool = False
) -> tuple[Any, tuple[Place | None, ...]]:
    style = _Style(record, messages)
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
        made, made_places = _turns(run.messages, lead + run.start, len(turns), style, lenient)
        turns.extend(made)
        places.extend(made_places)
    out: dict[str, Any] = dict(record) if isinstance(record, dict) else {}
    system_key = next((k for k in (SYSTEM, "system_instruction") if k in out), style.key(SYSTEM))
    if lead:
        header = list(plan(messages[:lead], system_groups))
        if isinstance(record, dict) and len(header) == 1 and isinstance(header[0], Group):
            out[system_key] = record[system_key]
        else:
            parts = [p for m in messages[:lead] for p in _parts(_field(m, "content"), style)]
            out[system_key] = {"parts": parts}
        places[:0] = [Place((system_key,))] * lead
    else:
        out.pop(system_key, None)
    if not isinstance(record, dict) and not lead:
        return turns, tuple(places)
    out["contents"] = turns
    return out, tuple(places)


def _turns(
    messages: Sequence[Any], start: int, base: int, style: _Style, lenient: bool
) -> tuple[list[Any], list[Place | None]]:
    """Fresh turns for ``messages`` (the first is message ``start``, written as turn
    ``base``): results and one user message right after them make one user turn."""
    turns: list[Any] = []
    places: list[Place | None] = []
    gathering: list[Any] | None = None  # the parts of the user turn holding responses
    text_joined = False
    for offset, message in enumerate(messages):
        index = start + offset
        role = _role(message)
        if role == "tool" and gathering is not None and not text_joined:
            gathering.append(_response_part(message, style))
            places.append(Place((ROOT, base + len(turns) - 1, "parts", len(gathering) - 1)))
            continue
        if role in ("user", *_SYSTEM_ROLES) and gathering is not None and not text_joined:
            gathering.extend(_parts(_field(message, "content"), style, lenient, index))
            text_joined = True  # only the text right after the responses joins them
            places.append(Place((ROOT, base + len(turns) - 1)))
            continue
        gathering, text_joined = None, False
        path: Path = (ROOT, base + len(turns))
        if role == "tool":
            gathering = [_response_part(message, style)]
            turns.append({"role": "user", "parts": gathering})
            places.append(Place((*path, "parts", 0)))
        elif role == "assistant":
            turns.append(_model_turn(message, index, style, lenient))
            places.append(Place(path))
        elif role in ("user", *_SYSTEM_ROLES):
            parts = _parts(_field(message, "content"), style, lenient, index)
            turns.append({"role": "user", "parts": parts})
            places.append(Place(path))
        elif lenient:
            places.append(None)
        else:
            raise FormatError(f"unknown role {role!r}", index=index)
    return turns, places


def _model_turn(message: Any, index: int, style: _Style, lenient: bool) -> dict[str, Any]:
    thoughts = _field(message, THINKING_KEY)
    parts: list[Any] = list(thoughts) if isinstance(thoughts, list) else []
    parts.extend(_parts(_field(message, "content"), style, lenient, index))
    calls = _field(message, "tool_calls")
    for position, call in enumerate(calls if isinstance(calls, list) else []):
        try:
            checked, function = tool_call_parts(call, index=index, position=position)
            arguments = parse_arguments(function.get("arguments"), index=index, call=position)
        except FormatError:
            if not lenient:
                raise
            continue
        native: dict[str, Any] = {"name": function.get("name"), "args": arguments}
        if style.ids and isinstance(checked.get("id"), str):
            native["id"] = checked["id"]
        part: dict[str, Any] = {style.key("functionCall"): native}
        signature = _signature(checked)
        if signature is not None:
            part[style.key("thoughtSignature")] = signature
        parts.append(part)
    return {"role": "model", "parts": parts}


def _signature(call: dict[str, Any]) -> Any:
    extra = call.get(EXTRA_CONTENT)
    google = extra.get("google") if isinstance(extra, dict) else None
    return google.get("thought_signature") if isinstance(google, dict) else None


def _response_part(message: Any, style: _Style) -> dict[str, Any]:
    response: dict[str, Any] = {}
    if style.ids and isinstance(message.get("tool_call_id"), str):
        response["id"] = message["tool_call_id"]
    name = message.get("name")
    if not isinstance(name, str):
        name = style.names.get(message.get("tool_call_id"), "tool")
    response["name"] = name
    response["response"] = _response_value(message.get("content"))
    return {style.key("functionResponse"): response}


def _response_value(content: object) -> dict[str, Any]:
    """Tool-message content as a function response (see the module docstring)."""
    if isinstance(content, list):
        content = "".join(
            str(p.get("text", ""))
            for p in content
            if isinstance(p, dict) and p.get("type") == "text"
        )
    if not isinstance(content, str):
        return {"output": "" if content is None else dump_json(content)}
    if content.lstrip().startswith("{"):
        try:
            value = json.loads(content)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return value
    return {"output": content}


def _parts(
    content: object, style: _Style, lenient: bool = True, index: int | None = None
) -> list[Any]:
    """Content as Gemini parts: a non-empty string is one text part."""
    if isinstance(content, str):
        return [{"text": content}] if content else []
    if isinstance(content, list):
        return [native_part(part, style) for part in content]
    if content is None or lenient:
        return []
    raise FormatError(f"content must be a string or an array, got {describe(content)}", index=index)


def native_part(part: Any, style: _Style | None = None) -> Any:
    """A chat part as a Gemini part (the inverse of :func:`part_of`)."""
    if not isinstance(part, dict):
        return part
    kind = part.get("type")
    if kind == "gemini_part" and "part" in part:
        return part["part"]
    if kind == "image_url":
        image = part.get("image_url")
        url = image.get("url") if isinstance(image, dict) else None
        match = _DATA_URL.fullmatch(url) if isinstance(url, str) else None
        if match:
            key = style.key if style is not None else (lambda name: name)
            return {key("inlineData"): {key("mimeType"): match[1], "data": match[2]}}
    if kind == "text" and isinstance(part.get("text"), str):
        return {key: value for key, value in part.items() if key in TEXT_PART_KEYS}
    if isinstance(kind, str) and (kind in part or _SNAKE.get(kind, "") in part):
        return {key: value for key, value in part.items() if key != "type"}
    return part


def _role(message: object) -> object:
    return message.get("role") if isinstance(message, dict) else None


def _field(message: object, key: str) -> Any:
    return message.get(key) if isinstance(message, dict) else None
