"""Read a span once: all of its text in one buffer, and the telling spots in it.

Every message of the span is read whole — no window, no sampling — so a fact in message 50
of 5,000, or in the middle of a long output, or at the end of a long line, has the same
chance as one at the end of the span. To keep that linear and cheap at any length, the
text is joined into one UTF-8 buffer and searched by a few compiled scans that each run
at C speed over the whole of it; Python only looks at what they find:

- **tokens**: a digit that follows a letter (``E4417``, ``ACCT-88213``, ``x.py:218``,
  ``db-07.internal:6432``, hashes) or a key (``retry_ms = 3471``, ``maxConns: 384``), a
  dotted number (``1.41.2``, ``10.4.2.7``), a number with a unit (``1843 ms``, ``3.7
  GiB``, ``95%``), and URLs. How often each token occurs in the span is counted: a token
  found in a few places is rare (a fact), one found everywhere is the backdrop;
- **error words** (``error``, ``exception``, ``fail``…), in any case;
- **decision words** in what the user and the assistant wrote ("because", "instead of",
  "root cause", "weil", "parce que", "porque", "因为", "決定"…).

A spot is widened to what a reader needs: its line when the line is short, else the
sentence or a window around it (:meth:`SpanText.snippet`).
"""

from __future__ import annotations

import bisect
import itertools
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

import regex  # type: ignore[import-untyped, unused-ignore]

# What a piece of text is: a user's ask, the assistant's text, a tool's output (or an
# observation carried in a user message), the arguments of a tool call.
ASK = 0
PROSE = 1
OUTPUT = 2
ARGS = 3

# A snippet holds at most this many bytes (a longer line gives a window of it).
SNIPPET_BYTES = 280
_WINDOW = 200  # a window of a longer line: this many bytes…
_BEFORE = 60  # …of which these come before the spot

# One scan finds every token of interest at a digit, and only at the first digit of a
# number (the only places it is entered): a digit after a letter, a key, or a dash or
# colon after a letter (``E4417``, ``ACCT-88213``, ``x.py:218``, ``retry_ms = 3471``,
# ``maxConns: 384``, hashes), the second part of a dotted number (``1.41.2``, an IP), or
# a number followed by a short word (group 1: kept when the word is a unit, ``1843 ms``).
# The match runs on to the end of the token.
_TOKEN_HIT = regex.compile(
    rb"[0-9](?<![0-9][0-9])"
    rb"(?:(?:(?<=[A-Za-z_][0-9]|[A-Za-z_][-:][0-9]|= ?[0-9]|[A-Za-z_]: [0-9])"
    rb"|(?<=[0-9]\.[0-9])(?=[0-9]*\.[0-9]))"
    rb"(?:[\w.:/#@%-]*[\w%])?"
    rb"|([0-9.,]*+ ?[A-Za-z%\xc2\xe6\xe7][A-Za-z\x80-\xbf]{0,5}(?![A-Za-z])))"
)
_UNIT_WORD = regex.compile(rb"[0-9.,]+ ?(.*)")
UNITS = frozenset(
    (
        "ms s sec secs second seconds min mins minute minutes h hr hrs hour hours ns us µs"
        " kB KB MB GB TB KiB MiB GiB TiB kb Mb Gb % rps qps x 毫秒 秒"
    )
    .encode()
    .split()
)
# The part of a token before its first hit, read backwards from the hit.
_TOKEN_HEAD = regex.compile(rb"(?r)[\w.:/#@%-]*")
_URL_TAIL = regex.compile(rb"[^\s\"'<>)\]}`|\\]*")
_SCHEME = regex.compile(rb"(?r)[A-Za-z][\w+.-]*")
# Failure words, searched for in the lower-cased text: each a literal, a C-speed search
# over the whole buffer (one alternation of them all would cost several times more).
ERROR_WORDS = (
    *(b"rror", b"xception", b"fail", b"fatal", b"panic", b"denied", b"not found", b"no such"),
    *(b"ould not", b"annot ", b"nable to", b"err!", b"segmentation", b"critical"),
    *(b"no replacement", b"http ", b"http/1."),
)
# Decision and conclusion words, as people write them (several languages; lower case).
DECISION_WORDS = (
    *("because", "decided", "decision", "root cause", "caused by", "turns out", "instead of"),
    *("rather than", "due to", "the fix is", "the problem is", "the issue is", "we will"),
    *("must not", "flaky", "chose", "conclusion", "so that", "in order to"),
    *("weil", "entschieden", "stattdessen", "ursache", "deshalb"),  # de
    *("parce qu", "décid", "au lieu d", "à cause"),  # fr
    *("porque", "decidimos", "decidi", "en lugar de", "causa ra", "debido a"),  # es
    *("em vez de", "devido a", "perché", "deciso", "invece di"),  # pt, it
    *("因为", "由于", "决定", "原因", "而不是"),  # zh
    *("ため", "理由", "決定", "代わりに", "ので"),  # ja
    *("때문", "결정", "원인", "대신"),  # ko
)
# Where someone says what they will do (a plan: looked for, worth less than a decision).
PLAN_WORDS = (
    *("i will", "i'll", "i’ll", "we'll", "we’ll", "let's", "let’s", "let us", "i need to"),
    *("we need to", "i'm going to", "i’m going to", "we are going to", "next,", "plan:"),
)
# What a finding holds ("the root cause is", "the fix has to", "this is the bug"): a
# sentence with one of these is checked for a finding.
FINDING_WORDS = (
    *("cause", "turns out", "reproduced", "confirm", "fix", "problem", "issue", "bug"),
    *("culprit", "solution", "reason", "answer"),
)
_DECISION_BYTES = tuple(word.encode() for word in {*DECISION_WORDS, *PLAN_WORDS, *FINDING_WORDS})
_SENTENCE_ENDS = (b". ", b"! ", b"? ", b"\xe3\x80\x82")  # the last one: "。"


