"""Select what tells the next turn the most: by information learned from the span.

A candidate is a snippet of the span's text (:mod:`condense.summarizers.scan`): a line of
a tool output (or of an observation carried in a ``user`` message, SWE-agent style), a
sentence of what the user or the assistant wrote (its ``<think>`` blocks left out:
reasoning is not a result), a window of a long line. Candidates are found where the span
itself points (:func:`candidates`): at its distinctive words (rare, in no family of
look-alikes, or referred to by people), at the failure words of its outputs (and the line
after each: a stack's first frame, a cause), at the decision and finding words of what
the assistant wrote.

Each is worth what :class:`~condense.summarizers.worth.Measure` says of its words and
signals, by its role (what the assistant concluded over tool noise), less when its line
is one of many built alike. The facts to write are chosen greedily by worth per
character (:meth:`FactPool.choose`), and the worth is *marginal*: a word the asks, the
previous summary or a chosen fact already say adds nothing again, and each further fact
of one message is worth less (a dump is one fact, not fifty). Deterministic; every
message is read, however long the span.
"""

from __future__ import annotations

import functools
import heapq
import itertools
import math
import operator
import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import repeat
from typing import Any, TypeVar

from condense.summarizers._text import clip, content_ends, content_text, one_line, remember
from condense.summarizers.failures import (
    FRAME_CHARS,
    ITEM_CHARS,
    LINE_READ,
    PLACE,
    checked,
    error_text,
    failed_read,
    line_error,
    raised_at,
)
from condense.summarizers.scan import (
    ARGS,
    ASK,
    BAR_MARKS,
    DUMP_LINES,
    EDGES,
    LISTED,
    NOT_DIGITS,
    OUTPUT,
    PROSE,
    RECORD_MEMBER,
    SETTING,
    SNIPPET_BYTES,
    SNIPPET_WINDOW,
    Scan,
    Snippet,
    SpanText,
    changed_key,
    column_outliers,
    is_change,
    is_progress_bar,
    letters_unescaped,
    output_lines,
    shape,
    word_class,
    words,
    words_of_each,
)
from condense.summarizers.sections import DECISIONS, ERRORS, KEY
from condense.summarizers.worth import (
    ARGS_ROLE,
    ROLE,
    WORD,
    Measure,
    backed,
    combine,
    core,
    identifiers,
    info_score,
    read_signals,
    specificity,
)

MIN_WORTH = 5.0  # a fact worth less than this is not written…
FILL_WORTH = 1.0  # …unless the summary has room left once every section had its share
# A previous summary's fact was the best of its span: it is worth this much more than the
# same text found now, so that a new span's noise does not push it out.
EARLIER_BOOST = 2.0
SAME_MESSAGE = 0.7  # each further fact of one message is worth this much less
_NEW_WORD = 0.3  # a word this specific, not said yet, makes a fact news
_PER_CHAR = 60  # worth is per (characters + this): a short line tells less than its size says
_PRESELECT = 4  # snippets read in full, per fact the caller may write (6 kept no more)…
_BYTES_PER_READ = 400  # …and at most one per this many bytes of the span
_PER_PIECE = 12  # of one output, the lines with the most distinctive words, at most
_SAME_FAILURE = 3  # a failure seen this many times is not yet routine
_SHAPE_DISCOUNT = 0.35  # a line one of many built alike is worth less by the log of them
READ_ROLE = 0.6  # a line of what a read showed (a file, search hits) is worth this much
_WINDOW = SNIPPET_WINDOW  # a long line's leads are told apart by which window they are in
_BEFORE = 60  # about where a window around a lead in a long line starts and ends
_NEAR = 2.0  # a line right after a failure (a frame, a cause) signals this much
_ODD = 3.0  # a line of a dump built like no other of it (:func:`.scan._odd_lines`)
_ANSWER = 4.0  # a line of an output that names what the question before it asked about
# A row that stands out of its look-alikes (a cell no other row of its column holds, a
# value among flags) is worth writing by itself (in what a read showed, with what it
# names). Measured with the held-out probe: as much again as a read's role takes away
# (MIN_WORTH / READ_ROLE) crowded other facts out at 8k.
_STANDING_OUT = MIN_WORTH
_NUMBERED = re.compile(r"^\s*\d+\t")


def progress_lines(span: SpanText) -> list[tuple[int, int]]:
    """Where the progress bars of ``span`` are (:data:`PROGRESS_BAR`): each line's start
    and end in its blob, in order. Only the lines holding a bar's mark are read."""
    blob = span.blob
    found: set[tuple[int, int]] = set()
    for mark in BAR_MARKS:
        at = blob.find(mark)
        while at >= 0:
            start, end = blob.rfind(b"\n", 0, at) + 1, blob.find(b"\n", at)
            end = len(blob) if end < 0 else end
            if is_progress_bar(span.decode(start, end)):
                found.add((start, end))
            at = blob.find(mark, end)
    return sorted(found)


# Trimming a long line of output: from its first telling word to its last, a run of more
# than _DULL_RUN words worth less than _DULL inside it left out.
_TRIM_FROM = 100
_STATES = (b"true", b"false", b"null", b"True", b"False", b"None")  # what a call may set
_DULL = 0.08
_TELLING = 0.25  # a word worth this share of the line's best is telling
_DULL_RUN = 3
_ROW_RUN = 6  # …but in a row unlike the rest of its table, a run this long is what it says
_ERROR_WORD = re.compile(r"(?i)error|fail|fatal|panic|exception|denied|refused|timeout")

_THINK = re.compile(r"(?is)<think(?:ing)?>.*?(?:</think(?:ing)?>|\Z)")
_TAGS = re.compile(r"</?(?:tool_response|tool_call|think|thinking)>")
_OBSERVATION_START = re.compile(
    r"^\s*(?:OBSERVATION|Observation|EXECUTION TIMED OUT|\[File:|Running as user|Output:"
    r"|<tool_response>|Traceback|File .* (?:created|updated)|Your command ran successfully)"
)
_OBSERVATION_END = re.compile(r"(?:\(Current directory: [^\n]*\)|bash-\$|\$)\s*$")
_WHOLE = 1 << 40  # a message's text is read whole


@dataclass(frozen=True)
class Candidate:
    """One fact worth keeping: its text, its worth, where it came from (message, byte),
    the section it belongs in, its words' worth, what it signals, and the scale of its
    role and family."""

    text: str
    score: float
    position: tuple[int, int]
    section: str = KEY
    words: Mapping[bytes, float] = field(default_factory=dict, compare=False, repr=False)
    signal: float = 0.0
    scale: float = 1.0
    count: int = 1


