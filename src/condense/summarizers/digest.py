"""The digest: the sectioned text both built-in summarizers write, and how it is laid out.

A digest reads like this (empty sections are left out)::

    ## Scope
    - 1,234 messages summarized
    ## User asks
    - Fix the failing test in tests/test_io.py; keep the 3 retries
    ## Last state
    The test passes now; next I will update the changelog.
    ## Errors
    - FAILED tests/test_io.py::test_retry - AssertionError: 2 != 3 (×2)
    ## Decisions
    - The fix is to count the first attempt as a retry.
    ## Key facts
    - ERROR [E4417] reconciliation aborted at src/jobs/ledger_sync.py:218
    ## Commands
    - pytest tests/test_io.py → exit 1 (×2)
    ## Identifiers
    - ISSUE-311 ×3, #412
    ## Files
    - src/io.py ×4, tests/test_io.py ×2, README.md
    ## Tool calls
    - read_file ×5: src/io.py, tests/test_io.py, README.md
    - grep: pattern=retries in src
    - also: list_dir ×2, web_search

Sections come most valuable first, so a cut from the end loses the least. Room is handed
out by value too (:func:`layout`): the user's asks first — every one, verbatim while they
fit, else each by its first line — then the last state, the facts (errors, decisions and
key facts, each chosen by worth per character, :func:`worth`), identifiers and commands,
the files and the tool calls; what is left to lesser facts, then to the identifiers,
files and tool calls again. Identifiers (error codes,
ids, PR numbers) and files are one line each, the most mentioned first; tool calls are one
line per tool, and the tools that get no line of their own are named on one ``also:``
line. Items are written oldest first.

Because the format is plain and stable, a previous digest is parsed back and merged with
the new span's items instead of being summarized again: a summary never contains a
"summary of a summary". Items are deduplicated: a repeat moves to the end and counts
``(×N)``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from condense.summarizers._text import clip, condense, one_line, remember
from condense.summarizers.salient import (
    EARLIER_BOOST,
    Candidate,
    FactPool,
    fact_line,
    previous_fact,
)
from condense.summarizers.scan import ASK, words
from condense.summarizers.sections import (
    ASKS,
    COMMANDS,
    DECISIONS,
    EARLIER,
    ERRORS,
    FACTS,
    FILES,
    IDS,
    KEY,
    LAST_STATE,
    SCOPE,
    TOOLS,
)
from condense.summarizers.worth import WORD, Measure, combine, core, signals

__all__ = [
    "ASKS",
    "COMMANDS",
    "DECISIONS",
    "EARLIER",
    "ERRORS",
    "FACTS",
    "FILES",
    "IDS",
    "ITEM_SECTIONS",
    "KEY",
    "LAST_STATE",
    "ORDER",
    "SCOPE",
    "TOOLS",
    "Digest",
    "fold",
    "layout",
    "parse",
    "rank",
]

# Sections holding items (TOOLS: tool group -> calls; FILES, IDS: path or id -> mentions).
ITEM_SECTIONS = (ASKS, TOOLS, FILES, COMMANDS, ERRORS, DECISIONS, KEY, IDS)
# Output order: most valuable first.
ORDER = (SCOPE, EARLIER, ASKS, LAST_STATE, ERRORS, DECISIONS, KEY, IDS, COMMANDS, FILES, TOOLS)
# The facts (errors, decisions and key facts) are chosen together by marginal worth per
# character (:class:`~condense.summarizers.salient.FactPool`), written in three sections.
_FACTS = "facts"  # the block the three sections are written in
# After the asks, who is served first, with the share of the room left it may take in each
# of three rounds: the blocks after it get theirs before it may grow in the next round.
_SHARES = {
    LAST_STATE: (0.1, 0.15, 0.2),
    _FACTS: (0.6, 0.8, 1.0),
    EARLIER: (0.1, 0.2, 0.3),
    IDS: (0.1, 0.15, 0.3),
    COMMANDS: (0.06, 0.1, 0.2),
    FILES: (0.03, 0.06, 1.0),
    TOOLS: (0.04, 0.08, 1.0),
}
_TALLIES = (IDS, FILES, TOOLS)  # lists that may grow into the room nothing else wanted
# The asks take at most this share of the room: the rest is the facts'; when not even
# their first lines fit, a smaller one.
ASKS_SHARE = 0.6
ASKS_OVERFLOW_SHARE = 0.45
# Asks before facts: the asks' first lines, when they are more than that share, may take
# the room but for what the facts keep: a tenth of it, and at least about what they have
# at an 8k budget (3,000 tokens), so that a large room is not left to the facts while
# asks are left out, and a small one keeps the shares above.
FACTS_KEEP_SHARE = 0.1
FACTS_KEEP_CHARS = 12_000
_MIN_ASK = 40  # an ask is never cut shorter than this
_ASK_READ = 2_000  # what an ask tells is read from this many characters of it at most
_FIRST_ASK = 1.5  # the first ask (the task) is worth this much more when asks compete
# A user message that opens as an answer or a thanks is worth this share of an ask.
_REPLY = 0.25
_OPENING = re.compile(r"[^\W\d_]+(?:[ '’][^\W\d_]+)?")
_REPLY_LIST = (
    "yes|yeah|yep|sure|ok|okay|thanks|thank you|great|perfect|alright|got it"
    "|sounds good|that's|i'll|i’ll|i appreciate|sí|si|gracias|vale|oui|merci|d'accord"
    "|ja|danke|sim|obrigado|grazie|好的|谢谢|是的|はい|ありがとう|네|감사합니다"
)
_REPLIES = frozenset(_REPLY_LIST.split("|"))
# The smallest room worth opening a section for (beyond its header).
_MIN_BODY = 24
_MIN_KEY_BODY = 80  # a key fact clipped shorter than this says little
_STATE_LINE = 240  # a previous last state's line longer than this is read by sentences
_SENTENCES = re.compile(r"(?<=[.!?。])\s+")
_MIN_ID = 8  # the shortest identifier worth looking for when the line is nearly full
_ID_WORTH = 0.35  # an identifier worth less than this (a flag, a short number) is not one
_HEADERS = sum(len(name) + 4 for name in FACTS)  # what the facts' headers may take

_EXIT = re.compile(r"→ exit (-?\d+)")
_COUNT = re.compile(r"^(.*?) \(×(\d+)\)$")
_NUMBERS = re.compile(r"\d+")
_AGGREGATE_FROM = 3  # names differing only in numbers, this many or more: one item
_SHORT_COUNT = re.compile(r"^(.*?) \(?×(\d+)\)?$")
_TOOL_LINE = re.compile(r"^([\w.\-/]+(?:\([\w.\-/]+\))?)(?: ×(\d+))?(?:: (.*))?$")
_MORE = re.compile(r"^\+\d+ more$")
_SCOPE_COUNT = re.compile(r"([\d,]+) messages? summarized")
_COUNT_ANY = re.compile(r"^(.*?) \(×(\d+)\)$", re.S)
_MORE_ASKS = re.compile(r"\(\+\d+ more asks\)")
_BULLET = ("- ", "* ", "• ")
_ALSO = "- also: "  # the line naming the tools that got no line of their own
# A previous summary is read this far at most (it should be target-sized anyway).
_MAX_PREVIOUS_CHARS = 200_000


@dataclass
class Digest:
    """The parts of a digest. Items are oldest first; each maps to its repeat count.

    The facts of the span are its ``candidates`` (:func:`~.salient.candidates`), and the
    span's words are valued by ``measure``; the facts sections hold a previous summary's
    facts. The layout chooses from both by the same ranking (:meth:`pool`).
    """

    messages: int = 0
    sections: dict[str, dict[str, int]] = field(
        default_factory=lambda: {name: {} for name in ITEM_SECTIONS}
    )
    # The distinct arguments of each tool group, oldest first.
    details: dict[str, dict[str, int]] = field(default_factory=dict)
    earlier: str = ""
    last_state: str = ""
    candidates: list[Candidate] = field(default_factory=list)
    measure: Measure = field(default_factory=Measure)
    # What a previous summary said that this one may drop only for better: its
    # identifiers, and its last state when the span has a newer one.
    earlier_ids: set[str] = field(default_factory=set)
    earlier_state: str = ""
    # What each of the span's identifiers is worth (its word's worth, as the span says)
    id_worth: dict[str, float] = field(default_factory=dict)
    _pool: FactPool | None = field(default=None, repr=False, compare=False)
    _ids: list[tuple[str, int]] | None = field(default=None, repr=False, compare=False)
    _unlisted: int = field(default=0, repr=False, compare=False)
    _ask_values: dict[str, float] = field(default_factory=dict, repr=False, compare=False)

    def add(self, section: str, item: str, count: int = 1) -> None:
        """Append ``item`` to ``section``; a repeat moves to the end and adds its count."""
        items = self.sections[section]
        count += items.pop(item, 0)
        items[item] = count
        self._pool = self._ids = None

    def pool(self) -> FactPool:
        """The facts to choose from: the facts sections' items (a previous summary's) and
        the span's candidates, ranked alike."""
        if self._pool is None:
            facts = [
                (name, item, count) for name in FACTS for item, count in self.sections[name].items()
            ]
            facts += [(KEY, line, 1) for line in _state_lines(self.earlier_state)]
            earlier = [
                previous_fact(self.measure, name, item, count, order)
                for order, (name, item, count) in enumerate(facts)
            ]
            self._pool = FactPool([*earlier, *self.candidates])
        return self._pool

    def asked(self, text: str) -> float:
        """What an ask (or its first line) tells, by :attr:`measure` (:func:`_asked`):
        once per text, since a digest is laid out several times while it is fitted (a
        chat of 25,000 asks is valued once, not once per layout)."""
        told = self._ask_values.get(text)
        if told is None:
            told = self._ask_values[text] = _asked(text, self.measure)
        return told

    def identifiers(self) -> list[tuple[str, int]]:
        """The identifiers, most telling first (the newest first among equals); of
        look-alikes (one stem, :func:`_stem`: the pods of a deployment, the ids of one
        kind of record) the :data:`_PER_STEM` most telling, the others counted
        (:attr:`unlisted`)."""
        if self._ids is None:
            items = list(self.sections[IDS].items())
            known = self.id_worth
            worth = [
                (known[item] if item in known else combine(self.measure.words(item).values()))
                * (EARLIER_BOOST if item in self.earlier_ids else 1.0)
                for item, _ in items
            ]
            # the most telling per character first (the newest first among equals)
            order = sorted(
                range(len(items)), key=lambda i: (-worth[i] / (len(items[i][0]) + 12), -i)
            )
            telling = [items[i] for i in order if worth[i] >= _ID_WORTH and items[i][0]]
            stems: dict[str, int] = {}
            self._ids = []
            for item in telling:
                stem = _stem(item[0])
                stems[stem] = stems.get(stem, 0) + 1
                if stems[stem] <= _PER_STEM:
                    self._ids.append(item)
            self._unlisted = len(telling) - len(self._ids)
        return self._ids

    @property
    def unlisted(self) -> int:
        """How many look-alike identifiers :meth:`identifiers` leaves out."""
        self.identifiers()
        return self._unlisted


