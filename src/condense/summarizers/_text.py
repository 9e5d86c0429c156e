"""Small text helpers shared by the summarizers: read message content, clip, fit, estimate.

Everything here is bounded: callers pass a character limit and nothing reads further into
a message than it needs, so a span of thousands of long messages stays cheap.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable
from typing import Any

from condense.message import is_text_part
from condense.tokens import count_text, estimate_text

# A message with more content parts than this is read only this far.
_MAX_PARTS = 1_000
# fit_exact renders a text this many times at most before the last resort.
_RENDERS = 8
# condense() looks at this many characters of a text at most (head and tail).
_CONDENSE_SCAN = 8_000
_SENTENCE = re.compile(r"(?<=[.!?;])\s+(?=\S)|\n+")
# The words a reader cannot guess: numbers, identifiers, paths, error codes, code spans.
_FACT = re.compile(
    r"\d[\d,.:%]*|[\w-]+[/_.#][\w./#-]+|\b[A-Z]{2,}[\w-]*\d\w*|`[^`]{1,80}`|\b[a-z]+[A-Z]\w*"
)
# A sentence that asks for something: a request word, a question, an imperative.
_HAS_ASK = re.compile(
    r"(?i)\b(?:please|must|should|don't|do not|never|always|keep|make sure|need|only"
    r"|can you|could you|would you)\b|\?$"
    r"|^(?:fix|add|make|change|update|remove|implement|write|run|use|also|commit|check)\b"
)


_FORGETS: list[Callable[[], None]] = []


def remember(clear: Callable[[], None]) -> None:
    """Register how to clear one of the summarizers' memos (an ``lru_cache``'s
    ``cache_clear``): :func:`forget` clears them all."""
    _FORGETS.append(clear)


def forget() -> None:
    """Clear what the summarizers remember between calls (sentences valued, calls read,
    lines scored): the next call is as cold as a new process's, as a benchmark needs."""
    for clear in _FORGETS:
        clear()


def estimate_tokens(text: str) -> int:
    """Estimate the token count of ``text``: every size decision here goes through this."""
    return estimate_text(text)


def tokens_to_chars(tokens: int) -> int:
    """A first guess at the characters that hold ``tokens`` (four per token, as in English)."""
    return max(0, tokens) * 4


