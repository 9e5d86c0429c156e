"""What of a message is counted: text pieces, opaque base64 and fixed framing and media.

Every counter in this package — the exact BPE count, the fast estimate and the upper
bound — reads a message through :func:`message_pieces`, so they agree on what counts and
the upper bound can be proved piece by piece. A message is counted as everything a
provider receives, so that a history that "fits" fits at the provider. The framing rules
follow OpenAI's cookbook ("How to count tokens with tiktoken"):

- every message costs ``TOKENS_PER_MESSAGE`` (3) plus its ``role``;
- ``content``: a string, or the parts of a list. A part with a ``text`` (``text``,
  ``input_text``, ``output_text``, Anthropic text blocks) counts its text, a
  ``refusal`` part its refusal. Images (``image_url``, ``input_image``, Anthropic
  ``image``) and documents (Anthropic ``document``, ``file``, ``input_file``) cost what
  their provider bills for them, by pixel size or pages (see ``condense.tokens.media``;
  a plain-text document counts as its text); audio and video parts a fixed
  ``MEDIA_PART_TOKENS`` (765). Any other part counts like an unknown value, below;
- ``name`` counts its text plus ``TOKENS_PER_NAME`` (1);
- each tool call counts its function name and arguments plus ``TOKENS_PER_TOOL_CALL``
  (3, an approximation of the framing), and so does a legacy ``function_call``;
- a list of messages costs ``REPLY_PRIMING_TOKENS`` (3) on top, for the assistant reply
  that the provider primes.

Every other key of a message or tool call is sent too — replay state, and whatever an
adapter carried — so it counts. Its value is walked:

- strings count as text: ``tool_call_id``, ``refusal``, ``reasoning_content``, the
  ``thinking`` of Anthropic ``thinking_blocks``, the summaries of Responses
  ``reasoning`` items in ``responses_items``, and the strings of keys condense does not
  know (``reasoning``, OpenRouter's ``reasoning_details``, …); numbers and booleans
  count as their JSON text (``is_error: true`` is one token); dicts and lists are
  walked, and their keys are not counted (providers render values, not JSON);
- strings under ``OPAQUE_KEYS`` (``signature``, ``encrypted_content``,
  ``thought_signature``, and ``data`` of a ``redacted_thinking`` or
  ``reasoning.encrypted`` block) are opaque base64, counted by length at a measured
  rate (see ``condense.tokens.opaque``), never by BPE;
- ``METADATA_KEYS`` (``id``, ``item_id``, ``type``, ``index``, ``status``,
  ``cache_control``) label a message, call or item and are never turned into model
  tokens: they are skipped, at every depth.

Keys of a content part other than its text, image or document (``annotations``,
``citations``, ``cache_control``) are not counted.

Messages are untrusted: any value of an unexpected type (a number, a dict where a string
belongs, a whole message that is not a dict) is counted as its JSON text or walked, so
odd shapes cost roughly what they would cost on the wire and never raise. Messages are
only read, never changed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from condense.exceptions import InputError
from condense.message import TEXT_PARTS
from condense.tokens.media import (
    DEFAULT_MEDIA,
    LOW_DETAIL_IMAGE_TOKENS,
    Billing,
    billing,
    document_tokens,
    image_tokens,
)

__all__ = [
    "LOW_DETAIL_IMAGE_TOKENS",
    "MEDIA_PART_TOKENS",
    "METADATA_KEYS",
    "OPAQUE_KEYS",
    "REPLY_PRIMING_TOKENS",
    "TOKENS_PER_MESSAGE",
    "TOKENS_PER_NAME",
    "TOKENS_PER_TOOL_CALL",
    "Pieces",
    "message_list",
    "message_pieces",
    "stringify",
]

TOKENS_PER_MESSAGE = 3
TOKENS_PER_NAME = 1
TOKENS_PER_TOOL_CALL = 3
REPLY_PRIMING_TOKENS = 3
MEDIA_PART_TOKENS = 765
"""A media part condense cannot measure (audio, video): OpenAI's price of a 1024² image."""

OPAQUE_KEYS = frozenset({"signature", "encrypted_content", "thought_signature"})
METADATA_KEYS = frozenset({"id", "item_id", "type", "index", "status", "cache_control"})
_OPAQUE_DATA_OWNERS = frozenset({"redacted_thinking", "reasoning.encrypted"})
# What a string under a message key is, when it is not plain text (one dict lookup).
_STRING_ROLES = {
    "name": "name",
    **dict.fromkeys(OPAQUE_KEYS, "opaque"),
    **dict.fromkeys(METADATA_KEYS, "skip"),
}

