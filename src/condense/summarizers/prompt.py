"""The summary prompt: structured, bounded in size, and with secrets redacted.

The prompt asks for the same sections as the extractive digest (so a summary written by a
model can later be folded in by the extractive summarizer, and vice versa). With a
``previous`` summary it becomes an update: "here is the summary so far; update it with
this new span" — the model rewrites one summary instead of summarizing a summary.

Size is bounded three ways: each message is cut to ``max_message_chars`` (head and tail
kept, a marker in the middle); if the span still does not fit, that limit is lowered
down to a floor; if it still does not fit, messages in the middle of the span are left
out with a marker. Only the windows of text that can reach the prompt are read, and
every one is passed through :func:`condense.redact.redact` before it is placed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from condense.redact import REDACTED, redact
from condense.summarizers import digest as dg
from condense.summarizers._text import (
    clip_middle,
    content_ends,
    content_length,
    estimate_tokens,
    fit_tokens,
    tokens_to_chars,
)
from condense.types import RawMessage

SYSTEM_PROMPT = f"""\
You compress the earlier part of a conversation between a user and an AI agent that uses \
tools. Your summary replaces those messages in the agent's context, so it must keep every \
fact the agent still needs to continue the work.

Write these sections, in this order, as "- " bullets; leave out a section with nothing in it:
## {dg.ASKS}
What the user asked for, in their own words where short; keep numbers, names and limits.
## {dg.TOOLS}
The tools called, each with its most telling argument (path, command, query, URL).
## {dg.FILES}
The files and directories read, created or changed.
## {dg.COMMANDS}
The commands run, each with its exit code when known.
## {dg.ERRORS}
The distinctive error lines and codes, and whether each was resolved.
## {dg.DECISIONS}
What the assistant decided or concluded, and why (the reason, verbatim where short).
## {dg.KEY}
The lines that carry facts the agent cannot guess, copied verbatim: error lines with their \
file:line, config keys with their values, hosts and ports, URLs, commit hashes, ticket and \
account ids, failing or flaky test names, numbers with units.
## {dg.IDS}
The identifiers the work refers to: ids, error codes, ticket and PR numbers, commit hashes,
versions — exactly as written.
## {dg.LAST_STATE}
Where the work stands now and what comes next (plain sentences).

Copy paths, identifiers, error codes, numbers and URLs exactly. Never invent a fact. \
Text shown as {REDACTED} was removed on purpose; do not guess it. Output only the summary."""

FIRST = """\
Summarize the conversation span below in at most about {target} tokens.

<conversation>
{span}
</conversation>"""

UPDATE = """\
Here is the current summary of the conversation so far:

<summary>
{previous}
</summary>

Update this summary with the new span below: keep the facts that still matter, add the \
new ones, and drop what the new span made obsolete. Return the complete updated summary, \
in the same sections, in at most about {target} tokens.

