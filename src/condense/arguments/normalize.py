"""``normalize_arguments``: turn any arguments value into a JSON-object string, keeping
everything it can (truncated JSON is closed, Python reprs are read, text that cannot be
recovered is kept whole under ``raw_arguments``) and saying what it changed."""

from __future__ import annotations

import ast
import json
import math
import re
import warnings

from condense.arguments._json import LENIENT, LOOSE, SURROGATE, encode, is_json_object_string


def normalize_arguments(value: object) -> tuple[str, str | None]:
    """Turn any ``arguments`` value into a string holding a JSON object.

    Returns the string and a short reason when something had to change, or
    ``(value, None)`` (the very same string) when ``value`` already was a JSON-object
    string by ``is_json_object_string``. Nothing is lost that can be kept:

    * a dict is serialized (non-ASCII kept as is); ``None``, ``""`` or blanks become
      ``"{}"``;
    * a JSON value that is not an object, or any other Python value, becomes
      ``{"value": ...}``; a JSON string holding a JSON object (encoded twice) is unwrapped;
    * text that is not valid JSON is recovered when possible: raw newlines inside strings,
      a Markdown code fence or trailing text around an object, a Python-repr dict (read
      with ``ast.literal_eval``, never ``eval``), or JSON cut off mid-way (the open string
      and brackets are closed, a dangling ``,`` or key is dropped);
    * anything else is kept verbatim as ``{"raw_arguments": text}``.

    ``NaN`` and ``Infinity`` become the strings ``"NaN"``, ``"Infinity"``. The result is
    deterministic and a fixed point: normalizing it again returns it with ``None``.
    """
    if isinstance(value, str):
        return (value, None) if is_json_object_string(value) else _normalize_text(value)
    if value is None:
        return "{}", "arguments were missing (None)"
    if isinstance(value, bytes | bytearray):
        text, _ = normalize_arguments(bytes(value).decode("utf-8", "backslashreplace"))
        return text, "arguments were bytes, not a string"
    if isinstance(value, dict):
        return _dump_object(value), "arguments were an object, not a string"
    kind = type(value).__name__
    return _dump_object({"value": value}), f'arguments were a {kind}; wrapped it under "value"'


def _normalize_text(text: str) -> tuple[str, str | None]:
    if not text.strip():
        return "{}", "arguments were empty"
    try:
        parsed = LOOSE.decode(text)
    except (ValueError, RecursionError):
        return _recover(text)
    if isinstance(parsed, dict):
        problem = "unpaired surrogates" if SURROGATE.search(text) else "NaN or Infinity"
        return _dump_object(parsed, text), f"arguments held {problem}; made them strict JSON"
    if isinstance(parsed, str) and is_json_object_string(parsed):
        return parsed, "arguments were JSON-encoded twice; decoded once"
    return (
        _dump_object({"value": parsed}, text),
        f'arguments were a JSON {_json_kind(parsed)}, not an object; wrapped it under "value"',
    )


def _recover(text: str) -> tuple[str, str]:
    for attempt in (_unescaped_controls, _strip_around, _python_literal, _close_truncated):
        found = attempt(text)
        if found is not None:
            parsed, reason = found
            if isinstance(parsed, dict):
                return _dump_object(parsed, text), reason
            return _dump_object({"value": parsed}, text), f'{reason}; wrapped it under "value"'
    return (
        _dump_object({"raw_arguments": text}),
        'arguments were not valid JSON; kept the text under "raw_arguments"',
    )


def _unescaped_controls(text: str) -> tuple[object, str] | None:
    try:
        return LENIENT.decode(text), "arguments had raw control characters inside strings"
    except (ValueError, RecursionError):
        return None


_FENCE = re.compile(r"[\s\ufeff]*(?:```[\w+-]*\s*)?")  # also a byte order mark


def _strip_around(text: str) -> tuple[object, str] | None:
    """An object after an optional Markdown fence or BOM, followed by other text."""
    fence = _FENCE.match(text)
    start = fence.end() if fence else 0
    if not text.startswith("{", start):
        return None
    try:
        parsed, end = LENIENT.raw_decode(text, start)
    except (ValueError, RecursionError):
        return None
    dropped = len("".join((text[:start] + text[end:]).split()))
    return parsed, f"dropped {dropped} stray characters around the JSON object"


def _python_literal(text: str) -> tuple[object, str] | None:
    """A Python-repr dict (single quotes, True/False/None), read without evaluating code."""
    if not text.lstrip().startswith("{"):
        return None
    try:
        with warnings.catch_warnings():  # invalid escapes like '\d' warn while parsing
            warnings.simplefilter("ignore")
            parsed = ast.literal_eval(text.strip())
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if not isinstance(parsed, dict):
        return None
    return parsed, "arguments were a Python dict repr, not JSON"


# Tokens of JSON that may have been cut off: a string reaching the end of the text, or a
# number or literal, possibly incomplete, are told apart from complete ones afterwards.
_TOKEN = re.compile(
    r"""
      [ \t\n\r]+
    | (?P<string>"[^"\\]*(?:\\.[^"\\]*)*")
    | (?P<open>"[^"\\]*(?:\\.[^"\\]*)*\\?\Z)
    | (?P<atom>[-+.\w]+)
    | (?P<punct>[][{}:,])
    """,
    re.VERBOSE | re.DOTALL,
)
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_PARTIAL_NUMBER = re.compile(r"-?[0-9]*\.?[0-9]*(?:[eE][+-]?[0-9]*)?")
_LITERALS = ("true", "false", "null")
_VALUE, _KEY, _COLON, _AFTER_VALUE, _END = range(5)


