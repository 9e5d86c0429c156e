"""Select what tells the next turn the most: by information, not position.

A candidate is a snippet of the span's text (:mod:`condense.summarizers.scan`): a line of
a tool output (or of an observation carried in a ``user`` message, SWE-agent style), a
sentence of what the user or the assistant wrote (its ``<think>`` blocks left out:
reasoning is not a result), a window of a long line. Its worth (:func:`info_score`)
counts what a reader could not guess: identifiers (ticket and account ids, hashes, URLs,
hosts and ports, ``file:line``, paths, test names), ``key = value`` settings, numbers
with units, error and exception words, decisions and conclusions ("decided", "root
cause", "because", "instead of"). Tokens that recur all over the span count less, rare
ones more: a line repeated in every tool output tells nothing, and repeated lines are
kept once.

The whole span is read, in one linear pass (:func:`select`): a fact in the middle of a
session of thousands of messages, or in the middle of a long output, is found as surely
as one at its end.
"""

from __future__ import annotations

import bisect
import itertools
import math
import re
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from condense.summarizers._text import content_ends, content_text, one_line, remember
from condense.summarizers.scan import (
    ARGS,
    ASK,
    DECISION_WORDS,
    OUTPUT,
    PROSE,
    SHAPE_DELETE,
    Scan,
    Snippet,
    SpanText,
    is_time,
    is_timestamp,
    shape,
    token_weight,
    unusual_segments,
)

# A line longer than this is cut to a window around its first identifier.
LINE_CHARS = 240
_MIN_SCORE = 3.0
_SAME_MESSAGE_DECAY = 0.7
_RARE_UPTO = 3  # a token found at most this often in the span is rare…
RARE_BONUS = 1.5  # …and a snippet whose tokens are all rare is worth this much more
_COMMON_FROM = 8  # a token found more often than this is the backdrop: it counts less
_RARE_TOKEN = 2.0  # each rare token of a snippet (two at most) is worth this much
_LEAD_SIGNAL = 4.0  # what an error or decision word tells before the words are read
_PRESELECT = 3  # snippets whose words are read, per place in the result
_DUMP_FROM = 8  # an output with this many rare tokens is a dump (see select)
_WHOLE = 1 << 40  # a message's text is read whole
_NUMBERED = re.compile(r"^\s*\d+\t")

_THINK = re.compile(r"(?is)<think(?:ing)?>.*?(?:</think(?:ing)?>|\Z)")
_TAGS = re.compile(r"</?(?:tool_response|tool_call|think|thinking)>")
# Lines that a listing or a progress bar is made of.
_LISTING = re.compile(r"^\s*\d+[\t:]|^[.\sFEsx%\[\]\d]*$")

