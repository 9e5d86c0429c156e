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
large one and every part of it — the middle too — is looked at.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from condense.summarizers._text import content_ends, content_length, one_line

# A line longer than this is cut to a window around its first identifier.
LINE_CHARS = 240
_MIN_SCORE = 3.0
_SAME_MESSAGE_DECAY = 0.7

_THINK = re.compile(r"(?is)<think(?:ing)?>.*?(?:</think(?:ing)?>|\Z)")
_TAGS = re.compile(r"</?(?:tool_response|tool_call|think|thinking)>")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(\[])")
# Lines that a listing or a progress bar is made of.
_LISTING = re.compile(r"^\s*\d+[\t:]|^[.\sFEsx%\[\]\d]*$")

# What a line carries, as one pattern read in one pass: each named group is a kind, with
# the weight of ``_WEIGHTS``. Groups are anchored on rare characters (``/``, ``:``, ``-``)
# where possible, so the pass stays cheap on long outputs.
_KINDS = re.compile(
    r"""(?x)
      (?P<url>https?://[^\s"'<>)\]]+)
    | (?P<ticket>(?<![\w.-])[A-Z][A-Z0-9]{1,9}-\d{2,}(?![\w-]))
    | (?P<colon>[\w-]\.[A-Za-z][\w-]{0,20}:\d{1,5}\b)
    | (?P<path>/[\w.-]*\.[A-Za-z]\w{0,5}\b)
    | (?P<version>(?<![\w.])\d+\.\d+\.\d+\b)
    | (?P<hash>(?<![\w-])(?=[0-9a-f]{0,39}\d)(?=[0-9a-f]{0,39}[a-f])[0-9a-f]{7,40}(?![\w-]))
    | (?P<test>\btest_\w{3,}|::\w{3,})
    | (?P<valued>[a-z0-9]_[a-z0-9_]+\s?[=:]\s?["']?\d[\w"'./-]*)
    | (?P<setting>[a-z0-9]_[a-z0-9_]+\s?[=:]\s?[\w"'./-]+)
    | (?P<unit>(?<![\w.])\d[\d,.]*\s?(?:ms|sec|min|KB|MB|GB|TB|KiB|MiB|GiB|%|req/s|rps)\b)
    | (?P<code>\#\d{2,6}\b|\b[A-Z]{1,3}\d{3,6}\b|\b[a-z]{2,8}_[0-9a-z]{6,24}\b)
    | (?P<number>(?<![\w.:,-])\d{3,}(?![\w.:,-]))
    | (?P<error>\b(?:[A-Z]\w*(?:Error|Exception|Failure)|ERROR|FAILED|FATAL|Traceback|panic)\b
        |\berror[:\[]|\bfailed\b|[Ss]egmentation\ fault|first\ bad\ commit)
    | (?P<decision>(?i:\b(?:decided|decision|root\ cause|caused\ by|turns\ out|conclusion
        |instead\ of|because|the\ fix\ is|the\ problem\ is|the\ issue\ is|we\ will
        |must\ not|flaky)\b))
    | (?P<outcome>(?i:\bexit(?:ed)?\ (?:code|status)|\btimeout\b|\brefused\b))
    """
)
_WEIGHTS = {
    "url": 4.0,
    "ticket": 4.0,
    "colon": 4.0,
    "hash": 4.0,
    "path": 2.5,
    "version": 3.0,
    "test": 3.0,
    "valued": 4.0,
    "setting": 3.0,
    "unit": 3.0,
    "code": 1.5,
    "number": 1.0,
    "error": 4.0,
    "decision": 4.0,
    "outcome": 1.0,
}
_SIGNAL_KINDS = frozenset(("error", "decision", "outcome"))
# What makes a line of a tool output worth scoring: each is cheap to search for (a rare
# first character or a literal), and together they cover every identifier kind but bare
# hashes and the error words. Decisions are looked for in prose only.
_TRIGGERS = tuple(
    re.compile(pattern)
    for pattern in (
        r"://",
        r"[A-Z]-\d\d",
        r"\.[A-Za-z][\w-]{0,20}:\d",
        r"/[\w.-]*\.[A-Za-z]",
        r"\d\.\d+\.\d",
        r"test_|::",
        r"_[a-z0-9_]+ ?[=:] ?[\w\"'./-]",
        r"\d ?(?:ms|sec|min|[KMGT]i?B|%|req/s|rps)\b",
        r"#\d\d",
        r"Error|Exception|Failure|ERROR|FAIL|FATAL|Traceback|panic|error[:\[]|failed"
        r"|egmentation fault|first bad commit",
    )
)
# The whole token around an identifier match (for rarity), found on candidate lines only.
_TOKEN_CHARS = re.compile(r"[\w.:/#-]*")
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


