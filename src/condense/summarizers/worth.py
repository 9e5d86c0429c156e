"""What a word and a line tell: the information measure the selection ranks by.

A word's worth is what a reader could not guess, learned from the span itself
(:class:`Measure`, over a :class:`~condense.summarizers.scan.Scan`):

- its **specificity**, from its shape alone (:func:`specificity`): a URL, an address, an
  id mixing letters and digits (``E4417``, ``ro-6a11802f``, ``x.py:218``, a hash), a
  version or an address (``1.26.3``, ``10.4.0.7:8443``), a path, a camelCase or
  snake_case name, a long number, a name in capitals; a plain word least;
- its **rarity** in the span: a word found once tells the most, one found everywhere is
  the backdrop;
- its **family**: a rare word with many rare look-alikes (the request id of every log
  line, the hashes of a lockfile) tells little each;
- whether people **referred** to it: a word of an output that the user or the assistant
  wrote too.

A line's worth (:meth:`Measure.line`) is the worth of its best words, each further one
counting less, plus what it signals (:func:`signals`): a failure in an output, a
decision, a finding or a reason in what the assistant wrote; the same measure without a
span (:func:`info_score`) counts every word as rare.
"""

from __future__ import annotations

import functools
import math
import operator
import re
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import repeat
from typing import cast

from condense.summarizers._text import remember
from condense.summarizers.scan import (
    ASK,
    DECISION_WORDS,
    DIGITS,
    EDGES,
    FAMILY_FROM,
    FINDING_WORDS,
    OUTPUT,
    PROSE,
    RARE_UPTO,
    Scan,
    any_of,
    words,
)

_LETTERS = bytes(c for c in range(128) if chr(c).isalpha())
_HIGH = bytes(range(128, 256))
_LONGEST = 160  # a longer word is a blob (base64, minified code)
_BLOB_FROM = 20  # a run of letters and digits this long, in both cases, is a blob
_RUNS = re.compile(rb"[A-Za-z0-9+=]+")

# A line's worth: its best words, each further one counting this much less, at most this
# many of them; a word's worth is scaled by WORD to weigh against the signals.
_DECAY = 0.6
_BEST_WORDS = 6
WORD = 10.0
_RANK_WEIGHTS = tuple(_DECAY**rank for rank in range(_BEST_WORDS))
_REFERRED = 1.5  # a word people referred to is worth this much more

# What a line signals (its kind's own words): a failure in an output, a decision, a
# finding or a reason in what people wrote.
ERROR_SIGNAL = 7.0
SHARP_SIGNAL = 4.0  # …that names what failed
DECISION_SIGNAL = 4.0
REASON_SIGNAL = 2.0
FINDING_SIGNAL = 5.0
PLAN_SIGNAL = 3.0
ROLE = {ASK: 1.0, PROSE: 1.5, OUTPUT: 1.0}
_SIGNAL_FLOOR = 0.4  # a signal with nothing named behind it keeps this much…
_CONTENT_FULL = 0.3  # …and all of it once its words are worth this much
ARGS_ROLE = 0.7

