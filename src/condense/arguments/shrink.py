"""``shrink_arguments``: shorten the long string values inside a JSON arguments string,
never the JSON itself, so the result always parses and keeps its shape.

Short strings are what an agent needs to follow its own history (a file path, a trace
id, a branch name, a URL), so strings of up to ``KEEP_CHARS`` characters are never cut;
long free text is, longest first. When the target cannot be met without cutting short
strings, the result is the smallest form that keeps them, above the target, and
``ShrunkArguments.fits`` says so.
"""

from __future__ import annotations

import functools
import json
import re
from bisect import bisect_right
from dataclasses import dataclass
from itertools import accumulate
from json.decoder import scanstring  # type: ignore[attr-defined]  # not in typeshed
from json.encoder import encode_basestring
from typing import Any

from condense.arguments._json import VALID, encode, encode_body
from condense.exceptions import InputError

CUT_MARKER = "…[{removed} chars cut]…"
"""Put where a string value was cut; ``removed`` counts the characters taken out."""

KEEP_CHARS = 40
"""String values of at most this many characters are never cut (paths, ids, names)."""

_MARKER_CHARS = len(CUT_MARKER.format(removed=""))  # without the digits
_MIN_CUT = 2 + _MARKER_CHARS + 1  # the shortest cut string: quotes, marker, one digit

# A JSON string token. In valid JSON every '"' outside a string opens one, so splitting
# on this pattern separates string tokens from everything else.
_STRING_TOKEN = re.compile(r'("[^"\\]*(?:\\.[^"\\]*)*")', re.DOTALL)
_JSON_WHITESPACE = re.compile(r"[ \t\n\r]")
_DROP_WHITESPACE = str.maketrans("", "", " \t\n\r")
_ESCAPED = re.compile(r'[\x00-\x1f"\\\ud800-\udfff]')  # chars a JSON string escapes
_TWO_CHAR_ESCAPES = frozenset('"\\\b\f\n\r\t')
_SIX_CHAR_ESCAPES = re.compile(r"[\x00-\x07\x0b\x0e-\x1f\ud800-\udfff]")


@functools.cache
def _graphemes() -> tuple[Any, Any]:
    """The grapheme pattern (``\\X``) and the safe-break one, compiled on first use (the
    ``regex`` module takes about 13 ms to import, and only non-ASCII cuts need it).

    The safe break is searched backwards: the last position where a grapheme boundary is
    certain from the two characters around it alone (no Unicode rule joins an
    Other/Control/LF character to a following character that is not Extend, ZWJ or
    SpacingMark), and which does not split a surrogate pair. Grapheme segmentation
    restarted there is exact."""
    import regex  # type: ignore[import-untyped, unused-ignore]

    grapheme = regex.compile(r"\X")
    safe_break = regex.compile(
        r"(?r)(?<=[\p{GCB=Other}\p{GCB=Control}\p{GCB=LF}])(?<![\ud800-\udbff])"
        r"(?=[^\p{GCB=Extend}\p{GCB=ZWJ}\p{GCB=SpacingMark}])"
    )
    return grapheme, safe_break


@dataclass(frozen=True, kw_only=True)
class ShrunkArguments:
    """What ``shrink_arguments_report`` made of one arguments string.

    ``text`` is the result; ``fits`` whether it is within ``max_chars``. When ``fits``
    is False the target could not be met without cutting a string of at most
    ``KEEP_CHARS`` characters (or a key, number or the structure), and ``text`` is the
    best effort: every longer string cut to its bare marker. ``strings_cut`` counts the
    string values that were cut.
    """

    text: str
    fits: bool
    strings_cut: int