# Look-alike identifiers share a stem: their first part with its digits left out (all
# of it when it is one letter: a receiver's ``l.id`` and ``d.id``), and each later part
# left out from the first that holds a digit or is four hex digits or more
# (``payouts-7d9f8c6b5-x2kqp`` and ``payouts-54c4b9d7f-mccqz``: a pod's replica set and
# its own suffix; ``ch_3Pq81x`` and ``ch_9Zz01y``; ``HAT142`` and ``HAT266``).
_PART = re.compile(r"([-_.:/=@#]+)")
_GENERATED = re.compile(r"[0-9a-fA-F]{4,}|.*\d.*")
_DIGITS = re.compile(r"\d+")
_PER_STEM = 3  # of one stem's identifiers, this many are listed


def _stem(identifier: str) -> str:
    first, *rest = _PART.split(identifier)
    stem = ["#" if len(first) == 1 and rest else _DIGITS.sub("#", first)]
    generated = False
    for number, part in enumerate(rest):
        if number % 2:  # a part, after its separator
            generated = generated or _GENERATED.fullmatch(part) is not None
            part = "#" if generated else part
        stem.append(part)
    return "".join(stem)


def layout(digest: Digest, max_chars: int) -> str:
    """The digest as text of at most ``max_chars`` characters, room given by value.

    The asks come first (:func:`_asks`). Then three rounds over the other blocks, most
    valuable first: in each, a block may grow to its share of the room the asks left for
    that round, as far as the room left allows. The facts (errors, decisions, key facts)
    are one block, chosen together (:meth:`Digest.pool`); what the asks and the facts
    say is not said again by the identifiers. Last, what room every block left goes to
    the lesser facts (worth less than the rounds take, :data:`.salient.FILL_WORTH` at
    least), then to the identifiers, files and tool calls.
    """
    scope = _scope(digest)
    room = max_chars + 1 - _size(scope)  # every line pays for a newline; the last has none
    if room <= 0:
        return clip("\n".join(scope), max_chars)
    asks = _asks(digest.sections[ASKS], room, digest.asked)
    room -= _size(asks)
    said = "\n".join(asks)
    left = room
    blocks: dict[str, list[str]] = {name: [] for name in _SHARES}
    for round_ in range(3):
        for name, shares in _SHARES.items():
            used = _size(blocks[name])
            allowance = min(used + room, int(left * shares[round_]))
            if room > 0 and allowance > used:
                if name == _FACTS:  # what the asks and the last state say is not news
                    lines = _facts(digest, allowance, "\n".join([said, *blocks[LAST_STATE]]))
                else:
                    written = said + "\n".join(blocks[_FACTS])
                    lines = _section(digest, name, allowance, written)
                if _size(lines) > used:
                    room -= _size(lines) - used
                    blocks[name] = lines
    if room > _MIN_BODY:  # every block had its share: the lesser facts fill what is left
        used = _size(blocks[_FACTS])
        lines = _facts(digest, used + room, "\n".join([said, *blocks[LAST_STATE]]), fill=True)
        if _size(lines) > used:
            room -= _size(lines) - used
            blocks[_FACTS] = lines
    for name in _TALLIES:  # and the tallies what the facts did not want
        used = _size(blocks[name])
        if room > _MIN_BODY:
            lines = _section(digest, name, used + room, said + "\n".join(blocks[_FACTS]))
            if _size(lines) > used:
                room -= _size(lines) - used
                blocks[name] = lines
    blocks[ASKS] = asks
    ordered = [blocks[LAST_STATE], blocks[_FACTS], blocks[IDS]]
    rest = [blocks[name] for name in (COMMANDS, FILES, TOOLS)]
    return "\n".join(scope + blocks[EARLIER] + asks + [line for b in ordered + rest for line in b])


