"""The LLM-free summarizer: a deterministic digest of what happened in a span.

It reads every message of the span, whole, in one pass — however long the span, a fact
in its middle has the same chance as one at its end — and keeps:

- the user's asks, every one of them (the layout writes them first, verbatim while they
  fit, else each by its first line);
- the last state: the latest assistant text;
- the errors the agent hit: the distinctive line (a traceback's last line,
  ``error[E0308]: …``, ``FAILED …``, ``HTTP 503``…), not the whole output, and not the
  error-looking lines of a file it read or a search it ran;
- the findings and decisions the assistant stated ("The root cause is…", "I will…",
  "…because…", in several languages);
- the identifiers the user and the assistant talk about (``ORD-4102``, ``ord_8f3a2c91``,
  ``#412``, a commit hash), counted;
- the commands run, with the exit code read from their output;
- the files touched: path arguments and the path-like words of commands, counted;
- the other tool calls, grouped per tool with their most telling arguments;
- the key facts: the span's most informative snippets, chosen by information rather than
  position over the whole span (:mod:`condense.summarizers.salient`: identifiers, values,
  errors, decisions, rarity), verbatim.

The text is read by one linear scan (:mod:`condense.summarizers.scan`); the walk over the
messages reads only their structure (calls, arguments, exit codes), so its cost per
message is small and fixed.

The conversation is read as it is: a ``user`` message that carries a tool observation
(SWE-agent style) is an observation, not an ask; ``<think>`` blocks are reasoning, not the
state; commands and files repeated with other numbers (``cat logs/part0.log`` …
``cat logs/part3727.log``) are one item, ``first … last (×N)``.

How the target's room is shared among these is the digest's business
(:func:`condense.summarizers.digest.layout`); the result is checked with the real
tokenizer. A previous digest is folded in, never nested.
"""

from __future__ import annotations

import bisect
import functools
import json
import math
import operator
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, NamedTuple

from condense.exceptions import InputError
from condense.summarizers import digest as dg
from condense.summarizers._text import (
    clip,
    content_ends,
    content_text,
    fit_exact,
    one_line,
    remember,
    tokens_to_chars,
)
from condense.summarizers.salient import (
    ask_positions,
    candidates,
    progress_lines,
    span_pieces,
    strip_think,
)
from condense.summarizers.scan import Scan, SpanText, words
from condense.summarizers.worth import Measure, core, specificity
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
_TELLING_KEYS = ("query", "q", "pattern", "regex", "search", "symbol", "url", "uri", "id", "name")
_ACTION_KEYS = ("command", "action", "mode", "operation", "op")
_SHELL_WORDS = ("bash", "shell", "terminal", "exec", "run", "cmd", "command", "sh")
# A tool (or an action of one) with one of these words shows content; it does not fail by it.
_READ_WORD_LIST = "read view cat open show grep search find list ls glob fetch browse get lookup"
_READ_WORDS = frozenset(_READ_WORD_LIST.split())
_READ_PROGRAM_LIST = (
    "cat head tail less more nl bat grep egrep fgrep rg ag ack find ls tree wc sed awk jq diff"
    " git-show git-log git-diff git-blame git-grep git-status"
)
_READ_PROGRAMS = frozenset(_READ_PROGRAM_LIST.split())
_SETUP_PROGRAMS = frozenset(("cd", "export", "set", "source", ".", "pushd"))
# A log file named in a command or a path: ``*.log`` (rotated: ``*.log.1``), ``*.err``, or
# a file under ``logs/`` or ``/var/log/`` that is not source code (``pkg/logs/tailer.go``
# is a package). What a log shows is what ran and what failed
# (:func:`.salient.candidates`), though not in this session.
_LOG_PATH = re.compile(
    r"(?:^|[\s/'\"])(?:logs|var/log)/[^\s'\";|&]*|[^\s'\";|&]*\w\.(?:log|err)(?:\.\d+)?\b"
)
_SOURCE_FILE = re.compile(
    r"\.(?:py|go|js|mjs|ts|jsx|tsx|rs|java|kt|rb|php|c|h|cc|cpp|hpp|cs|swift|scala|sh)$"
)


def _names_log(text: str) -> bool:
    """Whether ``text`` (a command, a path) names a log file (:data:`_LOG_PATH`)."""
    return any(not _SOURCE_FILE.search(found.group()) for found in _LOG_PATH.finditer(text))


