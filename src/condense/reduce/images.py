"""Strip image parts from messages, keeping their text: the cheap answer to an overflow
caused by a screenshot.

Each image part — an OpenAI ``image_url``, a Responses ``input_image``, an Anthropic
``image`` (``condense.tokens.media.IMAGE_PARTS``), and nothing else — becomes a text part
naming what was removed, e.g. ``[condense: image removed: 1280×720 PNG]``; every other
part stays as it was, so "Screenshot of the dashboard" survives where summarizing the
whole exchange would lose it, and server tool, MCP, document and unknown blocks travel on
untouched.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from condense.reduce.base import MARKER, Cost, Reduction, replace_oldest_first
from condense.tokens.media import IMAGE_PARTS
from condense.tokens.sniff import image_size
from condense.types import RawMessage


def is_image(part: object) -> bool:
    """``part`` is an image content part (see ``IMAGE_PARTS``)."""
    return isinstance(part, dict) and part.get("type") in IMAGE_PARTS


def image_placeholder(part: dict[str, Any]) -> str:
    """The one-line stand-in for one image part: its size and format when readable."""
    source = part.get("image_url")
    if part.get("type") == "image":  # Anthropic: {"source": {"type": "base64" | "url", …}}
        source = _anthropic_url(part.get("source"))
    url = source.get("url") if isinstance(source, dict) else source
    facts: list[str] = []
    if isinstance(url, str) and url.startswith("data:"):
        header, _, payload = url[5:].partition(",")
        kind = header.split(";", 1)[0].split("/")[-1].upper()
        size = image_size(payload) if ";base64" in header else None
        if size is not None:
            facts.append(f"{size[0]}×{size[1]}")
        if kind:
            facts.append(kind)
    elif isinstance(url, str):
        facts.append(url if len(url) <= 80 else url[:79] + "…")
    described = " ".join(facts) or "image"
    return f"{MARKER} image removed: {described}]"


def _anthropic_url(source: object) -> str | None:
    if not isinstance(source, dict):
        return None
    if source.get("type") == "base64":
        return f"data:{source.get('media_type')};base64,{source.get('data')}"
    url = source.get("url")
    return url if isinstance(url, str) else None


def without_images(content: object) -> object | None:
    """``content`` with every image part replaced by its placeholder (``None`` when it
    holds no image)."""
    if not isinstance(content, list):
        return None
    parts: list[Any] = []
    found = False
    for part in content:
        if is_image(part):
            parts.append({"type": "text", "text": image_placeholder(part)})
            found = True
        else:
            parts.append(part)
    return parts if found else None


def strip_images(
    messages: Sequence[RawMessage],
    candidates: Sequence[int],
    *,
    need: int,
    cost: Cost,
) -> Reduction:
    """Replace the image parts of the messages at ``candidates`` (oldest first) by
    placeholders until ``need`` tokens are saved; text parts are kept."""

    def stripped(_: int, message: RawMessage) -> RawMessage | None:
        content = without_images(message.get("content"))
        return None if content is None else {**message, "content": content}

    return replace_oldest_first(messages, candidates, need=need, cost=cost, smaller=stripped)