# What a line carries: (kind, weight, pattern). Each pattern starts with a literal or a
# narrow class where it can, and runs on its own: on a short line, a dozen such searches
# cost less than one alternation of them all. A kind counts at most twice per line.
_KIND_PATTERNS: tuple[tuple[str, float, str, re.Pattern[str]], ...] = tuple(
    (kind, weight, needs, re.compile(pattern))
    for kind, weight, needs, pattern in (
        # (kind, weight, a substring the line must hold for the pattern to be tried, pattern)
        ("url", 5.0, "://", r"https?://[^\s\"'<>)\]]+"),
        ("email", 4.0, "@", r"[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}\b"),
        ("date", 3.0, "-", r"(?<![\w-])\d{4}-[01]\d-[0-3]\d(?![\w-]| \d\d?:)"),
        ("ticket", 4.0, "-", r"(?<![\w.-])[A-Z][A-Z0-9]{1,9}-\d{2,}(?![\w-])"),
        ("colon", 4.0, ":", r"\.[A-Za-z][\w-]{0,20}:\d{1,5}\b"),  # file.py:218, host.internal:6432
        ("path", 2.5, "/", r"/[\w.-]*\.[A-Za-z]\w{0,5}\b"),
        ("version", 3.0, ".", r"(?<![\w.])\d+\.\d+\.\d+\b"),
        ("hash", 4.0, "", r"(?<![\w-])[0-9a-f]{7,40}(?![\w-])"),
        ("hash", 4.0, "", r"(?<=[a-z][-_])[0-9a-f]{7,40}(?![\w-])"),  # ro-d3cf4b51
        ("test", 3.0, "test_", r"test_\w{3,}"),
        ("test", 3.0, "::", r"::\w{3,}"),
        ("valued", 5.0, "_", r"_[a-z0-9_]+[^\S\n]?[=:][^\S\n]?[\"']?\d[\w\"'./-]*"),
        # a camelCase key with a number: maxConnectionsPerHost: 384
        ("valued", 5.0, "", r"[a-z0-9][A-Z][A-Za-z0-9]*[^\S\n]?[=:][^\S\n]?[\"']?\d[\w\"'./-]*"),
        ("setting", 3.0, "_", r"_[a-z0-9_]+[^\S\n]?[=:][^\S\n]?[\"']?[^\d\s\"'][\w\"'./-]*"),
        ("unit", 3.0, "", r"(?<![\w.])\d[\d,.]*[^\S\n]?(?:ms|sec|min|[KMGT]i?B|%|req/s|rps)\b"),
        ("code", 1.5, "#", r"#\d{2,6}\b"),
        ("code", 1.5, "", r"(?<![\w-])(?:[A-Z]{1,3}\d{3,6}|[a-z]{2,8}_[0-9a-z]{6,24})\b"),
        ("number", 1.0, "", r"(?<![\w.:,-])\d{3,}(?![\w.:,-])"),
    )
)
# Errors and outcomes, and (in prose) decisions: each counts once per line.
_SIGNALS = (
    (
        4.0,
        re.compile(
            r"Error\b|Exception\b|Failure\b|ERROR|FAIL(?:ED)?\b|FATAL|Traceback|panic|error[:\[]"
            r"|failed\b|egmentation fault|first bad commit|HTTP(?:/[\d.]+)? [45]\d\d\b"
        ),
    ),
    (1.0, re.compile(r"exit(?:ed)? (?:code|status)|[Tt]imeout\b|[Rr]efused\b")),
)
_DECISION_WEIGHT = 4.0
_DECISION_MORE = 2.0
# What makes a line of a tool output worth scoring: each is cheap to search for (a rare
# first character or a literal), and together they cover every identifier kind but bare
# hashes and the error words. Decisions are looked for in prose only.
_TRIGGERS: tuple[tuple[float, re.Pattern[str]], ...] = tuple(
    (weight, re.compile(pattern))
    for weight, pattern in (
        (4.0, r"://"),
        (4.0, r"-\d\d(?<=[A-Z]-\d\d)"),  # the literal first: the search skips ahead
        (4.0, r"\.[A-Za-z][\w-]{0,20}:\d"),
        (2.0, r"/[\w.-]*\.[A-Za-z]"),
        (3.0, r"\.\d+\.\d"),
        (3.0, r"test_"),
        (3.0, r"::"),
        (3.0, r"_[a-z0-9_]+ ?[=:] ?[\w\"'./-]"),
        (1.0, r"_[a-z0-9_]+ ?[=:] ?[\"']?\d"),  # a setting with a value: one step up
        # a number with a unit, found by the unit (a literal) and checked back for the digit
        (3.0, r"ms\b(?:(?<=\dms)|(?<=\d ms))"),
        (3.0, r"sec\b(?:(?<=\dsec)|(?<=\d sec))"),
        (3.0, r"min\b(?:(?<=\dmin)|(?<=\d min))"),
        (3.0, r"B\b(?:(?<=\d[KMGT]B)|(?<=\d [KMGT]B)|(?<=\d[KMGT]iB)|(?<=\d [KMGT]iB))"),
        (3.0, r"%(?:(?<=\d%)|(?<=\d %))"),
        (3.0, r"req/s(?:(?<=\dreq/s)|(?<=\d req/s))"),
        (3.0, r"rps\b(?:(?<=\drps)|(?<=\d rps))"),
        (1.5, r"#\d\d"),
        # the error words: capitalised ones in one search, the lower-case ones each led
        # by a literal (an alternation tried at every "e" and "f" costs a third more)
        (4.0, r"E(?:rror|xception|RROR)|F(?:ailure|AIL|ATAL)|Traceback|panic"),
        (4.0, r":(?<=error:)"),
        (4.0, r"\[(?<=error\[)"),
        (4.0, r"failed"),
        (4.0, r"egmentation fault"),
        (4.0, r"first bad commit"),
    )
)
# Of one output, only this many lines (those the triggers rate best) are scored fully.
_LINES_PER_OUTPUT = 8
_MATCHES_PER_TRIGGER = 24
# In an output of this many lines or more, a line shaped like no other is rated higher.
_SHAPED_FROM = 8
_OWN_SHAPE = 4.0
_SHAPE_TABLE = dict.fromkeys(SHAPE_DELETE)  # scan.shape, for text
_DIGIT = re.compile(r"\d")
# The whole token around an identifier match (for rarity), found on candidate lines only.
_HEX_MIXED = re.compile(r"\d.*[a-f]|[a-f].*\d")  # a hash has digits and letters
_TOKEN_BEFORE = re.compile(r"[\w.:/#-]*\Z")
_TOKEN_AFTER = re.compile(r"[\w.:/#-]*")
_OBSERVATION_START = re.compile(
    r"^\s*(?:OBSERVATION|Observation|EXECUTION TIMED OUT|\[File:|Running as user|Output:"
    r"|<tool_response>|Traceback|File .* (?:created|updated)|Your command ran successfully)"
)
_OBSERVATION_END = re.compile(r"(?:\(Current directory: [^\n]*\)|bash-\$|\$)\s*$")


