"""The summary message: how a summary is written into a history, found again, and placed
so that the profile's role-order rules hold.

A summary is a block of text between a header and a footer line::

    [condense: summary of 42 earlier messages]
    ...
    [condense: end of summary]

The block stands alone as a message, or is prepended to a neighbouring message when a
standalone message cannot fit the role alternation — never to a message that carries
replay state (thinking, reasoning items, signatures), nor to the running tool loop's
turn. Either way a later run finds it and folds it into the next summary instead of
summarizing a summary of a summary.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Collection
from typing import Any, Literal

from condense.message import carries_replay, text_parts
from condense.providers import Profile
from condense.reduce.base import MARKER
from condense.repair.order import BRIDGE_TEXT, OPENING_USER
from condense.types import RawMessage

FOOTER = f"{MARKER} end of summary]"
_BLOCK = re.compile(
    re.escape(MARKER) + r" summary of (\d+) earlier messages?\]\n(.*?)\n" + re.escape(FOOTER),
    re.DOTALL,
)

Placement = Literal[
    "user", "assistant", "merge_next", "merge_previous", "bridge_user", "bridge_assistant"
]
BRIDGE = f"{MARKER} continued after the summary]"
"""The text of the second message of a bridge (see :func:`choose_placement`)."""
_FILLERS = frozenset({OPENING_USER, *BRIDGE_TEXT.values()})


def summary_block(text: str, *, covered: int) -> str:
    noun = "message" if covered == 1 else "messages"
    return f"{MARKER} summary of {covered} earlier {noun}]\n{text.strip()}\n{FOOTER}"


def notice(covered: range) -> str:
    """The one-line stand-in for the messages ``covered`` (indices of the repaired input)."""
    count = len(covered)
    noun = "message" if count == 1 else "messages"
    where = (
        f"message {covered.start}" if count == 1 else f"messages {covered.start}–{covered.stop - 1}"
    )
    return f"{MARKER} {count} earlier {noun} ({where}) left out to fit the budget]"


NOTICE_PATTERN = re.compile(
    re.escape(MARKER) + r" \d+ earlier messages? \(messages? [\d–]+\) left out to fit the budget\]"
)


def without_notices(content: object) -> object:
    """``content`` with the notices :func:`notice` wrote removed (text or text parts)."""
    if isinstance(content, list):
        return [
            p
            for p in content
            if not (isinstance(p, dict) and NOTICE_PATTERN.fullmatch(str(p.get("text"))))
        ]
    if isinstance(content, str) and MARKER in content:
        return NOTICE_PATTERN.sub("", content).strip()
    return content


def holds_summary(message: RawMessage) -> bool:
    """``message`` holds a summary block (standalone, or put before or after its text)."""
    return find_summary(message) is not None


def written_by_condense(message: RawMessage) -> bool:
    """Every text of ``message`` is a block condense writes into a history — a summary, a
    notice, a bridge, or the filler ``repair`` opens or bridges with — and it holds
    nothing else: it is not the user's ask."""
    content = message.get("content")
    parts = content if isinstance(content, list) else [content]
    for part in parts:
        text = part.get("text") if isinstance(part, dict) else part
        if isinstance(part, dict) and part.get("type") not in ("text", "input_text"):
            return False
        if not isinstance(text, str):
            return False
        found = find_summary({"content": text})
        rest = found[1] if found is not None else text
        rest = str(without_notices(rest)).strip()
        if rest and rest != BRIDGE and rest not in _FILLERS:
            return False
    return True


def find_summary(message: RawMessage) -> tuple[str, str] | None:
    """``(summary text, the message's other text)`` if ``message`` holds a summary block.

    condense only ever puts a block at the start or the end of a message's text, so only
    those are looked at: a long tool output is never scanned.
    """
    found = _find_block(message)
    return None if found is None else (found[0].group(2), found[1])


def stands_for(message: RawMessage) -> int:
    """How many messages of the conversation ``message`` stands for: one holding a summary
    block, the messages its header counts (and itself too when it says something else);
    any other message, itself. A summary of a span that holds an earlier summary counts
    them this way, so its header says what its body's ``Scope`` says."""
    found = _find_block(message)
    if found is None:
        return 1
    return int(found[0].group(1)) + bool(found[1])


