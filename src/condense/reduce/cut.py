"""Cut tool outputs middle-out: keep each one's head and tail, and say in the middle how
much was cut, and of which tool's output.

Where masking replaces an old output by a one-line placeholder, a cut keeps what an agent
reads first (a command's first lines, a file's start) and last (an exit code, a
traceback's last line)::

    $ pytest -q
    ..F.
    [condense: 18,234 of 20,113 chars cut from the middle of this bash output]
    FAILED tests/test_parser.py::test_empty - AssertionError
    1 failed, 3 passed in 0.41s

It is the gentle reduction of the outputs kept if at all possible (the newest results,
the tail) and the last resort for the running turn's own outputs (``condense.compress``,
graded protection). Cutting is driven by what is needed and goes largest first: the
largest cap on each output's text such that cutting every longer one to it saves
``need`` tokens (water-filling), never below ``floor`` characters. An output cut before is
cut again from the inside of its marker, whose count then adds both cuts, so markers
never nest. Only text is cut; image parts are replaced by their placeholder when
``images`` is true; every other part (documents, search results, server tool blocks)
travels as it is. The output keeps its ``tool_call_id`` and every other key.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from condense.arguments.calls import call_name
from condense.message import is_text_part
from condense.reduce.base import MARKER, Cost, Reduction, replace_to_a_cap
from condense.reduce.images import image_placeholder, is_image
from condense.reduce.mask import calls_answered
from condense.summarizers.salient import key_lines
from condense.types import RawMessage

SHORT_CHARS = 120
"""The least text a cut keeps of an output: a short head (and a shorter tail). The running
turn's outputs are cut down to this before a budget is called impossible."""
MARKER_TOKENS = 24
"""About what a cut's marker line costs (the estimate of what a cut saves allows it)."""
GENTLE_CHARS = 4_000
"""The least text a gentle cut keeps of an output kept if at all possible (about a
thousand tokens), before older units are summarized."""

HELD_FROM = 1_000
"""A cut that keeps at least this many characters of an output says in its marker what
the middle it cut held: its most telling lines (:func:`.salient.key_lines`), in at most a
tenth of what it keeps. A shorter cut (the last resort's) says only how much it cut."""
_HELD_CHARS = 220

_CUT = re.compile(
    r"\n?" + re.escape(MARKER) + r" ([\d,]+) of ([\d,]+) chars cut from the middle of this "
    r"(.{1,80}?) output(?:; it held: ([^\n]*))?\]\n?"
)
_HELD_SEPARATOR = " | "


def cut_marker(removed: int, total: int, tool: str, held: Sequence[str] = ()) -> str:
    """The line put where an output's middle was cut (``held``: the lines it held that
    tell the most)."""
    said = f"; it held: {_HELD_SEPARATOR.join(held)}" if held else ""
    return (
        f"\n{MARKER} {removed:,} of {total:,} chars cut from the middle of this {tool} output"
        f"{said}]\n"
    )


@dataclass(frozen=True, kw_only=True)
class _Text:
    """The text of one output, split around an earlier cut: ``head`` and ``tail`` are what
    is left of it, ``removed`` what earlier cuts took, ``total`` its original size."""

    head: str
    tail: str
    removed: int
    total: int
    held: tuple[str, ...] = ()

    @property
    def kept(self) -> int:
        return len(self.head) + len(self.tail)


def _read(text: str) -> _Text:
    match = _CUT.search(text) if MARKER in text else None
    if match is None:
        return _Text(head=text, tail="", removed=0, total=len(text))
    removed = int(match.group(1).replace(",", ""))
    total = int(match.group(2).replace(",", ""))
    held = tuple(match.group(4).split(_HELD_SEPARATOR)) if match.group(4) else ()
    return _Text(
        head=text[: match.start()],
        tail=text[match.end() :],
        removed=removed,
        total=total,
        held=held,
    )