@dataclass(frozen=True)
class Candidate:
    """One line worth keeping: where it came from (message, line) and its worth."""

    text: str
    score: float
    position: tuple[int, int]


def is_observation(content: Any, *, first: bool) -> bool:
    """Whether a ``user`` message carries a tool observation rather than an ask.

    A user message is an observation when it starts like one (``OBSERVATION:``,
    ``[File: …]``, ``EXECUTION TIMED OUT``) or, unless it is the ``first`` of the span (a
    task statement may end at the prompt too), ends at a shell prompt (``(Current
    directory: …)``, ``bash-$``), as SWE-agent's do.
    """
    head, tail = content_ends(content, 200, 200)
    if _OBSERVATION_START.match(head):
        return True
    return not first and bool(_OBSERVATION_END.search(tail or head))


def strip_think(text: str) -> str:
    """``text`` without ``<think>…</think>`` blocks and tool wrapper tags."""
    if "<think" in text:
        text = _THINK.sub(" ", text)
    if "</" in text or "<tool" in text:
        text = _TAGS.sub(" ", text)
    return text


def states_decision(sentence: str) -> bool:
    """Whether ``sentence`` holds a decision or conclusion word ("because", "instead of",
    "root cause", "weil", "parce que", "因为"…)."""
    lowered = sentence.lower()
    return any(word in lowered for word in DECISION_WORDS)


def info_score(line: str) -> float:
    """How much a line tells without its session: identifiers, errors, decisions (≥ 0)."""
    return _score(line)[0]


def info_scores(lines: Sequence[str]) -> list[float]:
    """:func:`info_score` of each line, all scored together (one search per pattern over
    all of them: much cheaper than one line at a time)."""
    return [score for score, _ in _scores(lines)]


def identifiers(line: str) -> list[str]:
    """The identifier tokens of a line (what rarity is counted on, and what must survive)."""
    return list(_score(line)[1])