Pieces = tuple[int, tuple[str, ...], int]
"""``(fixed tokens, texts, opaque characters)``; see :func:`message_pieces`."""

# Plain tuples rather than ``dict | Mapping``: isinstance() runs once per message and field.
_MAPPINGS = (dict, Mapping)
_SEQUENCES = (list, tuple)
_SCALARS = (bool, int, float)
_SOUND_PARTS = frozenset({"input_audio", "audio", "video", "video_url", "input_video"})
_CALL_KEYS = frozenset({"function", "id", "type", "index"})
_FLAT_CALL_KEYS = frozenset({"name", "arguments", "id", "type", "index"})
_MAX_DEPTH = 32  # deeper values (or cycles) are counted as their JSON text
_OPENAI = billing(DEFAULT_MEDIA)


def message_pieces(message: object, rules: Billing = _OPENAI) -> Pieces:
    """Return ``(fixed_tokens, texts, opaque_chars)`` for one message.

    ``fixed_tokens`` is the cost that does not depend on the tokenizer: framing, and
    images and documents as ``rules`` bills them; ``texts`` are the strings whose tokens
    are counted; ``opaque_chars`` is the length of the opaque base64 in the message.
    Together they are also the message's fingerprint: two messages with equal pieces
    have equal counts.
    """
    if type(message) is dict and len(message) == 2:
        # The common case, {"role": str, "content": str}, without the general walk.
        role, content = message.get("role"), message.get("content")
        if type(role) is str and type(content) is str:
            return TOKENS_PER_MESSAGE, (role, content), 0
    if not isinstance(message, _MAPPINGS):
        return TOKENS_PER_MESSAGE, (stringify(message),), 0
    texts: list[str] = []
    opaque: list[int] = []
    fixed = TOKENS_PER_MESSAGE
    for key, value in message.items():
        if type(value) is str:
            role = _STRING_ROLES.get(key)
            if role is None:
                texts.append(value)
            elif role == "name":
                texts.append(value)
                fixed += TOKENS_PER_NAME
            elif role == "opaque":
                opaque.append(len(value))
        elif value is None:
            continue
        elif key == "content":
            fixed += _content_pieces(value, texts, opaque, rules)
        elif key == "tool_calls":
            fixed += _tool_call_pieces(value, texts, opaque)
        elif key == "function_call":
            fixed += _tool_call_pieces([{"function": value}], texts, opaque)
        elif key == "name":
            texts.append(stringify(value))
            fixed += TOKENS_PER_NAME
        elif key not in METADATA_KEYS:
            _walk(value, texts, opaque, 0)
    return fixed, tuple(texts), sum(opaque)


def message_list(messages: object) -> Sequence[object]:
    """Return ``messages`` as a sequence, or raise ``InputError`` if it is not a list of them.

    Single messages inside the list may have any shape; only the container is checked, so
    that passing one message dict (or a string) instead of a list is a clear error. A
    loaded :class:`~condense.formats.Conversation` stands for its messages.
    """
    if isinstance(messages, _SEQUENCES):
        return messages
    from condense.formats.conversation import Conversation  # formats import this module

    if isinstance(messages, Conversation):
        return messages.messages
    if isinstance(messages, str | bytes | bytearray | dict | Mapping) or not isinstance(
        messages, Iterable
    ):
        raise InputError(
            f"messages must be a list of message dicts, not {type(messages).__name__}; "
            "wrap a single message in a list"
        )
    return list(messages)


def canonical_input(messages: Any) -> Any:
    """Native input (an Anthropic, Responses, Gemini … list or request body) as its
    canonical messages (``condense.formats.native``); anything else as it is. For the
    public counters: the engine counts canonical messages already."""
    from condense.formats.native import canonical_messages  # formats import this module

    return canonical_messages(messages)


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


def _walk(value: object, texts: list[str], opaque: list[int], depth: int) -> None:
    """Count a value of replay state or of an unknown key (see the module docstring)."""
    if isinstance(value, str):
        texts.append(value)
    elif value is None:
        return
    elif isinstance(value, _SCALARS) or depth >= _MAX_DEPTH:
        texts.append(stringify(value))
    elif isinstance(value, _MAPPINGS):
        owner = value.get("type")
        if type(owner) is not str:
            owner = None
        for key, item in value.items():
            if key in METADATA_KEYS:
                continue
            if isinstance(item, str) and (
                key in OPAQUE_KEYS or (key == "data" and owner in _OPAQUE_DATA_OWNERS)
            ):
                opaque.append(len(item))
            else:
                _walk(item, texts, opaque, depth + 1)
    elif isinstance(value, _SEQUENCES):
        for item in value:
            _walk(item, texts, opaque, depth + 1)
    else:
        texts.append(stringify(value))


