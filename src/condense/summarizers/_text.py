"""Small text helpers shared by the summarizers: read message content, clip, estimate.

Everything here is bounded: callers pass a character limit and nothing reads further into
a message than it needs, so a span of thousands of long messages stays cheap.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from condense.tokens import estimate_text

# A message with more content parts than this is read only this far.
_MAX_PARTS = 1_000


def estimate_tokens(text: str) -> int:
    """Estimate the token count of ``text``: every size decision here goes through this."""
    return estimate_text(text)


def tokens_to_chars(tokens: int) -> int:
    """A first guess at the characters that hold ``tokens`` (four per token, as in English)."""
    return max(0, tokens) * 4


def fit_tokens(render: Callable[[int], str], target_tokens: int) -> str:
    """``render(max_chars)`` with ``max_chars`` lowered until the estimate fits the target.

    ``render`` must return at most ``max_chars`` characters (and ``""`` for 0). Text that
    is denser than four characters per token (code, paths, CJK) is shrunk in proportion,
    so this converges in a few rounds.
    """
    max_chars = tokens_to_chars(target_tokens)
    text = render(max_chars)
    while max_chars > 0 and (tokens := estimate_tokens(text)) > target_tokens:
        max_chars = max(0, min(max_chars - 1, len(text) * target_tokens // tokens * 19 // 20))
        text = render(max_chars)
    return text


def content_text(content: Any, limit: int) -> str:
    """The text of a message ``content`` (str, list of parts or None), at most ``limit`` chars.

    Image, audio and file parts become a short placeholder; unknown shapes are ignored
    instead of raising, because histories arrive broken.
    """
    if isinstance(content, str):
        return content[:limit]
    if not isinstance(content, list):
        return ""
    pieces: list[str] = []
    size = 0
    for part in content[:_MAX_PARTS]:
        if size >= limit:
            break
        piece = _part_text(part)
        if piece:
            pieces.append(piece)
            size += len(piece) + 1
    return "\n".join(pieces)[:limit]


def content_ends(content: Any, head: int, tail: int) -> tuple[str, str]:
    """The first ``head`` and last ``tail`` characters of a content, without copying the rest.

    The two windows never overlap: a short text comes back whole as ``(text, "")``.
    """
    if isinstance(content, str):
        if len(content) <= head + tail:
            return content, ""
        return content[:head], content[len(content) - tail :] if tail else ""
    if not isinstance(content, list):
        return "", ""
    pieces = [piece for piece in map(_part_text, content[:_MAX_PARTS]) if piece]
    if sum(len(piece) + 1 for piece in pieces) <= head + tail + 1:
        return "\n".join(pieces), ""
    tail_text = _join_until(pieces[::-1], tail, reverse=True)[-tail:] if tail else ""
    return _join_until(pieces, head)[:head], tail_text


def content_length(content: Any) -> int:
    """Roughly how many characters ``content`` holds (parts counted without joining)."""
    if isinstance(content, str):
        return len(content)
    if isinstance(content, list):
        return sum(len(_part_text(part)) + 1 for part in content[:_MAX_PARTS])
    return 0


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, ending in ``…`` when something was cut."""
    if len(text) <= limit:
        return text
    if limit <= 1:
        return "…"[:limit]
    return text[: limit - 1].rstrip() + "…"


def clip_middle(text: str, limit: int) -> str:
    """``text`` cut to about ``limit`` characters by removing its middle, with a marker.

    Heads hold the intent and tails the outcome (a traceback's last line, an exit code),
    so both ends survive: ``head [… 1,234 chars cut …] tail``.
    """
    if len(text) <= limit:
        return text
    marker_size = 32
    if limit <= marker_size + 16:
        return clip(text, limit)
    keep = limit - marker_size
    head = keep * 2 // 3
    tail = keep - head
    cut = len(text) - head - tail
    return f"{text[:head]} [… {cut:,} chars cut …] {text[len(text) - tail :]}"


def one_line(text: str) -> str:
    """``text`` with every run of whitespace (newlines included) folded into one space."""
    return " ".join(text.split())


def _join_until(pieces: list[str], limit: int, *, reverse: bool = False) -> str:
    taken: list[str] = []
    size = 0
    for piece in pieces:
        if size >= limit:
            break
        taken.append(piece)
        size += len(piece) + 1
    return "\n".join(taken[::-1] if reverse else taken)


def _part_text(part: Any) -> str:
    if isinstance(part, str):
        return part
    if not isinstance(part, dict):
        return ""
    kind = part.get("type")
    text = part.get("text")
    if isinstance(text, str):
        return text
    if kind in ("image_url", "image", "input_image"):
        return "[image]"
    if kind in ("input_audio", "audio"):
        return "[audio]"
    if kind in ("file", "input_file"):
        return "[file]"
    refusal = part.get("refusal")
    return refusal if isinstance(refusal, str) else ""
