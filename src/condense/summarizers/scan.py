"""Read a span once: all of its text in one buffer, and what the span says about its words.

Every message of the span is read whole — no window, no sampling — so a fact in message 50
of 5,000, or in the middle of a long output, or at the end of a long line, has the same
chance as one at the end of the span. To keep that linear and cheap at any length, the
text is joined into one UTF-8 buffer (:class:`SpanText`) and read by a few calls that
each run at C speed over the whole of it; Python only looks at what they single out
(:class:`Scan`):

- **words**: the buffer, its quotes, brackets and commas made spaces (:func:`normalize`),
  split at white space and counted. How often a word occurs *in this span* is what makes
  it rare, whatever its shape;
- **families**: a rare word is written as a class — each hex digit ``x``, each other
  letter ``a``, punctuation kept (``req=3f9a2c1b0e4d`` → ``axx=xxxxxxxxxxxx``). A class
  with many distinct rare members is a family of look-alikes (the request id of every log
  line, the hashes of a lockfile, the timestamps): each member tells little. A rare word
  in a small family is **distinctive** (:attr:`Scan.distinct`), and so is a rare word the
  user or the assistant wrote that an output holds too (they *referred* to it);
- where each distinctive word is (:attr:`Scan.places`), found in one forward walk over
  the buffer, in the order the split gave them;
- **line shapes** (:func:`shape`, a line's punctuation): the lines of a log that differ
  only by their ids share one; the count of each is a line's family;
- **failure words** in the outputs (``error``, ``exception``, ``fail`` everywhere;
  ``fatal``, ``denied``, ``not found``… near the two ends of each output) and **decision
  and finding words** in what the assistant wrote ("because", "instead of", "root cause",
  "downgrade", "weil", "parce que", "porque", "因为", "決定"…).

A place is widened to what a reader needs: its line when the line is short, else the
sentence or a window around it (:meth:`SpanText.snippet`).
"""

from __future__ import annotations

import bisect
import itertools
import operator
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import compress, repeat

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

# Words: quotes, brackets, commas, pipes and the like are spaces (a sentence's final stop
# stays with its word: ``keepalive.`` is built like every word that ends a sentence).
_SEPARATORS = b"\"'()[]{}<>,;|`\t\r!?*\\"
_NORMAL = bytes.maketrans(_SEPARATORS, b" " * len(_SEPARATORS))
# A word's class: its digits 9, its letters (of any script) left out, the rest kept
# (``req=3f9a2c1b`` → ``=9999``, ``OPS-4127`` → ``-9999``, ``retry_backoff_ms`` → ``__``).
_CLASS = bytes.maketrans(b"0123456789", b"9" * 10)
_CLASS_DELETE = bytes(c for c in range(256) if chr(c).isalpha() or c >= 0x80)
_SPACES = frozenset(b" \n\x0b\x0c")
_ENDINGS = frozenset((b"", b" ", b"\n", b"\x0b", b"\x0c"))
_NOT_DIGITS = bytes(c for c in range(256) if c not in b"0123456789\n")
_DUMP_LINES = 8  # an output of this many lines may be a dump (a log, a table, a config)
_ODD_PER_DUMP = 8  # of one dump, at most this many odd lines lead
# What a shape leaves out: letters, digits, the underscore and spaces (not newlines and
# commas: they cut segments).
SHAPE_DELETE = bytes(
    c for c in range(128) if (chr(c).isalnum() or chr(c) in " \t\r_") and chr(c) not in "\n,"
)

RARE_UPTO = 8  # a word found at most this often in the span is rare
FAMILY_FROM = 6  # a class with this many distinct rare words is a family of look-alikes
_FAMILY_CUT = 64  # …and with this many, none of them is distinctive
_LONGEST = 160  # a longer word (a blob: base64, minified code) is not one word

# Failure words, searched for in the lower-cased text, each a literal (one alternation of
# them all would cost several times more): the common ones over all of the text, the
# others over the two ends of each output, where outcomes are told.
ERROR_WORDS = (b"rror", b"xception", b"fail", b"fatal", b"panic", b"caused by")
END_ERROR_WORDS = (
    *(b"denied", b"not found", b"no such", b"ould not", b"cannot", b"nable to", b"refused"),
    *(b"segmentation", b"no replacement", b"err!", b"critical", b"timed out", b"abort"),
    *(b"unavailable", b"forbidden", b"oomkilled", b"crashloop"),
)
_END_HEAD = 200  # an output's ends: this many bytes of its head…
_END_TAIL = 400  # …and of its tail

