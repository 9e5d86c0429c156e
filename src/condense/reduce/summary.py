"""The summary message: how a summary is written into a history, found again, and placed
so that the profile's role-order rules hold.

A summary is a block of text between a header and a footer line::

    [condense: summary of 42 earlier messages]
    ...
    [condense: end of summary]

The block stands alone as a message, or is prepended to a neighbouring message when a
standalone message cannot fit the role alternation. Either way a later run finds it and
folds it into the next summary instead of summarizing a summary of a summary.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from condense.providers import Profile
from condense.reduce.base import MARKER
from condense.types import RawMessage

FOOTER = f"{MARKER} end of summary]"
_BLOCK = re.compile(
    re.escape(MARKER) + r" summary of \d+ earlier messages?\]\n(.*?)\n" + re.escape(FOOTER),
    re.DOTALL,
)

Placement = Literal["user", "assistant", "merge_next", "merge_previous"]


def summary_block(text: str, *, covered: int) -> str:
    noun = "message" if covered == 1 else "messages"
    return f"{MARKER} summary of {covered} earlier {noun}]\n{text.strip()}\n{FOOTER}"


def find_summary(message: RawMessage) -> tuple[str, str] | None:
    """``(summary text, the message's other text)`` if ``message`` holds a summary block.

    condense only ever puts a block at the start or the end of a message's text, so only
    those are looked at: a long tool output is never scanned.
    """
    content = message.get("content")
    if isinstance(content, list):
        texts = [p.get("text") for p in content if isinstance(p, dict) and p.get("type") == "text"]
        candidates = [t for t in (texts[:1] + texts[-1:]) if isinstance(t, str)]
    else:
        candidates = [content] if isinstance(content, str) else []
    for text in candidates:
        if not (text.startswith(MARKER) or text.endswith(FOOTER)):
            continue
        match = _BLOCK.search(text)
        if match is not None:
            rest = (text[: match.start()] + text[match.end() :]).strip()
            return match.group(1), rest
    return None


def choose_placement(
    before: RawMessage | None, after: RawMessage | None, profile: Profile
) -> Placement:
    """Where a summary between ``before`` and ``after`` can go without breaking ``profile``.

    A standalone user message is preferred, then a standalone assistant message, then
    prepending to the next message (which keeps everything before it byte-identical for
    prompt caches), and last appending to the previous one.
    """
    before_role = before.get("role") if before else None
    after_role = after.get("role") if after else None
    opens = before_role in (None, "system", "developer")
    if not profile.alternate or (before_role != "user" and after_role != "user"):
        return "user"
    if (
        not (profile.first_user and opens)
        and before_role != "assistant"
        and after_role != "assistant"
        and (after is not None or profile.ends_with_assistant)
    ):
        return "assistant"
    if after_role in ("user", "assistant"):
        return "merge_next"
    return "merge_previous"


def with_block(message: RawMessage, block: str, *, first: bool) -> dict[str, Any]:
    """A copy of ``message`` with ``block`` put before (``first``) or after its content."""
    content = message.get("content")
    if isinstance(content, list):
        part = {"type": "text", "text": block}
        merged: Any = [part, *content] if first else [*content, part]
    elif content:
        merged = f"{block}\n\n{content}" if first else f"{content}\n\n{block}"
    else:
        merged = block
    return {**message, "content": merged}
