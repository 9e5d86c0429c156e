"""The LLM-free summarizer: a deterministic digest of what happened in a span.

It walks the span newest first, reads only a bounded head and tail of each message, and
stops looking at a kind of fact once its section holds more items than the target could
ever keep. The whole walk has a work budget (characters examined, plus a fixed cost per
message) that grows with the target, not with the span: on a span of 10,000 messages it
reads the newest few hundred in depth, which is more than the digest can hold anyway,
and says so in its ``Scope`` line. What it keeps:

- the user's asks, verbatim but bounded (the first ask of the span always survives);
- the tool calls made, as ``name(key=value)`` with the most telling arguments;
- the files touched (path arguments and path-like words of commands);
- the commands run, with the exit code read from their output;
- the errors seen: the distinctive line (a traceback's last line, ``error[E0308]: …``,
  ``FAILED …``, ``HTTP 503``…), not the whole output;
- the decisions the assistant stated ("I will…", "The fix is…");
- the last state: the latest assistant text.

A previous digest is folded in (see :mod:`condense.summarizers.digest`), never nested.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from condense.exceptions import InputError
from condense.summarizers import digest as dg
from condense.summarizers._text import (
    clip,
    clip_middle,
    content_ends,
    fit_tokens,
    one_line,
    tokens_to_chars,
)
from condense.types import RawMessage

_PATH_KEYS = (
    "path",
    "file_path",
    "filepath",
    "file",
    "filename",
    "target_file",
    "notebook_path",
    "old_path",
    "new_path",
    "source",
    "destination",
    "directory",
    "dir",
)
_COMMAND_KEYS = ("command", "cmd", "script")
_TELLING_KEYS = (
    *_PATH_KEYS,
    "query",
    "q",
    "url",
    "uri",
    "pattern",
    "regex",
    "search",
    "symbol",
    "id",
    "name",
    "title",
)
_ACTION_KEYS = ("command", "action", "mode", "operation", "op")
_SHELL_WORDS = ("bash", "shell", "terminal", "exec", "run", "cmd", "command", "sh")

_EXIT_CODE = re.compile(
    r"(?i)(?:exit(?:ed)?(?: with)?[ _]?(?:code|status)|return[ _]?code|returncode)"
    r"[\"' ]{0,2}[:=]?\s{0,2}(-?\d{1,3})\b"
)
_EXIT_HINTS = ("xit", "XIT", "eturn")
# A line that holds one of these is a candidate; _ERROR_LINE decides.
_ERROR_HINTS = (
    "rror",
    "RROR",
    "FAIL",
    "atal",
    "ATAL",
    "panic",
    "xception",
    "Interrupt",
    "Segmentation",
    "core dumped",
    "denied",
    "not found",
    "No such",
    "HTTP",
    "tatus code",
    "ERR!",
)
_ERROR_LINE = re.compile(
    r"""(?x)^[\s>|]*(?:E\s+)?(
        (?:[A-Za-z_][\w.]*(?:Error|Exception|Interrupt|Exit)\b(?::.*)?)$  # traceback's end
      | .*\berror(?:\[[A-Z]?\d+\])?:.*                                  # error[E0308]:
      | .*\b(?:ERROR|FAILED|FAIL|FATAL|Fatal|fatal|panic|npm\ ERR!)\b.*
      | .*(?:Segmentation\ fault|core\ dumped|command\ not\ found).*
      | .*(?:No\ such\ file|Permission\ denied).*
      | .*\b(?:HTTP(?:/\d(?:\.\d)?)?|[Ss]tatus\ code)[\s:=]{1,3}[45]\d\d\b.*
    )""",
)
_DECISION_STARTS = (
    "I will ",
    "I'll ",
    "I’ll ",
    "I am going to ",
    "I'm going to ",
    "I need to ",
    "I should ",
    "I decided ",
    "I've decided ",
    "Let's ",
    "Let us ",
    "We will ",
    "We'll ",
    "We need to ",
    "We should ",
    "Next, ",
    "The fix is",
    "The fix ",
    "The solution is",
    "The problem is",
    "The issue is",
    "The root cause",
    "The cause is",
    "Plan:",
    "Decision:",
    "Instead, ",
)
_STRING_FIELD = re.compile(r'"(\w{1,40})"\s*:\s*"((?:[^"\\\n]|\\.){0,300})"')
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|\n+")
_PATH_TOKEN = re.compile(
    r"^(?:~|\.{1,2})?/?[\w@%+=,.~-]+(?:/[\w@%+=,.~-]*)+$|^[\w.-]+\.[A-Za-z]\w{0,7}$"
)

# How much of one message is read, at most.
_ASK_CHARS = 400
_ITEM_CHARS = 200
_ARG_CHARS = 120
_OUTPUT_HEAD = 800
_OUTPUT_TAIL = 1_200
_EXIT_WINDOW = 300
_TEXT_SCAN = 1_200
_ARGS_SCAN = 4_000
_LAST_STATE_CHARS = 800
# The work budget of one walk, in characters examined; each message also costs this much.
_WORK_BUDGET = 250_000
_WORK_PER_TARGET_CHAR = 16
_MESSAGE_COST = 100


class ExtractiveSummarizer:
    """Summarize a span without a model: fast, deterministic, never fails on odd input."""

    name = "extractive"

    def summarize(
        self,
        messages: Sequence[RawMessage],
        *,
        previous: str | None,
        target_tokens: int,
    ) -> str:
        """Return a sectioned digest of ``messages`` within ``target_tokens`` (estimated)."""
        if target_tokens < 1:
            raise InputError(f"target_tokens must be at least 1, got {target_tokens}")
        max_chars = tokens_to_chars(target_tokens)
        digest = extract(
            messages,
            # More items than this per section can never survive trimming.
            cap=max(4, max_chars // 48),
            budget=max(_WORK_BUDGET, _WORK_PER_TARGET_CHAR * max_chars),
        )
        if previous and previous.strip():
            digest = dg.fold(dg.parse(previous), digest)
        return fit_tokens(lambda limit: dg.trim(digest, limit), target_tokens)


def extract(messages: Sequence[object], *, cap: int, budget: int) -> dg.Digest:
    """Collect the facts of ``messages`` into a digest, newest first.

    At most ``cap`` distinct items per section; the walk stops when every section is
    full or ``budget`` (characters examined plus a fixed cost per message) is spent.
    """
    found = _Collector(cap, budget)
    exit_codes: dict[str, int] = {}
    for message in reversed(messages):
        if found.full() or found.budget <= 0:
            break
        found.scanned += 1
        found.budget -= _MESSAGE_COST
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        if role == "tool":
            found.tool_output(message, exit_codes)
        elif role == "assistant":
            found.assistant(message, exit_codes)
        elif role == "user":
            found.ask(message.get("content"))
    first_ask = next(
        (
            text
            for message in messages
            if isinstance(message, dict) and message.get("role") == "user"
            if (text := _ask_text(message.get("content")))
        ),
        None,
    )
    return found.digest(len(messages), first_ask)


class _Collector:
    """Newest-first collection of items, bounded per section."""

    def __init__(self, cap: int, budget: int) -> None:
        self.cap = cap
        self.budget = budget
        self.scanned = 0
        self.items: dict[str, dict[str, int]] = {name: {} for name in dg.ITEM_SECTIONS}
        self.last_state = ""

    def full(self) -> bool:
        return bool(self.last_state) and all(len(v) >= self.cap for v in self.items.values())

    def room(self, section: str) -> bool:
        return len(self.items[section]) < self.cap

    def add(self, section: str, item: str) -> None:
        items = self.items[section]
        if item in items:
            items[item] += 1
        elif len(items) < self.cap:
            items[item] = 1

    def ask(self, content: Any) -> None:
        if self.room(dg.ASKS):
            text = _ask_text(content)
            if text:
                self.add(dg.ASKS, text)

    def assistant(self, message: RawMessage, exit_codes: dict[str, int]) -> None:
        content = message.get("content")
        if not self.last_state or self.room(dg.DECISIONS):
            head, tail = content_ends(content, _TEXT_SCAN, _LAST_STATE_CHARS // 2)
            self.budget -= len(head) + len(tail)
            if head.strip():
                if not self.last_state:
                    # With a tail, head + tail is longer than the clip: the seam is cut out.
                    self.last_state = clip_middle((head + tail).strip(), _LAST_STATE_CHARS)
                if self.room(dg.DECISIONS):
                    for decision in reversed(_decisions(head)):
                        self.add(dg.DECISIONS, decision)
        calls = message.get("tool_calls")
        if isinstance(calls, list):
            for call in reversed(calls):
                if isinstance(call, dict):
                    self.tool_call(call, exit_codes)

    def tool_call(self, call: RawMessage, exit_codes: dict[str, int]) -> None:
        function = call.get("function")
        if not isinstance(function, dict):
            return
        name = clip(one_line(str(function.get("name") or "?")), 60)
        raw = function.get("arguments")
        self.budget -= min(len(raw), _ARGS_SCAN) if isinstance(raw, str) else _MESSAGE_COST
        args = _arguments(raw)
        code = exit_codes.get(str(call.get("id")))
        ended = "" if code is None else f" → exit {code}"
        command = _command(name, args)
        if command is not None:
            if self.room(dg.COMMANDS):
                self.add(dg.COMMANDS, clip(one_line(command), _ITEM_CHARS) + ended)
            if self.room(dg.FILES):
                for word in reversed(_path_words(command)):
                    self.add(dg.FILES, word)
            return
        if self.room(dg.TOOLS):
            self.add(dg.TOOLS, _call_item(name, args) + ended)
        if self.room(dg.FILES):
            for key in _PATH_KEYS:
                value = args.get(key)
                if isinstance(value, str) and 0 < len(value) < 300 and "\n" not in value:
                    self.add(dg.FILES, value.strip())

    def tool_output(self, message: RawMessage, exit_codes: dict[str, int]) -> None:
        head, tail = content_ends(message.get("content"), _OUTPUT_HEAD, _OUTPUT_TAIL)
        if not head:
            return
        call_id = message.get("tool_call_id")
        if isinstance(call_id, str) and (self.room(dg.COMMANDS) or self.room(dg.TOOLS)):
            self.budget -= 2 * _EXIT_WINDOW
            for window in ((tail or head)[-_EXIT_WINDOW:], head[:_EXIT_WINDOW]):
                match = _hinted(window, _EXIT_HINTS) and _EXIT_CODE.search(window)
                if match:
                    exit_codes[call_id] = int(match.group(1))
                    break
        if self.room(dg.ERRORS):
            self.budget -= len(head) + len(tail)
            for window in (tail, head):
                for line in reversed(_error_lines(window)):
                    self.add(dg.ERRORS, line)

    def digest(self, messages: int, first_ask: str | None) -> dg.Digest:
        result = dg.Digest(messages=messages, last_state=self.last_state)
        if self.scanned < messages and self.budget <= 0:
            result.note = f"details from the newest {self.scanned:,}"
        for name, items in self.items.items():
            # Collected newest first; a digest keeps them oldest first.
            for item, count in reversed(items.items()):
                result.sections[name][item] = count
        asks = result.sections[dg.ASKS]
        if first_ask is not None and next(iter(asks), None) != first_ask:
            count = asks.pop(first_ask, 1)
            result.sections[dg.ASKS] = {first_ask: count, **asks}
        return result


def _hinted(window: str, hints: tuple[str, ...]) -> bool:
    return any(hint in window for hint in hints)


def _ask_text(content: Any) -> str:
    head, tail = content_ends(content, _ASK_CHARS, _ASK_CHARS // 2)
    return one_line(clip_middle(f"{head} {tail}" if tail else head, _ASK_CHARS))


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    if not isinstance(raw, str) or not raw.strip():
        return {}
    if len(raw) <= _ARGS_SCAN:
        try:
            value = json.loads(raw)
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}
    # Too long to parse cheaply (a whole file being written): pick the short string fields.
    return dict(_STRING_FIELD.findall(raw[:_ARGS_SCAN]))


def _command(name: str, args: dict[str, Any]) -> str | None:
    lowered = name.lower()
    if not any(word in lowered for word in _SHELL_WORDS):
        return None
    for key in _COMMAND_KEYS:
        value = args.get(key)
        if isinstance(value, list) and all(isinstance(part, str) for part in value):
            value = " ".join(value)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def _call_item(name: str, args: dict[str, Any]) -> str:
    picked: list[str] = []
    action = _pick(args, _ACTION_KEYS, 30)
    if action:
        picked.append(action)
    keys = [key for key in _TELLING_KEYS if key in args] + list(args)
    telling = _pick(args, [key for key in keys if not action.startswith(f"{key}=")], _ARG_CHARS)
    if telling:
        picked.append(telling)
    return clip(f"{name}({', '.join(picked)})", _ITEM_CHARS)


def _pick(args: dict[str, Any], keys: Sequence[str], limit: int) -> str:
    """``key=value`` for the first of ``keys`` whose value is a short scalar, or ``""``."""
    for key in keys:
        value = _scalar(args.get(key), limit)
        if value:
            return f"{key}={value}"
    return ""


def _scalar(value: Any, limit: int) -> str:
    if isinstance(value, bool) or value is None:
        return ""
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return clip(one_line(value[: limit * 4]), limit)
    return ""


def _path_words(command: str) -> list[str]:
    words = []
    for word in command[: _ITEM_CHARS * 2].split():
        word = word.strip("\"'`;,()|&<>")
        if (
            1 < len(word) < 200
            and "://" not in word
            and not word.startswith("-")
            and _PATH_TOKEN.match(word)
        ):
            words.append(word)
    return words


def _error_lines(window: str) -> list[str]:
    """The distinctive error lines of ``window``: the last three, oldest first."""
    starts: set[int] = set()
    for hint in _ERROR_HINTS:
        at = window.find(hint)
        while at >= 0:
            start = window.rfind("\n", 0, at) + 1
            starts.add(start)
            end = window.find("\n", at)
            at = window.find(hint, end) if end >= 0 else -1
    lines: list[str] = []
    for start in sorted(starts):
        end = window.find("\n", start)
        line = window[start:] if end < 0 else window[start:end]
        match = _ERROR_LINE.match(line)
        if match is None:
            continue
        text = match.group(1).strip()
        if text.rstrip(":").upper() == "ERROR" and end >= 0:
            # A bare "ERROR:" label: the message is on the next line.
            following = window[end + 1 :].lstrip("\n").split("\n", 1)[0]
            text = f"{text} {following.strip()}"
        lines.append(clip(one_line(text), _ITEM_CHARS))
    return lines[-3:]


def _decisions(text: str) -> list[str]:
    found = []
    for sentence in _SENTENCE_BREAK.split(text):
        sentence = sentence.strip().lstrip("-*>#• ").strip()
        if sentence.startswith(_DECISION_STARTS):
            found.append(clip(one_line(sentence), _ITEM_CHARS))
    return found
