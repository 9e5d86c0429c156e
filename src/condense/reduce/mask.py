"""Observation masking: replace old tool outputs with a one-line, tool-aware placeholder.

The placeholder keeps what an agent needs to remember that the call happened and what it
found — the command and its exit code, the file path (an editor's sub-command and the
file it worked on) and its size, the match count, and the output's one or two most
informative lines (an error line with where it was raised, an id, a ``host:port``, a
``key = value``, a row that stands out of its table, a record's member with its id;
chosen by :func:`condense.summarizers.salient.key_lines` from the whole output, about 220
characters at most) — and drops the bulk. Research backs it as
the cheapest reduction that does not hurt the solve rate (JetBrains, "The Complexity
Trap", NeurIPS'25 DL4C).
"""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from condense.arguments.calls import call_name, function_arguments
from condense.message import call_ids, content_text
from condense.reduce.base import (
    MARKER,
    Cost,
    Reduction,
    has_images,
    other_parts,
    replace_oldest_first,
)
from condense.summarizers._text import remember
from condense.summarizers.salient import key_lines
from condense.types import RawMessage

MIN_MASKABLE_CHARS = 240
"""Outputs shorter than this are left alone: a placeholder would save little."""

_EXIT = re.compile(
    r"(?:exit(?:ed)?(?:[ _]?(?:code|status)| with(?: code| status)?)|return ?code)\W{0,3}(-?\d+)",
    re.IGNORECASE,
)
_EXIT_HINTS = ("exit", "return")
_PATH_KEYS = ("path", "file_path", "filepath", "file", "filename", "target_file", "uri", "url")
_COMMAND_KEYS = ("command", "cmd", "script", "code", "shell")
_QUERY_KEYS = ("pattern", "query", "regex", "search", "q", "keyword", "glob")
_SUBCOMMAND = re.compile(r"[a-z_]{2,24}")  # "view", "str_replace": an editor's sub-command
# Placeholders remembered, by what they are made of: the same output is masked again by
# the next request of a session, and by more than one stage of a call.
_REMEMBERED = 4_096
_placeholders: OrderedDict[tuple[Any, ...], str] = OrderedDict()
_lock = threading.Lock()


def _forget_placeholders() -> None:
    with _lock:
        _placeholders.clear()


remember(_forget_placeholders)


def mask_tool_outputs(
    messages: Sequence[RawMessage],
    candidates: Sequence[int],
    *,
    need: int,
    cost: Cost,
) -> Reduction:
    """Mask the tool results at ``candidates`` (oldest first) until ``need`` tokens are saved.

    Results already masked, short, or carrying images are skipped (images have their own
    step). Blocks beside a result's text (documents, search results, …) go with the bulk;
    the placeholder names them by type. The result keeps its ``tool_call_id``.
    """
    calls = calls_answered(messages, candidates)

    def masked(index: int, message: RawMessage) -> RawMessage | None:
        content = message.get("content")
        text = content_text(content)
        if len(text) < MIN_MASKABLE_CHARS or text.startswith(MARKER) or has_images(content):
            return None
        call = calls.get(str(message.get("tool_call_id")))
        return {**message, "content": placeholder(call, text, other_parts(content))}

    return replace_oldest_first(messages, candidates, need=need, cost=cost, smaller=masked)


def calls_answered(messages: Sequence[RawMessage], candidates: Sequence[int]) -> dict[str, Any]:
    """The tool calls answered by the results at ``candidates``, by id (the mask's
    placeholder and a cut's marker name the tool)."""
    wanted = {str(messages[i].get("tool_call_id")) for i in candidates}
    found: dict[str, Any] = {}
    for index in sorted(candidates):
        back = index - 1  # past other results, and the messages Codex puts between
        while back >= 0 and not messages[back].get("tool_calls"):
            back -= 1
        if back < 0:
            continue
        for call in messages[back].get("tool_calls") or ():
            for call_id in call_ids(call):  # its id, or the call_id alias results answer
                if call_id in wanted:
                    found[call_id] = call
    return found


