"""Select the lines of a span that tell the next turn the most: by information, not position.

A candidate is one line of a tool output (or of an observation carried in a ``user``
message, SWE-agent style) or one sentence of the assistant's text (its ``<think>`` blocks
left out: reasoning is not a result). Its worth (:func:`info_score`) counts what a reader
could not guess: identifiers (ticket and account ids, hashes, URLs, hosts and ports,
``file:line``, paths, test names), ``key = value`` settings, numbers with units, error and
exception words, decisions and conclusions ("decided", "root cause", "because", "instead
of"). While scanning, tokens that recur across many messages count less: a line repeated
in every tool output tells nothing, and repeated lines are kept once.

Reading is bounded: the scan spends a character budget, shared evenly by the messages of
the span (a short message hands its unused share on), so a huge span costs the same as a
large one and every part of it — the middle too — is looked at. When the span holds so
many messages that each would be read for only a few dozen characters, every k-th one is
read at a useful depth instead.
"""

from __future__ import annotations

import bisect
import itertools
import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from condense.summarizers._text import content_ends, content_length, one_line

# A line longer than this is cut to a window around its first identifier.
LINE_CHARS = 240
_MIN_SCORE = 3.0
_SAME_MESSAGE_DECAY = 0.7
_COMMON_FROM = 3  # a token in more messages than this counts less
_RARE_UPTO = 2  # a line whose identifiers appear in at most this many messages…
_RARE_BONUS = 1.5  # …is worth this much more

_THINK = re.compile(r"(?is)<think(?:ing)?>.*?(?:</think(?:ing)?>|\Z)")
_TAGS = re.compile(r"</?(?:tool_response|tool_call|think|thinking)>")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(\[])")
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
        ("ticket", 4.0, "-", r"(?<![\w.-])[A-Z][A-Z0-9]{1,9}-\d{2,}(?![\w-])"),
        ("colon", 4.0, ":", r"\.[A-Za-z][\w-]{0,20}:\d{1,5}\b"),  # file.py:218, host.internal:6432
        ("path", 2.5, "/", r"/[\w.-]*\.[A-Za-z]\w{0,5}\b"),
        ("version", 3.0, ".", r"(?<![\w.])\d+\.\d+\.\d+\b"),
        ("hash", 4.0, "", r"(?<![\w-])[0-9a-f]{7,40}(?![\w-])"),
        ("test", 3.0, "test_", r"test_\w{3,}"),
        ("test", 3.0, "::", r"::\w{3,}"),
        ("valued", 5.0, "_", r"_[a-z0-9_]+[^\S\n]?[=:][^\S\n]?[\"']?\d[\w\"'./-]*"),
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
            r"Error\b|Exception\b|Failure\b|ERROR|FAILED|FATAL|Traceback|panic|error[:\[]"
            r"|failed\b|egmentation fault|first bad commit"
        ),
    ),
    (1.0, re.compile(r"exit(?:ed)? (?:code|status)|[Tt]imeout\b|[Rr]efused\b")),
)
_DECISION = re.compile(
    r"(?i)\b(?:decided|decision|root cause|caused by|turns out|conclusion|instead of|because"
    r"|the fix is|the problem is|the issue is|we will|must not|flaky)\b"
)
_DECISION_WEIGHT = 4.0
# Without one of these, a sentence cannot score (see _sentences).
_MAY_SCORE = re.compile(
    r"[\d/_:#]|[A-Z]-|rror|xception|ailure|FAIL|ERROR|anic|ecided|ecision|ause|urns out"
    r"|onclusion|nstead of|ecause|he fix|he problem|he issue|e will|ust not|laky|imeout|efused"
)
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
# A message read for less than this tells little: a huge span is sampled instead.
_MIN_SHARE = 400
_READ_ROLES = frozenset({"tool", "user", "assistant"})
# Of one output, only this many lines (those the triggers rate best) are scored fully.
_LINES_PER_OUTPUT = 8
_MATCHES_PER_TRIGGER = 24
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


def info_score(line: str) -> float:
    """How much a line tells without its session: identifiers, errors, decisions (≥ 0)."""
    return _score(line)[0]


def identifiers(line: str) -> list[str]:
    """The identifier tokens of a line (what rarity is counted on, and what must survive)."""
    return list(_score(line)[1])


def _score(line: str) -> tuple[float, tuple[str, ...]]:
    return _scores((line,))[0]