@dataclass(frozen=True, slots=True)
class Snippet:
    """A span of the buffer worth reading: ``start``–``end`` (bytes) of piece ``piece``."""

    start: int
    end: int
    piece: int
    cut_before: bool
    cut_after: bool


class SpanText:
    """The text of a span as one UTF-8 buffer of pieces, each owned by a message.

    ``pieces`` are ``(message index, kind, text)`` in the span's order; a piece is joined
    to the next by a newline, so a line never runs across two pieces.
    """

    def __init__(self, pieces: Iterable[tuple[int, int, str]]) -> None:
        owners: list[int] = []
        kinds: list[int] = []
        encoded: list[bytes] = []
        for message, kind, text in pieces:
            if text:
                owners.append(message)
                kinds.append(kind)
                encoded.append(text.encode("utf-8", "replace"))
        self.owners = owners
        self.kinds = kinds
        self.blob = b"\n".join(encoded)
        self.starts = list(itertools.accumulate((len(e) + 1 for e in encoded), initial=0))
        self._lower: bytes | None = None

    @property
    def lower(self) -> bytes:
        """The buffer with ASCII letters lower-cased (same offsets)."""
        if self._lower is None:
            self._lower = self.blob.lower()
        return self._lower

    def piece_of(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset) - 1

    def piece_end(self, piece: int) -> int:
        return self.starts[piece + 1] - 1

    def decode(self, start: int, end: int) -> str:
        return self.blob[start:end].decode("utf-8", "ignore")

    def snippet(self, at: int, piece: int | None = None) -> Snippet:
        """What to read around byte ``at``: its line when the line is short; else, in
        what people write, its sentence when that is short; else a window around it."""
        piece = self.piece_of(at) if piece is None else piece
        blob = self.blob
        first, last = self.starts[piece], self.piece_end(piece)
        low, high = max(first, at - SNIPPET_BYTES), min(last, at + SNIPPET_BYTES)
        newline = blob.rfind(b"\n", low, at)
        start = newline + 1 if newline >= 0 else (first if low == first else -1)
        end = blob.find(b"\n", at, high)
        if end < 0 and high == last:
            end = last
        if start >= 0 and end >= 0 and end - start <= SNIPPET_BYTES:
            return Snippet(start, end, piece, False, False)
        line_start = start if start >= 0 else low
        line_end = end if end >= 0 else high
        if self.kinds[piece] in (ASK, PROSE):
            before = max(blob.rfind(mark, line_start, at) for mark in _SENTENCE_ENDS)
            after = [i for mark in _SENTENCE_ENDS if (i := blob.find(mark, at, line_end)) >= 0]
            s_start = before + 2 if before >= 0 else line_start
            s_end = min(after) + 1 if after else line_end
            if s_end - s_start <= SNIPPET_BYTES and (s_start > line_start or start >= 0):
                return Snippet(s_start, s_end, piece, False, s_end < line_end and not after)
        w_start = max(line_start, at - _BEFORE)
        w_end = min(line_end, w_start + _WINDOW)
        if w_start > line_start:  # start at a word
            space = blob.find(b" ", w_start, at)
            w_start = space + 1 if 0 <= space < at - 8 else w_start
        if w_end < line_end:
            space = blob.rfind(b" ", at, w_end)
            w_end = space if space > at + 8 else w_end
        return Snippet(w_start, w_end, piece, w_start > line_start, w_end < line_end)


