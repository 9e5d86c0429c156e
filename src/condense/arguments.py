"""Tool-call ``arguments``: shrink them without breaking the JSON, and make them valid.

OpenAI-style tool calls carry their arguments as a *string holding a JSON object*. Two
things go wrong with that string in long agent histories:

* A compactor shortens it by slicing the text. The result is invalid JSON, and strict
  providers reject the whole history with a 400 on every later turn.
  ``shrink_arguments`` shortens the long string values *inside* the JSON instead, so the
  result always parses and keeps its shape.
* It arrives as a dict, as ``None``, as a JSON array, as truncated or Python-repr text.
  ``normalize_arguments`` turns any of these into a JSON-object string, keeps everything
  it can, and says what it changed.

A cut string keeps its head (about two thirds of the kept length) and its tail, and
``CUT_MARKER`` in the middle says how many characters were removed::

    "def main():\\n    …[18234 chars cut]…\\nmain()\\n"

The count is in Python characters (code points) of the decoded string. A cut never splits
a grapheme cluster (a ZWJ emoji sequence, a letter and its combining marks, a flag) or a
surrogate pair.
"""

from __future__ import annotations

import ast
import json
import math
import re
import warnings
from bisect import bisect_right
from itertools import accumulate
from json.decoder import scanstring  # type: ignore[attr-defined]  # not in typeshed
from json.encoder import encode_basestring

import regex  # type: ignore[import-untyped, unused-ignore]

from condense.exceptions import InputError

__all__ = ["CUT_MARKER", "is_json_object_string", "normalize_arguments", "shrink_arguments"]

CUT_MARKER = "…[{removed} chars cut]…"
"""Put where a string value was cut; ``removed`` counts the characters taken out."""

_MARKER_CHARS = len(CUT_MARKER.format(removed=""))  # without the digits
_MIN_CUT = 2 + _MARKER_CHARS + 1  # the shortest cut string: quotes, marker, one digit

# A JSON string token. In valid JSON every '"' outside a string opens one, so splitting
# on this pattern separates string tokens from everything else.
_STRING_TOKEN = re.compile(r'("[^"\\]*(?:\\.[^"\\]*)*")', re.DOTALL)
_JSON_WHITESPACE = re.compile(r"[ \t\n\r]")
_DROP_WHITESPACE = str.maketrans("", "", " \t\n\r")
_ESCAPED = re.compile(r'[\x00-\x1f"\\\ud800-\udfff]')  # chars a JSON string escapes
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_TWO_CHAR_ESCAPES = frozenset('"\\\b\f\n\r\t')
_SIX_CHAR_ESCAPES = re.compile(r"[\x00-\x07\x0b\x0e-\x1f\ud800-\udfff]")

_GRAPHEME = regex.compile(r"\X")
# Searched backwards: the last position where a grapheme boundary is certain from the two
# characters around it alone (no Unicode rule joins an Other/Control/LF character to a
# following character that is not Extend, ZWJ or SpacingMark), and which does not split
# a surrogate pair. Grapheme segmentation restarted there is exact.
_SAFE_BREAK = regex.compile(
    r"(?r)(?<=[\p{GCB=Other}\p{GCB=Control}\p{GCB=LF}])(?<![\ud800-\udbff])"
    r"(?=[^\p{GCB=Extend}\p{GCB=ZWJ}\p{GCB=SpacingMark}])"
)


def is_json_object_string(value: object) -> bool:
    """Whether ``value`` is a ``str`` holding one JSON object that strict parsers accept.

    Stricter than ``json.loads``: ``NaN``/``Infinity`` and unpaired surrogate characters
    (which cannot be encoded as UTF-8) make it ``False``. Whitespace around the object
    is fine.
    """
    if not isinstance(value, str) or _SURROGATE.search(value):
        return False
    try:
        return isinstance(_STRICT.decode(value), dict)
    except (ValueError, RecursionError):
        return False


# -- shrinking ------------------------------------------------------------------------