def _find_block(message: RawMessage) -> tuple[re.Match[str], str] | None:
    """The summary block of ``message`` and the message's other text, if it holds one."""
    texts = text_parts(message.get("content"))
    for text in texts[:1] + texts[-1:] if len(texts) > 1 else texts:
        if not (text.startswith(MARKER) or text.endswith(FOOTER)):
            continue
        match = _BLOCK.search(text)
        if match is not None:
            return match, (text[: match.start()] + text[match.end() :]).strip()
    return None


def choose_placement(
    before: RawMessage | None,
    after: RawMessage | None,
    profile: Profile,
    *,
    frozen: Collection[RawMessage] = (),
    speaks_as_user: bool = True,
) -> Placement | None:
    """Where a summary between ``before`` and ``after`` can go without breaking ``profile``.

    In order of preference: a standalone user message, a standalone assistant message,
    prepended to the next message (which keeps everything before it byte-identical for
    prompt caches), appended to the previous one, and last a bridge of two messages (the
    summary and a one-line turn of the other role). A message is merged into only when
    :func:`mergeable` and it is not one of ``frozen`` (the current turn, and turns whose
    thinking was removed: they were thinking-bearing turns).

    Under every profile, whether it enforces alternation or not, the placement never puts
    two user or two assistant messages side by side: OpenAI accepts two user messages in
    a row, but many OpenAI-compatible servers' chat templates do not, and a same-role run
    condense made is one the caller never sent.

    With ``speaks_as_user=False`` (a block after the latest ask, where a user message
    would open a new turn and take the ask's place) the block is never a user message
    nor put into one; ``None`` when nothing else fits.
    """
    before_role, after_role = _role(before), _role(after)
    opens = before_role in (None, "system", "developer")

    def fits(roles: tuple[str, ...]) -> bool:
        if profile.first_user and opens and roles[0] != "user":
            return False
        if after is None and roles[-1] == "assistant" and not profile.ends_with_assistant:
            return False
        sequence = [before_role, *roles, after_role]
        for first, second in itertools.pairwise(sequence):
            if first == second and first in ("user", "assistant"):
                return False
            if not profile.user_after_tool and first == "tool" and second == "user":
                return False
        return True

    def into(message: RawMessage | None, roles: tuple[str, ...]) -> bool:
        return (
            message is not None
            and _role(message) in roles
            and mergeable(message)
            and not any(message is other for other in frozen)
        )

    # merged into the message before it, the block ends the history when nothing follows
    last = ("user", "tool") if after is None and not profile.ends_with_assistant else ()
    if not speaks_as_user:
        if fits(("assistant",)):
            return "assistant"
        if into(after, ("assistant",)):
            return "merge_next"
        if into(before, tuple(r for r in ("assistant", "tool") if not last or r in last)):
            return "merge_previous"
        return None
    if fits(("user",)):
        return "user"
    if fits(("assistant",)):
        return "assistant"
    if into(after, ("user", "assistant")):
        return "merge_next"
    if into(before, tuple(r for r in ("user", "assistant", "tool") if not last or r in last)):
        return "merge_previous"
    if fits(("user", "assistant")):
        return "bridge_user"
    if fits(("assistant", "user")):
        return "bridge_assistant"
    return "bridge_user" if before_role == "assistant" or opens else "bridge_assistant"


def mergeable(message: RawMessage) -> bool:
    """A summary may be written into ``message``: it carries no replay state (thinking,
    reasoning items, thought signatures, ``reasoning_content`` are never merged with)."""
    return not carries_replay(message)


def placed(placement: Placement, block: str) -> list[RawMessage]:
    """The standalone message(s) of a non-merge ``placement`` holding ``block``."""
    if placement == "user" or placement == "assistant":
        return [{"role": placement, "content": block}]
    if placement == "bridge_user":
        return [{"role": "user", "content": block}, {"role": "assistant", "content": BRIDGE}]
    return [{"role": "assistant", "content": block}, {"role": "user", "content": BRIDGE}]


def _role(message: RawMessage | None) -> str | None:
    role = message.get("role") if message is not None else None
    return role if isinstance(role, str) else None


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