def parse(text: str) -> Digest:
    """Read a previous summary back into a digest.

    Known sections are read item by item, in any order; anything else (free text, a
    summary written by another tool or an LLM that ignored the format, unknown sections)
    is kept verbatim as the ``Earlier`` section, so its facts are carried forward without
    nesting headers.
    """
    digest = Digest()
    current: str | None = None
    earlier: list[str] = []
    last_state: list[str] = []
    asks: list[str] = []
    for raw in text[:_MAX_PREVIOUS_CHARS].splitlines():
        line = raw.strip()
        if raw.startswith("#"):
            title = line.lstrip("#").strip().rstrip(":")
            known = next((name for name in ORDER if name.lower() == title.lower()), None)
            if known is not None:
                current = known
                continue
            current = None
        if not line:
            continue
        if current is None or current == EARLIER:
            earlier.append(raw.rstrip())
        elif current == LAST_STATE:
            last_state.append(raw.rstrip())
        elif current == SCOPE:
            match = _SCOPE_COUNT.search(line)
            if match:
                digest.messages += int(match.group(1).replace(",", ""))
        elif current == ASKS:
            if raw.startswith(_BULLET) or not asks:
                asks.append(raw[2:] if raw.startswith(_BULLET) else raw)
            else:  # the next line of a multi-line ask
                asks[-1] += "\n" + (raw[1:] if raw.startswith(" #") else raw)
        else:
            item = line[2:].strip() if line.startswith(_BULLET) else line
            _parse_item(digest, current, item)
    for ask in asks:
        match = _COUNT_ANY.match(ask)
        item, count = (match.group(1), int(match.group(2))) if match else (ask, 1)
        if item.strip() and not _MORE_ASKS.fullmatch(item.strip()):
            digest.add(ASKS, item.strip(), count)
    digest.earlier = "\n".join(earlier).strip()
    digest.last_state = "\n".join(last_state).strip()
    return digest