# A document people wrote (notes, a runbook, a decision record, a README): what a read of
# it shows is read as what people say (its decisions, :class:`.scan.Scan`).
_DOCUMENT_SUFFIXES = (".md", ".markdown", ".mdx", ".txt", ".rst", ".adoc", ".org")
_DOCUMENT_NAMES = frozenset(("readme", "notes", "changelog", "contributing", "todo"))


def _names_document(path: str) -> bool:
    """Whether ``path`` (a file a call names) is a document people wrote."""
    name = path.rsplit("/", 1)[-1].lower()
    return name.endswith(_DOCUMENT_SUFFIXES) or name in _DOCUMENT_NAMES


# Matched at "exit" or "return" in lower-cased text.
_EXIT_CODE = re.compile(
    r"(?:exit(?:ed)?(?: with)?[ _]?(?:code|status)|return[ _]?code|returncode)"
    r"[\"' ]{0,2}[:=]?\s{0,2}(-?\d{1,3})\b"
)
_EXIT_HINTS = ("xit", "XIT", "eturn")
_STRING_FIELD = re.compile(r'"(\w{1,40})"\s*:\s*"((?:[^"\\\n]|\\.){0,300})"')
_WORD = re.compile(r"[\w-]{1,30}")
_NAME_CHARS = re.compile(r"[^\w.\-/]+")
_NUMBERS = re.compile(r"\d+")
_AGGREGATE_FROM = 3  # an action repeated this often (numbers aside) is written once
_CAMEL = re.compile(r"([a-z])([A-Z])")
_NOT_LETTERS = re.compile(r"[^a-z]+")
_SEGMENTS = re.compile(r"&&|\|\||[;|\n]")

# What looks like a file: no commas, pluses, quotes or globs; a name with an extension
# (one of the known ones when there is no directory part) or a well-known file name.
_PATH_CHARS = re.compile(r"[\w@%.~/-]+")
_EXTENSION = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,9}")
_LINE_SUFFIX = re.compile(r":\d+(?::\d+)?:?$")
_FILENAME_LIST = (
    "Makefile makefile GNUmakefile Dockerfile Containerfile Jenkinsfile Vagrantfile Procfile"
    " Gemfile Rakefile Justfile justfile Brewfile Pipfile LICENSE LICENCE COPYING NOTICE README"
    " CHANGELOG CODEOWNERS AUTHORS BUILD WORKSPACE OWNERS VERSION MANIFEST"
)
_FILENAMES = frozenset(_FILENAME_LIST.split())
_EXTENSION_LIST = (
    "py pyi pyx ipynb js mjs cjs jsx ts tsx json jsonl yaml yml toml ini cfg conf env md mdx rst"
    " txt log csv tsv xml html htm css scss sass less sql sh bash zsh fish ps1 bat rs go c h cc"
    " cpp hpp cxx java kt kts scala rb php cs swift m mm r jl lua pl dart ex exs erl hs ml vue"
    " svelte proto graphql gradle lock po mo bin dat db sqlite png jpg jpeg gif svg pdf zip gz"
    " tar tgz whl so dll exe wasm patch diff tf hcl mk cmake bzl nix vim el clj sol zig tex"
    " parquet npy pkl pt onnx xlsx docx"
)
_EXTENSIONS = frozenset(_EXTENSION_LIST.split())

