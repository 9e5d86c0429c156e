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
- **families**: a rare word is written as a class — its digits ``9``, its letters left
  out, punctuation kept (``req=3f9a2c1b0e4d`` → ``=99999999``); a hash is one of the
  hashes of its length (``5ce97d78c4`` → ``#10``) (:func:`word_class`). A class
  with many distinct rare members is a family of look-alikes (the request id of every log
  line, the hashes of a lockfile, the timestamps): each member tells little. A rare word
  in a small family is **distinctive** (:attr:`Scan.distinct`), and so is a rare word the
  user or the assistant wrote that an output holds too (they *referred* to it). Only
  generated values (a class with digits, a hash) are look-alikes when a word is valued
  (:meth:`Scan.family_of`): a name (``test_refund_idempotency``) keeps its worth however
  many other names the span holds — though among many, it does not lead by itself;
- where each distinctive word is (:attr:`Scan.places`), found in one forward walk over
  the buffer, in the order the split gave them;
- **line shapes** (:func:`shape`, a line's punctuation): the lines of a log that differ
  only by their ids share one; the count of each is a line's family;
- **rows that stand out of their column** (:func:`column_outliers`): among rows built
  alike, the one whose state is not the state of all the others (``suspended`` among
  ``active``, ``RERUN`` among ``PASSED``, exit code ``137`` among ``0``), or whose
  number is far above the rest of its column (a queue 48,000 deep among queues of a few);
- **failure words** in the outputs (``error``, ``exception``, ``fail`` everywhere;
  ``fatal``, ``denied``, ``not found``… near the two ends of each output) and **decision
  and finding words** in what the assistant wrote ("because", "instead of", "root cause",
  "downgrade", "weil", "parce que", "porque", "因为", "決定"…);
- **answers**: the lines of the first outputs after a question (a short ask with a question
  mark) that name its topic (``How many replicas do we run?`` → ``replicas: 3``), however
  plain their words.

A place is widened to what a reader needs: its line when the line is short, else the
sentence or a window around it (:meth:`SpanText.snippet`).
"""

from __future__ import annotations

import bisect
import itertools
import json
import operator
import re
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Sequence
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
SNIPPET_WINDOW = 200  # a window of a longer line: this many bytes…
_WINDOW = SNIPPET_WINDOW
_BEFORE = 60  # …of which these come before the spot

# A member of a record as structured output writes it: a quoted key and a colon (JSON),
# or, indented (a log's ``INFO: done`` and prose's ``Note: …`` are not), a plain key and a
# colon (YAML, maybe a list item's first) or `` = `` (TOML, INI); then a value, all of the
# line. Its indentation is group 1 or 2.
_KEY = r"[A-Za-z_][\w.-]{0,63}"
_MEMBER = re.compile(
    rb'([ \t]*)(?:- )?"[^"\n]{1,64}"[ \t]*:[^\n]*'
    + rf"|([ \t]+)(?:- )?{_KEY}(?::| =)(?= |$)[^\n]*".encode(),
    re.MULTILINE,
)
# A line of a source listing (``cat -n``'s tab, an editor's view: SWE-agent's ``36:
# raise …``): what a file holds (code is not an error), worth what a read showed.
LISTED = re.compile(r"\s*\d+(?:\t|:\s)")
# A setting as a config file holds it: one key and a scalar value (``max_conns = 965``,
# ``memory: 640Mi``, ``- GOMEMLIMIT=400m``, ``proxy_read_timeout 32s;``, ``MAX_BATCH = 500``),
# maybe numbered (:data:`LISTED`), maybe with a comment; not a call, not an expression, and
# not a JSON member (``"type": "text",``: JSON a file holds is data more often than not).
_SCALAR = r"(?:\"[^\"\n]{0,120}\"|'[^'\n]{0,120}'|[\w./:@%+-]{1,120})"
SETTING = re.compile(
    rf"(?:{LISTED.pattern})?\s*(?:- |export )?({_KEY})"
    rf"(?:\s*[=:]\s*{_SCALAR}[;,]?|[ \t]+{_SCALAR};)\s*(?:#[^\n]*)?"
)
"""A setting's line; its group 1 is the setting's key."""
# The same, as a line of text is tested (``RECORD_MEMBER.match(line)``).
RECORD_MEMBER = re.compile(_MEMBER.pattern.decode())
_RECORD_LINES = 8  # a record of more members than this is a dump, not one fact
_RECORD_BYTES = 160  # a member line longer than this tells enough alone
# A member of pretty JSON that names its record (an id, a key or a name, a scalar: the
# line of it a pretty printer writes, its indentation stripped)…
_IDENTITY = re.compile(
    rb'"(?:[Ii][Dd]|[Kk]ey|[Nn]ame|[Uu]id|[Nn]umber|[Ss]lug|[Ss]ku|[Tt]itle'
    rb'|[\w-]*(?:_id|Id|_key|_name))"\s*:\s*(?:"[^"\n]*"|-?\d[\w.:-]*),?\s*$'
)
# …and of an indented record (YAML, ``kubectl describe``): its unquoted key, a scalar…
_KEY_IDENTITY = re.compile(
    rb"(?:- )?(?:[Ii][Dd]|[Kk]ey|[Nn]ame|[Uu]id|[\w-]*(?:_id|Id|_name))\s*[:=][ \t]*[^\s{\[][^\n]*$"
)
# …where a line of a key and a colon (and maybe a value: ``Last State:  Terminated``)
# holds the members indented under it.
_YAML_PARENT = re.compile(rb"(?:- )?[\w][\w .-]{0,40}:(?:[ \t][^\n]*)?$")
_OWNER_LINES = 40  # …looked for this many lines up from a nested member, at most
# What a line of minified JSON is read by to find an object's end: a string (skipped
# whole, its brackets with it) or a bracket.
_JSON_TOKEN = re.compile(rb'"(?:[^"\\\n]|\\.)*"|[][{}]')
# Where a long line of minified JSON (or a Python repr) goes from one record of a list to
# the next (the comma after a closing bracket, before an opening one), where a list of
# records opens (before its first) and where it closes (after its last); and the same
# with the newline that sets the record apart.
_RECORD_EDGES = (
    ("},{", "},\n{"),
    ("}, {", "},\n {"),
    ("],[", "],\n["),
    ("], [", "],\n ["),
    ("[{", "[\n{"),
    ("[ {", "[\n {"),
    ("[[", "[\n["),
    ("}]", "}\n]"),
    ("]]", "]\n]"),
)

# Words: quotes, brackets, commas, pipes and the like are spaces (a sentence's final stop
# stays with its word: ``keepalive.`` is built like every word that ends a sentence).
_SEPARATORS = b"\"'()[]{}<>,;|`\t\r!?*\\"
_NORMAL = bytes.maketrans(_SEPARATORS, b" " * len(_SEPARATORS))
_ELLIPSIS = "…".encode()
# A word's class: its digits 9, its letters (of any script) left out, the rest kept
# (``req=3f9a2c1b`` → ``=9999``, ``OPS-4127`` → ``-9999``, ``retry_backoff_ms`` → ``__``).
_CLASS = bytes.maketrans(b"0123456789", b"9" * 10)
EDGES = b".:-_/=#+~%$&"  # punctuation at a word's ends is not part of its build
_CLASS_DELETE = bytes(c for c in range(256) if chr(c).isalpha() or c >= 0x80)
_HEX = b"0123456789abcdefABCDEF"
_HASH_FROM = 7  # a run of hex digits and letters this long is a hash (a commit, an id)
# A quantity: a number and its unit (``640Mi``, ``4.2GB``, ``30s``).
_UNIT = re.compile(rb"[\d.,]*\d([A-Za-z]{1,3})")
_DIGIT_BYTES = tuple(bytes([c]) for c in b"0123456789")
_LETTER_BYTES = tuple(bytes([c]) for c in range(128) if chr(c).isalpha())
DIGITS = b"0123456789"  # deleted with ``bytes.translate``: what a word holds but digits
# deleted likewise: every byte but the digits and the newlines (each line's digits)
NOT_DIGITS = bytes(c for c in range(256) if c not in DIGITS + b"\n")
DUMP_LINES = 8  # an output of this many lines may be a dump (a log, a table, a config)
_ODD_PER_DUMP = 8  # of one dump, at most this many odd lines lead (of each kind)
_COLUMN_ROWS = 5  # rows built alike, at least this many, are compared column by column…
_COLUMN_COMMON = 0.6  # …where a column this share of whose cells say one thing is read
_ALONE_PER = 10  # …and at most one cell in this many says a thing no other cell says
_FAR = 4.0  # …or, in a column of numbers, is this many times the largest of the rest
# A cell that is a number, with its unit if any (``1742``, ``3900Mi``, ``900 MB``, ``97%``).
_NUMBER_CELL = re.compile(rb"\d+(?:\.\d+)? ?[A-Za-z%]{0,3}")
_NUMERAL = b"0123456789."
_UNIT_LETTERS = bytes(c for c in range(128) if chr(c).isalpha()) + b"%"
# What a shape leaves out: letters, digits, the underscore and spaces (not newlines and
# commas: they cut segments).
SHAPE_DELETE = bytes(
    c for c in range(128) if (chr(c).isalnum() or chr(c) in " \t\r_") and chr(c) not in "\n,"
)

# Whether lines repeat enough to read each once: judged on about this many of them…
_SAMPLE_LINES = 2_000
_DISTINCT_ENOUGH = 0.9  # …of which fewer than this share are distinct
RARE_UPTO = 8  # a word found at most this often in the span is rare
FAMILY_FROM = 6  # a class with this many distinct rare words is a family of look-alikes
_FAMILY_CUT = 64  # …and with this many, none of them is distinctive
_LONGEST = 160  # a longer word (a blob: base64, minified code) is not one word

# Failure words, searched for in the lower-cased text, each a literal (one alternation of
# them all would cost several times more): the common ones over all of the text, the
# others over the two ends of each output, where outcomes are told.
# Failure words: a word holding one of these stems (in any case) says something failed;
# and these phrases, near the two ends of an output, where outcomes are told.
FAILURE_STEMS = (
    *(b"rror", b"xception", b"fail", b"fatal", b"panic", b"denied", b"refused", b"cannot"),
    *(b"unable", b"unavailable", b"forbidden", b"traceback", b"segmentation", b"critical"),
    *(b"abort", b"oomkilled", b"crashloop", b"err!"),
    # other languages' (fr, de, ru, zh, ja, ko): a tool's message in the user's locale
    *(word.encode() for word in ("erreur", "échec", "échoué", "fehler", "fehlgeschlagen")),
    *(word.encode() for word in ("ошибк", "сбой", "错误", "失败", "エラー", "失敗")),
    *(word.encode() for word in ("오류", "실패")),
)
# A test a runner ran again is flaky: its marker, in capitals (pytest-rerunfailures'
# ``RERUN``, Bazel's ``FLAKY, failed in 1 out of 2``), is a failure word; the count of
# reruns (``2 rerun in 81s``) is not.
FAILURE_MARKERS = frozenset((b"RERUN", b"FLAKY"))
END_ERROR_WORDS = (
    *(b"no such", b"not found", b"ould not", b"caused by", b"no replacement", b"timed out"),
    *(b"bad gateway", b"permission"),
    # a file git could not merge (``CONFLICT (content): Merge conflict in …``), and what
    # a compiler or linker names missing (Go ``undefined: roundCents``, ld's ``undefined
    # reference to``, Kotlin's ``Unresolved reference``, Rust's ``unresolved import``,
    # MSVC's ``unresolved external symbol``); as phrases: a test named
    # ``test_merge_conflict`` or ``test_unresolved_refs`` that passed is no failure
    *(b"conflict (", b"merge conflict", b"undefined:", b"undefined reference"),
    *(b"unresolved reference", b"unresolved import", b"unresolved external"),
)
_END_HEAD = 200  # an output's ends: this many bytes of its head…
_END_TAIL = 400  # …and of its tail

# Decision and conclusion words, as people write them (several languages; lower case).
DECISION_WORDS = (
    *("cause", "decid", "instead", "rather than", "due to", "so that", "turns out", "flaky"),
    *("we will", "we'll", "won't", "will not", "do not", "don't", "avoid", "revert"),
    *("roll back", "rollback", "downgrad", "stick with", "switch to", "chose", "pin "),
    *("i will", "i'll", "let's", "going to", "next i ", "plan:"),  # plans
    *("weil", "entschied", "stattdessen", "ursache", "deshalb"),  # de
    *("parce qu", "décid", "au lieu d", "plutôt"),  # fr
    *("porque", "en lugar de", "en vez de", "debido a", "decidimos"),  # es
    *("em vez de", "devido a", "perché", "invece di", "anziché", "deciso", "poiché"),  # pt, it
    *("causa ",),  # es, pt, it: "la causa raíz", "a causa raiz" (a phrase: no "causal")
    *("потому что", "так как", "из-за", "вместо", "решили", "причина"),  # ru
    *("omdat", "in plaats van", "besloten"),  # nl
    *("ponieważ", "zamiast", "zdecydowa"),  # pl
    *("çünkü", "yerine", "karar ver"),  # tr
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
# A plan said with an apostrophe leads to no line: with them, the plans of a session's
# prose ("I'll check the logs") crowded facts out at 8k (the team probe lost 3 of 494).
_UNLED_PLANS = frozenset({"i'll", "let's"})
# Searched for: the words holding a decision or finding word without a space or an
# apostrophe (in the distinct words of what people wrote, at once: a word is what is left
# between :data:`_SEPARATORS`, and an apostrophe is one), and the others as phrases in
# the text; each written with a typographic apostrophe too (``won’t``: a word).
_DECISION_BYTES = tuple(
    sorted(
        form.encode()
        for word in {*DECISION_WORDS, *FINDING_WORDS} - _UNLED_PLANS
        for form in {word, word.replace("'", "’")}
    )
)
_DECISION_STEMS = tuple(word for word in _DECISION_BYTES if b" " not in word and b"'" not in word)
_DECISION_PHRASES = tuple(word for word in _DECISION_BYTES if b" " in word or b"'" in word)
_SENTENCE_ENDS = (b". ", b"! ", b"? ", b"\xe3\x80\x82")  # the last one: "。"

_Tree = dict[str, "_Tree"]


def any_of(literals: Iterable[str]) -> re.Pattern[str]:
    """A pattern whose ``search`` finds whether one of ``literals`` occurs in a text: the
    words as a tree of their letters (``d(?:ecid|ue to|o not…)``), so that each place is
    tried once per first letter rather than once per word (several times faster than
    their plain alternation for as many words as :data:`DECISION_WORDS`). Where one word
    starts another, the shorter is enough: a match is where one of them starts, not which."""
    tree: _Tree = {}
    for literal in literals:
        node = tree
        for char in literal:
            node = node.setdefault(char, {})
        node[""] = {}

    def branch(node: _Tree) -> str:
        if "" in node:  # a literal ends here: whatever follows, it has been found
            return ""
        options = [re.escape(char) + branch(node[char]) for char in sorted(node)]
        return options[0] if len(options) == 1 else f"(?:{'|'.join(options)})"

    return re.compile(branch(tree) if tree else "(?!)")


def normalize(text: bytes) -> bytes:
    """``text`` with separators made spaces (same length, same offsets): its words are
    what ``.split()`` gives."""
    return text.translate(_NORMAL)


def words(text: str | bytes) -> list[bytes]:
    """The words of ``text``, as the span counts them (an ellipsis marks a cut: it is
    not part of a word)."""
    data = text.encode("utf-8", "replace") if isinstance(text, str) else text
    if _ELLIPSIS in data:
        data = data.replace(_ELLIPSIS, b" ")
    return normalize(data).split()


def words_of_each(texts: Iterable[str]) -> Iterator[list[bytes]]:
    """:func:`words` of each of ``texts``, in order, each step run over all of them at
    once."""
    encoded = map(str.encode, texts, repeat("utf-8"), repeat("replace"))
    unmarked = map(bytes.replace, encoded, repeat(_ELLIPSIS), repeat(b" "))
    return map(bytes.split, map(bytes.translate, unmarked, repeat(_NORMAL)))


def word_class(word: bytes) -> bytes:
    """How a word is built: look-alikes share a class (``req=3f9a2c1b`` → ``=9999``,
    ``OPS-4127`` → ``-9999``, ``retry_backoff_ms`` → ``__``; a word of letters only has
    none); a hash (hex digits and letters, :data:`_HASH_FROM` or more of them) is one
    of the hashes of its length, whatever its digits (``5ce97d78c4`` → ``#10``); a
    quantity keeps its unit (``640Mi`` → ``999Mi``, ``4.2GB`` → ``9.9GB``: it is not one
    of the span's plain numbers). The punctuation at its ends is not its build
    (``Error:``, ``gateway.``)."""
    key = word.strip(EDGES)
    return _built(key, key.translate(_CLASS, _CLASS_DELETE))


def _built(key: bytes, built: bytes) -> bytes:
    """The class of ``key`` from ``built`` (its digits 9, its letters left out): a hash
    or a quantity told apart (:func:`word_class`)."""
    if not built or len(built) == len(key):
        return built
    if len(key) >= _HASH_FROM and not key.translate(None, _HEX):
        return b"#%d" % len(key)
    if key[:1].isdigit() and (unit := _UNIT.fullmatch(key)) is not None:
        return built + unit[1]
    return built


# A progress bar tells how far a download or a loop had got, never a result: tqdm's
# ``27%|██▋      | 14/51 [00:00<00:00, 45413.96it/s]`` (its unique rate looks like an id),
# pip's and rich's ``━━━━━━━━━━━━ 1.2/3.4 MB 5.6 MB/s eta 0:00:01``. Only bar characters
# between the pipes (blank only at 0 %): a table's ``| api | 99%| ok | 3/3 |`` is no bar.
PROGRESS_BAR = re.compile(
    r"(?:\d{1,3}%\s?\| {0,99}[█▉▊▋▌▍▎▏][█▉▊▋▌▍▎▏ ]{0,99}|(?<!\d)0%\| {5,100})"
    r"\|\s*\d+(?:\.\d+)?[kMGT]?(?:i?B)?/\d"
    r"|━{3,}[^\n]{0,40}?\d+(?:\.\d+)?/\d+(?:\.\d+)?"
)
_MARKS = ("%|", "% |", "━━━")  # what every bar PROGRESS_BAR finds holds, one at least
BAR_MARKS = tuple(mark.encode() for mark in _MARKS)


def is_progress_bar(line: str) -> bool:
    """Whether ``line`` holds a progress bar (:data:`PROGRESS_BAR`); the regex runs only
    where a bar's mark is."""
    return any(mark in line for mark in _MARKS) and PROGRESS_BAR.search(line) is not None


def shape(text: bytes) -> bytes:
    """How a line is built (of each line of ``text``, newlines kept): its punctuation, its
    words, numbers and spaces left out (the lines of a log that differ only by their ids
    and numbers share one), and the comma that ends it too: the last member of a list or
    of a record, which has none, is built like the others."""
    built = text.translate(None, SHAPE_DELETE).replace(b",\n", b"\n")
    return built[:-1] if built.endswith(b",") else built


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

    def record(self, snippet: Snippet, at: int | None = None) -> Snippet:
        """A member line of structured output (``"code": "E_STATE",`` in pretty JSON,
        ``memory: 640Mi`` in YAML, ``port = 5433`` in TOML) with the members beside it: the
        lines around it at its indentation that are members too, when they are few
        (:data:`_RECORD_LINES`) and short (:data:`SNIPPET_BYTES` together). In a window
        of a long line of minified JSON, the smallest object around byte ``at`` (the
        spot the window was cut around) when it is short and has members beside the one
        there (:meth:`_object_around`). A value read without its record's id or its
        siblings tells the next turn little. Any other snippet is returned as it is."""
        blob = self.blob
        start, end = snippet.start, snippet.end
        if snippet.cut_before or snippet.cut_after:
            return snippet if at is None else self._object_around(snippet, at)
        if end - start > _RECORD_BYTES:
            return snippet
        member = _MEMBER.match(blob, start, end)
        if member is None or member.end() < end:
            return snippet
        indent = _indent(member)
        first, last = self.starts[snippet.piece], self.piece_end(snippet.piece)

        def sibling(line_start: int, line_end: int) -> bool | None:
            """Whether the line is a member at ``indent`` with a value of its own (not an
            object or a list it opens); ``None``: one too long to be."""
            found = _MEMBER.match(blob, line_start, min(line_end, line_start + _RECORD_BYTES))
            if found is None or _indent(found) != indent:
                return False
            if blob[line_start:line_end].rstrip().endswith((b":", b"{", b"[")):
                return False
            return True if line_end - line_start <= _RECORD_BYTES else None

        lines = 1  # a record of more members than _RECORD_LINES is a dump: read apart
        while lines <= _RECORD_LINES and start > first:
            before = max(blob.rfind(b"\n", first, start - 1) + 1, first)
            is_member = sibling(before, start - 1)
            if is_member is None:
                return snippet
            if not is_member:
                break
            start, lines = before, lines + 1
        while lines <= _RECORD_LINES and end < last:
            after = _end(blob.find(b"\n", end + 1, last), last)
            is_member = sibling(end + 1, after)
            if is_member is None:
                return snippet
            if not is_member:
                break
            end, lines = after, lines + 1
        if lines == 1 or lines > _RECORD_LINES or end - start > SNIPPET_BYTES:
            return snippet
        return Snippet(start, end, snippet.piece, False, False)

    def _lines_above(self, member: Snippet) -> Iterator[tuple[int, int, bytes]]:
        """The lines above ``member`` in its piece, the nearest first, at most
        :data:`_OWNER_LINES`: where each starts, its indentation, and the rest of it."""
        blob, first = self.blob, self.starts[member.piece]
        end = member.start - 1
        for _ in range(_OWNER_LINES):
            if end <= first:
                return
            start = max(first, blob.rfind(b"\n", first, end) + 1)
            line = blob[start:end]
            body = line.lstrip(b" \t")
            yield start, len(line) - len(body), body.rstrip()
            end = start - 1

    @staticmethod
    def _naming(member: Snippet, start: int, indent: int, body: bytes) -> Snippet | None:
        """The line (at ``start``) naming ``member``'s record; ``None`` when it is too long
        to be a name."""
        if len(body) > _RECORD_BYTES:
            return None
        return Snippet(start + indent, start + indent + len(body), member.piece, False, False)

    def _indented_owner(self, member: Snippet, level: int) -> Snippet | None:
        """:meth:`owner_of` a member of an indented record, indented by ``level``: up from
        it, through the lines of a key and a colon that hold it (``Last State:``,
        ``containers:``), the nearest sibling of one of them (or of the member) with an
        identity key (``Name:  refunds-api-7d9f``, ``name: web``), up to a line that is
        no key (the record's start)."""
        lines = self.blob[member.start : member.end].split(b"\n")
        if any(_KEY_IDENTITY.match(line.lstrip(b" \t")) for line in lines):
            return None  # the record names itself
        for start, indent, body in self._lines_above(member):
            if body and indent <= level:  # a sibling, or a key that holds them
                if _KEY_IDENTITY.match(body):
                    return self._naming(member, start, indent, body)
                if not _YAML_PARENT.match(body):
                    return None  # the record's start
                level = indent
        return None

    def owner_of(self, member: Snippet) -> Snippet | None:
        """The line naming the record that a member of nested pretty JSON (or a small
        record of them, :meth:`record`) belongs to, when it does not name itself: up
        from ``member``, the nearest member with an identity key (:data:`_IDENTITY`:
        ``id``, ``key``, ``name``, ``*_id``…) among the members of each object that
        holds it, within :data:`_OWNER_LINES` lines (``"order_id": "ORD-48213",`` for
        the ``"state": "lost"`` of its ``shipment.carrier``); of an indented record's
        member, :meth:`_indented_owner`. ``None`` when there is none before the
        record's opening brace (or start), or when ``member`` is no member. A value read
        without its record's id tells the next turn little."""
        if member.cut_before or member.cut_after:
            return None
        found = _MEMBER.match(self.blob, member.start, member.end)
        if found is None:
            return None  # no member
        if found.group(1) is None:  # an indented record's member (YAML, ``kubectl describe``)
            return self._indented_owner(member, len(found.group(2)))
        lines = self.blob[member.start : member.end].split(b"\n")
        if any(_IDENTITY.match(line.lstrip(b" ")) for line in lines):
            return None  # the record names itself
        level = len(found.group(1))
        for start, indent, body in self._lines_above(member):
            if indent < level:
                if not body.endswith((b"{", b"[")) or body[:1] != b'"':
                    return None  # the record's own opening brace, or no JSON
                level = indent  # the member that holds the object: its siblings are next
            elif indent == level and _IDENTITY.match(body):
                return self._naming(member, start, indent, body)
        return None

    def _object_around(self, window: Snippet, at: int) -> Snippet:
        """The smallest JSON object of at least two members around byte ``at`` of a long
        line (``window``: a window of it), no longer than the window
        (:data:`SNIPPET_WINDOW`), as a snippet cut from its line; ``window`` when there is
        none (not JSON, a larger object, a brace inside a string)."""
        blob = self.blob
        first, last = blob.rfind(b"\n", 0, at) + 1, self.piece_end(window.piece)
        low = max(first, self.starts[window.piece], at - _WINDOW)
        opening = blob.rfind(b"{", low, at + 1)
        while opening >= 0:
            closing = _closing(blob, opening, min(last, opening + _WINDOW))
            if closing is None:  # the object here is longer, and so is any around it
                return window
            if closing > at:
                try:
                    members = json.loads(blob[opening:closing])
                except ValueError:
                    return window
                if not isinstance(members, dict) or len(members) < 2:
                    return window
                line_end = _end(blob.find(b"\n", at, last), last)
                return Snippet(opening, closing, window.piece, opening > first, closing < line_end)
            opening = blob.rfind(b"{", low, opening)  # an object before the spot: further out
        return window


def _closing(blob: bytes, opening: int, limit: int) -> int | None:
    """Where the bracket at ``opening`` is closed (one past it), read to ``limit`` at most;
    ``None`` when it is not closed by then."""
    depth = 0
    for token in _JSON_TOKEN.finditer(blob, opening, limit):
        bracket = token.group()
        if bracket in (b"{", b"["):
            depth += 1
        elif bracket in (b"}", b"]"):
            depth -= 1
            if not depth:
                return token.end()
    return None


_RECORD_CHARS = 24  # a line's records are set apart when they are this long on average
_ESCAPED_BREAKS = 2  # a line holding this many escaped line breaks (or more) holds lines
# What a string in JSON (or a Python repr) escapes, as it reads unescaped.
_UNESCAPED = (("\\r\\n", "\n"), ("\\n", "\n"), ("\\t", "\t"), ('\\"', '"'))
_STRING_MEMBER = re.compile(r'\s*"[^"\n]{1,64}"\s*:\s*"')  # ``  "stderr": "…``
# What ``gh run view --log`` writes before each line of a job's log: the job, the step
# and the time, tab-separated (``build\tRun tests\t2026-03-04T10:11:30.1234567Z ``).
_CI_PREFIX = re.compile(
    r"^[^\t\n]{1,100}\t[^\t\n]{1,200}\t\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z ?", re.M
)


def output_lines(text: str) -> str:
    """An output as the scan reads it, line by line: the lines a long line holds escaped
    (a command's stdout and stderr in a JSON tool result: ``{"stderr": "Traceback
    …\\n  File \\"/app/sync.py\\", line 786…"}``) made lines (:func:`lines_unescaped`),
    each record of a list in a long line on a line of its own (:func:`records_apart`),
    and a CI log's lines without the job, step and time GitHub Actions writes before
    each (:data:`_CI_PREFIX`), so that an error is read with the frame under it; the
    letters JSON escapes written as they read (:func:`letters_unescaped`)."""
    text = records_apart(lines_unescaped(letters_unescaped(text)))
    if "\t" in text and _CI_PREFIX.search(text):
        text = _CI_PREFIX.sub("", text)
    return text


# A letter JSON writes escaped (``json.dumps`` does, by default, for every letter beyond
# ASCII): ``\u00ed``, or a pair of surrogates, ``\ud83d\ude80``; not after a backslash (an
# escaped backslash before a ``u``).
_ESCAPED_LETTER = re.compile(
    r"(?<!\\)\\u(d[89ab][0-9a-f]{2})\\u(d[c-f][0-9a-f]{2})|(?<!\\)\\u([0-9a-f]{4})", re.I
)


def letters_unescaped(text: str) -> str:
    """``text`` with the letters beyond ASCII that JSON escaped written as they read
    (``"name": "Luc\\u00eda"`` → ``"name": "Lucía"``, as the user would write the
    name); the escapes of ASCII (a quote, a control character), of what does not print
    (``\\u2028``, a line separator to ``str.splitlines``) and lone surrogates are left
    as they are."""
    return _ESCAPED_LETTER.sub(_letter_of, text) if "\\u" in text else text


def _letter_of(escape: re.Match[str]) -> str:
    high, low, single = escape.groups()
    if single is None:
        code = 0x10000 + ((int(high, 16) - 0xD800) << 10) + int(low, 16) - 0xDC00
    else:
        code = int(single, 16)
        if code < 0x80 or 0xD800 <= code < 0xE000:
            return escape.group(0)
    letter = chr(code)  # a line or paragraph separator, a control, stays escaped
    return letter if letter.isprintable() else escape.group(0)


def lines_unescaped(text: str) -> str:
    """``text`` with the lines a line holds escaped made real: its escaped line breaks,
    tabs and quotes (:data:`_UNESCAPED`), in each line longer than
    :data:`SNIPPET_BYTES` (or a JSON member whose value is a string: pretty JSON's
    ``"stderr": "…"``) that holds :data:`_ESCAPED_BREAKS` escaped line breaks or more,
    lines of :data:`_RECORD_CHARS` characters on average. Other lines are left as they
    are (a line of code that writes ``"a\\nb\\n"``, a string of breaks alone)."""
    if "\\n" not in text:
        return text
    return "\n".join(map(_unescaped, text.split("\n")))


def _unescaped(line: str) -> str:
    breaks = line.count("\\n")
    if breaks < _ESCAPED_BREAKS or len(line) < breaks * _RECORD_CHARS:
        return line  # a line break or two in a string, or breaks by the million
    if len(line) <= SNIPPET_BYTES and not _STRING_MEMBER.match(line):
        return line  # a line of code, say, that writes ``"a\\nb\\n"``
    for escaped, real in _UNESCAPED:
        line = line.replace(escaped, real)
    return line


def records_apart(text: str) -> str:
    """``text`` with each record of a list in a long line (minified JSON, a Python repr:
    ``[{"sku": "A-1", …}, {"sku": "B-2", …}]``) on a line of its own, as pretty output has
    them: the rows the scan compares, where the one record unlike the others (a failed
    charge among forty that succeeded) is news. Only newlines are added
    (:data:`_RECORD_EDGES`): after the commas between records, after the bracket that
    opens a list of them and before the one that closes it. Lines of at most
    :data:`SNIPPET_BYTES` characters, and lines whose records are shorter than
    :data:`_RECORD_CHARS` on average (or that have none), are left as they are."""
    if "}," not in text and "]," not in text:
        return text
    lines = text.split("\n")
    return "\n".join(map(_records_apart, lines)) if max(map(len, lines)) > SNIPPET_BYTES else text


def _records_apart(line: str) -> str:
    if len(line) <= SNIPPET_BYTES:
        return line
    records = line.count("},") + line.count("],") + 1
    if records == 1 or len(line) < records * _RECORD_CHARS:  # ``{},{}`` by the million
        return line
    for edge, apart in _RECORD_EDGES:
        line = line.replace(edge, apart)
    return line


def _indent(member: re.Match[bytes]) -> bytes:
    return member.group(1) if member.group(1) is not None else member.group(2)


def _end(found: int, default: int) -> int:
    return default if found < 0 else found


class Scan:
    """What one linear read of a span found: how often each word occurs (:attr:`counts`),
    and in what people wrote (:attr:`said`); the families of rare look-alikes; the
    distinctive words and where they are (:attr:`places`); how many lines share each
    shape (:attr:`shapes`), the odd lines of dumps (:attr:`odd`) and the rows that stand
    out of their column (:attr:`standing_out`), the settings a diff of a configuration
    file changes (:attr:`changed`, odd lines too); the failure words in outputs
    (:attr:`errors`); the decision and finding words in what the assistant wrote and in
    the documents people wrote that a tool read (``documents``: the messages whose output
    is one) (:attr:`decisions`); the lines of outputs that answer a question
    (:attr:`answers`)."""

    def __init__(self, span: SpanText, documents: Collection[int] = ()) -> None:
        self.span = span
        blob = span.blob
        mapped = normalize(blob)
        starts = span.starts
        said = [i for i, kind in enumerate(span.kinds) if kind in (ASK, PROSE)]
        said_text = b"\n".join(mapped[starts[i] : starts[i + 1] - 1] for i in said)
        self.said: Counter[bytes] = Counter(said_text.split())
        # each line once, where it is first, when lines repeat: a line said again adds no
        # new word (its repeats are counted where a line is weighed, not in its words')
        lines = mapped.split(b"\n")
        sample = lines[:: max(1, len(lines) // _SAMPLE_LINES)]
        if len(set(sample)) < len(sample) * _DISTINCT_ENOUGH:
            first = dict(zip(reversed(lines), range(len(lines) - 1, -1, -1), strict=True))
            distinct = list(first)
            text = b"\n".join(distinct)
        else:  # hardly a line repeats: read them as they are
            first, distinct, text = {}, lines, mapped
        tokens = text.split()
        self.counts: Counter[bytes] = Counter(tokens)
        # what people wrote, by each word's core (``2025-12-22.`` at a sentence's end is
        # the ``2025-12-22`` of an output), and the forms each core was written in
        # (most words have no such punctuation: only the others are looked at one by one)
        said_words = list(self.said)
        said_keys = list(map(bytes.strip, said_words, repeat(EDGES)))
        self._said_cores: dict[bytes, int] = dict(self.said)
        self._forms: dict[bytes, set[bytes]] = {}
        for i in compress(range(len(said_words)), map(operator.ne, said_keys, said_words)):
            key, token = said_keys[i], said_words[i]
            self._said_cores[key] = self._said_cores.get(key, 0) + self.said[token]
            self._forms.setdefault(key, {key}).add(token)
        self.family, self.distinct = self._families()
        failing = _holding(list(self.counts), FAILURE_STEMS)
        failing |= FAILURE_MARKERS.intersection(self.counts)
        kinds, owners = span.kinds, span.owners
        papers = [i for i, kind in enumerate(kinds) if kind == OUTPUT and owners[i] in documents]
        written = set(b" ".join(mapped[starts[i] : starts[i + 1] - 1] for i in papers).split())
        deciding = _holding(list(written.union(self.said)), _DECISION_STEMS)
        placed = _places(text, tokens, self.distinct | failing | deciding)
        if first:  # from the distinct lines back to where each line first is in the span
            # where each line starts in the span, and in the distinct lines joined
            line_starts = _line_starts(lines)
            distinct_starts = _line_starts(distinct)
            moved: list[tuple[int, bytes]] = []
            for at, token in placed:
                k = bisect.bisect_right(distinct_starts, at) - 1
                moved.append((line_starts[first[distinct[k]]] + at - distinct_starts[k], token))
            placed = sorted(moved)
        self.places = [place for place in placed if place[1] in self.distinct]
        failures = [at for at, token in placed if token in failing]
        decisions = [at for at, token in placed if token in deciding]
        line_shapes = shape(blob).split(b"\n")
        self.shapes: Counter[bytes] = Counter(line_shapes)
        self.odd, self.standing_out = _odd_lines(span, line_shapes, self.shapes)
        self.changed = frozenset(_changed_settings(span))
        self.odd = sorted({*self.odd, *self.changed})
        self.answers = _answer_places(span)
        self.errors = _error_places(span, failures)
        self.decisions = _decision_places(span, decisions, papers)

    def _families(self) -> tuple[Counter[bytes], frozenset[bytes]]:
        """How many distinct rare words each class holds, and the distinctive words: the
        rare words of a small family, and the rare words people wrote that the outputs
        hold too (they referred to them). A word of letters only (a plain word, a name, a
        phrase of another script) is in no family and not distinctive by itself; nor is
        a blob."""
        counts = self.counts
        rare = [token for token, count in counts.items() if count <= RARE_UPTO]
        cores = list(map(bytes.strip, rare, repeat(EDGES)))
        classes = list(map(bytes.translate, cores, repeat(_CLASS), repeat(_CLASS_DELETE)))
        # the hashes and the quantities (word_class, for all rare words at once): a hash
        # is long and all hex; a quantity starts with a digit and ends with a letter
        long = map(operator.ge, map(len, cores), repeat(_HASH_FROM))
        hexless = map(bytes.translate, cores, repeat(None), repeat(_HEX))
        heads = map(bytes.startswith, cores, repeat(_DIGIT_BYTES))
        tails = map(bytes.endswith, cores, repeat(_LETTER_BYTES))
        hashes = map(operator.and_, long, map(operator.not_, hexless))
        for i in compress(
            range(len(cores)), map(operator.or_, hashes, map(operator.and_, heads, tails))
        ):
            classes[i] = _built(cores[i], classes[i])
        family = Counter(classes)
        family.pop(b"", None)
        small = map(operator.gt, repeat(_FAMILY_CUT), map(family.get, classes, repeat(_FAMILY_CUT)))
        short = map(operator.ge, repeat(_LONGEST), map(len, rare))
        chosen = set(compress(rare, map(operator.and_, small, short)))
        said = self.said
        chosen.update(  # the words people wrote as they are…
            token
            for token, times in said.items()
            if times < counts[token] <= RARE_UPTO and len(token) <= _LONGEST and word_class(token)
        )
        for key, forms in self._forms.items():  # …and those written with punctuation
            if self._said_cores[key] < self._found(key) <= RARE_UPTO and word_class(key):
                chosen.update(form for form in forms if form in counts and len(form) <= _LONGEST)
        return family, frozenset(chosen)

    def family_of(self, word: bytes) -> int:
        """How many distinct rare look-alikes ``word`` has in the span (itself included).
        Look-alikes are generated values — ids, hashes, times, numbers: a word whose
        class holds no digit (a name: ``test_refund_idempotency``, ``payouts-worker``,
        ``ledger.window``, or letters only) is in no family, however many other names
        the span holds (1)."""
        built = word_class(word)
        if b"9" not in built and not built.startswith(b"#"):
            return 1
        return self.family.get(built, 1)

    def referred(self, word: bytes) -> bool:
        """Whether ``word`` is in what people wrote and in what the tools gave, whatever
        punctuation ends it."""
        return 0 < self._said_cores.get(key := word.strip(EDGES), 0) < self._found(key)

    def _found(self, key: bytes) -> int:
        """How often a word people wrote (by its ``key``, its core) is in the span."""
        counts = self.counts
        forms = self._forms.get(key)
        return counts.get(key, 0) if forms is None else sum(counts.get(f, 0) for f in forms)

    def of_piece(self, piece: int) -> list[tuple[int, bytes]]:
        """The places of distinctive words in ``piece``, in order."""
        starts = self.span.starts
        first = bisect.bisect_left(self.places, (starts[piece], b""))
        last = bisect.bisect_left(self.places, (starts[piece + 1], b""))
        return self.places[first:last]


def _places(text: bytes, tokens: list[bytes], wanted: frozenset[bytes]) -> list[tuple[int, bytes]]:
    """Where each occurrence of a ``wanted`` word of ``text`` is, in order (``tokens``:
    its words, as split): one forward walk, each find starting where the last one
    ended, checked to be the whole word."""
    if not wanted:
        return []
    found: list[tuple[int, bytes]] = []
    at = 0
    for token in filter(wanted.__contains__, tokens):
        place = text.find(token, at)
        while place >= 0 and not _whole(text, place, place + len(token)):
            place = text.find(token, place + 1)
        if place < 0:
            break
        found.append((place, token))
        at = place + len(token)
    return found


def _whole(text: bytes, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` is a whole word (white space or an end on each side)."""
    before, after = text[start - 1 : start], text[end : end + 1]
    return (start == 0 or before.isspace()) and (not after or after.isspace())


def _odd_lines(
    span: SpanText, shapes: list[bytes], counted: Counter[bytes]
) -> tuple[list[int], list[int]]:
    """Where the odd lines of the outputs of many lines are, and where the rows that stand
    out of their column are.

    Odd: in an output most of whose lines are built alike (a log, a table, a config),
    each line built like at most one other line of the span (``counted``: how many lines
    of the span have each shape). Standing out: each row with a cell no other row of its
    column holds, in a column most of whose cells say one thing (:func:`column_outliers`:
    ``suspended`` among ``active``); and in such a dump, each line built like most but
    alone with (or without) digits (``timeout_ms = 3471`` among ``x_enabled = true``).
    At most :data:`_ODD_PER_DUMP` of each per output, the first ones."""
    blob, starts, firsts = span.blob, span.starts, span.first_lines
    odd: list[int] = []
    standing_out: list[int] = []
    for piece, kind in enumerate(span.kinds):
        first, last = firsts[piece], firsts[piece + 1]
        size = last - first
        if kind != OUTPUT or size < DUMP_LINES:
            continue
        built = shapes[first:last]
        text = blob[starts[piece] : starts[piece + 1] - 1]
        rows = text.split(b"\n")
        sizes = list(itertools.accumulate(map(len, rows), initial=0))
        outliers = column_outliers(rows, built)
        # a dump is mostly lines built alike: one of them is at its start, middle or end
        common = max((built[0], built[size // 2], built[-1]), key=built.count)
        if built.count(common) * 5 < size * 2:  # not a dump (a source file, prose)
            standing_out.extend(starts[piece] + sizes[i] + i for i in outliers[:_ODD_PER_DUMP])
            continue
        alone = [
            i
            for i in compress(
                range(size), map(operator.ge, repeat(2), map(counted.get, built, repeat(0)))
            )
            if built[i]
        ]
        alike = list(compress(range(size), map(operator.eq, built, repeat(common))))
        digits = list(map(bool, text.translate(None, NOT_DIGITS).split(b"\n")))
        # built like most, but alone with digits (or without): a value among flags
        with_digits = [i for i in alike if digits[i]]
        if 0 < len(with_digits) <= 2:
            outliers.extend(with_digits)
        elif 0 < len(alike) - len(with_digits) <= 2:
            outliers.extend(i for i in alike if not digits[i])
        standing_out.extend(
            starts[piece] + sizes[i] + i for i in sorted(set(outliers))[:_ODD_PER_DUMP]
        )
        odd.extend(starts[piece] + sizes[i] + i for i in alone[:_ODD_PER_DUMP])
    return sorted(odd), sorted(standing_out)


# The file a unified diff's hunks change (its ``+++ b/config/app.yaml`` line), when it is
# a configuration file: what its settings say configures what runs (code's ``x = 5`` is
# not a setting).
_CONFIG_DIFF = re.compile(
    rb"\n\+\+\+ [^\n]*(?:\.(?:ya?ml|toml|ini|cfg|conf|env|properties|json|tf|tfvars|hcl)"
    rb"|/\.env[\w.]*|Dockerfile)[\t ]*(?=\n)"
)
_DIFF_FILE = b"\n+++ "


def is_change(line: str) -> bool:
    """Whether ``line`` of a unified diff adds or removes a line (``+…``, ``-…``; not a
    file's ``+++`` or ``---`` header)."""
    return line[:1] in ("+", "-") and line[1:2] not in ("+", "-")


def changed_key(line: str) -> str | None:
    """The key of the setting (:data:`SETTING`) that ``line`` of a diff adds or removes
    (``timeout_s`` of ``+  timeout_s: 90``); ``None`` for any other line."""
    found = SETTING.fullmatch(line[1:]) if is_change(line) else None
    return found.group(1) if found else None


# A short ask with a question mark is a question, and the lines of the outputs that follow
# it and name its topic are its answer (``How many replicas do we run?`` → ``replicas: 3``),
# however plain their words: a task statement (a longer ask) names too much to point at any
# line, and an ask that asks nothing ("Economy", "Yes, go ahead") points at none.
_QUESTION_BYTES = 300
_QUESTION_MARKS = (b"?", "？".encode())
_ANSWER_OUTPUTS = 3  # the outputs after a question read for its answer…
_ANSWER_READ = 32_000  # …each in this many of its first bytes…
_ANSWER_LINES = 3  # …of which at most this many lines answer it
_TOPICS = 8  # a question's topic: its first words this many at most (a question is short)
_TOPIC = re.compile(rb"[a-z]{4,24}")
_ACRONYM = re.compile(rb"\b[A-Z][A-Z0-9]{2,7}\b")  # ``JPY``, ``DNS``, ``S3`` is too short
# Words of four letters or more that name no topic: how people ask, not what about.
_NOT_TOPIC = frozenset(
    b"what when where which whose does have this that these those with from there their "
    b"they them then than into about would could should please check look show print "
    b"tell find make many much some will your just also still again need want like know "
    b"were been being here same only every other after before over under keep sure okay "
    b"thanks thank yeah happen happening going doing done right wrong work working help "
    b"give list anything something everything else".split()
)


def _answer_places(span: SpanText) -> list[int]:
    """Where the lines are (their starts) that answer a question (an ask of at most
    :data:`_QUESTION_BYTES` with a question mark): of the first :data:`_ANSWER_OUTPUTS`
    outputs before the next ask, the lines that name the question's topic (its words of
    four letters or more but :data:`_NOT_TOPIC`, and those in capitals, ``JPY``; the first
    :data:`_TOPICS`, each by its stem, found with an ending or without: ``batch`` in
    ``LEDGER_BATCH_SIZE`` and ``batches``, ``rounding`` in ``round``), at most
    :data:`_ANSWER_LINES` of each output, those naming most of it first, and the first
    line under such a line that is a key whose value is the block under it (``ports:``).
    Each output is read for one question: the scan is linear in the span."""
    blob, lower, kinds, starts = span.blob, span.lower, span.kinds, span.starts
    found: list[int] = []
    topics: list[bytes] = []
    outputs = 0
    for piece, kind in enumerate(kinds):
        if kind == ASK:
            text = lower[starts[piece] : starts[piece + 1] - 1]
            asking = len(text) <= _QUESTION_BYTES and any(m in text for m in _QUESTION_MARKS)
            named = _TOPIC.findall(text) if asking else []
            topics = [_stem(word) for word in named if word not in _NOT_TOPIC]
            if asking:  # and what it names in capitals, however short (``JPY``)
                asked = blob[starts[piece] : starts[piece + 1] - 1]
                topics += [word.lower() for word in _ACRONYM.findall(asked)]
            topics = list(dict.fromkeys(topics))[:_TOPICS]
            outputs = 0
        elif kind == OUTPUT and topics and outputs < _ANSWER_OUTPUTS:
            outputs += 1
            start = starts[piece]
            found += _naming(
                blob, lower, start, min(starts[piece + 1] - 1, start + _ANSWER_READ), topics
            )
    return found


def _stem(word: bytes) -> bytes:
    """A word without its inflection (:data:`_INFLECTIONS`: ``batches`` → ``batch``,
    ``rounding`` → ``round``, ``changed`` → ``chang``), when four letters or more are
    left: :func:`_naming` finds it with any of :data:`_ENDINGS` (``change``)."""
    for ending in _INFLECTIONS:
        if word.endswith(ending) and len(word) - len(ending) >= 4:
            if ending == b"s" and word.endswith(b"ss"):
                break  # ``access``, ``process``: no plural
            return word[: -len(ending)]
    return word


_INFLECTIONS = (b"ing", b"es", b"ed", b"s")  # the longest first
# The endings a topic is found with (``replica`` in ``replicas``, ``round`` in
# ``rounding``, ``chang`` in ``change``).
_ENDINGS = (b"", b"e", b"s", b"d", b"es", b"ed", b"er", b"ing", b"ers", b"ment")
_LOOKS = 128  # an output that names a question's topic this often is about it: no line answers


def _naming(blob: bytes, lower: bytes, start: int, end: int, topics: list[bytes]) -> list[int]:
    """The starts of the lines between ``start`` and ``end`` that name the most of
    ``topics`` (a topic as a whole word, or with one of :data:`_ENDINGS`), at most
    :data:`_ANSWER_LINES`, in order: of more lines that name it as much, the ones unlike
    the others when there are such (:func:`_unlike_the_rest`), else the first. None
    when the topics are found in it more than :data:`_LOOKS` times (a part of a word or
    not: the search stays short)."""
    named: dict[int, set[bytes]] = {}
    looks = 0
    for topic in topics:
        at, size = lower.find(topic, start, end), len(topic)
        while at >= 0:
            looks += 1
            if looks > _LOOKS:
                return []
            if not _lower_letter_at(lower, at - 1) and any(
                not _lower_letter_at(lower, at + size + len(ending))
                and lower.startswith(ending, at + size)
                for ending in _ENDINGS
            ):
                line = blob.rfind(b"\n", start, at) + 1 or start
                named.setdefault(line, set()).add(topic)
            at = lower.find(topic, at + size, end)
    most = max(map(len, named.values()), default=0)
    top = [line for line, said in named.items() if len(said) == most]
    if len(top) > _ANSWER_LINES:  # rows alike that all name it (a list of records): the
        unlike = _unlike_the_rest(blob, top)  # one unlike the others is the answer
        if unlike:
            return unlike[:_ANSWER_LINES]
    best = sorted(named, key=lambda line: (-len(named[line]), line))[:_ANSWER_LINES]
    return sorted({*best, *filter(None, (_first_child(blob, line, end) for line in best))})


def _first_child(blob: bytes, line: int, end: int) -> int | None:
    """Where the first line under the line at ``line`` starts, when that line is a key
    whose value is the block under it (``ports:``, then ``  - "6543:5432"``): the line
    after it, indented deeper; ``None`` for any other line."""
    stop = _end(blob.find(b"\n", line, end), end)
    text = blob[line:stop]
    if not text.rstrip().endswith(b":") or stop >= end:
        return None
    after = _end(blob.find(b"\n", stop + 1, end), end)
    child = blob[stop + 1 : after]
    indent = len(text) - len(text.lstrip())
    return stop + 1 if child.strip() and len(child) - len(child.lstrip()) > indent else None


def _unlike_the_rest(blob: bytes, lines: list[int]) -> list[int]:
    """Of the lines starting at ``lines``, in order, those built like no other of them
    (:func:`shape`: among forty records that each name ``delinquent``, the one whose
    balance went negative); when they are all built alike, those with a cell that stands
    out of its column (:func:`column_outliers`: the one service whose error rate is far
    above the others')."""
    lines = sorted(lines)
    rows = [blob[line : _end(blob.find(b"\n", line), len(blob))] for line in lines]
    shapes = list(map(shape, rows))
    alike = Counter(shapes)
    built_otherwise = [line for line, built in zip(lines, shapes, strict=True) if alike[built] == 1]
    return built_otherwise or [lines[i] for i in column_outliers(rows, shapes)]


def _lower_letter_at(text: bytes, at: int) -> bool:
    return 0 <= at < len(text) and 97 <= text[at] <= 122


def _changed_settings(span: SpanText) -> list[int]:
    """Where the lines are (their starts) that add or remove a setting (:data:`SETTING`:
    ``+  timeout_s: 90``, ``-MAX_BATCH = 500``) in the outputs' unified diffs of
    configuration files, at most :data:`_ODD_PER_DUMP` of each file's: the hunks under
    such a file's ``+++`` line, to the next file or the output's end."""
    blob, kinds = span.blob, span.kinds
    found: list[int] = []
    header = blob.find(_DIFF_FILE)
    while header >= 0:
        after = blob.find(_DIFF_FILE, header + 1)
        piece = span.piece_of(header + 1)
        if kinds[piece] == OUTPUT and (config := _CONFIG_DIFF.match(blob, header)):
            at = config.end() + 1
            end = min(span.piece_end(piece), after if after >= 0 else len(blob))
            of_file = 0
            for line in blob[at:end].split(b"\n"):
                if of_file >= _ODD_PER_DUMP:
                    break
                if line[:1] in b"+-" and changed_key(line.decode("utf-8", "replace")):
                    found.append(at)
                    of_file += 1
                at += len(line) + 1
        header = after
    return found


def column_outliers(rows: list[bytes], built: list[bytes]) -> list[int]:
    """The rows of a dump holding a cell that stands out of its column, in order: among
    rows built alike (the same punctuation, ``built``: each row's :func:`shape`) and cut
    into as many cells (their words; and a table's cells of many words, as one:
    :func:`_table_cells`), a column most of whose cells (:data:`_COLUMN_COMMON`) say
    one thing, and a cell that says another thing that no other cell of it says —
    ``suspended`` among ``active``, ``RERUN`` among ``PASSED``, ``failed`` among
    ``succeeded``, exit code ``1`` among ``0``, ``GB`` among ``MB`` — while few cells
    (:data:`_ALONE_PER`) are alone in it (what most cells say is looked for among the
    cells at its start, middle and end); or, in
    a column of numbers in one unit, a cell far above all the others
    (:func:`_far_above`). The rows of a record dump (pretty JSON, YAML lists) are also
    compared by their first cell, the key (``"status": "failed"`` among the other
    ``"status"`` lines)."""
    tally = Counter(built)
    if max(tally.values(), default=0) < _COLUMN_ROWS:
        return []
    # the rows of each shape, grouped at C speed: sorted by shape (stable), then cut
    order = sorted(range(len(built)), key=built.__getitem__)
    found: list[int] = []
    at = 0
    for row_shape in sorted(tally):
        size = tally[row_shape]
        members, at = order[at : at + size], at + size
        if size < _COLUMN_ROWS:
            continue
        alike = list(map(rows.__getitem__, members))
        cells = list(map(bytes.split, map(bytes.translate, alike, repeat(_NORMAL))))
        # a cell of many words, as one, where rows have cells of more words than others
        whole = _table_cells(alike, row_shape) if len(set(map(len, cells))) > 1 else None
        found.extend(_outliers_of(members, cells, numbers=whole is None))
        if whole is not None:
            found.extend(_outliers_of(members, whole, numbers=True))
        keys = Counter(map(operator.itemgetter(0), filter(None, cells)))
        keyed = {key for key, times in keys.items() if _COLUMN_ROWS <= times < size}
        if not keyed:
            continue
        groups: dict[bytes, list[int]] = {}  # the rows of each key, in one pass
        for k, row_cells in enumerate(cells):
            if row_cells and row_cells[0] in keyed:
                groups.setdefault(row_cells[0], []).append(k)
        for group in groups.values():
            found.extend(_outliers_of([members[k] for k in group], [cells[k] for k in group]))
    return sorted(set(found))


# The punctuation of a CSV row: its commas, and what its values hold (dates, times,
# versions, addresses, amounts); no quotes, brackets or ``=`` (a record, a log line).
_CSV_PUNCTUATION = b",-.:/@%+#"
# Rows whose columns (three or more) are aligned by runs of spaces (``kubectl get``,
# ``docker ps``): a cell of many words is one, in tables of at most this many rows (a
# log is read by words).
_ALIGNED_ROWS = 2_000


def _table_cells(rows: list[bytes], built: bytes) -> list[list[bytes]] | None:
    """The cells of the rows of a table built alike (``built``: their shape) where a
    cell may hold many words: between the pipes of a table that has them (``| in
    progress | Keiko Sato |``: two cells), the commas of a CSV export with spaces in
    its cells, or the runs of spaces of an aligned table (:func:`_aligned`); ``None``
    for other rows (their words are their cells)."""
    if b"|" in built:
        return [list(map(bytes.strip, row.split(b"|"))) for row in rows]
    if b"," in built and not built.translate(None, _CSV_PUNCTUATION):
        if b" " in rows[0] or b" " in rows[-1]:
            return list(map(bytes.split, rows, repeat(b",")))
        return None
    if len(rows) <= _ALIGNED_ROWS and _aligned(rows[0]) and _aligned(rows[-1]):
        return [list(filter(None, map(bytes.strip, row.split(b"  ")))) for row in rows]
    return None


def _aligned(row: bytes) -> bool:
    """Whether ``row`` has three or more columns set apart by runs of spaces."""
    return row.strip().count(b"  ") >= 2


def _outliers_of(
    members: list[int], cells: list[list[bytes]], *, numbers: bool = True
) -> list[int]:
    """Of rows ``members`` (their ``cells``), those with a cell alone against its
    column's common value, or (``numbers``) far above its column's other numbers
    (:func:`column_outliers`); rows cut into another number of cells than most are not
    compared."""
    widths = list(map(len, cells))
    width = max(set(widths), key=widths.count)
    rows = widths.count(width)
    if rows < _COLUMN_ROWS or width < 2:
        return []
    kept: Sequence[int] = range(rows)
    if rows == len(cells):
        table = zip(*cells, strict=True)
    else:
        kept = list(compress(range(len(cells)), map(operator.eq, widths, repeat(width))))
        table = zip(*map(cells.__getitem__, kept), strict=True)
    found: list[int] = []
    least = rows * _COLUMN_COMMON
    for column in table:
        # what most of its cells say is one of the cells at its start, middle or end (a
        # column of ids or times is left there, without counting all of it)
        first = column.count(column[0])
        if first == rows:
            continue
        most = max(first, column.count(column[rows // 2]), column.count(column[-1]))
        if most < least:
            if numbers and column[0][:1].isdigit():  # numbers: one far above the rest?
                found.extend([members[kept[k]] for k in _far_above(column, rows // _ALONE_PER)])
            continue
        tally = Counter(column)
        alone = {value for value, times in tally.items() if times == 1}
        if not alone or len(alone) > max(1, len(column) // _ALONE_PER):
            continue  # a column of many values (a service name per line): none is news
        if len(alone) == 1:
            found.append(members[kept[column.index(next(iter(alone)))]])
        else:  # each row once, in one pass
            found.extend(members[kept[k]] for k, value in enumerate(column) if value in alone)
    return found


def _far_above(column: Sequence[bytes], most: int) -> list[int]:
    """Where, in ``column``, the cells are that stand far above the rest, when every
    cell is a number in one unit: the largest few (at most ``most``, at least one, at
    most :data:`_ODD_PER_DUMP`) when the smallest of them is :data:`_FAR` times the
    largest of the others — a queue of 48,000 messages among queues of a few, a region's
    1,742 ms among 40–140 ms. A column of spread values (ids, times, sizes from bytes to
    gigabytes in one unit) seldom has such a gap."""
    ends = (column[0], column[len(column) // 2], column[-1])
    if not all(map(_NUMBER_CELL.fullmatch, ends)):
        return []
    if len(set(map(bytes.lstrip, column, repeat(_NUMERAL)))) > 1:
        return []  # not one unit (or some cell no number)
    try:
        numbers = list(map(float, map(bytes.rstrip, column, repeat(_UNIT_LETTERS))))
    except ValueError:  # a cell of digits and points that is no number (``1.2.3``)
        return []
    size = min(max(1, most), _ODD_PER_DUMP, len(column) - 1)
    if sum(map(operator.gt, numbers, repeat(max(numbers) / _FAR))) > size:
        return []  # more than a few within reach of the largest: no gap among the few
    largest = sorted(numbers, reverse=True)[: size + 1]
    for top in range(1, len(largest)):
        if largest[top] > 0 and largest[top - 1] >= _FAR * largest[top]:
            far = list(
                compress(itertools.count(), map(operator.ge, numbers, repeat(largest[top - 1])))
            )
            return far if len(far) <= size else []
    return []


def _holding(keys: list[bytes], stems: Iterable[bytes]) -> frozenset[bytes]:
    """The words of ``keys`` that hold one of ``stems`` (lower case), in any case: all
    the words joined and searched once per stem."""
    joined = b"\n".join(keys).lower()
    offsets = list(itertools.accumulate(map(len, keys), initial=0))
    found: set[bytes] = set()
    for stem in stems:
        at = joined.find(stem)
        while at >= 0:
            found.add(keys[_key_at(offsets, at)])
            end = joined.find(b"\n", at)  # the next key
            at = joined.find(stem, end) if end >= 0 else -1
    return frozenset(found)


def _line_starts(lines: list[bytes]) -> list[int]:
    """Where each of ``lines`` starts in ``b"\\n".join(lines)``."""
    return list(itertools.accumulate(map(operator.add, map(len, lines), repeat(1)), initial=0))


def _key_at(offsets: list[int], at: int) -> int:
    """The index of the key of ``b"\\n".join(keys)`` that byte ``at`` is in, from the
    keys' cumulated lengths (each key is followed by one newline)."""
    low, high = 0, len(offsets) - 1
    while low < high:  # the last key k with offsets[k] + k <= at
        middle = (low + high + 1) // 2
        if offsets[middle] + middle <= at:
            low = middle
        else:
            high = middle - 1
    return low


def _error_places(span: SpanText, failures: list[int]) -> list[int]:
    """Where the failure words are in the outputs (``failures``: where the failure words
    are anywhere), and the failure phrases near the two ends of each output; in order."""
    lower, kinds, starts = span.lower, span.kinds, span.starts
    found = list(failures)
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


def _decision_places(span: SpanText, words: list[int], papers: list[int]) -> list[int]:
    """Where the decision and finding words are in what the assistant wrote and in the
    pieces ``papers`` (documents a tool read): ``words`` (where the words holding one
    are, anywhere) and the phrases, searched in those pieces joined."""
    kinds, starts = span.kinds, span.starts
    pieces = sorted([i for i, kind in enumerate(kinds) if kind == PROSE] + papers)
    chosen = set(pieces)
    found = [at for at in words if bisect.bisect_right(starts, at) - 1 in chosen]
    if not pieces:
        return found
    blob = span.lower
    prose = b"\n".join(blob[starts[i] : starts[i + 1] - 1] for i in pieces)
    offsets = list(itertools.accumulate((starts[i + 1] - starts[i] for i in pieces), initial=0))
    for at in _literals(prose, _DECISION_PHRASES):
        if _lower_letter_at(prose, at - 1):
            continue  # inside a word: ``outlet's`` is no ``let's``
        k = bisect.bisect_right(offsets, at) - 1
        found.append(starts[pieces[k]] + at - offsets[k])
    return sorted(set(found))