def fold(previous: Digest, new: Digest) -> Digest:
    """``previous`` followed by ``new``: counts add up, new items come after old ones."""
    merged = Digest(messages=previous.messages + new.messages, earlier=previous.earlier)
    for part in (previous, new):
        for name in ITEM_SECTIONS:
            for item, count in part.sections[name].items():
                merged.add(name, item, count)
        for group, details in part.details.items():
            mine = merged.details.setdefault(group, {})
            for detail, count in details.items():
                mine[detail] = mine.pop(detail, 0) + count
    merged.last_state = new.last_state or previous.last_state
    merged.earlier_state = previous.last_state if new.last_state else ""
    merged.earlier_ids = {*previous.earlier_ids, *previous.sections[IDS]}
    merged.id_worth = new.id_worth
    merged.candidates = [*previous.candidates, *new.candidates]
    merged.measure = new.measure
    return merged


def _state_lines(text: str) -> list[str]:
    """A previous last state as facts: its lines, a long one by its sentences."""
    lines: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        if len(line) > _STATE_LINE:
            lines.extend(part.strip() for part in _SENTENCES.split(line) if part.strip())
        elif line and line != "…":
            lines.append(line)
    return lines


@functools.lru_cache(maxsize=4_096)
def rank(section: str, item: str) -> int:
    """How much a command is worth next to its neighbours: a failed one most."""
    if section == COMMANDS:
        match = _EXIT.search(item)
        return 0 if match is None else 1 + (match.group(1) != "0")
    return 1