def _score(line: str) -> tuple[float, tuple[str, ...]]:
    return _scores((line,))[0]


_SCORED: dict[str, tuple[float, tuple[str, ...]]] = {}
_SCORED_MAX = 16_384
remember(_SCORED.clear)


def _scores(lines: Sequence[str]) -> list[tuple[float, tuple[str, ...]]]:
    """``(info_score, identifiers)`` of each line, remembered for the next call."""
    missing = [line for line in dict.fromkeys(lines) if line not in _SCORED]
    if missing:
        found = _score_lines(missing)
        if len(_SCORED) + len(missing) > _SCORED_MAX:
            _SCORED.clear()
        _SCORED.update(zip(missing, found, strict=True))
        if len(missing) == len(lines):
            return found
    return [_SCORED[line] if line in _SCORED else _score_lines((line,))[0] for line in lines]


def _score_lines(lines: Sequence[str]) -> list[tuple[float, tuple[str, ...]]]:
    """Score ``lines`` with one search per pattern over all of them (joined by
    newlines): on a span of hundreds of lines the per-call cost is what counts."""
    if any("\n" in line for line in lines):  # a line break inside: one line at a time
        return [found for line in lines for found in _score_lines((line.replace("\n", " "),))]
    blob = "\n".join(lines)
    starts = list(itertools.accumulate((len(line) + 1 for line in lines), initial=0))
    scores = [0.0] * len(lines)
    tokens: list[list[str]] = [[] for _ in lines]
    seen: Counter[tuple[int, str]] = Counter()  # (line, kind): a kind counts twice a line
    for kind, weight, needs, pattern in _KIND_PATTERNS:
        if needs not in blob:
            continue
        for match in pattern.finditer(blob):
            if kind == "hash" and not _HEX_MIXED.search(match.group()):
                continue
            at = bisect.bisect_right(starts, match.start()) - 1
            seen[at, kind] += 1
            if seen[at, kind] <= 2:
                scores[at] += weight
            line, offset = lines[at], starts[at]
            before = _TOKEN_BEFORE.search(line, 0, match.start() - offset)
            after = _TOKEN_AFTER.match(line, match.end() - offset)
            start = before.start() if before else match.start() - offset
            end = after.end() if after else match.end() - offset
            tokens[at].append(line[start:end].rstrip(".:"))
    for weight, pattern in _SIGNALS:
        for at in {bisect.bisect_right(starts, m.start()) - 1 for m in pattern.finditer(blob)}:
            scores[at] += weight
    lowered = blob.lower()  # a decision word: a literal search each (not one alternation)
    if len(lowered) != len(blob) and len(lines) > 1:  # a letter lower-cased is longer
        return [found for line in lines for found in _score_lines((line,))]
    decided: Counter[int] = Counter()  # line -> how many decision words it holds
    for word in DECISION_WORDS:
        found = lowered.find(word)
        while found >= 0:
            decided[min(len(lines) - 1, bisect.bisect_right(starts, found) - 1)] += 1
            found = lowered.find(word, found + len(word))
    for at, words in decided.items():
        # "decided … instead of … because": each further word says it more plainly
        scores[at] += _DECISION_WEIGHT + _DECISION_MORE * min(2, words - 1)
    return [
        (score, tuple(dict.fromkeys(found))) for score, found in zip(scores, tokens, strict=True)
    ]