def placeholder(
    call: dict[str, Any] | None, output: str, others: dict[str, int] | None = None
) -> str:
    """A one-line stand-in for ``output``, naming what produced it and what it held
    (``others``: the blocks beside its text, by type: documents, search results, …).

    Remembered by the call's name and arguments, the output and ``others`` (as the token
    counter remembers counts; strings cache their hash, so a known output costs a
    lookup): ``summarizers._text.forget`` clears it."""
    key = (
        output,
        call_name(call) if call is not None else None,
        function_arguments(call) if call is not None else None,
        tuple(sorted(others.items())) if others else (),
    )
    with _lock:
        found = _placeholders.get(key)
        if found is not None:
            _placeholders.move_to_end(key)
            return found
    made = _placeholder(call, output, others)
    with _lock:
        _placeholders[key] = made
        if len(_placeholders) > _REMEMBERED:
            _placeholders.popitem(last=False)
    return made


def _placeholder(call: dict[str, Any] | None, output: str, others: dict[str, int] | None) -> str:
    name = "tool"
    arguments: dict[str, Any] = {}
    if call is not None:
        name = call_name(call) or "tool"
        try:  # a custom call's free-text input has no arguments to read
            parsed = json.loads(function_arguments(call) or "{}")
        except (TypeError, ValueError):
            parsed = {}
        arguments = parsed if isinstance(parsed, dict) else {}
    lines = output.count("\n") + (not output.endswith("\n"))
    size = f"{lines} line{'s' if lines != 1 else ''}, {_chars(len(output))}"
    facts = [size]
    head, tail = output[:4000], output[-2000:]
    exit_code = _exit_code(tail) or _exit_code(head[:500])
    if exit_code is not None:
        facts.insert(0, f"exit code {exit_code}")
    if others:
        facts.append("with " + ", ".join(f"{n} {kind}" for kind, n in sorted(others.items())))
    telling = key_lines(output)  # read whole: the telling line may be in its middle
    if telling:
        facts.append("kept: " + " | ".join(telling))
    subject = _subject(name, arguments, output)
    return f"{MARKER} output of {subject} elided — {'; '.join(facts)}]"


def _exit_code(text: str) -> str | None:
    """The last exit code stated in ``text``; the regex only runs where a hint word is."""
    lowered = text.lower()
    starts = [i for i in (lowered.rfind(word) for word in _EXIT_HINTS) if i != -1]
    if not starts:
        return None
    match = _EXIT.search(text, max(0, min(starts) - 8))
    return match.group(1) if match else None


def _subject(name: str, arguments: dict[str, Any], output: str) -> str:
    command = _first(arguments, _COMMAND_KEYS)
    path = _first(arguments, _PATH_KEYS)
    if command and path and _SUBCOMMAND.fullmatch(command):  # str_replace_editor-like
        return f"{name} {command} {_clip(path, 160)}"
    if command:
        return f"{name} `{_clip(command, 120)}`"
    query = _first(arguments, _QUERY_KEYS)
    if query:
        matches = sum(1 for line in output.splitlines() if line.strip())
        where = f" in {_clip(path, 80)}" if path else ""
        return f"{name} for {_clip(query, 80)!r}{where} ({matches} matching lines)"
    if path:
        return f"{name} {_clip(path, 160)}"
    if arguments:
        key, value = next(iter(arguments.items()))
        return f"{name}({key}={_clip(json.dumps(value, ensure_ascii=False), 60)})"
    return name


def _first(arguments: dict[str, Any], keys: Sequence[str]) -> str | None:
    for key in keys:
        value = arguments.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return " ".join(value)
    return None


def _clip(text: str, limit: int) -> str:
    """``text`` on one line (runs of whitespace as one space), clipped to ``limit``
    characters with an ellipsis. A long text is read at its head when that is enough (the
    flattened head is a prefix of the flattened whole)."""
    head = text[: limit * 4]
    flat = " ".join(head.split())
    if len(flat) <= limit and len(head) < len(text):
        flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _chars(count: int) -> str:
    return f"{count} chars" if count < 10_000 else f"{count / 1000:.0f}k chars"