# A failure a line states, read standalone (a line of one output, no span). The span's
# scan finds failures by the stems of :data:`.scan.FAILURE_STEMS` (a Kubernetes state,
# ``OOMKilled``, is among both: a word added to one belongs in the other).
_ERROR = re.compile(
    r"\b(?:[A-Z]\w*(?:Error|Exception|Failure|Fault)|ERROR|FATAL|FAIL(?:ED|URE)?|CRITICAL"
    r"|panic|Traceback|[Ss]egmentation fault|(?<!\b0 )[Ee]rrors?\b|(?<!\b0 )[Ff]ailed\b"
    r"|[Cc]aused by|HTTP(?:/[\d.]+)? [45]\d\d|OOMKilled|CrashLoopBackOff"
    r"|undefined(?::| reference)|[Uu]nresolved (?:reference|import|external)|CONFLICT \("
    r"|[Mm]erge conflict|[Ee]rreur|[ÉéEe]chec|[ÉéEe]chou[ée]|[Ff]ehler|[Ff]ehlgeschlagen"
    r"|[Оо]шибк|[Сс]бой)"
    r"|错误|失败|エラー|失敗|오류|실패"  # no word boundary between CJK words
)
_SHARP = re.compile(
    r"[\w.]*(?:Error|Exception)\b[:(]|\b[A-Z][A-Z0-9]{1,9}-\w*\d|\berror\[|FAILED \S|--- FAIL"
    r"|[Cc]aused by|\w\.\w+:\d+|line \d+|\b[1-9]\d* (?:failed|errors?)\b"
)
# A test runner's tally (``1 failed, 40 passed in 3.21s``, ``Tests: 1 failed, 311 passed,
# 312 total``, cargo's ``40 passed; 1 failed``): two counts of outcomes or more. It says
# that something failed, never what: the failure's own line does (where a line states no
# other failure, :func:`.failures.error_text` writes pytest's tally as the line's error).
_TALLIED = re.compile(
    r"(?i)\b\d+ (?:failed|passed|errors?|skipped|xfailed|xpassed|warnings?|reruns?|deselected"
    r"|flaky|total|ignored|pending|todo|broken|succeeded|failures?|tests?)\b"
)


def is_tally(line: str) -> bool:
    """Whether ``line`` is a test runner's tally: two counts of outcomes or more."""
    first = _TALLIED.search(line)
    return first is not None and _TALLIED.search(line, first.end()) is not None


_REASON = re.compile(
    r"(?i)\b(?:because|instead of|due to|so that|in order to|rather than|since|as it)\b"
    r"|weil|parce que|porque|perché|poiché|потому что|так как|omdat|ponieważ|çünkü"
    r"|因为|由于|ため|ので|때문"
)
_CULPRIT = r"(?:fix|cause|problem|issue|bug|culprit|solution|reason|answer)"
FINDING = re.compile(
    rf"(?i)\b(?:root cause|caused by|turns out|reproduced|confirm(?:s|ed)"
    rf"|the (?:\w+ )?{_CULPRIT}s? (?:is|are|was|were|has|had|lies|seems|must|should|here)\b"
    rf"|(?:this|that|it|which)(?: is|'s|’s) (?:the|a) (?:\w+ )?{_CULPRIT}\b)"
)
_DECIDES = any_of(DECISION_WORDS)
_FINDS = any_of(FINDING_WORDS)
PLAN = re.compile(
    r"(?i)^(?:(?:now|so|then|first|next|finally|ok|okay|instead),?\s+)?"
    r"(?:(?:I|we)(?:\s+will|'ll|’ll|\s+am going to|'m going to|’m going to|\s+are going to"
    r"|\s+need to|\s+should|\s+must|\s+decided|'ve decided|\s+have decided)\b"
    r"|let's\b|let us\b|plan:|decision:|next,|instead,)"
)