def _close_truncated(text: str) -> tuple[object, str] | None:
    """JSON cut off mid-way: close the open string and brackets, drop a dangling part.

    The text is scanned as JSON tokens; after each point where closing the open brackets
    would give valid JSON (after ``{``, ``[`` or a complete value) that point is kept. At
    the end, an open string value is closed in place; anything else after the last such
    point (a ``,``, a key, a ``:``, a number or a partial literal) is dropped.
    """
    stack: _Brackets = None  # the open brackets, innermost first
    expect, first = _VALUE, True  # `first`: right after an opening bracket
    good: tuple[int, _Brackets] | None = None  # the last closable point
    at = 0
    while at < len(text):
        token = _TOKEN.match(text, at)
        if token is None:
            return None
        at, kind, piece = token.end(), token.lastgroup, token.group()
        if kind is None:  # whitespace
            continue
        if kind == "open":  # a string running to the end of the text
            if expect == _KEY:
                break  # a key cut short: dropped
            if expect != _VALUE:
                return None
            return _finish(text[: token.start()] + _close_open_string(piece) + _closers(stack))
        if kind == "atom":
            if piece in _LITERALS or (_NUMBER.fullmatch(piece) and at < len(text)):
                kind = "value"  # a number at the very end may have lost digits: dropped
            elif (
                at == len(text)
                and expect == _VALUE
                and (
                    any(w.startswith(piece) for w in _LITERALS) or _PARTIAL_NUMBER.fullmatch(piece)
                )
            ):
                break  # a number or literal cut short: dropped
            else:
                return None
        if kind == "string" and expect == _KEY:
            expect, first = _COLON, False
            continue
        if kind in ("string", "value"):
            if expect != _VALUE:
                return None
            expect, first = (_AFTER_VALUE if stack else _END), False
        elif piece in "{[":
            if expect != _VALUE:
                return None
            stack = (piece, stack)
            expect, first = (_KEY if piece == "{" else _VALUE), True
        elif piece in "}]":
            closing = expect == _AFTER_VALUE or (first and expect in (_KEY, _VALUE))
            if stack is None or not closing or stack[0] != "{["["}]".index(piece)]:
                return None
            stack = stack[1]
            expect, first = (_AFTER_VALUE if stack else _END), False
        elif piece == ",":
            if expect != _AFTER_VALUE:
                return None
            expect = _KEY if stack is not None and stack[0] == "{" else _VALUE
            continue
        else:  # ":"
            if expect != _COLON:
                return None
            expect = _VALUE
            continue
        good = (at, stack)
    return None if good is None else _finish(text[: good[0]] + _closers(good[1]))


_Brackets = tuple[str, "_Brackets"] | None  # a linked stack: snapshots cost nothing


def _closers(stack: _Brackets) -> str:
    closers = []
    while stack is not None:
        closers.append("}" if stack[0] == "{" else "]")
        stack = stack[1]
    return "".join(closers)


def _close_open_string(piece: str) -> str:
    """Close a string token cut off at the end, dropping a half escape or surrogate pair."""
    for end in range(len(piece), max(0, len(piece) - 6), -1):
        candidate = piece[:end] + '"'
        try:
            decoded = LENIENT.decode(candidate)
        except ValueError:
            continue
        if decoded and "\ud800" <= decoded[-1] <= "\udbff":  # the low half was cut off
            return encode(decoded[:-1])
        return candidate
    return '""'  # unreachable: the bare opening quote always closes


def _finish(candidate: str) -> tuple[object, str] | None:
    try:
        parsed = LENIENT.decode(candidate)
    except (ValueError, RecursionError):
        return None
    return parsed, "arguments were truncated JSON; closed what was left open"


def _json_kind(value: object) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    return "null" if value is None else "number"


def _dump_object(obj: object, source: str | None = None) -> str:
    """Serialize as strict JSON (non-ASCII kept, unpaired surrogates escaped).

    Falls back to ``{"raw_arguments": source or repr}`` for what cannot be serialized
    (nesting deeper than the recursion limit, a cycle).
    """
    try:
        text = json.dumps(_jsonable(obj), ensure_ascii=False, allow_nan=False)
    except (RecursionError, ValueError):
        if source is None:
            try:
                source = repr(obj)
            except RecursionError:
                source = f"<unserializable {type(obj).__name__}>"
        text = json.dumps({"raw_arguments": source}, ensure_ascii=False)
    return SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _jsonable(value: object) -> object:
    """A copy of ``value`` made of what strict JSON can hold, deterministically."""
    if value is None or isinstance(value, str | bool):
        return value
    if isinstance(value, int):
        return value if value.bit_length() < 13_000 else hex(value)  # str() would raise
    if isinstance(value, float):
        return value if math.isfinite(value) else _float_name(value)
    if isinstance(value, dict):
        return {_json_key(key): _jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(item) for item in value]
    if isinstance(value, set | frozenset):
        items = [_jsonable(item) for item in value]
        return sorted(items, key=lambda item: json.dumps(item, ensure_ascii=False))
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", "backslashreplace")
    return str(value)


def _json_key(key: object) -> str:
    """An object key the way ``json.dumps`` writes it; other types by ``str``."""
    if isinstance(key, str):
        return key
    if isinstance(key, bool) or key is None:
        return json.dumps(key)
    if isinstance(key, float):
        return repr(key) if math.isfinite(key) else _float_name(key)
    return str(_jsonable(key))


def _float_name(value: float) -> str:
    return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