# -- reading messages ---------------------------------------------------------------------


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
    (and observations carried in user messages). Nothing is cut; an output is read line
    by line, with the lines a JSON string holds escaped and the records of a long line
    (minified JSON) set apart (:func:`.scan.output_lines`)."""
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        if role == "tool":
            yield index, OUTPUT, output_lines(content_text(message.get("content"), _WHOLE))
        elif role == "user":
            text = content_text(message.get("content"), _WHOLE)
            if index in asks:
                yield index, ASK, text
            else:  # an observation a tool's result came back in
                yield index, OUTPUT, output_lines(text)
        elif role == "assistant":
            text = content_text(message.get("content"), _WHOLE)
            yield index, PROSE, strip_think(text) if "<t" in text else text
            calls = message.get("tool_calls")
            for call in calls if isinstance(calls, list) else ():
                function = call.get("function") if isinstance(call, dict) else None
                arguments = function.get("arguments") if isinstance(function, dict) else None
                if isinstance(arguments, str):
                    yield index, ARGS, letters_unescaped(arguments)


# -- candidates ---------------------------------------------------------------------------


class _Lead:
    """A place the span points at (``at``, in ``piece``; ``start``–``end``: about the
    line or window around it, until its snippet is read), and why: its distinctive
    words, a failure word (or the line after one), a decision word, an odd line, a row
    that stands out of its column."""

    __slots__ = (
        "answer",
        "at",
        "decision",
        "end",
        "error",
        "found",
        "near",
        "odd",
        "piece",
        "scale",
        "standing_out",
        "start",
    )

    def __init__(self, at: int, piece: int, start: int, end: int, scale: float) -> None:
        self.at, self.piece, self.start, self.end = at, piece, start, end
        self.scale = scale  # what its role makes of its worth (the assistant's words most)
        self.error = False
        self.near = False
        self.decision = False
        self.odd = False
        self.standing_out = False
        self.answer = False
        self.found: dict[bytes, float] = {}

    def hint(self) -> float:
        """What the lead promises before its text is read."""
        flags = 4.0 * self.error + 3.0 * self.decision + _NEAR * self.near + _ODD * self.odd
        flags += _STANDING_OUT * self.standing_out + _ANSWER * self.answer
        return (WORD * combine(self.found.values()) + flags) * self.scale


def candidates(
    scan: Scan,
    measure: Measure,
    *,
    limit: int,
    reads: Collection[int] = (),
    logs: Collection[int] = (),
    known: Collection[bytes] = (),
) -> list[Candidate]:
    """The span's candidate facts, the likeliest ``limit × _PRESELECT`` of them read in
    full; oldest first. The failure words of the outputs of the messages in ``reads`` (a
    file's content, search hits) do not count, unless the output is the tool's own
    complaint, or a log (``logs``: what ran and failed, though not in this session, so
    its failures are key facts, not errors); the words ``known`` (the files the Files
    section names) add nothing to a call's arguments."""
    reads = set(reads).difference(logs)
    span = scan.span
    blob, starts = span.blob, span.starts
    leads: dict[tuple[int, int], _Lead] = {}

    def lead(at: int, piece: int) -> _Lead:
        # about the line around ``at`` (a window of a long one): its snippet is read later,
        # for the leads worth reading only
        first, last = starts[piece], starts[piece + 1] - 1
        low, high = max(first, at - SNIPPET_BYTES), min(last, at + SNIPPET_BYTES)
        before, after = blob.rfind(b"\n", low, at), blob.find(b"\n", at, high)
        start = before + 1 if before >= 0 else (first if low == first else at - _BEFORE)
        end = after if after >= 0 else (last if high == last else at + _BEFORE)
        key = (start, end) if before >= 0 or low == first else (piece, at // _WINDOW)
        found = leads.get(key)
        if found is None:
            found = leads[key] = _Lead(at, piece, start, end, _role(span, piece, reads))
        return found

    owners = span.owners
    for piece, places in _by_piece(scan):
        worth = [(measure.word(token), at, token) for at, token in places]
        if len(worth) > _PER_PIECE:  # a dump: its most distinctive words lead
            worth = sorted(worth, key=lambda item: (-item[0], item[1]))[:_PER_PIECE]
        for value, at, token in worth:
            lead(at, piece).found[token] = value
    for piece, failing in _grouped(span, scan.errors):
        last = span.piece_end(piece)
        if owners[piece] in reads:  # only the tool's own complaint (its first lines)
            failing = [at for at in failing[:2] if failed_read(span, piece, _line_start(span, at))]
        for at in _ends(failing, _PER_PIECE // 2):
            lead(at, piece).error = True
            following = blob.find(b"\n", at, min(last, at + SNIPPET_BYTES))
            if following >= 0 and following + 1 < last:
                lead(following + 1, piece).near = True
    for piece, deciding in _grouped(span, scan.decisions):
        for at in _ends(deciding, _PER_PIECE):
            lead(at, piece).decision = True
    for at in scan.odd:
        lead(at, span.piece_of(at)).odd = True
    for at in scan.standing_out:
        lead(at, span.piece_of(at)).standing_out = True
    for at in scan.answers:
        lead(at, span.piece_of(at)).answer = True
    # the same text led to in many places is read once, and counted
    same: dict[bytes, list[_Lead]] = {}
    for item in leads.values():
        same.setdefault(blob[item.start : item.end].strip(), []).append(item)
    merged = [_merged(items) for items in same.values()]
    # read in full: enough for the room, but no more than the span's size warrants
    likely = _likely(merged, max(64, min(limit * _PRESELECT, len(blob) // _BYTES_PER_READ)))
    found: dict[str, Candidate] = {}
    failures = Counter(shape(blob[item.start : item.end]) for item in leads.values() if item.error)
    for item, count in sorted(likely, key=lambda item: item[0].start):
        candidate = _candidate(scan, measure, item, count, known, logs, failures)
        if candidate is None:
            continue
        seen = found.get(candidate.text)
        if seen is None:
            found[candidate.text] = candidate
        elif seen.position == candidate.position:  # two leads in one record: read once
            found[candidate.text] = max(seen, candidate, key=lambda c: c.score)
        else:  # the same line again: once, counted, where it was seen last
            found[candidate.text] = Candidate(
                seen.text,
                max(seen.score, candidate.score),
                candidate.position,
                seen.section,
                seen.words,
                seen.signal,
                seen.scale,
                seen.count + candidate.count,
            )
    return sorted(_uncontained(found.values()), key=lambda c: c.position)


def _uncontained(found: Iterable[Candidate]) -> list[Candidate]:
    """``found`` without a fact whose text another fact of its message holds whole (an
    error's line, and the same line after its bare ``ERROR:`` label): the one that holds
    it stays, worth the more of the two."""
    of_message: dict[int, list[Candidate]] = {}
    for candidate in sorted(found, key=lambda c: -len(c.text)):
        kept = of_message.setdefault(candidate.position[0], [])
        holder = next((i for i, fact in enumerate(kept) if candidate.text in fact.text), None)
        if holder is None:
            kept.append(candidate)
        elif candidate.score > kept[holder].score:
            kept[holder] = replace(kept[holder], score=candidate.score)
    return [fact for kept in of_message.values() for fact in kept]


def _role(span: SpanText, piece: int, reads: Collection[int]) -> float:
    """What the role of ``piece`` makes of a fact's worth: the assistant's words most,
    what a read showed (a file, search hits) least."""
    kind = span.kinds[piece]
    if kind == OUTPUT and span.owners[piece] in reads:
        return READ_ROLE
    return ROLE.get(kind, ARGS_ROLE)


def _likely(leads: list[tuple[_Lead, int]], size: int) -> list[tuple[_Lead, int]]:
    """The ``size`` leads likeliest to be worth reading, by what they promise per byte;
    and, so that no kind of lead crowds out another, the likeliest quarter of that many
    of each kind (failures, decisions, odd lines) too."""

    def promise(item: tuple[_Lead, int]) -> tuple[float, int]:
        lead = item[0]
        return (-lead.hint() / (lead.end - lead.start + _PER_CHAR), lead.start)

    chosen = {id(item): item for item in sorted(leads, key=promise)[:size]}
    for kind in ("error", "decision", "odd", "standing_out", "answer"):
        of_kind = [item for item in leads if getattr(item[0], kind)]
        chosen.update((id(item), item) for item in sorted(of_kind, key=promise)[: size // 4])
    return list(chosen.values())


def _merged(leads: list[_Lead]) -> tuple[_Lead, int]:
    """Leads to one text, as one: the newest place, every reason; how many there were."""
    newest = max(leads, key=lambda item: item.start)
    for item in leads:
        newest.error |= item.error
        newest.near |= item.near
        newest.decision |= item.decision
        newest.odd |= item.odd
        newest.standing_out |= item.standing_out
        newest.answer |= item.answer
        newest.found.update(item.found)
    return newest, len(leads)


def _grouped(span: SpanText, places: list[int]) -> Iterator[tuple[int, list[int]]]:
    """``places`` (in order) grouped by the piece they are in."""
    starts = span.starts
    piece = 0
    group: list[int] = []
    for at in places:
        if at >= starts[piece + 1]:
            if group:
                yield piece, group
                group = []
            piece = span.piece_of(at)
        group.append(at)
    if group:
        yield piece, group


def _ends(places: list[int], most: int) -> list[int]:
    """At most ``most`` of ``places``: the first and the last ones."""
    if len(places) <= most:
        return places
    return places[: most // 2] + places[len(places) - (most - most // 2) :]


def _line_start(span: SpanText, at: int) -> int:
    piece = span.piece_of(at)
    first = span.starts[piece]
    return max(first, span.blob.rfind(b"\n", max(first, at - SNIPPET_BYTES), at) + 1)


def _by_piece(scan: Scan) -> Iterator[tuple[int, list[tuple[int, bytes]]]]:
    """The places of distinctive words, grouped by the piece they are in."""
    starts = scan.span.starts
    piece = 0
    group: list[tuple[int, bytes]] = []
    for at, token in scan.places:
        if at >= starts[piece + 1]:
            if group:
                yield piece, group
                group = []
            while at >= starts[piece + 1]:
                piece += 1
        group.append((at, token))
    if group:
        yield piece, group


def _candidate(
    scan: Scan,
    measure: Measure,
    lead: _Lead,
    count: int = 1,
    known: Collection[bytes] = (),
    logs: Collection[int] = (),
    failing: Mapping[bytes, int] | None = None,
) -> Candidate | None:
    """A lead read in full: its text (an error line's distinctive part), its section,
    its words' worth and signals, its scale. The words of a call's arguments that
    ``known`` holds (the files other sections name) add nothing; a failure's line is
    weighed against the failures built alike (``failing``: how many failure lines have
    each shape), not against every line; a failure a log (``logs``) shows is a key
    fact."""
    failing = {} if failing is None else failing
    span = scan.span
    snippet = span.snippet(lead.at, lead.piece)
    kind = span.kinds[snippet.piece]
    # a member of a record (pretty JSON, YAML) is read with its siblings: its id, its state
    read = span.record(snippet, lead.at) if kind in (OUTPUT, ARGS) else snippet
    text = snippet_text(span, read)
    owner = span.owner_of(read) if kind == OUTPUT else None
    named = f"{one_line(snippet_text(span, owner))} … " if owner is not None else ""
    text = named + text  # a nested value, with its record's id
    section = KEY
    stated = False  # the text is the error a line states
    if lead.error and kind == OUTPUT:
        start, end = _failure_line(span, lead)
        error, frame = line_error(span, start, end)
        if error:
            if len(error) > _TRIM_FROM:  # its error, code and place, wherever they sit
                placed = _placed(measure.words(error))
                error = trimmed(error, placed, ITEM_CHARS, statement(error))
            if check := checked(span, end):  # what the failing test expected and got
                error = f"{error} — {check}"
            text, stated = named + (f"{error} ({frame})" if frame else error), True
            section = KEY if span.owners[snippet.piece] in logs else ERRORS
    if len(text) < 8 or is_progress_bar(text):
        return None
    # a document's sentence (what a read showed) that decides is read as people's words
    read_as = PROSE if kind == OUTPUT and lead.decision and not stated else kind
    signals = read_signals(text, read_as, error=lead.error or None)
    if kind == PROSE and (signals.decision or signals.finding or signals.plan):
        section = DECISIONS
    found = measure.words(text)
    if kind == ARGS and known:
        found = {key: worth for key, worth in found.items() if key not in known}
    # a long line is cut to its telling part (a stated error is already; a record is short
    # and read whole: its values are the point, however common)
    if kind in (OUTPUT, ARGS) and not stated and read is snippet and len(text) > _TRIM_FROM:
        weights = found
        if kind == ARGS and found:  # a state a call sets (``"enabled": false``) is what it did
            weights = {**found, **dict.fromkeys(_STATES, max(found.values()))}
        unlike = lead.odd or lead.standing_out  # a row unlike its table: its cells are the point
        text = trimmed(text, weights, dull_run=_ROW_RUN if unlike else _DULL_RUN)
        found = {key: found.get(key, 0.0) for key in map(core, words(text))}
    specific = any(specificity(word) >= _NEW_WORD for word in found)
    line = span.decode(snippet.start, snippet.end)
    # a setting a diff of a config file changes (``+  timeout_s: 90``) is news, like an odd
    # line, written once, as a change (``timeout_s: 30 → 90``)
    changed = snippet.start in scan.changed
    if changed:
        change = _setting_change(span, snippet, line)
        if change == "":
            return None  # the line that replaces it writes the change
        text = change or text
    # an odd line (or the one after a failure) tells something when it names something
    signal = signals.value + (_NEAR * lead.near + _ODD * (lead.odd or changed)) * specific
    signal *= backed(combine(found.values()))
    # a row that stands out of its column is news by its cell that does, named or not
    signal += _STANDING_OUT * lead.standing_out
    # and so is what a question asked for, however plain its words
    signal += _ANSWER * lead.answer
    scale = lead.scale  # by its role: what a file or a search showed is data, not an outcome
    if kind == OUTPUT and LISTED.match(line):  # …and so is a listing's line of code…
        scale = min(scale, READ_ROLE)
    if scale == READ_ROLE and (changed or lead.answer or _holds_setting(line)):
        scale = ROLE[OUTPUT]  # …but a setting a file holds configures what runs, and
        # the answer to a question is what the user asked for
    if kind == OUTPUT and not (
        lead.odd or lead.standing_out or lead.answer or snippet.cut_before or snippet.cut_after
    ):
        built = shape(span.blob[snippet.start : snippet.end])
        # a failure is one of the failures built alike (a FAIL among PASS lines is news)
        family = failing if section == ERRORS else scan.shapes
        alike = family.get(built, 1) if len(built) > 2 else 1  # words alone: no shape
        if alike > 2:
            scale /= 1 + _SHAPE_DISCOUNT * math.log2(alike / 2)
    # a line said again and again is routine; a failure seen again is still the failure
    routine = count if section != ERRORS else count / _SAME_FAILURE
    if routine > 1:
        scale /= 1 + _SHAPE_DISCOUNT * math.log2(routine)
    score = (WORD * combine(found.values()) + signal) * scale
    if score < MIN_WORTH:
        return None
    position = (span.owners[snippet.piece], read.start)
    return Candidate(text, score, position, section, found, signal, scale, count)


# A search hit's file and line before what it found (``src/limits.py:46:MAX = 9``).
_SEARCH_HIT = re.compile(r"[\w./\\-]+\.\w{1,8}:\d+:")
_BLOCK_LINES = 40  # the lines of a diff's block of changes read around a changed setting


def _holds_setting(line: str) -> bool:
    """Whether ``line`` is a setting (:data:`.scan.SETTING`), as a file holds it or as a
    search's hit shows it (read without its file and line)."""
    hit = _SEARCH_HIT.match(line)
    return SETTING.fullmatch(line[hit.end() :] if hit else line) is not None


def _setting_change(span: SpanText, snippet: Snippet, line: str) -> str | None:
    """A changed setting (``line``, of a diff) as a change: an added line that replaces a
    removed one of the same key in its block of changes as ``key: old → new``; a removed
    line that an added one replaces as ``""`` (that one writes it); else ``None``."""
    blob, piece = span.blob, snippet.piece
    key = changed_key(line)
    if line[0] == "-":
        later = _block(blob, snippet.end + 1, span.piece_end(piece), forward=True)
        replaced = any(other[0] == "+" and changed_key(other) == key for other in later)
        return "" if replaced else None
    earlier = _block(blob, snippet.start - 1, span.starts[piece], forward=False)
    old = next((other for other in earlier if other[0] == "-" and changed_key(other) == key), None)
    if old is None:
        return None
    before, after = old[1:].strip(), line[1:].strip()
    same = next(
        (i for i, pair in enumerate(zip(before, after, strict=False)) if pair[0] != pair[1]),
        min(len(before), len(after)),
    )
    cut = max(before.rfind(mark, 0, same) for mark in " =:") + 1  # after the key's sign
    return f"{after[:cut]}{before[cut:]} → {after[cut:]}"


def _block(blob: bytes, at: int, end: int, *, forward: bool) -> list[str]:
    """The changed lines (``+`` or ``-``) of a diff next to byte ``at``, going forward to
    ``end`` or back to it, until a line that is not one; at most :data:`_BLOCK_LINES`."""
    found: list[str] = []
    while len(found) < _BLOCK_LINES and (at < end if forward else at > end):
        if forward:
            stop = blob.find(b"\n", at, end)
            stop = end if stop < 0 else stop
            raw, at = blob[at:stop], stop + 1
        else:
            start = blob.rfind(b"\n", end, at) + 1 or end
            raw, at = blob[start:at], start - 1
        text = raw.decode("utf-8", "replace")
        if not is_change(text):
            break
        found.append(text)
    return found


def _placed(found: Mapping[bytes, float]) -> dict[bytes, float]:
    """The words of an error worth as much as its best one when they are a place (a
    file and a line): where it failed, however many places the log around it names."""
    best = max(found.values(), default=0.0)
    return {word: best if PLACE.search(word) else worth for word, worth in found.items()}


_CLAUSE_END = re.compile(r"[,;]|\.(?:\s|$)")
_STATEMENT_CHUNKS = 6


def statement(error: str) -> list[int]:
    """Which chunks (of ``error.split()``) state the error: the clause of its first
    failure word, from the chunk that holds it to the clause's end (``ERROR: No
    replacement was performed``), or the first clause of an error with none (``Invalid
    `new_str` parameter``), at most :data:`_STATEMENT_CHUNKS`; and the cause a chain of
    errors ends with, the chunks after its last failure word when they are as few
    (``… Bind for 0.0.0.0:5809 failed: port is already allocated``)."""
    failure = _ERROR_WORD.search(error)
    start = failure.start() if failure is not None else len(error) - len(error.lstrip())
    before = error[:start]
    first = len(before.split()) - (1 if before and not before[-1].isspace() else 0)
    end = _CLAUSE_END.search(error, failure.end() if failure is not None else start)
    chunks = len(error[start : end.start() if end else len(error)].split())
    stated = list(range(first, first + min(chunks, _STATEMENT_CHUNKS)))
    words = error.split()
    last = max((i for i, chunk in enumerate(words) if _ERROR_WORD.search(chunk)), default=-1)
    if last >= 0 and len(words) - 1 - last <= _STATEMENT_CHUNKS:
        stated.extend(range(last, len(words)))
    return stated


def _failure_line(span: SpanText, lead: _Lead) -> tuple[int, int]:
    """The line a failure word leads to, whole (a window of :data:`.failures.LINE_READ`
    bytes around the word in a longer one): its start and end in the buffer."""
    blob, at = span.blob, lead.at
    first, last = span.starts[lead.piece], span.piece_end(lead.piece)
    start = max(blob.rfind(b"\n", first, at) + 1, first, at - LINE_READ // 2)
    end = blob.find(b"\n", at, last)
    return start, min(last if end < 0 else end, start + LINE_READ)


def trimmed(
    text: str,
    found: Mapping[bytes, float],
    limit: int | None = None,
    stated: Collection[int] = (),
    *,
    dull_run: int = _DULL_RUN,
) -> str:
    """``text`` without what tells nothing at its ends (a log line's timestamp and request
    id, a row's filler), and with a long run of such words inside it left out (``…``):
    the part from its first telling word (or failure word) to its last. Given a
    ``limit`` (characters) it is longer than, the least telling words go too, until it
    fits: a long error line keeps its error, code and place wherever they sit in it,
    and the chunks ``stated`` (of ``text.split()``: what states the error,
    :func:`statement`) as much as its most telling one. A run of dull words inside it is
    left out when longer than ``dull_run``."""
    chunks = text.split()
    get = found.get
    values = [
        max(map(get, map(bytes.strip, chunk_words, repeat(EDGES)), repeat(0.0)), default=0.0)
        for chunk_words in words_of_each(chunks)
    ]
    if _ERROR_WORD.search(text):  # a failure word tells, whatever its worth
        values = [
            1.0 if _ERROR_WORD.search(chunk) else value
            for chunk, value in zip(chunks, values, strict=True)
        ]
    best = max(values, default=0.0)
    if best <= 0:
        return text if limit is None else clip(text, limit)
    for i in stated:
        if i < len(values):
            values[i] = best
    least = min(best, max(_DULL, best * _TELLING))
    out = _telling_part(chunks, values, least, _DULL, dull_run)
    if limit is not None:
        for higher in sorted({value for value in values if value > least}):
            if len(out) <= limit:
                break
            out = _telling_part(chunks, values, higher, higher, 0)
        out = clip(out, limit)
    return out if len(out) < len(text) else text


def _telling_part(
    chunks: list[str], values: list[float], least: float, dull: float, keep_run: int
) -> str:
    """``chunks`` from the first worth ``least`` or more to the last, a run of more than
    ``keep_run`` worth less than ``dull`` inside them written ``…``."""
    telling = [i for i, value in enumerate(values) if value >= least]
    first, last = telling[0], telling[-1]
    kept: list[str] = ["…"] if first > 0 else []
    run = 0
    for i in range(first, last + 1):
        if values[i] >= dull:
            if run > keep_run:
                kept.append("…")
            elif run:
                kept.extend(chunks[i - run : i])
            run = 0
            kept.append(chunks[i])
        else:
            run += 1
    if last < len(chunks) - 1:
        kept.append("…")
    return " ".join(kept)


def snippet_text(span: SpanText, snippet: Snippet) -> str:
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


def previous_fact(measure: Measure, section: str, text: str, count: int, order: int) -> Candidate:
    """A fact of a previous summary as a candidate: ranked the same way (its words were
    rare where they came from; here they are mostly not found at all), and
    :data:`EARLIER_BOOST` higher: it was the best of its span."""
    kind = PROSE if section == DECISIONS else OUTPUT
    found = measure.words(text)
    signal = read_signals(text, kind, error=section == ERRORS or None).value
    signal *= backed(combine(found.values()))
    scale = ROLE[kind] * EARLIER_BOOST
    score = (WORD * combine(found.values()) + signal) * scale
    return Candidate(text, score, (-1, order), section, found, signal, scale, count)


# -- choosing -----------------------------------------------------------------------------


def fact_line(text: str, count: int = 1) -> str:
    """A fact as the digest writes it: ``- text (×count)`` on one line."""
    suffix = f" (×{count})" if count > 1 else ""
    flat = one_line(text) if "\n" in text else text
    return f"- {flat}{suffix}"


class FactPool:
    """The candidate facts of a span (and of a previous summary), to be chosen from for
    any room: ranked once (:meth:`ranking`), then taken in that order while they fit."""

    def __init__(self, pool: Iterable[Candidate]) -> None:
        self.pool = sorted(pool, key=lambda c: c.position)
        self.costs = [len(fact_line(c.text, c.count)) + 1 for c in self.pool]
        self._ranking: list[int] | None = None
        self._worthy = 0  # how many of the ranking are worth at least MIN_WORTH
        self._said: tuple[str, frozenset[bytes]] = ("", frozenset())
        # what :meth:`choose` asks of a fact again on every call: its names (words news
        # is made of) once, and whether each ``said`` it was asked about holds its text
        self._names: dict[int, list[bytes]] = {}
        self._in_said: dict[str, dict[int, bool]] = {}

    def ranking(self, *, fill: bool = False) -> list[int]:
        """The facts (their indices in :attr:`pool`) in the order a greedy choice with
        no bound on room takes them, by marginal worth per character: a word a fact
        taken before holds adds nothing to a later one, a fact whose names are all said
        before is not taken, each further fact of one message is worth less
        (:data:`SAME_MESSAGE`), a fact worth less than :data:`MIN_WORTH` is not taken.
        ``fill``: then the rest worth at least :data:`FILL_WORTH`, ranked the same way
        after them (they only fill room nothing else wants)."""
        if self._ranking is None:
            covered: set[bytes] = set()
            per_message: Counter[tuple[int, int]] = Counter()
            ranked = self._ranked(range(len(self.pool)), MIN_WORTH, covered, per_message)
            self._worthy = len(ranked)
            taken = set(ranked)
            rest = [order for order in range(len(self.pool)) if order not in taken]
            self._ranking = ranked + self._ranked(rest, FILL_WORTH, covered, per_message)
        return self._ranking if fill else self._ranking[: self._worthy]

    def _ranked(
        self,
        orders: Iterable[int],
        least: float,
        covered: set[bytes],
        per_message: Counter[tuple[int, int]],
    ) -> list[int]:
        """Of the facts ``orders``, those worth at least ``least`` at their turn, in the
        order the greedy choice takes them (``covered`` and ``per_message`` carry what
        the facts taken so far said, and from which message)."""
        costs = self.costs
        heap = [(-self.pool[order].score / (costs[order] + _PER_CHAR), order) for order in orders]
        heapq.heapify(heap)
        ranked: list[int] = []
        while heap:
            _, order = heapq.heappop(heap)
            candidate = self.pool[order]
            value = _marginal(candidate, covered, per_message[_owner(candidate)])
            if value < least:
                continue
            fresh = -value / (costs[order] + _PER_CHAR)
            if heap and fresh > heap[0][0] + 1e-12:  # worth less now: back in line
                heapq.heappush(heap, (fresh, order))
                continue
            ranked.append(order)
            per_message[_owner(candidate)] += 1
            covered.update(word for word, worth in candidate.words.items() if worth > 0.05)
        return ranked

    def choose(
        self, room: int, *, said: str = "", limit: int | None = None, fill: bool = False
    ) -> list[Candidate]:
        """The facts that fit ``room`` characters (as :func:`fact_line` lines, each with
        its newline), taken in :meth:`ranking` order (``fill``: the lesser facts too,
        after the others); oldest first. A fact whose text ``said`` (the asks) holds, or
        whose names are all in it, is not taken. At most ``limit`` facts when given."""
        if self._said[0] != said:
            specific = (core(word) for word in words(said) if specificity(word) >= _NEW_WORD)
            self._said = (said, frozenset(specific))
        told = self._said[1]
        in_said = self._in_said.setdefault(said, {}) if said else {}
        chosen: list[int] = []
        for order in self.ranking(fill=fill):
            if room <= 0 or (limit is not None and len(chosen) >= limit):
                break
            cost, candidate = self.costs[order], self.pool[order]
            if cost > room:
                continue
            if said:
                inside = in_said.get(order)
                if inside is None:
                    inside = in_said[order] = candidate.text in said
                if inside:
                    continue
            names = self._names.get(order)
            if names is None:
                names = self._names[order] = [
                    word for word in candidate.words if specificity(word) >= _NEW_WORD
                ]
            if told and names and all(word in told for word in names):
                continue
            chosen.append(order)
            room -= cost
        return [self.pool[order] for order in sorted(chosen)]


def _owner(candidate: Candidate) -> tuple[int, int]:
    """Whose fact a candidate is: its message's (each fact of a previous summary its own);
    the errors of a message apart from its other lines (a failure in a long output is
    its own fact, however much else the output says)."""
    message, _at = candidate.position
    if message < 0:
        return candidate.position
    return (message, -1) if candidate.section == ERRORS else (message, 0)


def _marginal(candidate: Candidate, covered: set[bytes], earlier: int) -> float:
    """What ``candidate`` adds to what is chosen: its words not said yet and its signal;
    nothing when every name it holds (a word specific by its shape) is said already
    (the same ids again: a tool found it, the assistant repeated it); less for each
    ``earlier`` fact of its message."""
    names = [word for word in candidate.words if specificity(word) >= _NEW_WORD]
    if names and all(word in covered for word in names):
        return 0.0
    fresh = [worth for word, worth in candidate.words.items() if word not in covered]
    value = WORD * combine(fresh) + candidate.signal
    return value * candidate.scale * SAME_MESSAGE**earlier


def select(
    span: SpanText,
    *,
    limit: int,
    skip: Callable[[str], bool] | None = None,
    reads: Collection[int] = (),
    scan: Scan | None = None,
) -> list[Candidate]:
    """The ``limit`` most informative snippets of ``span``, oldest first, each once
    (:func:`candidates`, chosen by :meth:`FactPool.choose` with no bound on room).
    Snippets for which ``skip`` is true are never chosen."""
    scan = Scan(span) if scan is None else scan
    found = candidates(scan, Measure(scan), limit=limit, reads=reads)
    if skip is not None:
        found = [candidate for candidate in found if not skip(candidate.text)]
    return FactPool(found).choose(1 << 40, limit=limit)


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


# -- the lines of one output ------------------------------------------------------------------

# What makes a line of one output worth scoring: each is cheap to search for (a rare
# first character or a literal), and together they cover the identifiers' shapes and the
# error words.
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
        (3.0, r"ms\b(?:(?<=\dms)|(?<=\d ms))"),
        (3.0, r"B\b(?:(?<=\d[KMGT]B)|(?<=\d [KMGT]B)|(?<=\d[KMGT]iB)|(?<=\d [KMGT]iB))"),
        (3.0, r"%(?:(?<=\d%)|(?<=\d %))"),
        (1.5, r"#\d\d"),
        (4.0, r"E(?:rror|xception|RROR)|F(?:ailure|AIL|ATAL)|Traceback|panic"),
        (4.0, r":(?<=error:)"),
        (4.0, r"failed"),
    )
)
# A hash (a commit) is a trigger too: ``\b[0-9a-f]{7,40}\b``, written with its first digit
# first and the run taken whole (a hex digit is a word's: no \b within it). Its definition;
# :func:`_hash_places` finds its matches over the output's UTF-8, 3 to 10 times faster.
HASH_TRIGGER = re.compile(r"[0-9a-f](?<!\w[0-9a-f])[0-9a-f]{6,39}+\b")
_HASH_WEIGHT = 3.0
_HASH_SHORTEST, _HASH_LONGEST = 7, 40
# each byte as its class for a hash: a hex digit ``h`` (lower case), another ASCII word
# character ``w``, a byte of a non-ASCII character ``u``, anything else ``.``
_HASH_CLASSES = bytes(
    ord(
        "u"
        if c >= 0x80
        else "h"
        if chr(c) in "0123456789abcdef"
        else "w"
        if chr(c).isalnum() or c == ord("_")
        else "."
    )
    for c in range(256)
)
_HASH_RUN = b"h" * _HASH_SHORTEST
_RUN_END = re.compile(rb"[^h]")
_WORD, _WIDE = ord("w"), ord("u")
_ALL_LINES = 24  # an output of at most this many lines is read whole
_MATCHES_PER_TRIGGER = 24  # a trigger found this often in one output is what it is made of
_OWN_SHAPE = 4.0  # a row built like no other of its output, with digits, is rated higher
_DIGIT = re.compile(r"\d")
_LISTING = re.compile(r"^\s*\d+[\t:]|^[.\sFEsx%\[\]\d]*$")
LINE_CHARS = 240  # a longer line is cut to a window around its first specific word…
_WINDOW_READ = 4_000  # …looked for in this many of its first characters


def key_lines(text: str, *, count: int = 2, max_chars: int = 220) -> list[str]:
    """The ``count`` most informative lines of one text (a tool output), in their order.

    Lines are scored by :func:`~condense.summarizers.worth.info_score` (no session to
    count rarity in), less when the line is one of many of the output built alike (the
    lines of a log that differ only by their ids and times); a line that only lists a
    file or a progress bar is never taken. A line is written as the summary reads it
    (:func:`_in_context`): a member of a small record with its siblings (once for the
    record), an error with where it was raised. Together the lines hold at most
    ``max_chars`` characters (the last one clipped). Deterministic; ``[]`` when no line
    scores.
    """
    return list(_key_lines(text, count, max_chars))


@functools.lru_cache(maxsize=1_024)  # a walk that measures, then the reductions, mask alike
def _key_lines(text: str, count: int, max_chars: int) -> tuple[str, ...]:
    text = output_lines(text)
    rows = text.split("\n")
    # look-alikes: lines built alike (their punctuation), holding digits or not
    # (``timeout_ms = 3471`` is not one of the ``x_enabled = true`` around it)
    data = text.encode("utf-8", "surrogatepass")
    kins = _kins(text, rows, data)
    alike = Counter(kins)
    # a row whose cell stands out of its column is not one of its look-alikes, nor is the
    # row of a dump built like no other (with digits): both are the dump's news
    outliers: frozenset[int] = frozenset()
    if len(rows) >= DUMP_LINES:
        outliers = frozenset(column_outliers(data.split(b"\n"), [kin[0] for kin in kins]))
        outliers |= _odd_rows(kins, alike)
    # each line once: its position, its look-alikes, whether it stands out of them
    hinted: dict[str, tuple[int, int, bool, int]] = {}
    keep = max(4, 2 * count)
    for number, index in enumerate(_hinted_lines(text, rows, kins, alike, outliers, keep, data)):
        line = one_line(rows[index])
        if (
            len(line) >= 8
            and line not in hinted
            and not _LISTING.match(line)
            and not is_progress_bar(line)
        ):
            others = alike[kins[index]] if kins[index][0] else 1
            hinted[line] = (number, others, index in outliers, index)
    # a line's look-alikes make its words the backdrop; the cell that stands out of its
    # column is news of its own
    windows = {line: _window(line) for line in hinted}
    scored = [
        (-(score / (1 + math.log2(others)) + _STANDING_OUT * stands_out), number, line, index)
        for line, (number, others, stands_out, index) in hinted.items()
        if (score := info_score(windows[line])) >= MIN_WORTH or stands_out
    ]
    # the best line has the room first; the lines are written in their order
    pieces: list[tuple[int, str]] = []
    room = max_chars
    seen: set[str] = set()
    for _, number, line, index in sorted(scored):
        if len(pieces) >= count or room < 24:
            break
        piece = _in_context(rows, index) or windows[line]
        if piece in seen or any(piece in earlier for _, earlier in pieces):
            continue  # two lines of one record, a record's name again
        seen.add(piece)
        for held in [item for item in pieces if item[1] in piece]:  # …or with a member
            pieces.remove(held)
            room += len(held[1]) + 3
        piece = piece if len(piece) <= room else piece[: room - 1].rstrip() + "…"
        pieces.append((number, piece))
        room -= len(piece) + 3
    return tuple(piece for _, piece in sorted(pieces))


remember(_key_lines.cache_clear)


def _odd_rows(kins: list[tuple[bytes, bool]], alike: Counter[tuple[bytes, bool]]) -> frozenset[int]:
    """In a log (an output most of whose rows are built alike), the rows built like no
    other of it that hold digits (``kins``: each row's shape and whether it holds digits;
    ``alike``: how many rows share each): the line a metrics query printed after its
    eight log lines. The summary's scan reads a span's dumps so too (``scan._odd_lines``),
    with the span's counts: one output alone has fewer rows to tell its backdrop by, so
    here the rows alike must be more than half of it."""
    if max(alike.values(), default=0) * 2 <= len(kins):
        return frozenset()
    return frozenset(i for i in _built_alone(kins, alike) if kins[i][0])


def _built_alone(kins: list[tuple[bytes, bool]], alike: Counter[tuple[bytes, bool]]) -> list[int]:
    """The rows built like no other of their output that hold digits (``kins``: each
    row's shape and whether it holds digits; ``alike``: how many rows share each)."""
    singles = {kin for kin, others in alike.items() if others == 1 and kin[1]}
    if not singles:
        return []
    return list(itertools.compress(itertools.count(), map(singles.__contains__, kins)))


_AROUND = 24  # rows read on each side of a key line for its record or its stack


def _in_context(rows: list[str], index: int) -> str:
    """Row ``index`` of an output with what it needs around it, as the summary reads it
    (:func:`candidates`): a member of a small record with its siblings (a failed
    refund's ``status`` with its ``id``) and, nested, the member naming its record; an
    error with where it was raised and what a failing test expected and got; ``""`` for
    any other row."""
    row = rows[index]
    if len(row) > LINE_READ:  # a long line is read as a window of itself
        return ""
    record = RECORD_MEMBER.match(row) is not None
    if not record and not _states_error(row):
        return ""
    # read from the rows around it only: a record's members, a stack's frames
    first = max(0, index - _AROUND)
    span = SpanText([(0, OUTPUT, "\n".join(rows[first : index + _AROUND + 1]))])
    start = len("\n".join(rows[first:index]).encode("utf-8", "replace")) + (index > first)
    line = Snippet(start, start + len(row.encode("utf-8", "replace")), 0, False, False)
    if record:
        widened = span.record(line)
        owner = span.owner_of(widened)
        if widened != line or owner is not None:
            text = one_line(span.decode(widened.start, widened.end))
            named = one_line(span.decode(owner.start, owner.end)) if owner is not None else ""
            return f"{named} … {text}" if named else text
    # an error, built like a member or not (``    QuoteError: E9376 stale quote``), with
    # what a failing test expected and got
    if record and not _states_error(row):
        return ""
    frame = raised_at(span, line.start, line.end)
    check = checked(span, line.end)
    error = f"{one_line(row)} — {check}" if check else one_line(row)
    if frame:
        return f"{error} ({clip(frame, FRAME_CHARS)})"
    return error if check else ""  # a row alone is written as the caller reads it


def _states_error(row: str) -> bool:
    """Whether ``row`` states an error (a failure word, then :func:`.failures.error_text`)."""
    return _ERROR_WORD.search(row) is not None and error_text(row) is not None


def _has_digit(line: str) -> bool:
    return _DIGIT.search(line) is not None


def _kins(text: str, rows: list[str], data: bytes | None = None) -> list[tuple[bytes, bool]]:
    """Each row's shape (:func:`.scan.shape` of its UTF-8, ``data`` when the caller has
    it) and whether it holds a digit; an ASCII text (most outputs) is read for digits at
    once, where a digit is ``0``–``9``."""
    data = text.encode("utf-8", "surrogatepass") if data is None else data
    shapes = shape(data).split(b"\n")
    if len(data) == len(text):  # ASCII
        digits = data.translate(None, NOT_DIGITS).split(b"\n")
        return list(zip(shapes, map(bool, digits), strict=True))
    return list(zip(shapes, map(_has_digit, rows), strict=True))


def _hinted_lines(
    text: str,
    rows: list[str],
    kins: list[tuple[bytes, bool]],
    alike: Counter[tuple[bytes, bool]],
    outliers: Collection[int],
    keep: int,
    data: bytes,
) -> list[int]:
    """The indices of the ``keep`` rows of ``text`` (its UTF-8: ``data``) that the
    triggers (``_TRIGGERS``, :data:`HASH_TRIGGER`) rate best, in order (``kins``: each
    row's shape and whether it holds digits, ``alike``: how many rows share each;
    ``outliers``: the rows with a cell that stands out of its column,
    :func:`.scan.column_outliers`).

    A row's rating is the weight of the triggers found in it, less when many rows are
    built like it, and more when it is built like no other and holds digits, or stands
    out of its column: among sixty log lines that differ only by their ids, the one that
    is built otherwise, or says ``FAILED`` where the others say ``ok``, is the news.
    Ties go to the earlier row. This bounds the full scoring of a long output to a few
    rows.
    """
    if len(rows) <= _ALL_LINES:  # a short output: every row is read
        return list(range(len(rows)))
    rating: dict[int, float] = {}
    places = [
        (match.start(), weight)
        for weight, trigger in _TRIGGERS
        for match in itertools.islice(trigger.finditer(text), _MATCHES_PER_TRIGGER)
    ]
    places.sort(key=operator.itemgetter(0))
    for index, weight in _rows_of(text, places, "\n"):
        rating[index] = rating.get(index, 0.0) + weight
    hashes = [(at, _HASH_WEIGHT) for at in _hash_places(data, _MATCHES_PER_TRIGGER)]
    for index, weight in _rows_of(data, hashes, b"\n"):
        rating[index] = rating.get(index, 0.0) + weight
    # built like no other row, with digits, or standing out of its column: rated higher;
    # a row built like others: rated less by the log of them
    own = set(outliers)
    own.update(_built_alone(kins, alike))
    for index in rating.keys() - own:
        kin = kins[index]
        if kin[0]:
            rating[index] /= 1 + math.log2(alike[kin])
    for index in own:
        rating[index] = rating.get(index, 0.0) + _OWN_SHAPE
    best = heapq.nsmallest(keep, zip(map(operator.neg, rating.values()), rating, strict=True))
    return sorted(index for _, index in best)


_Text = TypeVar("_Text", str, bytes)


def _rows_of(
    text: _Text, places: list[tuple[int, float]], newline: _Text
) -> Iterator[tuple[int, float]]:
    """Each of ``places`` (offsets into ``text``, in order, each with its weight) as the
    index of its row (its ``newline``-separated line) and its weight: one walk."""
    row = last = 0
    for at, weight in places:
        row += text.count(newline, last, at)
        last = at
        yield row, weight


def _hash_places(data: bytes, most: int) -> list[int]:
    """Where the first ``most`` matches of :data:`HASH_TRIGGER` start in the text whose
    UTF-8 (``surrogatepass``) is ``data``, as byte offsets: each run of 7 to 40 lower
    case hex digits with no word character (``str.isalnum`` or ``_``) on either side.

    The runs are found by ``bytes.find`` over the bytes' classes (:data:`_HASH_CLASSES`);
    a non-ASCII neighbour is decoded to be judged."""
    classes = data.translate(_HASH_CLASSES)
    found: list[int] = []
    at = classes.find(_HASH_RUN)  # where a run starts: the search goes on after each
    while at >= 0 and len(found) < most:
        after = _RUN_END.search(classes, at + _HASH_SHORTEST)
        end = after.start() if after is not None else len(classes)
        if end - at <= _HASH_LONGEST and _alone(data, classes, at, end):
            found.append(at)
        at = classes.find(_HASH_RUN, end)
    return found


def _alone(data: bytes, classes: bytes, start: int, end: int) -> bool:
    """Whether no word character touches ``data[start:end]`` (``classes``: its bytes'
    classes, :data:`_HASH_CLASSES`)."""
    before = classes[start - 1] if start else None
    if before == _WORD or (before == _WIDE and _word_before(data, start)):
        return False
    after = classes[end] if end < len(classes) else None
    return after != _WORD and not (after == _WIDE and _word_after(data, end))


def _word_before(data: bytes, at: int) -> bool:
    """Whether the character whose UTF-8 ends at ``at`` is a word character."""
    start = at - 1
    while start > at - 4 and 0x80 <= data[start] < 0xC0:  # a continuation byte
        start -= 1
    return data[start:at].decode("utf-8", "surrogatepass").isalnum()


def _word_after(data: bytes, at: int) -> bool:
    """Whether the character whose UTF-8 starts at ``at`` is a word character."""
    lead = data[at]
    size = 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
    return data[at : at + size].decode("utf-8", "surrogatepass").isalnum()


def _window(line: str) -> str:
    """A line of at most LINE_CHARS, cut around its specific word least like its others
    (the first of them; in its first :data:`_WINDOW_READ` characters): the ids built
    alike, a record dump's keys (``session_0``, ``refund_2``…), are its backdrop."""
    if len(line) <= LINE_CHARS:
        return line
    ids = identifiers(line[:_WINDOW_READ], least=0.6)  # a line of megabytes: its start
    at = 0
    if ids:
        built = [word_class(word.encode()) for word in ids]
        kin = Counter(built)
        least_alike = min(range(len(ids)), key=lambda i: kin[built[i]])  # the first such
        at = line.find(ids[least_alike])
    start = max(0, at - 40)
    return ("…" if start else "") + line[start : start + LINE_CHARS - 2].rstrip() + "…"