@functools.lru_cache(maxsize=1 << 16)
def specificity(word: bytes) -> float:
    """What a word's shape alone says (0–1): a URL, an address, an id mixing letters and
    digits most; a version, an IP, a date, a path, a camelCase or snake_case name, a long
    number, a name in capitals less; a plain word least; punctuation nothing."""
    if word[:1] in b"#@" and len(word) > 2 and word[1:].strip(b".:,").isalnum():
        return 0.6  # a reference: #412, @dana
    word = word.strip(EDGES)
    size = len(word)
    if not size:
        return 0.0
    if b"://" in word:
        return 1.0
    if size > _LONGEST or (size >= _BLOB_FROM and _is_blob(word)):
        return 0.1
    digits = size - len(word.translate(None, DIGITS))
    letters = size - len(word.translate(None, _LETTERS))
    high = size - len(word.translate(None, _HIGH))
    other = size - digits - letters - high
    if b"@" in word and b"." in word.rpartition(b"@")[2] and letters:
        return 0.9
    if digits and high and not letters:
        return 0.3  # a number inside another script's phrase
    if digits and (letters or high):
        return 0.2 if size <= 2 else 0.45 if size == 3 else 0.9
    if digits:
        if other:  # a version, an address, a date, a ratio, a time, a slice
            return 0.75 if size >= 6 and digits >= 4 else 0.3
        return 0.5 if size >= 4 else 0.3 if size == 3 else 0.1
    if high and not letters:
        return 0.3 if other else 0.12  # another script's words (CJK: a phrase)
    if not other and not high:
        if word.islower():
            return 0.12
        if word.istitle():
            return 0.25
        if word.isupper():
            return 0.3 if size >= 3 else 0.1
        return 0.65  # camelCase, TestPayoutRounding
    if high:
        return 0.3  # a word with accents: Echeverría
    if b"/" in word:
        return 0.7
    if b"." in word:
        return 0.65
    if b"=" in word:
        return 0.45
    return 0.55  # snake_case, kebab-case


remember(specificity.cache_clear)


def _is_blob(word: bytes) -> bool:
    """Whether a long word is a blob (base64, a token, a minified payload): a run of at
    least :data:`_BLOB_FROM` characters between separators mixing upper case, lower case
    and digits. A hash in hex (one case) and a path or a dotted name (short runs) are
    not blobs."""
    return any(
        len(run) >= _BLOB_FROM
        and not run.islower()
        and not run.isupper()
        and run.translate(None, DIGITS) != run
        and not run.isalpha()
        for run in _RUNS.findall(word)
    )


def rarity(count: int) -> float:
    """What being found ``count`` times in the span leaves of a word's worth (once: all)."""
    return 1.0 if count <= 1 else 1.0 / math.sqrt(count)


def family_weight(members: int) -> float:
    """What having ``members`` rare look-alikes leaves of a word's worth."""
    return 1.0 if members < FAMILY_FROM else (FAMILY_FROM / members) ** 0.8


class Measure:
    """Word and line worth within one span (``scan``), or without one (``None``: every
    word counts as found once, with no look-alikes). Words are valued once each."""

    def __init__(self, scan: Scan | None = None) -> None:
        self.scan = scan
        self._worth: dict[bytes, float] = {}

    def word(self, word: bytes) -> float:
        """A word's worth (0–1.5): specificity × rarity × family; a word people referred
        to (an output's word the user or the assistant wrote too) is singled out of its
        look-alikes, and worth more."""
        found = self._worth.get(word)
        if found is None:
            found = specificity(word)
            scan = self.scan
            if scan is not None and found > 0:
                count = scan.counts.get(word, 0)
                found *= rarity(count)
                referred = scan.referred(word)
                if count <= RARE_UPTO:
                    family = family_weight(scan.family_of(word))
                    # a look-alike people referred to is singled out of its family, in part
                    found *= math.sqrt(family) if referred else family
                if referred:
                    found *= _REFERRED
            self._worth[word] = found
        return found

    def words(self, text: str | bytes) -> dict[bytes, float]:
        """The words of ``text`` (each by its core: without the punctuation at its ends,
        :func:`core`) and the worth of each (a core written several ways: the most)."""
        tokens = words(text)
        keys = list(map(bytes.strip, tokens, repeat(EDGES)))
        known = self._worth
        valued = list(map(known.get, tokens))
        worths = cast("list[float]", valued)
        if None in valued:  # the words not valued yet, valued once each
            worths = [
                self.word(token) if worth is None else worth
                for token, worth in zip(tokens, valued, strict=True)
            ]
        if len(set(keys)) == len(keys):  # each core once (most lines): as they come
            found = dict(zip(keys, worths, strict=True))
            found.pop(b"", None)
            return found
        found = {}
        for key, worth in zip(keys, worths, strict=True):
            if key and worth >= found.get(key, -1.0):
                found[key] = worth
        return found

    def line(self, text: str, kind: int = OUTPUT, *, error: bool | None = None) -> float:
        """A line's worth: its best words (:func:`combine`) and its signals, by its kind
        (``error``: whether it holds a failure word, when the caller knows)."""
        found = self.words(text)
        return (WORD * combine(found.values()) + signals(text, kind, error=error)) * ROLE.get(
            kind, ARGS_ROLE
        )


