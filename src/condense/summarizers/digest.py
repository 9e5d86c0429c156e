"""The digest: the sectioned text both built-in summarizers write, and how it is trimmed.

A digest reads like this (empty sections are left out)::

    ## Scope
    - 1,234 messages summarized
    ## User asks
    - Fix the failing test in tests/test_io.py; keep the 3 retries
    ## Tool calls
    - str_replace_editor(command=view, path=/src/io.py) (×2)
    ...
    ## Last state
    The test passes now; next I will update the changelog.

Because the format is plain and stable, a previous digest is parsed back and merged with
the new span's items instead of being summarized again: a summary never contains a
"summary of a summary". Items are kept oldest first, deduplicated (a repeat moves to the
end and counts ``(×N)``), and trimming drops the oldest items of the least valuable
section first, so the result is deterministic and the newest facts survive.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from condense.summarizers._text import clip, clip_middle, one_line

SCOPE = "Scope"
EARLIER = "Earlier"
ASKS = "User asks"
TOOLS = "Tool calls"
FILES = "Files"
COMMANDS = "Commands"
ERRORS = "Errors"
DECISIONS = "Decisions"
LAST_STATE = "Last state"

# Sections holding bullet items, in the order they are written.
ITEM_SECTIONS = (ASKS, TOOLS, FILES, COMMANDS, ERRORS, DECISIONS)
# Output order of every section.
ORDER = (SCOPE, EARLIER, *ITEM_SECTIONS, LAST_STATE)
# Least valuable first: trimming takes items from these in this order.
TRIM_ORDER = (TOOLS, DECISIONS, COMMANDS, FILES, ERRORS, ASKS)
# How many (newest) items each section keeps before the next section loses any.
_FLOOR = {TOOLS: 2, COMMANDS: 3, DECISIONS: 2, FILES: 4, ERRORS: 3, ASKS: 2}

_COUNT = re.compile(r"^(.*?) \(×(\d+)\)$")
_SCOPE_COUNT = re.compile(r"([\d,]+) messages? summarized")
_BULLET = ("- ", "* ", "• ")
# A previous summary is read this far at most (it should be target-sized anyway).
_MAX_PREVIOUS_CHARS = 200_000


@dataclass
class Digest:
    """The parts of a digest. Items are oldest first; each maps to its repeat count."""

    messages: int = 0
    note: str = ""
    sections: dict[str, dict[str, int]] = field(
        default_factory=lambda: {name: {} for name in ITEM_SECTIONS}
    )
    earlier: str = ""
    last_state: str = ""

    def add(self, section: str, item: str, count: int = 1) -> None:
        """Append ``item`` to ``section``; a repeat moves to the end and adds its count."""
        items = self.sections[section]
        count += items.pop(item, 0)
        items[item] = count


def render(digest: Digest) -> str:
    """The digest as text; empty sections are left out."""
    lines: list[str] = []
    if digest.messages:
        note = f" ({digest.note})" if digest.note else ""
        lines += [f"## {SCOPE}", f"- {digest.messages:,} messages summarized{note}"]
    if digest.earlier:
        lines += [f"## {EARLIER}", digest.earlier]
    for name in ITEM_SECTIONS:
        items = digest.sections[name]
        if items:
            lines.append(f"## {name}")
            lines += [_item_line(item, count) for item, count in items.items()]
    if digest.last_state:
        lines += [f"## {LAST_STATE}", digest.last_state]
    return "\n".join(lines)


def parse(text: str) -> Digest:
    """Read a previous summary back into a digest.

    Known sections are read item by item; anything else (free text, a summary written by
    another tool or an LLM that ignored the format, unknown sections) is kept verbatim as
    the ``Earlier`` section, so its facts are carried forward without nesting headers.
    """
    digest = Digest()
    current: str | None = None
    earlier: list[str] = []
    last_state: list[str] = []
    for raw in text[:_MAX_PREVIOUS_CHARS].splitlines():
        line = raw.strip()
        if line.startswith("#"):
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
        else:
            item = line[2:].strip() if line.startswith(_BULLET) else line
            match = _COUNT.match(item)
            if match:
                digest.add(current, match.group(1), int(match.group(2)))
            elif item:
                digest.add(current, item)
    digest.earlier = "\n".join(earlier).strip()
    digest.last_state = "\n".join(last_state).strip()
    return digest


def fold(previous: Digest, new: Digest) -> Digest:
    """``previous`` followed by ``new``: counts add up, new items come after old ones."""
    merged = Digest(messages=previous.messages + new.messages, earlier=previous.earlier)
    for name in ITEM_SECTIONS:
        for item, count in previous.sections[name].items():
            merged.add(name, item, count)
        for item, count in new.sections[name].items():
            merged.add(name, item, count)
    merged.last_state = new.last_state or previous.last_state
    return merged


def trim(digest: Digest, max_chars: int, *, protect_first_ask: bool = True) -> str:
    """Render ``digest`` in at most ``max_chars`` characters, dropping the least valuable.

    Order: oldest items of the least valuable sections down to a small floor each; then
    shorten the ``Earlier`` text and the last state; then the floors go too (the first
    user ask stays when ``protect_first_ask``); finally a hard cut of the text.
    """
    text = render(digest)
    if len(text) <= max_chars:
        return text
    size = len(text)
    digest = copy(digest)

    def drop_to(name: str, floor: int) -> None:
        nonlocal size
        items = digest.sections[name]
        protected = next(iter(items)) if name == ASKS and protect_first_ask and items else None
        for item in list(items):
            if size <= max_chars or len(items) <= floor:
                return
            if item == protected:
                continue
            size -= len(_item_line(item, items.pop(item))) + 1
            if not items:
                size -= len(name) + 4  # the "## name" line goes with its last item

    for name in TRIM_ORDER:
        drop_to(name, _FLOOR[name])
    if size > max_chars:
        digest.earlier = clip_middle(digest.earlier, max(max_chars // 4, 120))
        digest.last_state = clip_middle(digest.last_state, max(max_chars // 5, 120))
        size = len(render(digest))
    for name in TRIM_ORDER:
        drop_to(name, 0)
    text = render(digest)
    if len(text) > max_chars:
        digest.earlier = ""
        digest.last_state = clip(one_line(digest.last_state), 80)
        text = render(digest)
    return clip(text, max_chars)


def copy(digest: Digest) -> Digest:
    """A copy of ``digest`` that can be trimmed without touching the original."""
    return Digest(
        messages=digest.messages,
        note=digest.note,
        sections={name: dict(items) for name, items in digest.sections.items()},
        earlier=digest.earlier,
        last_state=digest.last_state,
    )


def _item_line(item: str, count: int) -> str:
    return f"- {item} (×{count})" if count > 1 else f"- {item}"