def cut_text(text: str, keep: int, tool: str) -> str:
    """``text`` with its middle cut so that about ``keep`` characters of it are left (two
    thirds from the head, one third from the tail, ending on a line break near the cut
    where there is one), and :func:`cut_marker` in their place, saying what the middle
    held when ``keep`` is at least :data:`HELD_FROM`. Unchanged when it holds no more
    than ``keep`` characters."""
    read = _read(text)
    if read.kept <= keep:
        return text
    whole = read.head + read.tail
    tail_keep = keep // 3
    if read.tail or read.removed:  # cut again: the new cut takes in the old one
        tail_keep = min(len(read.tail), tail_keep)
        head_keep = min(len(read.head), keep - tail_keep)
        tail_keep = keep - head_keep
    head_end, tail_start = keep - tail_keep, len(whole) - tail_keep
    head_end = _line_break(whole, head_end, backward=True)
    tail_start = max(head_end, _line_break(whole, tail_start, backward=False))
    head, tail = whole[:head_end].rstrip("\n"), whole[tail_start:].lstrip("\n")
    removed = read.removed + len(whole) - len(head) - len(tail)
    held: Sequence[str] = ()
    if keep >= HELD_FROM:  # what the middle held: this cut's and what earlier cuts kept
        middle = "\n".join([*read.held, whole[head_end:tail_start]])
        held = key_lines(middle, count=2, max_chars=min(_HELD_CHARS, keep // 10))
    return f"{head}{cut_marker(removed, read.total, tool, held)}{tail}"


def _line_break(text: str, at: int, *, backward: bool) -> int:
    """``at`` moved to just after a line break within a fifth of a line's reach, so a cut
    keeps whole lines where it can."""
    reach = 80
    if backward:
        found = text.rfind("\n", max(0, at - reach), at)
        return found + 1 if found >= 0 else at
    found = text.find("\n", at, min(len(text), at + reach))
    return found + 1 if found >= 0 else at


def _texts(content: object) -> list[int]:
    """The positions of the text parts (``condense.message.is_text_part``) of a list
    ``content`` (``[-1]``: a string)."""
    if isinstance(content, str):
        return [-1]
    if isinstance(content, list):
        return [
            i for i, part in enumerate(content) if isinstance(part, dict) and is_text_part(part)
        ]
    return []


def _text_size(content: object) -> int:
    if isinstance(content, str):
        return _read(content).kept
    parts = content if isinstance(content, list) else []
    return sum(_read(parts[i]["text"]).kept for i in _texts(content))


def cut_content(content: object, keep: int, tool: str, *, images: bool) -> object:
    """``content`` with its text cut to about ``keep`` characters in all (the longest
    text parts first) and, when ``images``, its image parts replaced by placeholders."""
    if isinstance(content, str):
        return cut_text(content, keep, tool)
    if not isinstance(content, list):
        return content
    positions = _texts(content)
    sizes = [_read(content[i]["text"]).kept for i in positions]
    caps = fill(sizes, keep)
    out: list[Any] = list(content)
    for position, size, cap in zip(positions, sizes, caps, strict=True):
        if cap < size:
            part = content[position]
            out[position] = {**part, "text": cut_text(part["text"], cap, tool)}
    if images:
        out = [{"type": "text", "text": image_placeholder(p)} if is_image(p) else p for p in out]
    changed = any(a is not b for a, b in zip(out, content, strict=True))
    return out if changed else content


def fill(sizes: Sequence[int], room: int) -> list[int]:
    """Water-filling: the largest common cap such that ``sizes``, each cut to the cap,
    add up to at most ``room``; each size's cap (``min(size, cap)``)."""
    if sum(sizes) <= room:
        return list(sizes)
    low, high = 0, max(sizes)
    while high - low > 1:
        middle = (low + high) // 2
        if sum(min(size, middle) for size in sizes) <= room:
            low = middle
        else:
            high = middle
    return [min(size, low) for size in sizes]


def tool_name(call: object) -> str:
    """The name of the tool ``call`` called, for a cut's marker (``tool`` when unknown)."""
    return call_name(call) or "tool"


def cut_tool_outputs(
    messages: Sequence[RawMessage],
    candidates: Sequence[int],
    *,
    need: int,
    cost: Cost,
    floor: int = SHORT_CHARS,
    images: bool = False,
) -> Reduction:
    """Cut the tool results at ``candidates`` middle-out, largest first, until ``need``
    tokens are saved: each output's text is cut to a common cap, the largest that saves
    enough, never below ``floor`` characters (see the module docstring)."""
    names = calls_answered(messages, candidates)
    sizes: dict[int, int] = {}
    for index in candidates:
        content = messages[index].get("content")
        size = _text_size(content)
        if size > floor or (images and _has_image(content)):
            sizes[index] = size

    def smaller(index: int, message: RawMessage, cap: int) -> RawMessage | None:
        tool = tool_name(names.get(str(message.get("tool_call_id"))))
        content = cut_content(message.get("content"), cap, tool, images=images)
        return None if content is message.get("content") else {**message, "content": content}

    return replace_to_a_cap(
        messages, sizes, need=need, cost=cost, floor=floor, smaller=smaller, overhead=MARKER_TOKENS
    )


def _has_image(content: object) -> bool:
    return isinstance(content, list) and any(is_image(part) for part in content)


def cut_size(message: RawMessage) -> tuple[int, int] | None:
    """``(removed, total)`` characters of the text of ``message`` a cut took out and held
    before, added over its text parts; ``None`` when no cut's marker is in it."""
    content = message.get("content")
    texts = [content] if isinstance(content, str) else []
    if isinstance(content, list):
        texts = [content[i]["text"] for i in _texts(content)]
    removed = total = 0
    for text in texts:
        match = _CUT.search(text) if MARKER in text else None
        if match is not None:
            removed += int(match.group(1).replace(",", ""))
            total += int(match.group(2).replace(",", ""))
    return (removed, total) if total else None