_SCORED: dict[str, tuple[float, tuple[str, ...]]] = {}
_SCORED_MAX = 16_384


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
    signals = [*_SIGNALS, (_DECISION_WEIGHT, _DECISION)]
    for weight, pattern in signals:
        for at in {bisect.bisect_right(starts, m.start()) - 1 for m in pattern.finditer(blob)}:
            scores[at] += weight
    return [
        (score, tuple(dict.fromkeys(found))) for score, found in zip(scores, tokens, strict=True)
    ]


def salient(
    messages: Sequence[object],
    *,
    budget: int,
    limit: int,
    skip: Callable[[str], bool] | None = None,
) -> list[Candidate]:
    """The ``limit`` best candidate lines of ``messages``, oldest first, each once.

    Lines for which ``skip`` is true (already said elsewhere) are never chosen.

    ``budget`` bounds the characters read, shared evenly by the messages (see the module
    docstring). Scores are :func:`info_score` lowered for identifiers that recur in many
    messages and for lines repeated; within one message, each line after its best is
    worth less (a dump is one fact, not fifty). Lines are chosen by score per character;
    ties go to the newer line. Deterministic.
    """
    texts = _texts(messages, budget)
    outputs = _output_lines([text for _, text, kind in texts if kind == "output"])
    repeats: Counter[str] = Counter()
    firsts: list[tuple[str, tuple[int, int]]] = []  # each line where it first appears
    next_output = iter(outputs)
    for index, text, kind in texts:
        pieces = next(next_output) if kind == "output" else _sentences(text)
        for number, raw in enumerate(pieces):
            line = raw.strip()
            if len(line) < 8 or _LISTING.match(line):
                continue
            line = _window(one_line(line))
            repeats[line] += 1
            if repeats[line] == 1:
                firsts.append((line, (index, number)))
    lines = [
        (line, position, score, found)
        for (line, position), (score, found) in zip(
            firsts, _scores([line for line, _ in firsts]), strict=True
        )
        if score >= _MIN_SCORE
    ]
    seen_in: Counter[str] = Counter()
    for _, of_message in itertools.groupby(lines, key=lambda item: item[1][0]):
        seen_in.update({token for *_, found in of_message for token in found})
    scored: dict[int, list[tuple[float, tuple[int, int], str]]] = {}
    for line, position, score, found in lines:
        for token in set(found):
            # A token in a few messages was worth repeating; in many, it is the backdrop.
            if seen_in[token] > _COMMON_FROM:
                score -= min(3.0, math.log2(seen_in[token] / _COMMON_FROM))
        if found and all(seen_in[token] <= _RARE_UPTO for token in found):
            score += _RARE_BONUS  # every identifier here is rare in the session
        if repeats[line] > 1:
            score -= min(3.0, math.log2(repeats[line]))
        if score >= _MIN_SCORE and (skip is None or not skip(line)):
            scored.setdefault(position[0], []).append((score, position, line))
    candidates: list[Candidate] = []
    for group in scored.values():
        # Each further line of one message is worth less: a listing or a dump is one fact.
        group.sort(key=lambda item: (-item[0], item[1]))
        for rank, (score, position, line) in enumerate(group):
            candidates.append(Candidate(line, score * _SAME_MESSAGE_DECAY**rank, position))
    best = sorted(
        candidates,
        key=lambda c: (-c.score / (len(c.text) + 60), -c.position[0], -c.position[1]),
    )
    chosen: list[Candidate] = []
    covered: set[str] = set()
    for candidate in best:
        if len(chosen) >= limit:
            break
        tokens = set(identifiers(candidate.text))
        if tokens and tokens <= covered:
            continue  # the same ids again (a tool found it, the assistant repeated it)
        covered |= tokens
        chosen.append(candidate)
    return sorted(chosen, key=lambda c: c.position)