# Decision and conclusion words, as people write them (several languages; lower case).
DECISION_WORDS = (
    *("cause", "decid", "instead", "rather than", "due to", "so that", "turns out", "flaky"),
    *("we will", "we'll", "won't", "will not", "do not", "don't", "avoid", "revert"),
    *("roll back", "rollback", "downgrad", "stick with", "switch to", "chose", "pin "),
    *("weil", "entschied", "stattdessen", "ursache", "deshalb"),  # de
    *("parce qu", "décid", "au lieu d", "plutôt"),  # fr
    *("porque", "en lugar de", "debido a", "decidimos"),  # es
    *("em vez de", "devido a", "perché", "invece di", "deciso", "poiché"),  # pt, it
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


def normalize(text: bytes) -> bytes:
    """``text`` with separators made spaces (same length, same offsets): its words are
    what ``.split()`` gives."""
    return text.translate(_NORMAL)


def words(text: str | bytes) -> list[bytes]:
    """The words of ``text``, as the span counts them."""
    data = text.encode("utf-8", "replace") if isinstance(text, str) else text
    return normalize(data).split()


def word_class(word: bytes) -> bytes:
    """How a word is built: look-alikes share a class (``req=3f9a2c1b`` → ``=9999``,
    ``OPS-4127`` → ``-9999``, ``retry_backoff_ms`` → ``__``; a word of letters only has
    none)."""
    return word.translate(_CLASS, _CLASS_DELETE)


def shape(text: bytes) -> bytes:
    """How a line is built: its punctuation, its words, numbers and spaces left out (the
    lines of a log that differ only by their ids and numbers share one)."""
    return text.translate(None, SHAPE_DELETE)


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
        # the index of each piece's first line in the buffer (and one past the last)
        lines = map(operator.add, repeat(1), map(bytes.count, encoded, repeat(b"\n")))
        self.first_lines = list(itertools.accumulate(lines, initial=0))
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

    def line(self, at: int) -> tuple[int, int]:
        """The bounds of the line holding byte ``at``."""
        return self.blob.rfind(b"\n", 0, at) + 1, _end(self.blob.find(b"\n", at), len(self.blob))

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


def _end(found: int, default: int) -> int:
    return default if found < 0 else found


class Scan:
    """What one linear read of a span found: how often each word occurs (:attr:`counts`),
    and in what people wrote (:attr:`said`); the families of rare look-alikes; the
    distinctive words and where they are (:attr:`places`); how many lines share each
    shape (:attr:`shapes`); the failure words in outputs (:attr:`errors`); the decision
    and finding words in what the assistant wrote (:attr:`decisions`)."""

    def __init__(self, span: SpanText) -> None:
        self.span = span
        blob = span.blob
        mapped = normalize(blob)
        tokens = mapped.split()
        self.counts: Counter[bytes] = Counter(tokens)
        self.total = len(tokens)
        said = [i for i, kind in enumerate(span.kinds) if kind in (ASK, PROSE)]
        said_text = b"\n".join(mapped[span.starts[i] : span.piece_end(i)] for i in said)
        self.said: Counter[bytes] = Counter(said_text.split())
        self.family, self.distinct = self._families()
        self.places = _places(mapped, tokens, self.distinct)
        line_shapes = shape(blob).split(b"\n")
        self.shapes: Counter[bytes] = Counter(line_shapes)
        self.odd = _odd_lines(span, line_shapes)
        self.errors = _error_places(span)
        self.decisions = _decision_places(span)

    def _families(self) -> tuple[Counter[bytes], frozenset[bytes]]:
        """How many distinct rare words each class holds, and the distinctive words: the
        rare words of a small family, and the rare words people wrote that the outputs
        hold too (they referred to them). A word of letters only (a plain word, a name, a
        phrase of another script) is in no family and not distinctive by itself; nor is
        a blob."""
        counts, said = self.counts, self.said
        rare = [token for token, count in counts.items() if count <= RARE_UPTO]
        classes = list(map(bytes.translate, rare, repeat(_CLASS), repeat(_CLASS_DELETE)))
        family = Counter(classes)
        family.pop(b"", None)
        small = map(operator.gt, repeat(_FAMILY_CUT), map(family.get, classes, repeat(_FAMILY_CUT)))
        short = map(operator.ge, repeat(_LONGEST), map(len, rare))
        chosen = set(compress(rare, map(operator.and_, small, short)))
        chosen.update(
            token
            for token, times in said.items()
            if times < counts[token] <= RARE_UPTO and len(token) <= _LONGEST and word_class(token)
        )
        return family, frozenset(chosen)

    def family_of(self, word: bytes) -> int:
        """How many distinct rare look-alikes ``word`` has in the span (itself included;
        1 for a word of letters only: it is in no family)."""
        return self.family.get(word_class(word), 1)

    def referred(self, word: bytes) -> bool:
        """Whether ``word`` is in what people wrote and in what the tools gave."""
        said = self.said.get(word, 0)
        return 0 < said < self.counts.get(word, 0)

    def of_piece(self, piece: int) -> list[tuple[int, bytes]]:
        """The places of distinctive words in ``piece``, in order."""
        starts = self.span.starts
        first = bisect.bisect_left(self.places, (starts[piece], b""))
        last = bisect.bisect_left(self.places, (starts[piece + 1], b""))
        return self.places[first:last]


def _places(
    mapped: bytes, tokens: list[bytes], wanted: frozenset[bytes]
) -> list[tuple[int, bytes]]:
    """Where each occurrence of a ``wanted`` word is, in order: one forward walk, each
    find starting where the last one ended (the split gave them in this order)."""
    if not wanted:
        return []
    found: list[tuple[int, bytes]] = []
    at = 0
    size = len(mapped)
    for token in compress(tokens, map(wanted.__contains__, tokens)):
        place = mapped.find(token, at)
        # a word found inside a longer one is not it: look further
        while place >= 0 and not (
            (place == 0 or mapped[place - 1] in _SPACES)
            and mapped[place + len(token) : place + len(token) + 1] in _ENDINGS
        ):
            place = mapped.find(token, place + 1)
        if place < 0:
            break
        found.append((place, token))
        at = place + len(token)
        if at >= size:
            break
    return found


def _odd_lines(span: SpanText, shapes: list[bytes]) -> list[int]:
    """Where the odd lines of the dumps are: in an output of many lines most of which are
    built alike (a log, a table, a config), each line built like no other of it, or
    built like others but alone with (or without) digits (``timeout_ms = 3471`` among
    ``x_enabled = true``). At most :data:`_ODD_PER_DUMP` of each, the rarest first."""
    blob, starts, firsts = span.blob, span.starts, span.first_lines
    digits: list[bytes] | None = None
    found: list[int] = []
    for piece, kind in enumerate(span.kinds):
        first, last = firsts[piece], firsts[piece + 1]
        if kind != OUTPUT or last - first < _DUMP_LINES:
            continue
        built = shapes[first:last]
        counted = Counter(built)
        if max(counted.values()) * 5 < (last - first) * 2:
            continue  # no look-alike lines make most of it: not a dump
        if digits is None:
            digits = blob.translate(None, _NOT_DIGITS).split(b"\n")
        keys = list(zip(built, map(bool, digits[first:last]), strict=True))
        alone = Counter(keys)
        if len(alone) == len(counted) and min(counted.values()) > 1:
            continue  # every line is built like another, with digits alike
        odd = sorted(
            (counted[built[i]], i)
            for i in compress(
                range(last - first), map(operator.eq, repeat(1), map(alone.get, keys))
            )
            if built[i]
        )[:_ODD_PER_DUMP]
        if odd:
            start = starts[piece]
            sizes = list(
                itertools.accumulate(
                    map(len, blob[start : starts[piece + 1] - 1].split(b"\n")), initial=0
                )
            )
            found.extend(start + sizes[i] + i for _, i in odd)
    return sorted(found)


def _error_places(span: SpanText) -> list[int]:
    """Where the failure words are in the outputs, in order."""
    lower, kinds, starts = span.lower, span.kinds, span.starts
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
