"""Read a span once: all of its text in one buffer, and the telling spots in it.

Every message of the span is read whole — no window, no sampling — so a fact in message 50
of 5,000, or in the middle of a long output, or at the end of a long line, has the same
chance as one at the end of the span. To keep that linear and cheap at any length, the
text is joined into one UTF-8 buffer and searched by a few compiled scans that each run
at C speed over the whole of it; Python only looks at what they find (:class:`Scan`):

- **tokens**, entered only at the first digit of a number: a digit after a letter
  (``E4417``, ``ACCT-88213``, ``x.py:218``, ``db-07.internal:6432``, hashes) or after a key
  (``retry_ms = 3471``, ``maxConns: 384``), a dotted number (``1.41.2``, an IP), a date, a
  number with a unit (``1843 ms``, ``3.7 GiB``, ``95%``), an HTTP status; and URLs and
  e-mail addresses. How often each token occurs is counted: a token found in a few
  places is rare (a fact), one found everywhere is the backdrop;
- **failure words** in the outputs, in any case (``error``, ``exception``, ``fail``
  everywhere; ``fatal``, ``denied``, ``not found``… near the two ends of each output);
- **decision and finding words** in what the assistant wrote ("because", "instead of",
  "root cause", "weil", "parce que", "porque", "因为", "決定"…).

Each is a literal search or one compiled pattern entered at few places: one alternation
of many words would cost several times more. A spot is widened to what a reader needs:
its line when the line is short, else the sentence or a window around it
(:meth:`SpanText.snippet`). The shape of a line (:func:`shape`, its punctuation) tells a
log's look-alike lines from the one built otherwise (:func:`unusual_segments`).
"""

from __future__ import annotations

