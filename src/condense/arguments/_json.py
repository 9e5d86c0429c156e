"""The JSON parsers condense's argument handling shares, and the strict object check."""

from __future__ import annotations

import json
import re
from json.encoder import encode_basestring

__all__ = ["is_json_object_string"]

SURROGATE = re.compile(r"[\ud800-\udfff]")


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not strict JSON")


# Parsers: strict (what providers accept; huge integers allowed), valid and loose (what
# json.loads accepts), lenient (also raw control characters inside strings). NaN and Infinity read
# by the last two become strings so they can be written back as strict JSON.
STRICT = json.JSONDecoder(parse_constant=_reject_constant, parse_int=str, parse_float=str)
VALID = json.JSONDecoder(parse_int=str, parse_float=str)  # shrink only checks validity
LOOSE = json.JSONDecoder(parse_constant=str)
LENIENT = json.JSONDecoder(parse_constant=str, strict=False)


def is_json_object_string(value: object) -> bool:
    """Whether ``value`` is a ``str`` holding one JSON object that strict parsers accept.

    Stricter than ``json.loads``: ``NaN``/``Infinity`` and unpaired surrogate characters
    (which cannot be encoded as UTF-8) make it ``False``. Whitespace around the object
    is fine.
    """
    if not isinstance(value, str) or SURROGATE.search(value):
        return False
    try:
        return isinstance(STRICT.decode(value), dict)
    except (ValueError, RecursionError):
        return False


def encode(text: str) -> str:
    """``text`` as a JSON string token: non-ASCII kept, unpaired surrogates escaped."""
    return f'"{encode_body(text, True)}"'


def encode_body(text: str, rare: bool) -> str:
    """The inside of ``encode(text)``; ``rare``: whether ``text`` may hold surrogates."""
    body = encode_basestring(text)[1:-1]  # what json.dumps(ensure_ascii=False) writes
    if rare and SURROGATE.search(body):
        body = SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", body)
    return body