remember(rank.cache_clear)


def _parse_item(digest: Digest, section: str, item: str) -> None:
    match = _COUNT.match(item)
    item, count = (match.group(1), int(match.group(2))) if match else (item, 1)
    if not item:
        return
    if section in (FILES, IDS):
        _parse_list(digest, section, item, count)
    elif section == TOOLS and item.startswith(_ALSO[2:]):
        _parse_list(digest, TOOLS, item[len(_ALSO) - 2 :], count)
    elif section == TOOLS:
        tool = _TOOL_LINE.match(item)
        if tool is None:
            digest.add(TOOLS, item, count)
            return
        group, calls, details = tool.groups()
        digest.add(TOOLS, group, int(calls) if calls else count)
        for detail in (details or "").split(", "):
            if detail and not _MORE.match(detail):
                mine = digest.details.setdefault(group, {})
                mine[detail] = mine.pop(detail, 0) + 1
    else:
        digest.add(section, item, count)


def _parse_list(digest: Digest, section: str, line: str, count: int) -> None:
    """Read back a one-line list (``a ×3, b, +2 more``) into ``section``."""
    for piece in line.split(", "):
        if piece and not _MORE.match(piece):
            short = _SHORT_COUNT.match(piece)
            if short:
                digest.add(section, short.group(1), int(short.group(2)))
            else:
                digest.add(section, piece, count)


def _scope(digest: Digest) -> list[str]:
    if not digest.messages:
        return []
    return [f"## {SCOPE}", f"- {digest.messages:,} messages summarized"]


def _section(digest: Digest, name: str, room: int, written: str = "") -> list[str]:
    """The lines of one section (its header first) in at most ``room``, or none; an
    identifier that ``written`` holds is not written again."""
    body = room - len(name) - 4  # "## name\n"
    if body < _MIN_BODY:
        return []
    if name == LAST_STATE:
        lines = _text(digest.last_state, body, favor_end=True)
    elif name == EARLIER:
        lines = _text(digest.earlier, body, favor_end=False)
    elif name == IDS:
        line = _listed(digest.identifiers(), body - 1, written, digest.unlisted)
        lines = [line] if line else []
    elif name == FILES:
        lines = _counted(digest.sections[name], body, aggregate=True)
    elif name == TOOLS:
        lines = _tools(digest.sections[TOOLS], digest.details, body)
    else:
        lines = _ranked(name, digest.sections[name], body, digest.measure)
    return [f"## {name}", *lines] if lines else []


def _text(text: str, room: int, *, favor_end: bool) -> list[str]:
    if not text:
        return []
    kept = condense(text, room - 1, favor_end=favor_end)
    return [kept] if kept else []