def shrink_arguments(arguments: str, max_chars: int) -> str:
    """Shorten a JSON ``arguments`` string to at most ``max_chars`` characters, keeping it JSON.

    Only string *values* are cut, longest first: every long value is capped at a common
    length chosen so the whole fits (water-filling), keeping its head and tail around
    ``CUT_MARKER``. Keys, numbers, booleans, nulls and short strings stay exactly as they
    were, as do array lengths and key order, so the result parses to the same structure.
    Before anything is cut, the lossless savings are taken: whitespace between tokens is
    dropped and ``\\uXXXX`` escapes of printable characters are written as the characters.

    ``arguments`` is returned as is (the same object) when it already fits, when it is
    not valid JSON (``normalize_arguments`` is where that is fixed) or when nothing in it
    can be shortened. When even the shortest form of every string is too long, that
    shortest form is returned. Any top-level JSON value works, not only objects.
    """
    if max_chars < 0:
        raise InputError(f"max_chars must be 0 or more, got {max_chars}")
    if len(arguments) <= max_chars:
        return arguments
    try:
        _VALID.decode(arguments)
    except (ValueError, RecursionError):
        return arguments
    parts = _split_strings(arguments)
    _drop_whitespace(parts)
    decoded = _unescape_printables(parts)
    values = _cuttable_values(parts, decoded)
    total = sum(map(len, parts))
    if total > max_chars and values:
        fixed = total - sum(size for _, _, size, _ in values)
        targets = _water_fill([(size, floor) for _, _, size, floor in values], max_chars - fixed)
        for (i, text, size, _), target in zip(values, targets, strict=True):
            if target < size:
                parts[i] = _cut(text, target)
    result = "".join(parts)
    return arguments if result == arguments else result


def _split_strings(text: str) -> list[str]:
    """Split valid JSON into text between strings (even indexes) and string tokens (odd)."""
    if text.count('"') * 32 > len(text):  # many short strings: one regex pass is faster
        return _STRING_TOKEN.split(text)
    parts: list[str] = []  # few strings, maybe long ones: skip each in one C call
    start = 0
    while (quote := text.find('"', start)) >= 0:
        end = scanstring(text, quote + 1)[1]
        parts += (text[start:quote], text[quote:end])
        start = end
    parts.append(text[start:])
    return parts


def _drop_whitespace(parts: list[str]) -> None:
    """Remove the whitespace between tokens (never significant in valid JSON)."""
    between = "\x00".join(parts[0::2])  # a raw NUL cannot occur outside JSON strings
    if _JSON_WHITESPACE.search(between):
        parts[0::2] = between.translate(_DROP_WHITESPACE).split("\x00")


def _unescape_printables(parts: list[str]) -> dict[int, str]:
    """Rewrite string tokens escaped more than needed (``ensure_ascii`` output) shorter.

    Returns the decoded text of the tokens it decoded, by index in ``parts``.
    """
    decoded = {}
    for i in [i for i in range(1, len(parts), 2) if "\\" in parts[i]]:
        token = parts[i]
        if "\\u" in token or "\\/" in token:
            decoded[i] = text = json.loads(token)
            compact = _encode(text)
            if len(compact) < len(token):
                parts[i] = compact
    return decoded


def _cuttable_values(parts: list[str], decoded: dict[int, str]) -> list[tuple[int, str, int, int]]:
    """The string values that a cut would shorten, as ``(index, text, length, floor)``.

    ``floor`` is the length of the shortest cut: quotes and a marker, no text.
    """
    found = []
    long_tokens = [i for i in range(1, len(parts), 2) if len(parts[i]) > _MIN_CUT]
    for i in long_tokens:
        token = parts[i]
        if parts[i + 1].startswith(":"):  # a key
            continue
        text = decoded.get(i) or (json.loads(token) if "\\" in token else token[1:-1])
        floor = 2 + _MARKER_CHARS + len(str(len(text)))
        if len(token) > floor:
            found.append((i, text, len(token), floor))
    return found