def _content_pieces(content: object, texts: list[str], opaque: list[int], rules: Billing) -> int:
    if not isinstance(content, _SEQUENCES):
        texts.append(stringify(content))
        return 0
    fixed = 0
    for part in content:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, _MAPPINGS):
            fixed += _part_pieces(part, texts, opaque, rules)
        elif part is not None:
            texts.append(stringify(part))
    return fixed


def _part_pieces(
    part: Mapping[object, object], texts: list[str], opaque: list[int], rules: Billing
) -> int:
    kind = part.get("type")
    if type(kind) is not str:
        kind = None
    if kind in TEXT_PARTS or (kind is None and "text" in part):
        text = part.get("text")
        texts.append(stringify(part) if text is None else stringify(text))
        return 0
    if kind == "refusal":
        refusal = part.get("refusal")
        texts.append(stringify(part) if refusal is None else stringify(refusal))
        return 0
    if kind == "image_url" or kind == "input_image":
        image = part.get("image_url")
        if isinstance(image, _MAPPINGS):
            return image_tokens(image.get("url"), rules, detail=image.get("detail"))
        return image_tokens(image, rules, detail=part.get("detail"))
    if kind == "image":
        source = part.get("source")
        data = _base64_source(source)
        if data is None and isinstance(source, _MAPPINGS) and source.get("type") == "url":
            data = source.get("url")
        return image_tokens(data, rules)
    if kind == "document":
        return _document_pieces(part, texts, opaque, rules)
    if kind == "file" or kind == "input_file":
        file = part.get("file") if kind == "file" else part
        if not isinstance(file, _MAPPINGS):
            texts.append(stringify(file))
            return 0
        _walk(file.get("filename"), texts, opaque, 0)
        return _document(file.get("file_data"), texts, rules, None)
    if kind in _SOUND_PARTS:
        return MEDIA_PART_TOKENS
    _walk(part, texts, opaque, 0)
    return 0


def _document_pieces(
    part: Mapping[object, object], texts: list[str], opaque: list[int], rules: Billing
) -> int:
    """An Anthropic ``document`` block: its title and context, then its source."""
    for key in ("title", "context"):
        _walk(part.get(key), texts, opaque, 0)
    source = part.get("source")
    if not isinstance(source, _MAPPINGS):
        return rules.remote_document
    kind = source.get("type")
    if kind == "text":
        _walk(source.get("data"), texts, opaque, 0)
        return 0
    if kind == "content":
        return _content_pieces(source.get("content"), texts, opaque, rules)
    return _document(_base64_source(source), texts, rules, source.get("media_type"))


def _document(data: object, texts: list[str], rules: Billing, media_type: object) -> int:
    cost = document_tokens(data, rules, media_type=media_type)
    if isinstance(cost, str):
        texts.append(cost)
        return 0
    return cost


def _base64_source(source: object) -> str | None:
    if isinstance(source, _MAPPINGS) and source.get("type") == "base64":
        data = source.get("data")
        if isinstance(data, str):
            return data
    return None


def _tool_call_pieces(tool_calls: object, texts: list[str], opaque: list[int]) -> int:
    if not isinstance(tool_calls, _SEQUENCES):
        texts.append(stringify(tool_calls))
        return 0
    for call in tool_calls:
        if not isinstance(call, _MAPPINGS):
            if call is not None:
                texts.append(stringify(call))
            continue
        function = call.get("function")
        skip = _CALL_KEYS
        if function is None:
            function, skip = call, _FLAT_CALL_KEYS  # a flattened call: {"name", "arguments"}
        if isinstance(function, _MAPPINGS):
            name, arguments = function.get("name"), function.get("arguments")
            if name is not None:
                texts.append(name if type(name) is str else stringify(name))
            if arguments is not None:
                texts.append(arguments if type(arguments) is str else stringify(arguments))
        else:
            texts.append(stringify(function))
        if function is call or not call.keys() <= _CALL_KEYS:
            for key, value in call.items():  # extra state: a Gemini thought signature, …
                if key not in skip:
                    _walk(value, texts, opaque, 0)
    return TOKENS_PER_TOOL_CALL * len(tool_calls)