def fit_tokens(render: Callable[[int], str], target_tokens: int) -> str:
    """``render(max_chars)`` with ``max_chars`` lowered until the estimate fits the target.

    ``render`` must return at most ``max_chars`` characters (and ``""`` for 0). Text that
    is denser than four characters per token (code, paths, CJK) is shrunk in proportion,
    so this converges in a few rounds.
    """
    max_chars = tokens_to_chars(target_tokens)
    text = render(max_chars)
    while max_chars > 0 and (tokens := estimate_tokens(text)) > target_tokens:
        max_chars = max(0, min(max_chars - 1, len(text) * target_tokens // tokens * 19 // 20))
        text = render(max_chars)
    return text


def fit_exact(render: Callable[[int], str], target_tokens: int) -> str:
    """The fullest ``render(max_chars)`` that fits ``target_tokens`` by the real tokenizer.

    The text must count at most ``target_tokens`` minus a small margin (1/32) with
    :func:`condense.tokens.count_text` (``o200k_base``, what ``compress`` measures); the
    estimate is not asked to agree (it runs up to 9 % above the count on real sessions'
    summaries, and bounding by it too left that much room unused and took up to six
    renders where two do). ``render`` must return at most ``max_chars``
    characters, ``""`` for 0, and more text (as a rule) for more characters. A few
    renders suffice: each one rescales ``max_chars`` by how full the last text was (a
    text over the target: its own length, whatever room it had), and when that
    overshoots, the room is halved between what fitted and what did not; a render that
    writes no more with more room ends it.
    """
    limit = target_tokens - target_tokens // 32

    def load(text: str) -> float:
        """How full ``text`` is: at most 1 when it fits."""
        return count_text(text) / limit

    max_chars = tokens_to_chars(target_tokens)
    best = ""
    fits, over = 0, 0  # the largest room known to fit, the smallest known not to (0: none)
    for _ in range(_RENDERS):
        text = render(max_chars)
        if not text:
            return best
        full = load(text)
        if full <= 1:
            if len(text) <= len(best):  # more room wrote no more: everything there is fits
                return best
            best = max(best, text, key=len)
            fits = max(fits, max_chars)
            # Close enough, or far from the room given (everything there is fits).
            if full >= 0.95 or len(text) * 2 < max_chars:
                return best
            step = max(max_chars + 1, int(max_chars / full))
        else:
            # scaled from what it wrote, not from the room it had: a layout that uses only
            # part of a large room (every section at its share) writes the same text for
            # any room above its length, so shrinking the room by a few percent at a time
            # renders the same text again and again
            written = min(max_chars, len(text))
            over = written if not over else min(over, written)
            step = min(written - 1, int(written / full * 0.97))
        if over and not fits < step < over:
            step = (fits + over) // 2
        if over and over - fits <= max(4, over // 64):
            break
        max_chars = step
    while not best and max_chars > 0:
        text = render(max_chars)
        if load(text) <= 1:
            return text
        max_chars = max_chars * 3 // 4
    return best


def condense(text: str, limit: int, *, favor_end: bool = False) -> str:
    """``text`` in at most ``limit`` characters, keeping its most telling sentences.

    A text that fits comes back as is. Otherwise whole sentences are kept by value per
    character — the first (and, with ``favor_end``, the last few), those with numbers,
    identifiers, paths or codes, those that ask for something (please, must, keep…) — in
    their original order, with ``…`` where sentences were left out. A sentence longer
    than ``limit`` is clipped.
    """
    text = text.strip()
    if len(text) <= limit:
        return text
    pieces, values = _sentences(text, favor_end)
    kept: list[int] = []
    room = limit
    for _, index in values:
        cost = len(pieces[index]) + 3  # the separator it may bring: " … "
        if cost <= room:
            kept.append(index)
            room -= cost
    if not kept:  # not even one sentence fits: the best one, clipped
        return clip(pieces[values[0][1]] if pieces else one_line(text), limit)
    kept.sort()
    out = pieces[kept[0]]
    for before, index in itertools.pairwise(kept):
        out += (" " if index == before + 1 else " … ") + pieces[index]
    return out


@functools.lru_cache(maxsize=1_024)
def _sentences(text: str, favor_end: bool) -> tuple[list[str], list[tuple[float, int]]]:
    """The sentences of ``text`` and what each is worth per character, sorted best first
    (a text is condensed to several sizes while a summary is fitted: read it once)."""
    pieces = [
        one_line(piece)
        for piece in _SENTENCE.split(clip_middle(text, _CONDENSE_SCAN))
        if piece and not piece.isspace()
    ]
    last = len(pieces) - 1
    values: list[tuple[float, int]] = []
    for index, piece in enumerate(pieces):
        score = 1 + min(4, len(_FACT.findall(piece))) + 3 * bool(_HAS_ASK.search(piece))
        if favor_end:
            score += (0, 1, 3, 6)[max(0, 3 - last + index)] + (index == 0)
        else:
            score += 3 * (index == 0) + (index == last)
        # Value per character: a long sentence must say more to be kept.
        values.append((-score / (len(piece) + 40), index))
    return pieces, sorted(values)


remember(_sentences.cache_clear)


def content_text(content: Any, limit: int) -> str:
    """The text of a message ``content`` (str, list of parts or None), at most ``limit`` chars.

    Image, audio and file parts become a short placeholder; unknown shapes are ignored
    instead of raising, because histories arrive broken.
    """
    if isinstance(content, str):
        return content[:limit]
    if not isinstance(content, list):
        return ""
    pieces: list[str] = []
    size = 0
    for part in content[:_MAX_PARTS]:
        if size >= limit:
            break
        piece = _part_text(part)
        if piece:
            pieces.append(piece)
            size += len(piece) + 1
    return "\n".join(pieces)[:limit]


def content_ends(content: Any, head: int, tail: int) -> tuple[str, str]:
    """The first ``head`` and last ``tail`` characters of a content, without copying the rest.

    The two windows never overlap: a short text comes back whole as ``(text, "")``.
    """
    if isinstance(content, str):
        if len(content) <= head + tail:
            return content, ""
        return content[:head], content[len(content) - tail :] if tail else ""
    if not isinstance(content, list):
        return "", ""
    pieces = [piece for piece in map(_part_text, content[:_MAX_PARTS]) if piece]
    if sum(len(piece) + 1 for piece in pieces) <= head + tail + 1:
        return "\n".join(pieces), ""
    tail_text = _join_until(pieces[::-1], tail, reverse=True)[-tail:] if tail else ""
    return _join_until(pieces, head)[:head], tail_text


def content_length(content: Any) -> int:
    """Roughly how many characters ``content`` holds (parts counted without joining)."""
    if isinstance(content, str):
        return len(content)
    if isinstance(content, list):
        return sum(len(_part_text(part)) + 1 for part in content[:_MAX_PARTS])
    return 0


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, ending in ``…`` when something was cut."""
    if len(text) <= limit:
        return text
    if limit <= 1:
        return "…"[:limit]
    return text[: limit - 1].rstrip() + "…"


def clip_middle(text: str, limit: int) -> str:
    """``text`` cut to about ``limit`` characters by removing its middle, with a marker.

    Heads hold the intent and tails the outcome (a traceback's last line, an exit code),
    so both ends survive: ``head [… 1,234 chars cut …] tail``.
    """
    if len(text) <= limit:
        return text
    marker_size = 32
    if limit <= marker_size + 16:
        return clip(text, limit)
    keep = limit - marker_size
    head = keep * 2 // 3
    tail = keep - head
    cut = len(text) - head - tail
    return f"{text[:head]} [… {cut:,} chars cut …] {text[len(text) - tail :]}"


def one_line(text: str) -> str:
    """``text`` with every run of whitespace (newlines included) folded into one space."""
    return " ".join(text.split())


def _join_until(pieces: list[str], limit: int, *, reverse: bool = False) -> str:
    taken: list[str] = []
    size = 0
    for piece in pieces:
        if size >= limit:
            break
        taken.append(piece)
        size += len(piece) + 1
    return "\n".join(taken[::-1] if reverse else taken)


def _part_text(part: Any) -> str:
    """A part's text (``condense.message.is_text_part``), else a word for what it is."""
    if is_text_part(part):
        return part if isinstance(part, str) else str(part["text"])
    if not isinstance(part, dict):
        return ""
    kind = part.get("type")
    if not isinstance(kind, str):
        kind = None
    if kind in ("image_url", "image", "input_image"):
        return "[image]"
    if kind in ("input_audio", "audio"):
        return "[audio]"
    if kind in ("file", "input_file"):
        return "[file]"
    refusal = part.get("refusal")
    return refusal if isinstance(refusal, str) else ""