def _water_fill(strings: list[tuple[int, int]], room: int) -> list[int]:
    """Target lengths for strings given as ``(length, shortest cut length)``.

    Finds the largest cap such that every string longer than the cap shrinks to
    ``max(cap, shortest)`` and the total stays within ``room``; leftover characters go
    one each to the first strings sitting exactly at the cap. When even the shortest
    forms do not fit, every string gets its shortest form.
    """
    groups: dict[int, list[int]] = {}
    for size, floor in strings:
        groups.setdefault(floor, []).append(size)
    tables = []
    for floor, sizes in groups.items():
        sizes.sort()
        tables.append((floor, sizes, [0, *accumulate(sizes)]))

    def total(cap: int) -> int:
        sum_ = 0
        for floor, sizes, prefix in tables:
            kept = bisect_right(sizes, cap)
            sum_ += prefix[kept] + (len(sizes) - kept) * max(cap, floor)
        return sum_

    low, high = 0, max(size for size, _ in strings)
    if total(low) > room:
        return [floor for _, floor in strings]
    while high - low > 1:  # total(low) fits, total(high) does not
        middle = (low + high) // 2
        low, high = (middle, high) if total(middle) <= room else (low, middle)
    spare = room - total(low)
    targets = []
    for size, floor in strings:
        target = size if size <= low else max(low, floor)
        if spare and low < size and floor <= low:
            target += 1
            spare -= 1
        targets.append(target)
    return targets