def _texts(messages: Sequence[object], budget: int) -> list[tuple[int, str, str]]:
    """``(index, text, kind)`` of what is read, within ``budget`` characters in all.

    When the span has so many messages that each would get less than ``_MIN_SHARE``
    characters, every k-th message is read instead (the newest always), so that a huge
    span is still sampled from end to end at a useful depth."""
    readable: list[tuple[int, dict[str, Any]]] = []
    sizes: list[int] = []
    first_user: int | None = None
    for index, message in enumerate(messages):  # one pass: a span may hold 10,000
        if not isinstance(message, dict) or (role := message.get("role")) not in _READ_ROLES:
            continue
        readable.append((index, message))
        content = message.get("content")
        sizes.append(len(content) if type(content) is str else content_length(content))
        if first_user is None and role == "user":
            first_user = index
    stride = 1
    while stride < len(sizes) and _cut_short(sizes[::-stride], budget):
        stride *= 2
    if stride > 1:
        readable = readable[::-stride][::-1]
        sizes = sizes[::-stride][::-1]
    wanted: list[tuple[int, Any, str]] = []
    for index, message in readable:
        role = message.get("role")
        content = message.get("content")
        if role == "user":
            # An observation is read as output; an ask as prose (its ids are facts too).
            observed = is_observation(content, first=index == first_user)
            wanted.append((index, content, "output" if observed else "prose"))
        else:
            wanted.append((index, content, "output" if role == "tool" else "prose"))
    share = _water_level(sizes, budget)
    texts = []
    for (index, content, kind), size in zip(wanted, sizes, strict=True):
        if size <= share:
            head, tail = content_ends(content, size, 0)
        else:
            head, tail = content_ends(content, share // 3, share - share // 3)
        text = f"{head}\n{tail}" if tail else head
        if kind == "prose" or "<t" in text[:2_000]:
            text = strip_think(text)
        if text.strip():
            texts.append((index, text, kind))
    return texts


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


def _cut_short(sizes: Sequence[int], budget: int) -> bool:
    """Whether sharing ``budget`` among ``sizes`` leaves some message less than
    ``_MIN_SHARE`` characters of what it holds: the water level is below it exactly when
    the sizes cut at it add up to more than the budget (no sort needed)."""
    return sum(map(min, sizes, itertools.repeat(_MIN_SHARE))) > budget


def _water_level(sizes: Sequence[int], budget: int) -> int:
    """The per-message share so that ``sum(min(size, share)) <= budget`` is the fullest."""
    if sum(sizes) <= budget:
        return max(sizes, default=0)
    left, count = budget, len(sizes)
    for size in sorted(sizes):
        if size * count > left:
            return left // count
        left -= size
        count -= 1
    return budget


def _output_lines(texts: Sequence[str]) -> list[list[str]]:
    """:func:`_hinted_lines` of each text, searched in one pass over all of them.

    One search per trigger over the joined texts instead of one per text and trigger:
    on a span of thousands of outputs the per-call cost is what counts.
    """
    blob = "\n".join(texts)
    starts = list(itertools.accumulate((len(text) + 1 for text in texts), initial=0))
    rating: dict[int, float] = {}
    for weight, trigger in _TRIGGERS:
        for match in trigger.finditer(blob):
            start = blob.rfind("\n", 0, match.start()) + 1
            rating[start] = rating.get(start, 0.0) + weight
    per_text: list[list[int]] = [[] for _ in texts]
    for start in rating:
        per_text[bisect.bisect_right(starts, start) - 1].append(start)
    found: list[list[str]] = []
    for line_starts in per_text:
        best = sorted(line_starts, key=lambda at: (-rating[at], at))[:_LINES_PER_OUTPUT]
        lines = []
        for start in sorted(best):
            end = blob.find("\n", start)
            lines.append(blob[start:] if end < 0 else blob[start:end])
        found.append(lines)
    return found


def _hinted_lines(text: str, *, keep: int = _LINES_PER_OUTPUT) -> list[str]:
    """The ``keep`` lines of ``text`` that its triggers (``_TRIGGERS``) rate best, in order.

    A line's rating is the weight of the triggers found in it; ties go to the earlier
    line. This bounds the full scoring of a long output to a few lines.
    """
    rating: dict[int, float] = {}
    for weight, trigger in _TRIGGERS:
        # A trigger found this often in one output is what the output is made of.
        for match in itertools.islice(trigger.finditer(text), _MATCHES_PER_TRIGGER):
            start = text.rfind("\n", 0, match.start()) + 1
            rating[start] = rating.get(start, 0.0) + weight
    best = sorted(rating, key=lambda start: (-rating[start], start))[:keep]
    lines: list[str] = []
    for start in sorted(best):
        end = text.find("\n", start)
        lines.append(text[start:] if end < 0 else text[start:end])
    return lines


def _sentences(text: str) -> list[str]:
    """The sentences of prose that may score: those with a digit, a path, an identifier
    character, an error word or a decision word (the others cannot reach _MIN_SCORE)."""
    return [
        piece
        for line in text.split("\n")
        for piece in _SENTENCE.split(line)
        if _MAY_SCORE.search(piece)
    ]


def _window(line: str) -> str:
    """A line of at most LINE_CHARS, cut around its first identifier or signal."""
    if len(line) <= LINE_CHARS:
        return line
    found = [m.start() for *_, p in _KIND_PATTERNS if (m := p.search(line)) is not None]
    start = max(0, min(found, default=0) - 40)
    return ("…" if start else "") + line[start : start + LINE_CHARS - 2].rstrip() + "…"
