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
and what is left to the files and the tool calls. Identifiers (error codes,
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
from dataclasses import dataclass, field

from condense.summarizers._text import clip, condense, one_line, remember
from condense.summarizers.salient import info_score, token_score
from condense.summarizers.scan import FINDING_WORDS, text_tokens

SCOPE = "Scope"
EARLIER = "Earlier"
ASKS = "User asks"
TOOLS = "Tool calls"
FILES = "Files"
COMMANDS = "Commands"
ERRORS = "Errors"
DECISIONS = "Decisions"
IDS = "Identifiers"
KEY = "Key facts"
LAST_STATE = "Last state"

# Sections holding items (TOOLS: tool group -> calls; FILES, IDS: path or id -> mentions).
ITEM_SECTIONS = (ASKS, TOOLS, FILES, COMMANDS, ERRORS, DECISIONS, KEY, IDS)
# Output order: most valuable first.
ORDER = (SCOPE, EARLIER, ASKS, LAST_STATE, ERRORS, DECISIONS, KEY, IDS, COMMANDS, FILES, TOOLS)
# The facts: errors, decisions and key facts, each chosen by worth per character.
FACTS = (ERRORS, DECISIONS, KEY)
# After the asks, who is served first, with the share of the room left it may take in each
# of three rounds: the sections after it get theirs before it may grow in the next round.
_SHARES = {
    LAST_STATE: (0.15, 0.2, 0.25),
    ERRORS: (0.12, 0.18, 0.3),
    DECISIONS: (0.12, 0.18, 0.3),
    KEY: (0.3, 0.5, 1.0),
    EARLIER: (0.1, 0.2, 0.3),
    IDS: (0.04, 0.06, 1.0),
    COMMANDS: (0.06, 0.12, 0.25),
    FILES: (0.04, 0.08, 1.0),
    TOOLS: (0.05, 0.1, 1.0),
}
# The asks take at most this share of the room: the rest is the facts' (an ask is written
# by its first line, or a fair share of it, when they do not all fit whole).
ASKS_SHARE = 0.6
ASKS_OVERFLOW_SHARE = 0.25  # asks too many to keep even in part: the share of a sample
_MIN_ASK = 40  # an ask is never cut shorter than this
# The smallest room worth opening a section for (beyond its header).
_MIN_BODY = 24
_MIN_KEY_BODY = 80  # a key fact clipped shorter than this says little
_MIN_WORTH = 4.0  # a fact worth less than this (:func:`worth`) is not written

# Findings rank above plans; the extractor keeps sentences that match either.
_CULPRIT = r"(?:fix|cause|problem|issue|bug|culprit|solution|reason|answer)"
FINDING = re.compile(
    rf"(?i)\b(?:root cause|caused by|turns out|reproduced|confirm(?:s|ed)"
    rf"|the (?:\w+ )?{_CULPRIT}s? (?:is|are|was|were|has|had|lies|seems|must|should|here)\b"
    rf"|(?:this|that|it|which)(?: is|'s|’s) (?:the|a) (?:\w+ )?{_CULPRIT}\b)"
)
PLAN = re.compile(
    r"(?i)^(?:(?:now|so|then|first|next|finally|ok|okay|instead),?\s+)?"
    r"(?:(?:I|we)(?:\s+will|'ll|’ll|\s+am going to|'m going to|’m going to|\s+are going to"
    r"|\s+need to|\s+should|\s+must|\s+decided|'ve decided|\s+have decided)\b"
    r"|let's\b|let us\b|plan:|decision:|next,|instead,)"
)
# An error line that names what failed: exception, failed test, compiler error, code.
_SHARP_ERROR = re.compile(
    r"^(?:[\w.]*(?:Error|Exception)\b|FAIL|error\b|error\[|panic)|\b[A-Z][A-Z0-9]{1,9}-\d{2,}\b"
    r"|command not found|No such file|Permission denied|Segmentation fault|\d+ failed"
)
_EXIT = re.compile(r"→ exit (-?\d+)")
# A code or an id a reader could not guess: ORD-4102, E0308, ord_8f3a2c91, #412.
_CODE = re.compile(r"\b[A-Z]{1,6}-?\d{2,}\b|\b[a-z]+_[0-9a-f]{6,}\b|#\d{2,}\b")

# A decision that gives its reason, or says what instead of what, outranks a bare plan.
_REASON = re.compile(
    r"(?i)\b(?:decided|because|instead of|due to|so that|in order to|rather than)\b"
)
_TELLING = 7  # an info_score this high: the item carries identifiers or values
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
    """The parts of a digest. Items are oldest first; each maps to its repeat count."""

    messages: int = 0
    sections: dict[str, dict[str, int]] = field(
        default_factory=lambda: {name: {} for name in ITEM_SECTIONS}
    )
    # The distinct arguments of each tool group, oldest first.
    details: dict[str, dict[str, int]] = field(default_factory=dict)
    earlier: str = ""
    last_state: str = ""
    # What a fact is worth, where the span it came from said so (:func:`worth`).
    weights: dict[str, float] = field(default_factory=dict)

    def add(self, section: str, item: str, count: int = 1) -> None:
        """Append ``item`` to ``section``; a repeat moves to the end and adds its count."""
        items = self.sections[section]
        count += items.pop(item, 0)
        items[item] = count


def layout(digest: Digest, max_chars: int) -> str:
    """The digest as text of at most ``max_chars`` characters, room given by value.

    The asks come first (:func:`_asks`). Then three rounds over the other blocks, most
    valuable first: in each, a block may grow to its share of the room the asks left for
    that round, as far as the room left allows.
    """
    scope = _scope(digest)
    room = max_chars + 1 - _size(scope)  # every line pays for a newline; the last has none
    if room <= 0:
        return clip("\n".join(scope), max_chars)
    asks = _asks(digest.sections[ASKS], room)
    room -= _size(asks)
    written = "\n".join(asks)  # a key fact these say already is not written again
    left = room
    blocks: dict[str, list[str]] = {name: [] for name in _SHARES}
    for round_ in range(3):
        for name, shares in _SHARES.items():
            used = _size(blocks[name])
            allowance = min(used + room, int(left * shares[round_]))
            if room > 0 and allowance > used:
                lines = _section(digest, name, allowance, written)
                if _size(lines) > used:
                    room -= _size(lines) - used
                    blocks[name] = lines
    blocks[ASKS] = asks
    return "\n".join(scope + [line for name in ORDER[1:] for line in blocks[name]])


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
        merged.weights.update(part.weights)
    merged.last_state = new.last_state or previous.last_state
    return merged


def is_finding(sentence: str) -> bool:
    """Whether ``sentence`` states a finding ("the root cause is…", "the fix is…")."""
    lowered = sentence.lower()
    return any(hint in lowered for hint in FINDING_WORDS) and bool(FINDING.search(sentence))


def worth(section: str, item: str, tokens: float | None = None) -> float:
    """What a fact of ``section`` (errors, decisions, key facts) tells: its text's
    :func:`~condense.summarizers.salient.info_score`, what its tokens add (``tokens``,
    from how rare they are in the span; else as if every one were rare: a fact of a
    previous summary was rare where it came from), plus a step for an error line (two for
    a sharp one: a named exception, a failed test, a compiler error) or a finding or a
    decision that gives its reason."""
    return _worth(section, item) + (_tokens_worth(item) if tokens is None else tokens)


@functools.lru_cache(maxsize=8_192)
def _tokens_worth(item: str) -> float:
    return token_score(text_tokens(item))


@functools.lru_cache(maxsize=8_192)
def _worth(section: str, item: str) -> float:
    score = info_score(item)
    if section == ERRORS:  # an error line is news; one that names what failed more so
        score += 2.0 + (2.0 if _SHARP_ERROR.search(item) else 0.0)
    elif section == DECISIONS:
        reasoned = bool(_REASON.search(item)) or score >= _TELLING
        score += (4.0 if is_finding(item) else 0.0) + 2.0 * reasoned + bool(_CODE.search(item))
    return score


@functools.lru_cache(maxsize=4_096)
def rank(section: str, item: str) -> int:
    """How much a command is worth next to its neighbours: a failed one most."""
    if section == COMMANDS:
        match = _EXIT.search(item)
        return 0 if match is None else 1 + (match.group(1) != "0")
    return 1


for _memo in (_tokens_worth, _worth, rank):
    remember(_memo.cache_clear)


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
    """The lines of one section (its header first) in at most ``room``, or none."""
    body = room - len(name) - 4  # "## name\n"
    if body < (_MIN_KEY_BODY if name == KEY else _MIN_BODY):
        return []
    if name == LAST_STATE:
        lines = _text(digest.last_state, body, favor_end=True)
    elif name == EARLIER:
        lines = _text(digest.earlier, body, favor_end=False)
    elif name == ASKS:
        lines = _asks(digest.sections[ASKS], body)
    elif name in (FILES, IDS):
        lines = _counted(digest.sections[name], body, aggregate=name == FILES)
    elif name == TOOLS:
        lines = _tools(digest.sections[TOOLS], digest.details, body)
    elif name in FACTS:
        lines = _facts(digest, name, body, written)
    else:
        lines = _ranked(name, digest.sections[name], body)
    return [f"## {name}", *lines] if lines else []


def _text(text: str, room: int, *, favor_end: bool) -> list[str]:
    if not text:
        return []
    kept = condense(text, room - 1, favor_end=favor_end)
    return [kept] if kept else []


def _asks(items: dict[str, int], room: int) -> list[str]:
    """Every ask, oldest first, under its header, within :data:`ASKS_SHARE` of ``room``:
    verbatim while they fit; else each within a fair share of the room (the short ones
    whole, the long ones cut to the same length: their first line, then their most
    telling sentences, :func:`_ask_within`); when even that leaves less than
    ``_MIN_ASK`` each, the first ask and the newest that fit a smaller share
    (:data:`ASKS_OVERFLOW_SHARE`), and how many more there were."""
    if not items or room < len(ASKS) + 4 + _MIN_BODY:
        return []
    header = [f"## {ASKS}"]
    asks = list(items.items())
    whole = [_ask(text, count) for text, count in asks]
    room = int(room * ASKS_SHARE) - _size(header)
    if _size(whole) <= room:
        return header + whole
    extras = [len(line) - len(text) + 1 for line, (text, _) in zip(whole, asks, strict=True)]
    level = _fair_share([len(text) for text, _ in asks], room - sum(extras))
    if level >= _MIN_ASK:
        return header + [_ask(_ask_within(text, level), count) for text, count in asks]
    # Not every ask can be kept, not even in part: the first (the task) and the newest
    # that fit a smaller share, each in short; the facts keep the rest of the room.
    lines = [_ask(clip(_first_line(text), _MIN_ASK), count) for text, count in asks]
    used = len(f"- (+{len(asks)} more asks)") + 1 + len(lines[0]) + 1
    room = max(int(room * ASKS_OVERFLOW_SHARE / ASKS_SHARE), min(room, used))
    newest: list[str] = []
    for line in reversed(lines[1:]):
        if used + len(line) + 1 > room:
            break
        newest.append(line)
        used += len(line) + 1
    left_out = len(asks) - 1 - len(newest)
    more = [f"- (+{left_out} more asks)"] if left_out else []
    return header + lines[:1] + more + newest[::-1] if used <= room else header + more


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


def _fair_share(lengths: list[int], room: int) -> int:
    """The largest cut ``c`` with ``sum(min(length, c)) <= room`` (0 when none fits)."""
    if room <= 0:
        return 0
    left, count = room, len(lengths)
    for length in sorted(lengths):
        if length * count > left:
            return left // count
        left -= length
        count -= 1
    return max(lengths, default=0)


def _first_line(text: str) -> str:
    """The first line of ``text`` that holds something."""
    return next((line.strip() for line in text.split("\n") if line.strip()), "")


def _ask(text: str, count: int = 1, *, more: bool = False) -> str:
    """An ask as written, its lines kept (a line that would read as a header is indented
    by a space), its repeats counted; ``more``: the ask goes on after this line."""
    suffix = (" …" if more else "") + (f" (×{count})" if count > 1 else "")
    lines = text.split("\n")
    body = "\n".join(
        [lines[0], *(f" {line}" if line.startswith("#") else line for line in lines[1:])]
    )
    return f"- {body}{suffix}"


def _facts(digest: Digest, section: str, room: int, written: str = "") -> list[str]:
    """The facts of ``section`` that fit in ``room``, chosen by worth per character (the
    newer first among equals), written oldest first; those worth less than
    ``_MIN_WORTH``, and those the text ``written`` before (the asks) holds, are left out.
    The best of those that do not fit whole is shortened to the room left, when that is
    worth it."""
    entries: list[tuple[float, int, str]] = []
    items = list(digest.sections[section].items())
    for i, (item, count) in enumerate(items):
        value = digest.weights.get(item)
        value = worth(section, item) if value is None else value
        if value >= _MIN_WORTH and item not in written:  # not "Let's fix it.", not an ask
            line = _line(item, count)
            entries.append((-value / (len(line) + 40), -i, line))
    if not entries:
        return []
    entries.sort()
    chosen: list[tuple[int, str]] = []
    for _, i, line in entries:
        if len(line) + 1 <= room:
            chosen.append((-i, line))
            room -= len(line) + 1
    taken = {i for i, _ in chosen}
    left = [-i for _, i, _ in entries if -i not in taken]
    if left and room > _MIN_KEY_BODY:  # the best of the rest, shortened to what is left
        chosen.append((left[0], _line(*items[left[0]], room - 1)))
    return [line for _, line in sorted(chosen)]


def _ranked(name: str, items: dict[str, int], room: int) -> list[str]:
    """The best items that fit — by rank, the newest two a step up — oldest first."""
    if not items:
        return []
    entries = list(items.items())
    newest = len(entries) - 2
    order = sorted(
        range(len(entries)),
        key=lambda i: (rank(name, entries[i][0]) + (i >= newest), i),
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