def ask_positions(messages: Sequence[object]) -> set[int]:
    """The indices of the user messages that ask (not those carrying tool observations)."""
    positions: set[int] = set()
    first = True
    for position, message in enumerate(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            if not is_observation(message.get("content"), first=first):
                positions.add(position)
            first = False
    return positions


def span_pieces(
    messages: Sequence[object], asks: Collection[int]
) -> Iterator[tuple[int, int, str]]:
    """The text of every message of ``messages`` as ``(index, kind, text)`` pieces: asks,
    the assistant's text (without ``<think>`` blocks) and its calls' arguments, outputs
    (and observations carried in user messages). Nothing is cut."""
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        if role == "tool":
            yield index, OUTPUT, content_text(message.get("content"), _WHOLE)
        elif role == "user":
            text = content_text(message.get("content"), _WHOLE)
            yield index, ASK if index in asks else OUTPUT, text
        elif role == "assistant":
            text = content_text(message.get("content"), _WHOLE)
            yield index, PROSE, strip_think(text) if "<t" in text else text
            calls = message.get("tool_calls")
            for call in calls if isinstance(calls, list) else ():
                function = call.get("function") if isinstance(call, dict) else None
                arguments = function.get("arguments") if isinstance(function, dict) else None
                if isinstance(arguments, str):
                    yield index, ARGS, arguments


def salient(
    messages: Sequence[object],
    *,
    limit: int,
    skip: Callable[[str], bool] | None = None,
) -> list[Candidate]:
    """The ``limit`` best candidate lines of ``messages``, oldest first, each once
    (:func:`select` over the whole span)."""
    span = SpanText(span_pieces(messages, ask_positions(messages)))
    return select(span, limit=limit, skip=skip)


def select(
    span: SpanText,
    *,
    limit: int,
    skip: Callable[[str], bool] | None = None,
    reads: Collection[int] = (),
    scan: Scan | None = None,
) -> list[Candidate]:
    """The ``limit`` most informative snippets of ``span``, oldest first, each once.

    Where to look comes from one scan of the whole span (:class:`.scan.Scan`; ``scan``
    when it was scanned already): the places of its rare tokens (of an output that holds
    many, a dump, those on a line or field built unlike the others:
    :func:`.scan.unusual_segments`), its error words (not in the
    outputs of the messages in ``reads``: a file's content is data, not a failure) and,
    in what people wrote, its decision words. Each place is widened to its line (or
    sentence, or a window of a long line). A snippet is worth :func:`info_score` (what
    it says) and :func:`token_score` (how rare its tokens are in the span), less when
    its text, or the shape
    of a line of output (:func:`_shape`: a log line with another request id), repeats;
    within one message, each further snippet is worth less (a dump is one fact, not
    fifty). Snippets for which ``skip`` is true are never chosen. They are chosen by worth
    per character (ties: the newer), skipping one whose identifiers are all chosen
    already. Deterministic; every message is read, however long the span.
    """
    scan = Scan(span) if scan is None else scan
    leads: dict[tuple[int, int], list[Any]] = {}  # (start, end) -> [snippet, signal]

    def lead(place: int, signal: float, piece: int) -> None:
        snippet = span.snippet(place, piece)
        key = (snippet.start, snippet.end)
        found = leads.get(key)
        if found is None:
            leads[key] = [snippet, signal]
        else:
            found[1] = max(found[1], signal)

    kinds, owners, counts = span.kinds, span.owners, scan.counts
    rare = {t for t, n in counts.items() if n <= _RARE_UPTO and not is_timestamp(t)}
    for piece, kind in enumerate(kinds):
        if kind == ARGS:  # what a call was given is told by Commands and Files
            continue
        places = [place for place, token in scan.of_piece(piece) if token in rare]
        if not places:
            continue
        if kind != OUTPUT or len(places) < _DUMP_FROM:
            for place in places:
                lead(place, 0.0, piece)
            continue
        # A dump (a log, a table, minified JSON): its segments built like no other
        # that hold a rare token are what it says; the rest is its backdrop.
        k = 0
        for start, end in unusual_segments(span, piece):
            k = bisect.bisect_left(places, start, k)
            if k < len(places) and places[k] < end:
                lead(places[k], 0.0, piece)
    for place in scan.errors:
        piece = span.piece_of(place)
        if owners[piece] not in reads:
            lead(place, _LEAD_SIGNAL, piece)
    for place in scan.decisions:
        lead(place, _LEAD_SIGNAL, span.piece_of(place))
    shapes = Counter(_shape(span, snippet) for snippet, _ in leads.values())
    texts: dict[str, tuple[Snippet, float]] = {}  # each text once, where it first appears
    repeats: Counter[str] = Counter()
    for snippet, weight in leads.values():
        text = _snippet_text(span, snippet)
        if len(text) >= 8:
            repeats[text] += 1
            texts.setdefault(text, (snippet, weight))

    def base(text: str, snippet: Snippet) -> tuple[float, float]:
        """What a snippet is worth before its words are read — its tokens' rarity, less
        for a repeated text or shape — and what its rare tokens' shapes promise."""
        found = scan.within(snippet.start, snippet.end)
        score = token_score(found, counts)
        shape = _shape(span, snippet)
        for times in (repeats[text], shapes[shape] if len(shape) > 2 else 0):
            if times > 2:
                score -= min(3.0, math.log2(times / 2))
        return score, max((token_weight(t) for t in found if t in rare), default=0.0)

    bases = {text: base(text, snippet) for text, (snippet, _) in texts.items()}
    # Read the words of only the likeliest few per place in the result.
    likely = sorted(
        texts.items(),
        key=lambda item: (
            -(item[1][1] + sum(bases[item[0]])) / (len(item[0]) + 60),
            item[1][0].start,
        ),
    )[: max(limit * _PRESELECT, 32)]
    scores = _scores([text for text, _ in likely])
    grouped: dict[int, list[tuple[float, int, str]]] = {}
    for (text, (snippet, _)), (score, _) in zip(likely, scores, strict=True):
        score += bases[text][0]  # the words say the signals and what the shapes promise
        if score >= _MIN_SCORE and (skip is None or not skip(text)):
            owner = owners[snippet.piece]
            grouped.setdefault(owner, []).append((score, snippet.start, text))
    candidates: list[Candidate] = []
    for owner, group in grouped.items():
        # Each further snippet of one message is worth less: a dump is one fact.
        group.sort(key=lambda item: (-item[0], item[1]))
        for rank, (score, start, text) in enumerate(group):
            candidates.append(Candidate(text, score * _SAME_MESSAGE_DECAY**rank, (owner, start)))
    best = sorted(
        candidates,
        key=lambda c: (-c.score / (len(c.text) + 60), -c.position[0], -c.position[1]),
    )
    chosen: list[Candidate] = []
    covered: set[str] = set()
    for candidate in best:
        if len(chosen) >= limit:
            break
        found = set(identifiers(candidate.text))
        if found and found <= covered:
            continue  # the same ids again (a tool found it, the assistant repeated it)
        covered |= found
        chosen.append(candidate)
    return sorted(chosen, key=lambda c: c.position)


def token_score(found: Collection[bytes], counts: Mapping[bytes, int] | None = None) -> float:
    """What a snippet's tokens add to its worth: a step for each of its (first two) rare
    tokens, a bonus when all of them are rare, less for each token that is everywhere.
    Without ``counts`` (a fact of a previous summary: it was rare where it came from),
    every token counts as rare."""
    tokens = [token for token in found if not is_time(token)]
    counted = [counts[token] if counts is not None else 1 for token in tokens]
    rare = sum(1 for times in counted if times <= _RARE_UPTO)
    score = _RARE_TOKEN * min(2, rare)
    if tokens and rare == len(tokens):
        score += RARE_BONUS
    for times in counted:
        if times > _COMMON_FROM:
            score -= min(3.0, math.log2(times / _COMMON_FROM))
    return score


def _shape(span: SpanText, snippet: Snippet) -> bytes:
    """The shape of a snippet of output: its punctuation (``ts=…Z level=… req=… dur=…ms``
    lines share one, whatever their ids and numbers); a snippet of prose has none."""
    if span.kinds[snippet.piece] in (ASK, PROSE):
        return b""
    return shape(span.blob[snippet.start : snippet.end])


def _snippet_text(span: SpanText, snippet: Snippet) -> str:
    """A snippet as read: stripped, without a listing's line number (``cat -n``, an
    editor's view), ``…`` where it was cut from its line."""
    text = _NUMBERED.sub("", span.decode(snippet.start, snippet.end)).strip()
    if "\r" in text or "\t" in text:
        text = text.replace("\r", " ").replace("\t", " ")
    if snippet.cut_before:
        text = "…" + text
    if snippet.cut_after:
        text += "…"
    return text


def key_lines(text: str, *, count: int = 2, max_chars: int = 220) -> list[str]:
    """The ``count`` most informative lines of one text (a tool output), in their order.

    Lines are scored by :func:`info_score` alone (no session to count rarity in); a line
    that only changes a diff (``+``/``-``) or lists a file is never taken for more than
    what it is. Together the lines hold at most ``max_chars`` characters (the last one
    clipped). Deterministic; ``[]`` when no line scores.
    """
    hinted: dict[str, int] = {}  # each line once, with its position
    for number, raw in enumerate(_hinted_lines(text, keep=max(4, 2 * count))):
        line = one_line(raw)
        if len(line) >= 8 and line not in hinted and not _LISTING.match(line):
            hinted[line] = number
    scored = [
        (-score, number, line)
        for (line, number), (score, _) in zip(
            hinted.items(), _scores([_window(line) for line in hinted]), strict=True
        )
        if score >= _MIN_SCORE
    ]
    chosen = sorted(sorted(scored)[:count], key=lambda item: item[1])
    lines: list[str] = []
    room = max_chars
    for _, _, line in chosen:
        if room < 24:
            break
        piece = _window(line)
        piece = piece if len(piece) <= room else piece[: room - 1].rstrip() + "…"
        lines.append(piece)
        room -= len(piece) + 3
    return lines


def _hinted_lines(text: str, *, keep: int = _LINES_PER_OUTPUT) -> list[str]:
    """The ``keep`` lines of ``text`` that its triggers (``_TRIGGERS``) rate best, in order.

    A line's rating is the weight of the triggers found in it, and more when its shape
    (its punctuation, :func:`_shape`) is its own in the output: among sixty log lines
    that differ only by their ids, the one that is built otherwise is the news. Ties go
    to the earlier line. This bounds the full scoring of a long output to a few lines.
    """
    rating: dict[int, float] = {}
    for weight, trigger in _TRIGGERS:
        # A trigger found this often in one output is what the output is made of.
        for match in itertools.islice(trigger.finditer(text), _MATCHES_PER_TRIGGER):
            start = text.rfind("\n", 0, match.start()) + 1
            rating[start] = rating.get(start, 0.0) + weight
    lines = text.split("\n")
    if len(lines) >= _SHAPED_FROM:
        shapes = text.translate(_SHAPE_TABLE).split("\n")
        counted = Counter(shapes)
        starts = itertools.accumulate((len(line) + 1 for line in lines), initial=0)
        for start, line, shape in zip(starts, lines, shapes, strict=False):
            if len(shape) > 2 and counted[shape] == 1 and _DIGIT.search(line):
                rating[start] = rating.get(start, 0.0) + _OWN_SHAPE
    best = sorted(rating, key=lambda start: (-rating[start], start))[:keep]
    found: list[str] = []
    for start in sorted(best):
        end = text.find("\n", start)
        found.append(text[start:] if end < 0 else text[start:end])
    return found


def _window(line: str) -> str:
    """A line of at most LINE_CHARS, cut around its first identifier or signal."""
    if len(line) <= LINE_CHARS:
        return line
    found = [m.start() for *_, p in _KIND_PATTERNS if (m := p.search(line)) is not None]
    start = max(0, min(found, default=0) - 40)
    return ("…" if start else "") + line[start : start + LINE_CHARS - 2].rstrip() + "…"