@functools.lru_cache(maxsize=16_384)
def info_score(line: str) -> float:
    """How much a line tells without its session: identifiers, errors, decisions (≥ 0)."""
    return _score(line)[0]


def identifiers(line: str) -> list[str]:
    """The identifier tokens of a line (what rarity is counted on, and what must survive)."""
    return _score(line)[1]


def _score(line: str) -> tuple[float, list[str]]:
    score = 0.0
    seen: Counter[str] = Counter()
    tokens: list[str] = []
    for match in _KINDS.finditer(line):
        kind = match.lastgroup or ""
        seen[kind] += 1
        if kind in _SIGNAL_KINDS:
            if seen[kind] == 1:
                score += _WEIGHTS[kind]
            continue
        if seen[kind] <= 2:
            score += _WEIGHTS[kind]
        start = match.start()
        while start > 0 and _TOKEN_CHARS.fullmatch(line[start - 1]):
            start -= 1
        end = _TOKEN_CHARS.match(line, match.end()).end()
        tokens.append(line[start:end].rstrip(".:"))
    return score, tokens


def salient(messages: Sequence[object], *, budget: int, limit: int) -> list[Candidate]:
    """The ``limit`` best candidate lines of ``messages``, oldest first, each once.

    ``budget`` bounds the characters read, shared evenly by the messages (see the module
    docstring). Scores are :func:`info_score` lowered for identifiers that recur in many
    messages and for lines repeated; within one message, each line after its best is
    worth less (a dump is one fact, not fifty). Lines are chosen by score per character;
    ties go to the newer line. Deterministic.
    """
    texts = _texts(messages, budget)
    seen_in: Counter[str] = Counter()
    lines: list[tuple[str, tuple[int, int], list[str]]] = []
    repeats: Counter[str] = Counter()
    for index, text, kind in texts:
        tokens_here: set[str] = set()
        pieces = _hinted_lines(text) if kind == "output" else _sentences(text)
        for number, raw in enumerate(pieces):
            line = raw.strip()
            if len(line) < 8 or _LISTING.match(line):
                continue
            line = _window(one_line(line))
            repeats[line] += 1
            if repeats[line] > 1 or info_score(line) < _MIN_SCORE:
                continue
            found = identifiers(line)
            tokens_here.update(found)
            lines.append((line, (index, number), found))
        seen_in.update(tokens_here)
    scored: dict[int, list[tuple[float, tuple[int, int], str]]] = {}
    for line, position, found in lines:
        score = info_score(line)
        for token in set(found):
            score -= 2.0 * (1 - 1 / (1 + math.log2(seen_in[token])))
        if repeats[line] > 1:
            score -= min(3.0, math.log2(repeats[line]))
        if score >= _MIN_SCORE:
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
    chosen = best[:limit] if limit < len(best) else best
    return sorted(chosen, key=lambda c: c.position)


def _texts(messages: Sequence[object], budget: int) -> list[tuple[int, str, str]]:
    """``(index, text, kind)`` of what is read, within ``budget`` characters in all."""
    wanted: list[tuple[int, Any, str]] = []
    first_user = True
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        content = message.get("content")
        if role == "tool":
            wanted.append((index, content, "output"))
        elif role == "user":
            if is_observation(content, first=first_user):
                wanted.append((index, content, "output"))
            first_user = False
        elif role == "assistant":
            wanted.append((index, content, "prose"))
    sizes = [content_length(content) for _, content, _ in wanted]
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
    scored: list[tuple[float, int, str]] = []
    seen: set[str] = set()
    for number, raw in enumerate(_hinted_lines(text)):
        line = one_line(raw)
        if len(line) < 8 or line in seen or _LISTING.match(line):
            continue
        seen.add(line)
        score = info_score(_window(line))
        if score >= _MIN_SCORE:
            scored.append((-score, number, line))
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


def _hinted_lines(text: str) -> list[str]:
    """The lines of ``text`` that hold a trigger (see ``_TRIGGERS``), in order, each once."""
    starts: set[int] = set()
    for trigger in _TRIGGERS:
        for match in trigger.finditer(text):
            starts.add(text.rfind("\n", 0, match.start()) + 1)
    lines: list[str] = []
    for start in sorted(starts):
        end = text.find("\n", start)
        lines.append(text[start:] if end < 0 else text[start:end])
    return lines


def _sentences(text: str) -> list[str]:
    return [piece for line in text.split("\n") for piece in _SENTENCE.split(line)]


def _window(line: str) -> str:
    """A line of at most LINE_CHARS, cut around its first identifier or signal."""
    if len(line) <= LINE_CHARS:
        return line
    match = _KINDS.search(line)
    start = max(0, (match.start() if match else 0) - 40)
    return ("…" if start else "") + line[start : start + LINE_CHARS - 2].rstrip() + "…"