def _asks(items: dict[str, int], room: int, asked: Callable[[str], float]) -> list[str]:
    """Every ask, oldest first, under its header, within :data:`ASKS_SHARE` of ``room``:
    verbatim while they fit; else each by its first line at least, and the most telling
    ones whole (or their first line and most telling sentences) while room remains. When
    the first lines alone are more than that share, they may take the room but for what
    the facts keep (:data:`FACTS_KEEP_SHARE`, at least :data:`FACTS_KEEP_CHARS`): every
    first line while they fit; else the most telling asks by their first line, and how
    many more there were (in a small room, that is in :data:`ASKS_OVERFLOW_SHARE` of
    it). What an ask tells is its worth per character by ``asked`` (:meth:`Digest.asked`;
    the first ask, the task, a step up)."""
    if not items or room < len(ASKS) + 4 + _MIN_BODY:
        return []
    header = [f"## {ASKS}"]
    asks = list(items.items())
    before_facts = room - max(int(room * FACTS_KEEP_SHARE), FACTS_KEEP_CHARS) - _size(header)
    overflow = int(room * ASKS_OVERFLOW_SHARE) - _size(header)
    room = int(room * ASKS_SHARE) - _size(header)
    # each ask whole takes at least its text and "- " and a newline: when that is more
    # than the room, the asks are not written whole (and a long one is not read whole)
    whole_at_least = sum(len(text) + 3 for text, _ in asks)
    whole = [_ask(text, count) for text, count in asks] if whole_at_least <= room else []
    if whole and _size(whole) <= room:
        return header + whole
    firsts = [_first_line(text) for text, _ in asks]
    short = [
        _ask(first, count, more=len(first) < len(text) and first != text.strip())
        for first, (text, count) in zip(firsts, asks, strict=True)
    ]
    if _size(short) <= room:
        whole = whole or [_ask(text, count) for text, count in asks]
        return header + _upgraded(asks, short, whole, room - _size(short), asked)
    if _size(short) <= before_facts:  # asks before facts: every one, by its first line
        return header + short
    # Not every ask fits, not even by its first line: the most telling ones do, each by
    # its first line (cut when that alone is long), in the room the facts leave (in a
    # small room, a smaller share), and a line says how many are left out.
    room = max(overflow, before_facts)
    values = [_ask_worth(first, i, asked) for i, first in enumerate(firsts)]
    longest = max(_MIN_ASK * 3, room // 4)
    lines = [
        _ask(clip(first, longest), count, more=len(first) < len(text) and first != text.strip())
        for first, (text, count) in zip(firsts, asks, strict=True)
    ]
    order = sorted(range(len(asks)), key=lambda i: (-values[i] / (len(lines[i]) + 20), i))
    room -= len(f"- (+{len(asks)} more asks)") + 1
    taken: list[int] = []
    for i in order:
        if len(lines[i]) + 1 <= room and values[i] > 0:
            taken.append(i)
            room -= len(lines[i]) + 1
    left_out = len(asks) - len(taken)
    more = [f"- (+{left_out} more asks)"] if left_out else []
    return header + [lines[i] for i in sorted(taken)] + more


def _upgraded(
    asks: list[tuple[str, int]],
    short: list[str],
    whole: list[str],
    room: int,
    asked: Callable[[str], float],
) -> list[str]:
    """Each ask by its first line (``short``), the most telling of the longer ones whole
    instead while ``room`` (characters beyond the short lines) allows, by what the rest of
    an ask adds per character; the best of the others gets its first line and its most
    telling sentences in what is left."""
    lines = list(short)
    extra = [len(w) - len(s) for w, s in zip(whole, short, strict=True)]
    gain = [
        _ask_worth(text, i, asked) - _ask_worth(_first_line(text), i, asked)
        for i, (text, _) in enumerate(asks)
    ]
    order = sorted(
        (i for i in range(len(asks)) if extra[i] > 0),
        key=lambda i: (-max(gain[i], 0.1) / (extra[i] + 20), i),
    )
    rest = []
    for i in order:
        if extra[i] <= room:
            lines[i] = whole[i]
            room -= extra[i]
        else:
            rest.append(i)
    if rest:
        i = rest[0]
        text, count = asks[i]
        within = _ask(_ask_within(text, len(_first_line(text)) + room - 4), count)
        if len(short[i]) < len(within) <= len(short[i]) + room:
            lines[i] = within
    return lines


def _ask_worth(text: str, index: int, asked: Callable[[str], float]) -> float:
    """What an ask tells (``asked``; the first, a step up)."""
    return asked(text) * (_FIRST_ASK if index == 0 else 1.0)


def _asked(text: str, measure: Measure) -> float:
    """What an ask tells: its words' worth and what it signals (a reply or a thanks
    less)."""
    text = text[:_ASK_READ]  # a long ask (a task statement) says what it asks early
    worth = WORD * combine(measure.words(text).values()) + signals(text, ASK)
    return worth * _REPLY if _is_reply(text) else worth


def _is_reply(text: str) -> bool:
    """Whether a user message opens as an answer or a thanks ("Sure, it's …", "Yes,
    please", "Thanks!", "好的") rather than as an ask of its own (a "no" is often a
    correction: it is an ask)."""
    opening = _OPENING.match(text.lstrip())
    if opening is None:
        return False
    words = opening.group(0).lower()
    return words in _REPLIES or words.split(" ", 1)[0] in _REPLIES


def _ask_within(text: str, limit: int) -> str:
    """An ask in at most ``limit`` characters: whole, or its first line and then, on the
    next line, its most telling other sentences (numbers, ids, "must", "keep"…)."""
    if len(text) <= limit:
        return text
    first = _first_line(text)
    rest = text.strip()[len(first) :].strip() if text.strip().startswith(first) else ""
    if len(first) + 2 >= limit or not rest:
        return clip(first, limit) if len(first) > limit else first + " …"
    return f"{first}\n{condense(rest, limit - len(first) - 1)}"


def _first_line(text: str) -> str:
    """The first line of ``text`` that holds something (the rest is not read)."""
    start = 0
    while True:
        end = text.find("\n", start)
        line = text[start:end].strip() if end >= 0 else text[start:].strip()
        if line or end < 0:
            return line
        start = end + 1


def _ask(text: str, count: int = 1, *, more: bool = False) -> str:
    """An ask as written, its lines kept (a line that would read as a header is indented
    by a space), its repeats counted; ``more``: the ask goes on after this line."""
    suffix = (" …" if more else "") + (f" (×{count})" if count > 1 else "")
    lines = text.split("\n")
    body = "\n".join(
        [lines[0], *(f" {line}" if line.startswith("#") else line for line in lines[1:])]
    )
    return f"- {body}{suffix}"


def _facts(digest: Digest, room: int, said: str, *, fill: bool = False) -> list[str]:
    """The facts that fit in ``room`` (their sections' headers included), chosen together
    by marginal worth per character (:meth:`.salient.FactPool.choose`: what ``said``, the
    asks, holds is not news; ``fill``: the lesser facts too), written oldest first under
    their sections. When room is left, the best fact that did not fit whole is shortened
    to it."""
    pool = digest.pool()
    if not pool.pool or room < _MIN_BODY + len(KEY) + 4:
        return []
    chosen = pool.choose(room - _HEADERS, said=said, fill=fill)
    lines = {
        name: [fact_line(c.text, c.count) for c in chosen if c.section == name] for name in FACTS
    }
    used = sum(_size(found) + len(name) + 4 for name, found in lines.items() if found)
    left = room - used - (0 if lines[KEY] else len(KEY) + 4)
    if left > _MIN_KEY_BODY:
        taken = {id(c) for c in chosen}
        rest = [c for c in pool.pool if id(c) not in taken and c.text not in said]
        if rest:
            best = max(rest, key=lambda c: (c.score, c.position))
            lines[KEY].append(_line(best.text, best.count, left - 1))
    return [line for name in FACTS if lines[name] for line in (f"## {name}", *lines[name])]


def _ranked(name: str, items: dict[str, int], room: int, measure: Measure) -> list[str]:
    """The best items that fit — by rank, the newest two a step up, then by what their
    words tell per character (``measure``: ``kubectl rollout undo … --to-revision=41``
    before ``ls -la``) — oldest first."""
    if not items:
        return []
    entries = list(items.items())
    newest = len(entries) - 2
    order = sorted(
        range(len(entries)),
        key=lambda i: (
            rank(name, entries[i][0]) + (i >= newest),
            _told_per_char(entries[i][0], measure),
            i,
        ),
        reverse=True,
    )
    chosen: list[int] = []
    for i in order:
        cost = len(_line(*entries[i])) + 1
        if cost <= room:
            chosen.append(i)
            room -= cost
    if not chosen:  # not even the best one fits whole: shorten it
        return [_line(*entries[order[0]], room - 1)]
    return [_line(*entries[i]) for i in sorted(chosen)]


@functools.lru_cache(maxsize=4_096)  # a digest is laid out several times while it is fitted
def _told_per_char(item: str, measure: Measure) -> float:
    return combine(measure.words(item).values()) / (len(item) + 20)


remember(_told_per_char.cache_clear)


def _counted(items: dict[str, int], room: int, *, aggregate: bool) -> list[str]:
    """One line: the most counted first (the newest first among equals), ``+N more``."""
    if not items:
        return []
    paths = _aggregated(items) if aggregate else list(items.items())
    order = sorted(range(len(paths)), key=lambda i: (paths[i][1], i), reverse=True)
    pieces = [f"{paths[i][0]} ×{paths[i][1]}" if paths[i][1] > 1 else paths[i][0] for i in order]
    line = _joined(pieces, room - 1, prefix="- ")
    return [line] if line else []


def _aggregated(items: dict[str, int]) -> list[tuple[str, int]]:
    """``items`` with each run of names that differ only in numbers (``logs/part0.log``,
    ``logs/part1.log``…; three or more) as one ``first … last`` item counting the names."""
    shapes: dict[str, list[str]] = {}
    for item in items:
        shapes.setdefault(_NUMBERS.sub("#", item) if "…" not in item else item, []).append(item)
    out: list[tuple[str, int]] = []
    for names in shapes.values():
        if len(names) < _AGGREGATE_FROM:
            out.extend((name, items[name]) for name in names)
            continue
        names.sort(key=lambda name: [int(n) for n in _NUMBERS.findall(name)])
        out.append((f"{names[0]} … {names[-1]}", len(names)))
    return out


def _tools(groups: dict[str, int], details: dict[str, dict[str, int]], room: int) -> list[str]:
    """One line per tool, the most called first: ``name ×N: newest arguments, +K more``;
    the tools that get no line of their own are named on one last ``also:`` line (room
    for it is kept back), so every tool used is named while room remains."""
    entries = list(groups.items())
    order = sorted(range(len(entries)), key=lambda i: (entries[i][1], i), reverse=True)
    heads = [_tool_head(*entries[i]) for i in order]
    # kept back for naming the tools without a line: what that takes, at most half
    reserve = min(room // 2, sum(len(head) + 2 for head in heads[1:]) + len(_ALSO))
    lines: list[str] = []
    for done, i in enumerate(order):
        group = entries[i][0]
        head = f"- {heads[done]}"
        left = len(order) - done
        # A fair share of what is left; the most called tool may take half.
        usable = room - reserve if left > 1 else room
        share = usable // 2 if done == 0 and left > 1 else usable // left
        width = min(usable, max(share, len(head) + 40)) - 1
        if width < len(head):
            break
        args = [detail for detail, _ in _aggregated(details.get(group, {}))][::-1]
        line = (_joined(args, width, prefix=f"{head}: ") if args else "") or head
        lines.append(line)
        room -= len(line) + 1
    if len(lines) < len(heads):
        also = _joined(heads[len(lines) :], room - 1, prefix=_ALSO)
        if also:
            lines.append(also)
    return lines


def _listed(items: list[tuple[str, int]], width: int, written: str, unlisted: int = 0) -> str:
    """``- a ×3, b, c`` in at most ``width`` characters: the items in their order, those
    ``written`` holds left out, each that does not fit skipped for a shorter one, and
    ``+N more`` for the rest (and the ``unlisted`` ones)."""
    said = _told(written)
    out = "- "
    taken = 0
    for number, (item, count) in enumerate(items):
        piece = _counted_item(item, count)
        more = len(f", +{len(items) - number} more")
        if len(out) + len(piece) + 2 + more > width:
            if len(out) + more > width - _MIN_ID:
                break
            continue
        if core(item.encode()) in said:
            continue
        out += (", " if taken else "") + piece
        taken += 1
    if not taken:
        return ""
    left = len(items) - taken + unlisted
    return f"{out}, +{left} more" if left and len(out) + len(f", +{left} more") <= width else out


@functools.lru_cache(maxsize=8)  # the same text is looked in while a digest is fitted
def _told(text: str) -> frozenset[bytes]:
    return frozenset(map(core, words(text)))


remember(_told.cache_clear)


def _counted_item(item: str, count: int) -> str:
    return f"{item} ×{count}" if count > 1 else item


def _tool_head(group: str, calls: int) -> str:
    return f"{group} ×{calls}" if calls > 1 else group


def _joined(pieces: list[str], width: int, *, prefix: str) -> str:
    """``prefix`` and as many ``pieces`` as fit in ``width`` characters, then ``+N more``.

    ``""`` when not even the first piece fits (a clipped path would mislead).
    """
    out = prefix
    for taken, piece in enumerate(pieces):
        rest = len(pieces) - taken - 1
        add = piece if taken == 0 else ", " + piece
        more = len(f", +{rest} more") if rest else 0
        if len(out) + len(add) + more > width:
            return f"{out}, +{rest + 1} more" if taken else ""
        out += add
    return out


def _line(item: str, count: int = 1, width: int = 1 << 30) -> str:
    """``- item (×count)`` on one line of at most ``width`` characters (condensed if need be)."""
    suffix = f" (×{count})" if count > 1 else ""
    room = width - len(suffix) - 2
    flat = one_line(item) if "\n" in item else item
    return f"- {flat if len(flat) <= room else one_line(condense(item, room))}{suffix}"


def _size(lines: list[str]) -> int:
    return sum(len(line) + 1 for line in lines)