def shrink_arguments(arguments: str, max_chars: int) -> str:
    """Shorten a JSON ``arguments`` string to at most ``max_chars`` characters, keeping it JSON.

    Only string *values* longer than ``KEEP_CHARS`` characters are cut, longest first:
    every long value is capped at a common length chosen so the whole fits
    (water-filling), keeping its head and tail around ``CUT_MARKER``. Keys, numbers,
    booleans, nulls and short strings stay exactly as they were, as do array lengths
    and key order, so the result parses to the same structure and never grows. Before
    anything is cut, the lossless savings are taken: whitespace between tokens is
    dropped and ``\\uXXXX`` escapes of printable characters are written as the characters.

    ``arguments`` is returned as is (the same object) when it already fits, when it is
    not valid JSON (``normalize_arguments`` is where that is fixed) or when nothing in it
    can be shortened. When the target cannot be met, the shortest form that keeps the
    short strings is returned, above ``max_chars``; ``shrink_arguments_report`` says
    when that happened. Any top-level JSON value works, not only objects.
    """
    return shrink_arguments_report(arguments, max_chars).text


def shrink_arguments_report(arguments: str, max_chars: int) -> ShrunkArguments:
    """``shrink_arguments``, saying whether the result fits and how many strings were cut."""
    if max_chars < 0:
        raise InputError(f"max_chars must be 0 or more, got {max_chars}")
    if len(arguments) <= max_chars:
        return ShrunkArguments(text=arguments, fits=True, strings_cut=0)
    try:
        VALID.decode(arguments)
    except (ValueError, RecursionError):
        return ShrunkArguments(text=arguments, fits=False, strings_cut=0)
    parts = _split_strings(arguments)
    _drop_whitespace(parts)
    decoded = _unescape_printables(parts)
    values = _cuttable_values(parts, decoded)
    total = sum(map(len, parts))
    cut = 0
    if total > max_chars and values:
        fixed = total - sum(size for _, _, size, _ in values)
        targets = _water_fill([(size, floor) for _, _, size, floor in values], max_chars - fixed)
        for (i, text, size, _), target in zip(values, targets, strict=True):
            if target < size:
                parts[i] = _cut(text, target)
                cut += 1
    result = "".join(parts)
    if result == arguments:
        result = arguments
    return ShrunkArguments(text=result, fits=len(result) <= max_chars, strings_cut=cut)


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
            compact = encode(text)
            if len(compact) < len(token):
                parts[i] = compact
    return decoded


def _cuttable_values(parts: list[str], decoded: dict[int, str]) -> list[tuple[int, str, int, int]]:
    """The string values that a cut would shorten, as ``(index, text, length, floor)``.

    ``floor`` is the length of the shortest cut: quotes and a marker, no text. Keys and
    values of at most ``KEEP_CHARS`` characters are never cut.
    """
    found = []
    shortest = max(_MIN_CUT, KEEP_CHARS + 2)  # a token's text is shorter than the token
    long_tokens = [i for i in range(1, len(parts), 2) if len(parts[i]) > shortest]
    for i in long_tokens:
        token = parts[i]
        if parts[i + 1].startswith(":"):  # a key
            continue
        text = decoded.get(i) or (json.loads(token) if "\\" in token else token[1:-1])
        if len(text) <= KEEP_CHARS:
            continue
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
    if n + 2 <= target and len(whole := encode(text)) <= target:
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
            head = encode_body(text[:head_end], rare)
            tail_start = _suffix_start(text, room - len(head), rare)
            tail_start = _ceil_boundary(text, tail_start, simple)
            tail = encode_body(text[tail_start:], rare)
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
    grapheme, safe_break = _graphemes()
    safe = safe_break.search(text, 0, at + 1)
    last = safe.start() if safe else 0
    if last < at:
        for cluster in grapheme.finditer(text, last):
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
    end = int(_graphemes()[0].match(text, floor).end())
    return end + 1 if _splits_pair(text, end) else end


def _splits_pair(text: str, at: int) -> bool:
    """Whether position ``at`` falls between a high and a low surrogate."""
    return (
        0 < at < len(text)
        and "\ud800" <= text[at - 1] <= "\udbff"
        and "\udc00" <= text[at] <= "\udfff"
    )