_ITEM_CHARS = 200
_TALKED_ABOUT = 2  # an identifier people wrote this often is listed, however common
_ID_ALONE = 0.6  # a value this specific is an identifier without its key (href=https://…)
_ARG_CHARS = 100
_COMMAND_CHARS = 120
_EXIT_WINDOW = 300
_TEXT_SCAN = 1_500
_TEXT_TAIL = 600
_ARGS_SCAN = 4_000
_CACHED_ARGS = 512  # the facts of a call with arguments this short are remembered
_LAST_STATE_ENOUGH = 240  # shorter than this, the assistant text before it is added
_LAST_STATE_TEXTS = 3
_CHARS_PER_FACT = 200  # the key-fact scan is asked for about one candidate per this much room
_WHOLE = 1 << 40


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
        """Return a sectioned digest of ``messages`` within ``target_tokens`` (o200k_base)."""
        if target_tokens < 1:
            raise InputError(f"target_tokens must be at least 1, got {target_tokens}")
        max_chars = tokens_to_chars(target_tokens)
        digest = self._extract(messages, max(8, max_chars // _CHARS_PER_FACT))
        if previous and previous.strip():
            digest = dg.fold(dg.parse(previous), digest)
        return fit_exact(lambda limit: dg.layout(digest, limit), target_tokens)

    def _extract(self, messages: Sequence[RawMessage], facts: int) -> dg.Digest:
        """The digest of ``messages``: from the reading kept by :func:`reading_once`
        when it covers them, else from a new reading (kept, when one is asked for)."""
        kept = _READINGS.get()
        if kept is None:
            return extract(messages, facts=facts)
        reading = kept[-1] if kept and kept[-1].covers(messages, facts) else None
        if reading is None:
            reading = SpanReading(messages, facts)
            kept[:] = [reading]
        return reading.digest(len(messages))


_READINGS: ContextVar[list[SpanReading] | None] = ContextVar("condense_readings", default=None)


@contextmanager
def reading_once() -> Iterator[None]:
    """Within this block (one ``compress`` call's assembly), the extractive summarizer
    keeps its reading of the last span it summarized, and summarizes that span again, or
    any prefix of it (the same message objects, oldest first), from that reading without
    reading the text again: the engine asks for a summary of fewer messages when the
    first one left room unused, or for a shorter one. The words of a prefix are valued as
    rare or common in the whole span read. Per thread and per task; nothing is kept
    after the block."""
    token = _READINGS.set([])
    try:
        yield
    finally:
        _READINGS.reset(token)


def extract(messages: Sequence[object], *, facts: int) -> dg.Digest:
    """Collect the facts of every message of ``messages`` into a digest (oldest first);
    ``facts`` is about how many facts the digest may have room for."""
    return SpanReading(messages, facts).digest(len(messages))


class SpanReading:
    """One read of a span's text (:class:`Scan`: every message, whole) and the
    candidate facts it found, for a digest of the span or of any prefix of it
    (:meth:`digest`); the walk over the messages' structure is cheap, and done again for
    each."""

    def __init__(self, messages: Sequence[object], facts: int) -> None:
        self.messages = tuple(messages)
        self.facts = facts
        walk, asks = _walked(messages)
        self._walk: _Walk | None = walk  # for the digest of the whole span
        scan = Scan(SpanText(span_pieces(messages, asks)), documents=walk.documents - walk.logs)
        self.scan = scan
        self.measure = Measure(scan)
        # what a call's arguments say that the Files section names anyway
        files = walk.aggregated(walk.items[dg.FILES], files=True)
        known = {core(word) for item in files for word in words(item)}
        self.candidates = candidates(
            scan, self.measure, limit=facts, reads=walk.reads, logs=walk.logs, known=known
        )
        # and the identifiers of the span: its distinctive words, but for a progress bar's
        # (its rate and counts look like ids and name nothing)
        bars = progress_lines(scan.span)
        places = scan.places if not bars else [p for p in scan.places if not _within(bars, p[0])]
        span = scan.span
        self.places = [(span.owners[span.piece_of(at)], word) for at, word in places]

    def covers(self, messages: Sequence[object], facts: int) -> bool:
        """Whether ``messages`` are the first messages of the span read (the same objects),
        and the facts read are enough for a room of ``facts``."""
        return (
            facts <= self.facts
            and len(messages) <= len(self.messages)
            and all(map(operator.is_, messages, self.messages))
        )

    def digest(self, upto: int) -> dg.Digest:
        """The digest of the first ``upto`` messages of the span read: their structure,
        their candidate facts and identifiers; the identifiers people keep talking about
        are counted in the whole span read."""
        messages = self.messages[:upto]
        walk, self._walk = self._walk, None  # a walk's digest is made once
        if walk is None or upto != len(self.messages):
            walk = _walked(messages)[0]
        digest = walk.digest(len(messages), _last_state(messages))
        digest.measure = measure = self.measure
        whole = upto == len(self.messages)
        digest.candidates = [c for c in self.candidates if whole or c.position[0] < upto]
        counts = self.scan.counts
        for word in dict.fromkeys(word for owner, word in self.places if owner < upto):
            item = identifier(word)
            digest.add(dg.IDS, item, counts[word])
            digest.id_worth[item] = measure.word(word)
        # and the identifiers people keep talking about (#412, ORD-4102): the work's topic
        for word, times in self.scan.said.items():
            if times >= _TALKED_ABOUT and (worth := specificity(word)) >= _ID_ALONE:
                item = identifier(word)
                if item not in digest.id_worth:
                    digest.add(dg.IDS, item, times)
                    digest.id_worth[item] = worth * math.log2(1 + times)
        return digest


def _walked(messages: Sequence[object]) -> tuple[_Walk, set[int]]:
    """The walk over ``messages`` (settled), and which of them are asks."""
    asks = ask_positions(messages)
    walk = _Walk()
    for index, message in enumerate(messages):
        if isinstance(message, dict):
            walk.message(index, message, index in asks)
    walk.settle()
    return walk, asks


def _within(spans: list[tuple[int, int]], at: int) -> bool:
    """Whether offset ``at`` is inside one of ``spans`` (sorted, apart)."""
    k = bisect.bisect_right(spans, (at, 1 << 62)) - 1
    return k >= 0 and spans[k][0] <= at < spans[k][1]


def identifier(word: bytes) -> str:
    """A distinctive word as the Identifiers list writes it: without the punctuation at
    its ends, and without a plain key before it (``href=https://…`` → ``https://…``)."""
    text = word.decode("utf-8", "ignore").strip(".:,")
    key, sign, value = text.partition("=")
    if sign and key.isidentifier() and specificity(value.encode()) >= _ID_ALONE:
        return value
    return text


class _CallFacts(NamedTuple):
    """What a tool call tells, before its output: a command (``command`` is true, ``item``
    the command line) or a tool group and its telling argument; the files it names;
    whether it reads (shows content) rather than runs, and whether what it reads is a log
    or a document people wrote."""

    command: bool
    item: str
    detail: str
    files: tuple[str, ...]
    reads: bool
    logs: bool
    documents: bool


def _call_facts(name: str, raw: str) -> _CallFacts:
    """The facts of a call of tool ``name`` with arguments ``raw`` (JSON text); a short
    call seen before is looked up, not parsed again (agents repeat their calls)."""
    if len(raw) <= _CACHED_ARGS:
        return _cached_call_facts(name, raw)
    return _read_call(name, raw)


def _read_call(name: str, raw: str) -> _CallFacts:
    name = _NAME_CHARS.sub("_", one_line(name))[:60] or "?"
    args = _arguments(raw)
    command = _command(name, args)
    reads = _reads(name, args, command)
    if command is not None:
        item = clip(one_line(command), _COMMAND_CHARS)
        logs = reads and _names_log(command[: _ITEM_CHARS * 2])
        files = tuple(_path_words(command))
        documents = reads and any(map(_names_document, files))
        return _CallFacts(True, item, "", files, reads, logs, documents)
    group, detail = _call_group(name, args)
    files = tuple(
        _normal_path(value.strip())
        for key in _PATH_KEYS
        if isinstance(value := args.get(key), str) and _is_file(value.strip(), strict=False)
    )
    logs = reads and any(
        isinstance(value := args.get(key), str) and _names_log(value) for key in _PATH_KEYS
    )
    documents = reads and any(map(_names_document, files))
    return _CallFacts(False, group, detail, files, reads, logs, documents)


_cached_call_facts = functools.lru_cache(maxsize=4_096)(_read_call)
remember(_cached_call_facts.cache_clear)


class _Walk:
    """One forward pass over the messages: asks, calls, commands, files, exit codes."""

    def __init__(self) -> None:
        self.items: dict[str, dict[str, int]] = {name: {} for name in dg.ITEM_SECTIONS}
        self.details: dict[str, dict[str, int]] = {}
        self.exit_codes: dict[str, int] = {}
        self.read_calls: set[str] = set()
        self.outputs: dict[int, str] = {}  # message index -> the call id it answers
        self.reads: set[int] = set()  # messages whose output is content, not an outcome
        self.log_calls: set[str] = set()
        self.logs: set[int] = set()  # …of which a log: a record of what ran and failed
        self.document_calls: set[str] = set()
        self.documents: set[int] = set()  # …or a document: what people wrote
        self.shapes: dict[str, list[int | str]] = {}
        # (call id, command?, item, detail): each call waits for its output's exit code
        self.pending: list[tuple[str, bool, str, str]] = []

    def message(self, index: int, message: RawMessage, ask: bool) -> None:
        role = message.get("role")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if isinstance(call_id, str):
                self.outputs[index] = call_id
                code = _exit_code(message.get("content"))
                if code is not None:
                    self.exit_codes[call_id] = code
        elif role == "assistant":
            calls = message.get("tool_calls")
            if isinstance(calls, list):
                for call in calls:
                    if isinstance(call, dict):
                        self.tool_call(call)
        elif role == "user" and ask:
            text = content_text(message.get("content"), _WHOLE).strip()
            if text:
                self.add(dg.ASKS, text)

    def add(self, section: str, item: str) -> None:
        items = self.items[section]
        items[item] = items.get(item, 0) + 1

    def tool_call(self, call: RawMessage) -> None:
        function = call.get("function")
        if not isinstance(function, dict):
            return
        raw = function.get("arguments")
        if not isinstance(raw, str):  # arguments given as an object (or nothing usable)
            raw = json.dumps(raw, default=str) if isinstance(raw, dict) else ""
        facts = _call_facts(str(function.get("name") or "?"), raw)
        call_id = str(call.get("id"))
        if facts.reads:
            self.read_calls.add(call_id)
        if facts.logs:
            self.log_calls.add(call_id)
        if facts.documents:
            self.document_calls.add(call_id)
        self.pending.append((call_id, facts.command, facts.item, facts.detail))
        for path in facts.files:
            self.add(dg.FILES, path)
            self.shape(path, files=True)

    def settle(self) -> None:
        """Give each call its exit code (read from its output, which came later)."""
        for call_id, is_command, item, detail in self.pending:
            code = self.exit_codes.get(call_id)
            ended = "" if code is None else f"→ exit {code}"
            if is_command:
                item = f"{item} {ended}" if ended else item
                self.add(dg.COMMANDS, item)
                self.shape(item)
                continue
            self.add(dg.TOOLS, item)
            detail = f"{detail} {ended}".strip()
            if detail:
                details = self.details.setdefault(item, {})
                details[detail] = details.get(detail, 0) + 1
        self.pending = []
        self.reads = {index for index, call in self.outputs.items() if call in self.read_calls}
        self.logs = {index for index, call in self.outputs.items() if call in self.log_calls}
        self.documents = {
            index for index, call in self.outputs.items() if call in self.document_calls
        }

    def shape(self, item: str, *, files: bool = False) -> None:
        """Count ``item`` under its shape (numbers left out): repeated actions aggregate."""
        key = ("file:" if files else "") + _NUMBERS.sub("#", item)
        seen = self.shapes.get(key)
        if seen is None:
            self.shapes[key] = [1, item, item]  # count, newest, oldest
        else:
            seen[0] = int(seen[0]) + 1
            seen[1] = item

    def aggregated(self, items: dict[str, int], *, files: bool = False) -> dict[str, int]:
        """``items`` (oldest first) with each action repeated with other numbers (``cat
        logs/part3611.log``, ``…part3612.log``…) as one item: oldest … newest, counted."""
        out: dict[str, int] = {}
        done: set[str] = set()
        for item, count in items.items():
            key = ("file:" if files else "") + _NUMBERS.sub("#", item)
            total, newest, oldest = self.shapes.get(key, (1, item, item))
            if int(total) < _AGGREGATE_FROM or newest == oldest:
                out[item] = count
            elif key not in done:
                done.add(key)
                out[f"{oldest} … {newest}"] = int(total)
        return out

    def digest(self, messages: int, last_state: str) -> dg.Digest:
        self.settle()
        result = dg.Digest(messages=messages, last_state=last_state)
        self.items[dg.COMMANDS] = self.aggregated(self.items[dg.COMMANDS])
        self.items[dg.FILES] = self.aggregated(self.items[dg.FILES], files=True)
        for name, items in self.items.items():
            for item, count in items.items():
                result.sections[name][item] = count
        result.details = {group: dict(details) for group, details in self.details.items()}
        return result


def _last_state(messages: Sequence[object]) -> str:
    """The newest assistant text (and the one or two before it when it is short)."""
    state: list[str] = []
    for message in reversed(messages):
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        head, tail = content_ends(message.get("content"), _TEXT_SCAN, _TEXT_TAIL)
        head, tail = strip_think(head), strip_think(tail)
        if head.strip():
            state.append(f"{head}\n…\n{tail}".strip() if tail else head.strip())
            if sum(map(len, state)) >= _LAST_STATE_ENOUGH or len(state) >= _LAST_STATE_TEXTS:
                break
    return "\n".join(reversed(state))


def _exit_code(content: Any) -> int | None:
    """The exit code an output reports (at its end, or at its start), if any."""
    head, tail = content_ends(content, _EXIT_WINDOW, _EXIT_WINDOW)
    for window in (tail or head, head if tail else ""):
        if any(hint in window for hint in _EXIT_HINTS):
            lowered = window.lower()
            for word in ("exit", "return"):
                at = lowered.find(word)
                while at >= 0:
                    match = _EXIT_CODE.match(lowered, at)
                    if match:
                        return int(match.group(1))
                    at = lowered.find(word, at + 1)
    return None


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


def _call_group(name: str, args: dict[str, Any]) -> tuple[str, str]:
    """The tool group of a call (``name`` or ``name(action)``) and what it worked on.

    That is a path or a query, bare (``src/io.py``), or both (``pattern=retry in src``);
    with neither, the call's first short argument (``command=cargo build``).
    """
    action = _action(args)
    group = f"{name}({action})" if action else name
    paths = (args.get(key) for key in _PATH_KEYS)
    path = next((_scalar(value, _ARG_CHARS) for value in paths if isinstance(value, str)), "")
    telling = _pick(args, _TELLING_KEYS)
    if telling and path:
        detail = f"{telling[0]}={telling[1]} in {path}"
    elif telling or path:
        detail = telling[1] if telling else path
    else:
        other = _pick(args, [key for key in args if key not in _ACTION_KEYS or not action])
        detail = f"{other[0]}={other[1]}" if other else ""
    return group, clip(detail.replace(", ", ","), _ITEM_CHARS)


def _action(args: dict[str, Any]) -> str:
    """The action a multi-purpose tool is asked for (``view``, ``str_replace``), if any."""
    for key in _ACTION_KEYS:
        value = args.get(key)
        if isinstance(value, str) and _WORD.fullmatch(value):
            return value
    return ""


def _pick(args: dict[str, Any], keys: Sequence[str]) -> tuple[str, str] | None:
    """``(key, value)`` for the first of ``keys`` whose value is a short scalar."""
    for key in keys:
        value = _scalar(args.get(key), _ARG_CHARS)
        if value:
            return key, value
    return None


def _scalar(value: Any, limit: int) -> str:
    if isinstance(value, bool) or value is None:
        return ""
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return clip(one_line(value[: limit * 4]), limit)
    return ""


def _reads(name: str, args: dict[str, Any], command: str | None) -> bool:
    """Whether a call shows content (a file, a listing, search hits) rather than runs."""
    if command is not None:
        for segment in _SEGMENTS.split(command[: _ITEM_CHARS * 2]):
            words = segment.split()
            if words and words[0] not in _SETUP_PROGRAMS:
                program = words[0].rsplit("/", 1)[-1]
                if program == "git" and len(words) > 1:
                    program = f"git-{words[1]}"
                return program in _READ_PROGRAMS
        return False
    return _action(args).lower() in _READ_WORDS or _reading_name(name)


@functools.lru_cache(maxsize=1_024)  # a session calls a few tools many times
def _reading_name(name: str) -> bool:
    """Whether a tool's name says it reads (``read_file``, ``viewImage``, ``search``)."""
    words = _NOT_LETTERS.split(_CAMEL.sub(r"\1_\2", name).lower())
    return any(word in _READ_WORDS for word in words)


def _path_words(command: str) -> list[str]:
    words = []
    for word in command[: _ITEM_CHARS * 2].split():
        word = word.strip("\"'`;,()|&<>{}[]")
        if word.startswith("-"):
            if "=" not in word:
                continue
            word = word.split("=", 1)[1]
        word = _LINE_SUFFIX.sub("", word.split("::", 1)[0])  # a test id, a file:line
        if _is_file(word, strict=True):
            words.append(_normal_path(word))
    return words


def _is_file(word: str, *, strict: bool) -> bool:
    """Whether ``word`` looks like a file path (``strict``: a word found in a command).

    A file has an extension or a well-known name (``Makefile``); in a command, a bare
    name (no directory part) needs a known extension, so ``orders.models`` (a module) and
    ``v2.14.0`` are not files. Directories, regex fragments, globs and lists are not.
    """
    if not 1 < len(word) < 200 or "://" in word or not _PATH_CHARS.fullmatch(word):
        return False
    last = word.rsplit("/", 1)[-1]
    if last in _FILENAMES:
        return True
    stem, dot, extension = last.rpartition(".")
    if not dot or not _EXTENSION.fullmatch(extension):
        return False
    if not stem:  # a dotfile: .gitignore, .env
        return len(extension) > 1
    return not strict or "/" in word or extension.lower() in _EXTENSIONS


def _normal_path(path: str) -> str:
    return path[2:] if path.startswith("./") else path


remember(_reading_name.cache_clear)