<new_span>
{span}
</new_span>"""

# A message is never cut below this many characters before messages are left out.
_MIN_MESSAGE_CHARS = 240
# Text is read this far past the cut so that a secret straddling it is still redacted.
_REDACT_MARGIN = 4_096


@dataclass(frozen=True, kw_only=True)
class _Entry:
    label: str
    content: Any
    size: int


def build_messages(
    messages: Sequence[RawMessage],
    *,
    previous: str | None,
    target_tokens: int,
    max_prompt_tokens: int,
    max_message_chars: int,
    secrets: Iterable[str] = (),
) -> list[dict[str, str]]:
    """The chat messages (system + user) that ask a model for the summary.

    Their estimated size stays within ``max_prompt_tokens``; ``secrets`` are extra
    literal strings (such as the API key in use) removed wherever they appear.
    """
    known = [secret for secret in secrets if len(secret) >= 8]
    room = max_prompt_tokens - estimate_tokens(SYSTEM_PROMPT)

    def user_text(max_chars: int) -> str:
        budget = max_chars - len(UPDATE) - 16
        if previous and previous.strip():
            earlier = _clean(clip_middle(previous.strip(), max(budget // 3, 200)), known)
            span = render_span(
                messages,
                max_chars=max(budget - len(earlier), 200),
                max_message_chars=max_message_chars,
                secrets=known,
            )
            return UPDATE.format(previous=earlier, span=span, target=target_tokens)
        span = render_span(
            messages, max_chars=max(budget, 200), max_message_chars=max_message_chars, secrets=known
        )
        return FIRST.format(span=span, target=target_tokens)

    # Plan at four characters per token; text that is denser (code, paths, CJK) is
    # rendered again with proportionally fewer characters.
    max_chars = tokens_to_chars(room)
    user = user_text(max_chars)
    for _ in range(4):
        tokens = estimate_tokens(user)
        if tokens <= room:
            break
        max_chars = len(user) * room // tokens * 19 // 20
        user = user_text(max_chars)
    if estimate_tokens(user) > room:  # a floor was reached: cut the middle as a last resort
        user = fit_tokens(lambda limit: clip_middle(user, limit), room)
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


def render_span(
    messages: Sequence[RawMessage],
    *,
    max_chars: int,
    max_message_chars: int,
    secrets: Sequence[str] = (),
) -> str:
    """The span as a labelled transcript of at most about ``max_chars`` characters."""
    entries = list(_entries(messages))
    if not entries:
        return "(no messages)"
    per = max(max_message_chars, _MIN_MESSAGE_CHARS)
    while per > _MIN_MESSAGE_CHARS and _total(entries, per) > max_chars:
        per = max(_MIN_MESSAGE_CHARS, per * 2 // 3)
    kept = _keep_ends(entries, per, max_chars)
    lines: list[str] = []
    for index, entry in enumerate(entries):
        if index not in kept:
            if index - 1 in kept or index == 0:
                omitted = next((i for i in range(index, len(entries)) if i in kept), len(entries))
                lines.append(f"[… {omitted - index:,} messages left out …]")
            continue
        lines.append(f"[{entry.label}] {_window(entry, per, secrets)}")
    return "\n".join(lines)


def _entries(messages: Sequence[object]) -> Iterable[_Entry]:
    # Sequence[object]: the input is untrusted, whatever its declared type.
    tool_names: dict[str, str] = {}
    for message in messages:
        if not isinstance(message, dict):
            continue
        role = str(message.get("role") or "unknown")
        content = message.get("content")
        if role == "tool":
            call_id = str(message.get("tool_call_id") or "")
            label = f"tool result: {tool_names.get(call_id, 'unknown tool')}"
            yield _Entry(label=label, content=content, size=content_length(content))
            continue
        if content_length(content) or role != "assistant":
            yield _Entry(label=role, content=content, size=content_length(content))
        calls = message.get("tool_calls")
        for call in calls if isinstance(calls, list) else ():
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict):
                continue
            name = str(function.get("name") or "unknown")
            tool_names[str(call.get("id") or "")] = name
            arguments = function.get("arguments")
            if not isinstance(arguments, str):
                arguments = json.dumps(arguments, ensure_ascii=False, default=str)
            text = f"{name}({arguments})"
            yield _Entry(label="assistant tool call", content=text, size=len(text))


def _total(entries: Sequence[_Entry], per: int) -> int:
    return sum(min(entry.size, per) + len(entry.label) + 4 for entry in entries)


def _keep_ends(entries: Sequence[_Entry], per: int, max_chars: int) -> set[int]:
    """Indices to keep: all if they fit, else alternately from the end and the start."""
    if _total(entries, per) <= max_chars:
        return set(range(len(entries)))
    kept: set[int] = set()
    used = 40  # the "left out" marker
    head, tail = 0, len(entries) - 1
    take_tail = True
    while head <= tail:
        index = tail if take_tail else head
        cost = min(entries[index].size, per) + len(entries[index].label) + 4
        if used + cost > max_chars:
            break
        kept.add(index)
        used += cost
        if take_tail:
            tail -= 1
        else:
            head += 1
        take_tail = not take_tail
    return kept


def _window(entry: _Entry, per: int, secrets: Sequence[str]) -> str:
    """The entry's text cut to ``per`` characters (head and tail), redacted before the cut."""
    keep = per - 40
    head, tail = content_ends(
        entry.content, keep * 2 // 3 + _REDACT_MARGIN, keep // 3 + _REDACT_MARGIN
    )
    if not tail:
        return clip_middle(_clean(head, secrets), per)
    head, tail = _clean(head, secrets)[: keep * 2 // 3], _clean(tail, secrets)
    tail = tail[len(tail) - keep // 3 :]
    cut = max(0, entry.size - len(head) - len(tail))
    return f"{head} [… {cut:,} chars cut …] {tail}"


def _clean(text: str, secrets: Sequence[str]) -> str:
    for secret in secrets:
        text = text.replace(secret, REDACTED)
    return redact(text)