def core(word: bytes) -> bytes:
    """A word without the punctuation at its ends (``IMP-48213:`` → ``IMP-48213``): what
    two mentions of it share."""
    return word.strip(EDGES)


def backed(content: float) -> float:
    """How much of a signal a line keeps, by what its words say (``content``: their
    :func:`combine`): all of it when it names something; about half when every word is
    one the span says everywhere ("I decided to go on with the work")."""
    return min(1.0, _SIGNAL_FLOOR + content / _CONTENT_FULL)


def combine(worths: Iterable[float]) -> float:
    """The worth of a line's words: the best counts whole, each next one ``_DECAY`` less."""
    best = sorted(worths, reverse=True)[:_BEST_WORDS]
    total: float = sum(map(operator.mul, best, _RANK_WEIGHTS))
    return total


@dataclass(frozen=True, slots=True)
class Signals:
    """What a line signals beyond its words."""

    error: bool = False
    sharp: bool = False
    decision: bool = False
    reason: bool = False
    finding: bool = False
    plan: bool = False

    @property
    def value(self) -> float:
        return (
            ERROR_SIGNAL * self.error
            + SHARP_SIGNAL * self.sharp
            + DECISION_SIGNAL * self.decision
            + REASON_SIGNAL * self.reason
            + FINDING_SIGNAL * self.finding
            + PLAN_SIGNAL * self.plan
        )


def read_signals(text: str, kind: int = OUTPUT, *, error: bool | None = None) -> Signals:
    """What ``text`` signals as a line of ``kind``: in an output, a failure (one that
    names what failed is sharp; a test runner's tally, :func:`is_tally`, never is); in
    what people wrote, a decision, a reason, a finding, a plan."""
    if kind == OUTPUT or kind not in ROLE:
        failed = bool(_ERROR.search(text)) if error is None else error
        sharp = failed and bool(_SHARP.search(text)) and not is_tally(text)
        return Signals(error=failed, sharp=sharp)
    lowered = text.lower()
    decision = bool(_DECIDES.search(lowered))
    finding = bool(_FINDS.search(lowered)) and bool(FINDING.search(text))
    return Signals(
        decision=decision,
        reason=decision and bool(_REASON.search(text)),
        finding=finding,
        plan=bool(PLAN.match(text.lstrip("-*>#• "))),
    )


def signals(text: str, kind: int = OUTPUT, *, error: bool | None = None) -> float:
    """The value of what ``text`` signals (:func:`read_signals`)."""
    return read_signals(text, kind, error=error).value


_STANDALONE = Measure()
remember(_STANDALONE._worth.clear)  # its words' worth, remembered between calls


@functools.lru_cache(maxsize=4_096)  # a log's lines recur in output after output
def info_score(line: str) -> float:
    """How much a line tells without its session (≥ 0): its words as if each were found
    once, and what it signals read as an output's line and as people's words."""
    found = _STANDALONE.words(line)
    content = combine(found.values())
    said = max(signals(line, OUTPUT), signals(line, PROSE))
    return WORD * content + said * backed(content)


remember(info_score.cache_clear)


def identifiers(line: str, *, least: float = 0.4) -> list[str]:
    """The words of a line specific enough to be what must survive (ids, paths, codes)."""
    return [
        word.decode("utf-8", "ignore").strip(".:")
        for word in dict.fromkeys(words(line))
        if specificity(word) >= least
    ]