import bisect
import itertools
import re
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
# ``maxConns: 384``, hashes, an HTTP status), the second part of a dotted number
# (``1.41.2``, an IP), a date (not a log line's timestamp: ``2025-11-13``), or
# a number followed by a short word (group 1: kept when the word is a unit, ``1843 ms``).
# Times of day are not taken: every log line has its own. The match runs on to the end of
# the token.
_TOKEN_HIT = re.compile(  # re, not regex: a third of the cost per token found
    rb"[0-9](?<![0-9][0-9])"
    rb"(?:(?:(?:(?<=[A-Za-z_][0-9])|(?<=[A-Za-z_][-:][0-9])|(?<==[0-9])|(?<== [0-9])"
    rb"|(?<=[A-Za-z_]: [0-9])|(?<=HTTP [0-9])|(?<=HTTP/1.0 [0-9])|(?<=HTTP/1.1 [0-9])"
    rb"|(?<=HTTP/2 [0-9])|(?<=HTTP/2.0 [0-9]))(?![0-9]?:[0-9][0-9](?::[0-9][0-9])?(?![0-9]))"
    rb"|(?<=[0-9]\.[0-9])(?=[0-9]*\.[0-9])|(?=[0-9]{3}-[01][0-9]-[0-3][0-9](?![0-9]|T[0-9])))"
    rb"(?:[\w.:/#@%-]*[\w%])?"
    rb"|([0-9.,]*+ ?[A-Za-z%\xc2\xe6\xe7][A-Za-z\x80-\xbf]{0,5}(?![A-Za-z])))"
)
# What a shape leaves out: letters, digits, the underscore and spaces (not newlines and
# commas: they cut segments).
SHAPE_DELETE = bytes(
    c for c in range(128) if (chr(c).isalnum() or chr(c) in " \t\r_") and chr(c) not in "\n,"
)
_HTTP = regex.compile(rb"HTTP(?:/[0-9.]+)? \Z")
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
_LOCAL_PART = regex.compile(rb"(?r)[\w.+-]+")
_DOMAIN = regex.compile(rb"[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}\b")
_SHORT = 5  # a token shorter than this, after a word, is counted with the word
_WORDY = frozenset(bytes([c]) for c in b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_-:")
_TICKET = re.compile(rb"[A-Z][A-Z0-9]{1,9}-[0-9]{2,}")
_AT_LINE = re.compile(rb"\.[A-Za-z][\w-]{0,20}:[0-9]{1,5}")  # x.py:218, db.internal:6432
_MIXED = re.compile(rb"[\w-]*(?:[0-9][\w-]*[A-Za-z]|[A-Za-z][\w-]*[0-9])[\w-]*")
_URL_TAIL = regex.compile(rb"[^\s\"'<>)\]}`|\\]*")
_SCHEME = regex.compile(rb"(?r)[A-Za-z][\w+.-]*")
# Failure words, searched for in the lower-cased text, each a literal (one alternation of
# them all would cost several times more): the common ones over all of the text, the
# others over the two ends of each output, where outcomes are told.
ERROR_WORDS = (b"rror", b"xception", b"fail")
END_ERROR_WORDS = (
    *(b"fatal", b"panic", b"denied", b"not found", b"no such", b"ould not", b"cannot"),
    *(b"nable to", b"segmentation", b"no replacement", b"err!", b"critical"),
)
_END_HEAD = 300  # an output's ends: this many bytes of its head…
_END_TAIL = 500  # …and of its tail

# Decision and conclusion words, as people write them (several languages; lower case).
DECISION_WORDS = (
    *("cause", "decid", "decisi", "turns out", "instead of", "rather than", "due to"),
    *("we will", "must not", "flaky", "chose", "so that", "in order to"),
    *("weil", "entschied", "stattdessen", "ursache", "deshalb"),  # de
    *("parce qu", "décid", "au lieu d"),  # fr
    *("porque", "en lugar de", "causa ra", "debido a"),  # es
    *("em vez de", "devido a", "perché", "invece di"),  # pt, it
    *("因为", "由于", "决定", "原因", "而不是"),  # zh
    *("ため", "理由", "決定", "代わりに", "ので"),  # ja
    *("때문", "결정", "원인", "대신"),  # ko
)
"""Decision and conclusion words as people write them, lower case (a few stems: "cause"
also finds "because", "root cause", "à cause"; "decid" finds "decided", "decidimos")."""
# What a finding holds ("the root cause is", "the fix has to", "this is the bug"): a
# sentence with one of these is checked for a finding (``cause`` is a decision word).
FINDING_WORDS = (
    *("reproduc", "confirm", "the fix", "problem", "issue", "bug", "culprit", "solution"),
    *("reason", "answer"),
)
_DECISION_BYTES = tuple(sorted(word.encode() for word in {*DECISION_WORDS, *FINDING_WORDS}))
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
                return Snippet(s_start, s_end, piece, False, False)
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
    """Every token of interest in ``blob``, in order (one scan), the URLs and the e-mail
    addresses. A short token that follows a word (``E4417``, ``p99``, ``svc-prod-4``) is
    counted with that word: ``4`` alone would be everywhere."""
    hits: list[Hit] = []
    for match in _TOKEN_HIT.finditer(blob):
        at, token = match.start(), match.group()
        if match.group(1) is not None:  # a number and a short word: a token if a unit
            number, _, word = token.rpartition(b" ")
            if (word if number else _UNIT_WORD.match(word).group(1)) in UNITS:
                hits.append((at, token.replace(b" ", b"")))
        elif len(token) < _SHORT and blob[at - 1 : at] in _WORDY:
            head = _TOKEN_HEAD.match(blob, max(0, at - 64), at)
            word = blob[head.start() : at] if head else b""
            # a URL or an address is a token of its own (and counted once)
            hits.append((at, token if b"://" in word or b"@" in word else word + token))
        else:
            hits.append((at, token))
    found = _urls(blob) + _emails(blob)
    return sorted(hits + found) if found else hits


def _emails(blob: bytes) -> list[tuple[int, bytes]]:
    found: list[tuple[int, bytes]] = []
    at = blob.find(b"@")
    while at >= 0:
        local = _LOCAL_PART.match(blob, max(0, at - 64), at)
        domain = _DOMAIN.match(blob, at + 1)
        if local is not None and local.start() < at and domain is not None:
            found.append((local.start(), blob[local.start() : domain.end()]))
        at = blob.find(b"@", at + 1)
    return found


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


def is_timestamp(token: bytes) -> bool:
    """Whether a token is a date with a time (``2025-06-14T03:12:09Z``), as in every log
    line."""
    return token[4:5] == b"-" and len(token) > 10 and token[:4].isdigit()


def is_time(token: bytes) -> bool:
    """Whether a token is a time of day or a timestamp, as in every log line (the scan
    takes no time of day alone: this is for tokens found otherwise)."""
    return is_timestamp(token) or (b":" in token and _TIME.fullmatch(token) is not None)


def shape(text: bytes) -> bytes:
    """How a line is built: its punctuation, its words, numbers and spaces left out (the
    lines of a log that differ only by their ids and numbers share one)."""
    return text.translate(None, SHAPE_DELETE)


def unusual_segments(span: SpanText, piece: int) -> list[tuple[int, int]]:
    """The segments of a piece built like no more than one other of its segments.

    A segment is a line, or, of a line longer than :data:`SNIPPET_BYTES`, a part between
    commas (a field of minified JSON, a cell of CSV). Its shape is its punctuation (words,
    numbers and spaces left out): the lines of a log that differ only by their ids share
    one, the line that is built otherwise is the news. All of this is done by C-speed
    calls over the piece, and one step per segment.
    """
    start, end = span.starts[piece], span.piece_end(piece)
    text = span.blob[start:end]
    lines = text.split(b"\n")
    shapes = shape(text).split(b"\n")
    segments: list[tuple[int, bytes]] = []
    at = start
    for line, built in zip(lines, shapes, strict=True):
        if len(line) > SNIPPET_BYTES and b"," in line:
            for part, part_built in zip(line.split(b","), built.split(b","), strict=True):
                segments.append((at, part_built))
                at += len(part) + 1
        else:
            segments.append((at, built))
            at += len(line) + 1
    counted = Counter(built for _, built in segments)
    bounds = [at for at, _ in segments] + [end + 1]
    return [
        (segment_start, bounds[i + 1] - 1)
        for i, (segment_start, built) in enumerate(segments)
        if counted[built] <= 2 and bounds[i + 1] - 1 > segment_start
    ]


def token_weight(token: bytes) -> float:
    """What a token's shape alone says, before the words around it are read: a URL or an
    address, a ticket (``OPS-4127``), a file and line or a host and port, a hash or an id
    with letters and digits, a version or an IP; anything else a little."""
    if b"://" in token or b"@" in token:
        return 5.0
    if _TICKET.match(token) or _AT_LINE.search(token):
        return 4.0
    if (len(token) >= 7 and _MIXED.fullmatch(token)) or token.count(b".") >= 2:
        return 3.0
    return 1.0


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
    occurs), its error words (in outputs), its decision and finding words (in what the
    assistant wrote)."""

    def __init__(self, span: SpanText) -> None:
        self.span = span
        self.hits = token_hits(span.blob)
        self.at = [place for place, _ in self.hits]
        self.counts: Counter[bytes] = Counter(token for _, token in self.hits)
        # the hits of piece i are hits[firsts[i]:firsts[i + 1]]
        self.firsts = [bisect.bisect_left(self.at, start) for start in span.starts]
        self.errors = _error_places(span, self.hits)
        self.decisions = _decision_places(span)

    def of_piece(self, piece: int) -> list[Hit]:
        """The hits of ``piece``, in order."""
        return self.hits[self.firsts[piece] : self.firsts[piece + 1]]

    def within(self, start: int, end: int) -> set[bytes]:
        """The tokens found between bytes ``start`` and ``end``."""
        first, last = bisect.bisect_left(self.at, start), bisect.bisect_left(self.at, end)
        return {self.hits[i][1] for i in range(first, last)}


def _error_places(span: SpanText, hits: list[Hit]) -> list[int]:
    """Where the failure words are in the outputs, in order; and the HTTP statuses of
    failure (``HTTP 503``, ``HTTP/1.1 404``) among the tokens."""
    lower, blob, kinds, starts = span.lower, span.blob, span.kinds, span.starts
    found = _literals(lower, ERROR_WORDS)
    # the two ends of every output, joined (each end remembers where it came from)
    ends: list[bytes] = []
    origins: list[int] = []
    for piece, kind in enumerate(kinds):
        if kind == OUTPUT:
            start, end = starts[piece], starts[piece + 1] - 1
            cut = min(end, start + _END_HEAD)
            ends.append(lower[start:cut])
            origins.append(start)
            if end > cut:
                tail = max(cut, end - _END_TAIL)
                ends.append(lower[tail:end])
                origins.append(tail)
    joined = b"\n".join(ends)
    offsets = list(itertools.accumulate((len(end) + 1 for end in ends), initial=0))
    for at in _literals(joined, END_ERROR_WORDS):
        k = bisect.bisect_right(offsets, at) - 1
        found.append(origins[k] + at - offsets[k])
    for at, token in hits:
        if len(token) == 3 and token[:1] in b"45" and _HTTP.search(blob, max(0, at - 12), at):
            found.append(at)
    found.sort()
    return [at for at in found if kinds[bisect.bisect_right(starts, at) - 1] == OUTPUT]


def _literals(haystack: bytes, words: Iterable[bytes]) -> list[int]:
    """Where each of ``words`` occurs in ``haystack`` (unordered)."""
    found: list[int] = []
    for word in words:
        at = haystack.find(word)
        while at >= 0:
            found.append(at)
            at = haystack.find(word, at + len(word))
    return found


def _decision_places(span: SpanText) -> list[int]:
    """Where the decision and finding words are in what the assistant wrote (its pieces
    joined and searched once per word)."""
    pieces = [i for i, kind in enumerate(span.kinds) if kind == PROSE]
    if not pieces:
        return []
    blob, starts = span.lower, span.starts
    prose = b"\n".join(blob[starts[i] : starts[i + 1] - 1] for i in pieces)
    offsets = list(itertools.accumulate((starts[i + 1] - starts[i] for i in pieces), initial=0))
    found = set(_literals(prose, _DECISION_BYTES))
    places = []
    for at in sorted(found):
        k = bisect.bisect_right(offsets, at) - 1
        places.append(starts[pieces[k]] + at - offsets[k])
    return places