def _cut(text: str, target: int) -> str:
    """Encode ``text`` as a JSON string token of at most ``target`` characters.

    ``target`` must leave room for the quotes and the marker. The head gets about two
    thirds of the room, the tail what the head left; both end on grapheme boundaries.
    """
    n = len(text)
    if n + 2 <= target and len(whole := _encode(text)) <= target:
        return whole
    simple = text.isascii()
    plain = simple and not _ESCAPED.search(text)  # one character each, boundaries anywhere
    rare = not simple and bool(_SIX_CHAR_ESCAPES.search(text))  # controls or surrogates

    def attempt(digits: int) -> tuple[str, int]:
        room = target - 2 - _MARKER_CHARS - digits
        if plain or not room:
            head_end, tail_start = room - room // 3, n - room // 3
            head, tail = text[:head_end], text[tail_start:]
        else:
            head_end = _floor_boundary(text, _prefix_length(text, room - room // 3, rare), simple)
            head = _encode_body(text[:head_end], rare)
            tail_start = _suffix_start(text, room - len(head), rare)
            tail_start = _ceil_boundary(text, tail_start, simple)
            tail = _encode_body(text[tail_start:], rare)
        removed = tail_start - head_end
        return f'"{head}{CUT_MARKER.format(removed=removed)}{tail}"', removed

    # The count's width depends on the cut and the cut on the width: start from the width
    # if every kept character took one, then settle (a shorter count leaves more room).
    digits = len(str(max(1, n - (target - 2 - _MARKER_CHARS - len(str(n))))))
    best, tried = "", set()
    while digits not in tried:
        tried.add(digits)
        piece, removed = attempt(digits)
        if len(piece) <= target and len(piece) > len(best):
            best = piece
        digits = len(str(removed))
    return best or attempt(len(str(n)))[0]  # the widest count always fits


def _encode(text: str) -> str:
    """``text`` as a JSON string token: non-ASCII kept, unpaired surrogates escaped."""
    return f'"{_encode_body(text, True)}"'


def _encode_body(text: str, rare: bool) -> str:
    """The inside of ``_encode(text)``; ``rare``: whether ``text`` may hold surrogates."""
    body = encode_basestring(text)[1:-1]  # what json.dumps(ensure_ascii=False) writes
    if rare and _SURROGATE.search(body):
        body = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", body)
    return body


def _escaped_length(char: str) -> int:
    return 2 if char in _TWO_CHAR_ESCAPES else 6


def _prefix_length(text: str, room: int, rare: bool) -> int:
    """The longest prefix of ``text`` whose JSON encoding fits in ``room`` characters.

    ``rare``: whether ``text`` may need six-character escapes (controls, surrogates).
    """
    if not rare:  # count in the encoded text
        body = encode_basestring(text[:room])[1:-1]  # each character takes one or more
        if len(body) > room:
            body = body[: _escape_start(body, room)]
        return _decoded_size(body)
    used = start = 0
    for match in _ESCAPED.finditer(text, 0, min(len(text), room)):
        at = match.start()
        if used + at - start >= room:
            break
        used += at - start
        cost = _escaped_length(match.group())
        if used + cost > room:
            return at
        used += cost
        start = at + 1
    return min(len(text), start + room - used)


def _suffix_start(text: str, room: int, rare: bool) -> int:
    """Where the longest suffix of ``text`` whose encoding fits in ``room`` starts."""
    if not rare:
        body = encode_basestring(text[max(0, len(text) - room) :])[1:-1]
        if len(body) > room:
            start = len(body) - room
            body = body[start if _escape_start(body, start) == start else start + 1 :]
        return len(text) - _decoded_size(body)
    used, end = 0, len(text)
    for match in reversed(list(_ESCAPED.finditer(text, max(0, end - room)))):
        at = match.start()
        if used + end - at - 1 >= room:
            break
        used += end - at - 1
        cost = _escaped_length(match.group())
        if used + cost > room:
            return at + 1
        used += cost
        end = at
    return max(0, end - (room - used))


def _escape_start(body: str, at: int) -> int:
    """``at``, or ``at - 1`` when that starts a two-character escape ``at`` would split."""
    start = at
    while start and body[start - 1] == "\\":
        start -= 1
    return at - 1 if (at - start) % 2 else at  # a run of backslashes pairs up from its start


def _decoded_size(body: str) -> int:
    """How many characters an encoded body with only two-character escapes decodes to."""
    return len(body) - body.count("\\") + body.count("\\\\")


def _floor_boundary(text: str, at: int, simple: bool) -> int:
    """The last grapheme boundary of ``text`` at or before ``at``."""
    if at <= 0 or at >= len(text):
        return at
    if simple:  # ASCII: a boundary everywhere except inside CR LF
        return at - 1 if text[at - 1 : at + 1] == "\r\n" else at
    safe = _SAFE_BREAK.search(text, 0, at + 1)
    last = safe.start() if safe else 0
    if last < at:
        for cluster in _GRAPHEME.finditer(text, last):
            if cluster.end() > at:
                break
            last = cluster.end()
    if _splits_pair(text, last):
        last -= 1  # \X leaves surrogate code points apart; keep a pair together
    return int(last)


def _ceil_boundary(text: str, at: int, simple: bool) -> int:
    """The first grapheme boundary of ``text`` at or after ``at``."""
    floor = _floor_boundary(text, at, simple)
    if floor == at:
        return at
    end = int(_GRAPHEME.match(text, floor).end())
    return end + 1 if _splits_pair(text, end) else end


def _splits_pair(text: str, at: int) -> bool:
    """Whether position ``at`` falls between a high and a low surrogate."""
    return (
        0 < at < len(text)
        and "\ud800" <= text[at - 1] <= "\udbff"
        and "\udc00" <= text[at] <= "\udfff"
    )


# -- normalizing ----------------------------------------------------------------------


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
        parsed = _LOOSE.decode(text)
    except (ValueError, RecursionError):
        return _recover(text)
    if isinstance(parsed, dict):
        problem = "unpaired surrogates" if _SURROGATE.search(text) else "NaN or Infinity"
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
        return _LENIENT.decode(text), "arguments had raw control characters inside strings"
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
        parsed, end = _LENIENT.raw_decode(text, start)
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
            decoded = _LENIENT.decode(candidate)
        except ValueError:
            continue
        if decoded and "\ud800" <= decoded[-1] <= "\udbff":  # the low half was cut off
            return _encode(decoded[:-1])
        return candidate
    return '""'  # unreachable: the bare opening quote always closes


def _finish(candidate: str) -> tuple[object, str] | None:
    try:
        parsed = _LENIENT.decode(candidate)
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
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


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


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not strict JSON")


# Parsers: strict (what providers accept; huge integers allowed), valid and loose (what
# json.loads accepts), lenient (also raw control characters inside strings). NaN and Infinity read
# by the last two become strings so they can be written back as strict JSON.
_STRICT = json.JSONDecoder(parse_constant=_reject_constant, parse_int=str, parse_float=str)
_VALID = json.JSONDecoder(parse_int=str, parse_float=str)  # shrink only checks validity
_LOOSE = json.JSONDecoder(parse_constant=str)
_LENIENT = json.JSONDecoder(parse_constant=str, strict=False)
