"""The JSON parsers condense's argument handling shares, and the strict object check."""

from __future__ import annotations

import json
import re
from json.encoder import encode_basestring

__all__ = ["INVALID_JSON", "NOT_OBJECT", "arguments_problem", "is_json_object_string"]

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


INVALID_JSON = "arguments_invalid_json"
NOT_OBJECT = "arguments_not_object"


def arguments_problem(text: str) -> str | None:
    """What is wrong with an arguments string, or ``None`` when it is valid.

    This is condense's one definition of valid tool-call arguments, shared by
    ``validate``, ``repair`` and ``normalize_arguments``: one JSON object, as strict
    parsers (serde_json, Go's encoding/json, JSON Schema validators) accept it, with only
    JSON whitespace around it. ``INVALID_JSON`` for text that is not strict JSON:

    * ``NaN``, ``Infinity`` or ``-Infinity`` anywhere (``json.loads`` lets them through);
    * an unpaired surrogate character in the text, which cannot be encoded as UTF-8 and
      so cannot be sent (a ``\\udXXX`` escape inside a string is valid JSON text);
    * two values one after the other (``{}{}``), or anything else after the object;
    * raw control characters inside strings, or nesting too deep to parse.

    ``NOT_OBJECT`` for strict JSON whose value is not an object (``[]``, ``"{}"``, ``1``).
    Integers of any size are fine.
    """
    if SURROGATE.search(text):
        return INVALID_JSON
    try:
        value = STRICT.decode(text)
    except (ValueError, RecursionError):
        return INVALID_JSON
    return None if isinstance(value, dict) else NOT_OBJECT


def is_json_object_string(value: object) -> bool:
    """Whether ``value`` is a ``str`` holding valid arguments by ``arguments_problem``."""
    return isinstance(value, str) and arguments_problem(value) is None


def encode(text: str) -> str:
    """``text`` as a JSON string token: non-ASCII kept, unpaired surrogates escaped."""
    return f'"{encode_body(text, True)}"'


def encode_body(text: str, rare: bool) -> str:
    """The inside of ``encode(text)``; ``rare``: whether ``text`` may hold surrogates."""
    body = encode_basestring(text)[1:-1]  # what json.dumps(ensure_ascii=False) writes
    if rare and SURROGATE.search(body):
        body = SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", body)
    return body