Hit = tuple[int, bytes]
"""A token found at a byte offset (from its first hit digit), as counted for rarity."""


def token_hits(blob: bytes) -> list[Hit]:
    """Every token of interest in ``blob``, in order (one scan), and the URLs."""
    hits: list[Hit] = []
    for match in _TOKEN_HIT.finditer(blob):
        if match.group(1) is None:
            hits.append((match.start(), match.group()))
        else:  # a number and a short word: a token when the word is a unit
            number, _, word = match.group().rpartition(b" ")
            if (word if number else _UNIT_WORD.match(word).group(1)) in UNITS:
                hits.append((match.start(), match.group().replace(b" ", b"")))
    urls = _urls(blob)
    return sorted(hits + urls) if urls else hits


def _urls(blob: bytes) -> list[tuple[int, bytes]]:
    found: list[tuple[int, bytes]] = []
    at = blob.find(b"://")
    while at >= 0:
        scheme = _SCHEME.match(blob, max(0, at - 12), at)
        tail = _URL_TAIL.match(blob, at + 3)
        end = tail.end() if tail else at + 3
        if scheme is not None and scheme.start() < at and end > at + 4:
            found.append((scheme.start(), blob[scheme.start() : end].rstrip(b".,;:")))
        at = blob.find(b"://", max(end, at + 3))
    return found


_TIME = regex.compile(rb"[0-9]{1,2}(?::[0-9]{2}){1,2}(?:[.,][0-9]+)?(?:Z|[+-][0-9:]+)?")


def is_time(token: bytes) -> bool:
    """Whether a token (from its hit digit on) is a time of day, as in every log line."""
    return _TIME.fullmatch(token) is not None


def text_tokens(text: str) -> list[bytes]:
    """The tokens :func:`token_hits` finds in ``text``, as counted."""
    return [token for _, token in token_hits(text.encode("utf-8", "replace"))]


def token_bounds(span: SpanText, hit: Hit) -> tuple[int, int]:
    """The whole token of ``hit``: its head before the hit digit, then the hit."""
    at, token = hit
    head = _TOKEN_HEAD.match(span.blob, max(0, at - 64), at)
    start = head.start() if head is not None else at
    while start < at and span.blob[start] in b".:/-#@%":
        start += 1
    return start, at + len(token)


class Scan:
    """What one linear scan of a span found: its tokens (where each is, how often each
    occurs), its error words (in outputs), its decision, plan and finding words (in what
    people wrote)."""

    def __init__(self, span: SpanText) -> None:
        self.span = span
        self.hits = token_hits(span.blob)
        self.at = [place for place, _ in self.hits]
        self.counts: Counter[bytes] = Counter(token for _, token in self.hits)
        self.errors = _error_places(span)
        self.decisions = _decision_places(span)

    def within(self, start: int, end: int) -> set[bytes]:
        """The tokens found between bytes ``start`` and ``end``."""
        first, last = bisect.bisect_left(self.at, start), bisect.bisect_left(self.at, end)
        return {self.hits[i][1] for i in range(first, last)}


def _error_places(span: SpanText) -> list[int]:
    """Where the failure words are in the outputs, in order."""
    found: list[int] = []
    lower, kinds, starts = span.lower, span.kinds, span.starts
    for word in ERROR_WORDS:
        at = lower.find(word)
        while at >= 0:
            found.append(at)
            at = lower.find(word, at + len(word))
    found.sort()
    return [at for at in found if kinds[bisect.bisect_right(starts, at) - 1] == OUTPUT]


def _decision_places(span: SpanText) -> list[int]:
    """Where the decision, plan and finding words are in what the user and the assistant
    wrote (their pieces joined and searched once per word)."""
    pieces = [i for i, kind in enumerate(span.kinds) if kind in (ASK, PROSE)]
    if not pieces:
        return []
    blob, starts = span.lower, span.starts
    prose = b"\n".join(blob[starts[i] : starts[i + 1] - 1] for i in pieces)
    offsets = list(itertools.accumulate((starts[i + 1] - starts[i] for i in pieces), initial=0))
    found: set[int] = set()
    for word in _DECISION_BYTES:
        at = prose.find(word)
        while at >= 0:
            found.add(at)
            at = prose.find(word, at + len(word))
    places = []
    for at in sorted(found):
        k = bisect.bisect_right(offsets, at) - 1
        places.append(starts[pieces[k]] + at - offsets[k])
    return places
