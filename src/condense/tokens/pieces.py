"""What of a message is counted: its text pieces plus a fixed number of framing tokens.

Every counter in this package — the exact BPE count, the fast estimate and the upper
bound — reads a message through :func:`message_pieces`, so they agree on what counts and
the upper bound can be proved piece by piece. The rules follow OpenAI's cookbook
("How to count tokens with tiktoken"):

- every message costs ``TOKENS_PER_MESSAGE`` (3) plus its ``role``;
- ``content``: a string, or the parts of a list — ``text`` (and ``input_text``,
  ``output_text``, ``refusal``) parts count their text, and each image, audio or file
  part counts a fixed ``MEDIA_PART_TOKENS`` (765, OpenAI's price of a 1024×1024 image at
  high detail; ``LOW_DETAIL_IMAGE_TOKENS`` = 85 for an image with ``detail: "low"``);
- ``name`` counts its text plus ``TOKENS_PER_NAME`` (1);
- ``tool_call_id`` and ``refusal`` count their text;
- each tool call counts its function name and arguments plus ``TOKENS_PER_TOOL_CALL``
  (3, an approximation of the framing), and so does a legacy ``function_call``;
- a list of messages costs ``REPLY_PRIMING_TOKENS`` (3) on top, for the assistant reply
  that the provider primes.

Messages are untrusted: any value of an unexpected type (a number, a dict where a string
belongs, a whole message that is not a dict) is counted as its JSON text, so odd shapes
cost roughly what they would cost on the wire and never raise. Other keys (``id``,
metadata a client added) are not counted. Messages are only read, never changed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence

from condense.exceptions import InputError

__all__ = [
    "LOW_DETAIL_IMAGE_TOKENS",
    "MEDIA_PART_TOKENS",
    "REPLY_PRIMING_TOKENS",
    "TOKENS_PER_MESSAGE",
    "TOKENS_PER_NAME",
    "TOKENS_PER_TOOL_CALL",
    "message_list",
    "message_pieces",
    "stringify",
]

TOKENS_PER_MESSAGE = 3
TOKENS_PER_NAME = 1
TOKENS_PER_TOOL_CALL = 3
REPLY_PRIMING_TOKENS = 3
MEDIA_PART_TOKENS = 765
LOW_DETAIL_IMAGE_TOKENS = 85

# Plain tuples rather than ``dict | Mapping``: isinstance() runs once per message and field.
_MAPPINGS = (dict, Mapping)
_SEQUENCES = (list, tuple)
_MEDIA_TYPES = frozenset(
    {"image_url", "image", "input_image", "input_audio", "audio", "file", "input_file"}
)


def message_pieces(message: object) -> tuple[int, tuple[str, ...]]:
    """Return ``(fixed_tokens, texts)`` for one message.

    ``fixed_tokens`` is the framing cost that does not depend on the tokenizer;
    ``texts`` are the strings whose tokens are counted. Together they are also the
    message's fingerprint: two messages with equal pieces have equal counts.
    """
    if type(message) is dict and len(message) == 2:
        # The common case, {"role": str, "content": str}, without the general walk.
        role, content = message.get("role"), message.get("content")
        if type(role) is str and type(content) is str:
            return TOKENS_PER_MESSAGE, (role, content)
    if not isinstance(message, _MAPPINGS):
        return TOKENS_PER_MESSAGE, (stringify(message),)
    texts: list[str] = []
    fixed = TOKENS_PER_MESSAGE
    get = message.get
    for key in ("role", "content", "name", "tool_call_id", "refusal"):
        value = get(key)
        if type(value) is str:
            texts.append(value)
        elif value is None:
            continue
        elif key == "content":
            fixed += _content_pieces(value, texts)
        else:
            texts.append(stringify(value))
        if key == "name":
            fixed += TOKENS_PER_NAME
    tool_calls = get("tool_calls")
    if tool_calls is not None:
        fixed += _tool_call_pieces(tool_calls, texts)
    function_call = get("function_call")
    if function_call is not None:
        fixed += _tool_call_pieces([{"function": function_call}], texts)
    return fixed, tuple(texts)


def message_list(messages: object) -> Sequence[object]:
    """Return ``messages`` as a sequence, or raise ``InputError`` if it is not a list of them.

    Single messages inside the list may have any shape; only the container is checked, so
    that passing one message dict (or a string) instead of a list is a clear error.
    """
    if isinstance(messages, _SEQUENCES):
        return messages
    if isinstance(messages, str | bytes | bytearray | dict | Mapping) or not isinstance(
        messages, Iterable
    ):
        raise InputError(
            f"messages must be a list of message dicts, not {type(messages).__name__}; "
            "wrap a single message in a list"
        )
    return list(messages)


def stringify(value: object) -> str:
    """Return ``value`` as the text it would be sent as: itself if a string, else JSON."""
    if isinstance(value, str):
        return value
    # A count must never raise, whatever a foreign object does: circular or absurdly deep
    # values, keys JSON cannot hold and __str__/__repr__ that raise all end up here.
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except Exception:
        try:
            return repr(value)
        except Exception:
            return ""


def _content_pieces(content: object, texts: list[str]) -> int:
    if not isinstance(content, _SEQUENCES):
        texts.append(stringify(content))
        return 0
    fixed = 0
    for part in content:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, _MAPPINGS):
            fixed += _part_pieces(part, texts)
        elif part is not None:
            texts.append(stringify(part))
    return fixed


def _part_pieces(part: Mapping[object, object], texts: list[str]) -> int:
    kind = part.get("type")
    if kind in _MEDIA_TYPES:
        image = part.get("image_url")
        if isinstance(image, _MAPPINGS) and image.get("detail") == "low":
            return LOW_DETAIL_IMAGE_TOKENS
        return MEDIA_PART_TOKENS
    text = part.get("refusal") if kind == "refusal" else part.get("text")
    if text is None:
        texts.append(stringify(part))
    else:
        texts.append(stringify(text))
    return 0


def _tool_call_pieces(tool_calls: object, texts: list[str]) -> int:
    if not isinstance(tool_calls, _SEQUENCES):
        texts.append(stringify(tool_calls))
        return 0
    for call in tool_calls:
        function = call.get("function") if isinstance(call, _MAPPINGS) else call
        if function is None:
            function = call  # a flattened call: {"name": ..., "arguments": ...}
        if isinstance(function, _MAPPINGS):
            name, arguments = function.get("name"), function.get("arguments")
            if name is not None:
                texts.append(name if type(name) is str else stringify(name))
            if arguments is not None:
                texts.append(arguments if type(arguments) is str else stringify(arguments))
        elif function is not None:
            texts.append(stringify(function))
    return TOKENS_PER_TOOL_CALL * len(tool_calls)
