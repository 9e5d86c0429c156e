"""The LLM-free summarizer: a deterministic digest of what happened in a span.

It walks the span newest first, reads only a bounded head and tail of each message, and
stops looking at a kind of fact once its section holds more items than the target could
ever keep. The whole walk has a work budget (characters examined, plus a fixed cost per
message) that grows with the target, not with the span: on a span of 10,000 messages it
reads the newest few hundred in depth, which is more than the digest can hold anyway,
and says so in its ``Scope`` line. What it keeps:

- the user's asks (the first ask of the span always survives);
- the last state: the latest assistant text;
- the errors the agent hit: the distinctive line (a traceback's last line,
  ``error[E0308]: …``, ``FAILED …``, ``HTTP 503``…), not the whole output, and not the
  error-looking lines of a file it read or a search it ran;
- the findings and decisions the assistant stated ("The root cause is…", "I will…");
- the identifiers the user and the assistant talk about (``ORD-4102``, ``ord_8f3a2c91``,
  ``#412``, a commit hash), counted;
- the commands run, with the exit code read from their output;
- the files touched: path arguments and the path-like words of commands, counted;
- the other tool calls, grouped per tool with their most telling arguments;
- the key facts: the span's most informative lines, chosen by information rather than
  position over the whole span (:mod:`condense.summarizers.salient`: identifiers, values,
  errors, decisions, rarity), verbatim.

The conversation is read as it is: a ``user`` message that carries a tool observation
(SWE-agent style) is an observation, not an ask; ``<think>`` blocks are reasoning, not the
state; commands and files repeated with other numbers (``cat logs/part0.log`` …
``cat logs/part3727.log``) are one item, ``first … last (×N)``.

How the target's room is shared among these is the digest's business
(:func:`condense.summarizers.digest.layout`); the result is checked with the real
tokenizer. A previous digest is folded in, never nested.
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
    content_ends,
    fit_exact,
    one_line,
    tokens_to_chars,
)
from condense.summarizers.salient import is_observation, salient, strip_think
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

_EXIT_CODE = re.compile(
    r"(?i)(?:exit(?:ed)?(?: with)?[ _]?(?:code|status)|return[ _]?code|returncode)"
    r"[\"' ]{0,2}[:=]?\s{0,2}(-?\d{1,3})\b"
)
_EXIT_HINTS = ("xit", "XIT", "eturn")
# A line that holds one of these is a candidate; _error_text decides.
_ERROR_HINTS = (
    "rror",
    "RROR",
    "FAIL",
    "failed",
    "atal",
    "ATAL",
    "anic",
    "xception",
    "Interrupt",
    "fault",
    "core dumped",
    "denied",
    "not found",
    "No such",
    "HTTP",
    "tatus",
    "ERR!",
    "CRITICAL",
    "No replacement",
    "ould not",
    "annot",
    "nable to",
)
_ERROR_LINE = re.compile(
    r"""(?x)
      (?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Interrupt|Exit|Fault|Failure)\b(?::.*)?$
    | (?:error|Error|ERROR|fatal|Fatal|FATAL|panic)(?:\[[\w-]+\])?(?::|!|\s-)\s*\S.*
    | .*?[\s:\]](?:error|fatal|ERROR|FATAL)(?:\[[\w-]+\])?:\s+\S.*     # a.rs:1:2: error: …
    | (?:FAILED|FAIL|ERROR)\b.*\S | ---\ FAIL.* | .*::\S+\ FAILED\b.*
    | .*\b(?:ERROR|CRITICAL|FATAL)\b.* | .*\bnpm\ ERR!.*
    | .*(?:Segmentation\ fault|core\ dumped|command\ not\ found|No\ such\ file|Permission\ denied).*
    | .*\b(?:HTTP(?:/\d(?:\.\d)?)?|[Ss]tatus(?:\ code)?)[\s:=]{1,3}[45]\d\d\b.*
    | .*(?:No\ replacement\ was\ performed|[Cc]ould\ not\ |[Cc]annot\ |[Uu]nable\ to\ ).*
    """
)
# How a read itself fails: its output starts like this.
_READ_FAILURE = re.compile(
    r"""(?x)(?:[A-Za-z_][\w.]*)?(?:Error|Exception)\b|(?i:error|fatal)\b|No\ such\ file
    | Permission\ denied|HTTP(?:/[\d.]+)?\ [45]\d\d\b|[45]\d\d\ [A-Z]
    | \S+:\ (?:[Nn]o\ such|cannot)"""
)
_PYTEST_SUMMARY = re.compile(r"=+ (.*\b\d+ (?:failed|errors?)\b.*?)(?: in [\d.]+s.*?)? =+")
# A source listing (cat -n, an editor's view): its lines are code, not errors.
_LISTING = re.compile(r"\s*\d+\t")
_LEAD = re.compile(
    r"^(?:E\s+|[>|]\s*)*(?:\[?\d{4}-\d\d-\d\d[T ][\d:.,]+(?:Z|[+-]\d\d:?\d\d)?\]?\s*)?"
)
_CODE = re.compile(
    r"(?:(?:async\s+)?def|class|except|raise|return|elif|else|if|for|while|import|from|try|with"
    r"|assert|catch|throw|throws|function|const|let|var|public|private|protected|static|func"
    r"|fn|pub|impl)\b|#|//|/\*|\*\s|@\w|\w+\s*[:+*/-]?=\s|[\"']"
)
# Error codes, ids, PR numbers, commit hashes, versions; a hash or an id needs a digit.
_ID = re.compile(
    r"(?<![\w#.-])(?:[A-Z][A-Z0-9]{1,9}-\d{2,}|[A-Z]{1,3}\d{3,6}|\#\d{2,6}|[a-z]{2,8}_[0-9a-z]{6,24}"
    r"|v\d+(?:\.\d+){1,3}|[0-9a-f]{7,12})(?![\w-])"
)
_HEX_OR_SNAKE = re.compile(r"[a-z_]+|[0-9_]+")
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|\n+")
_STRING_FIELD = re.compile(r'"(\w{1,40})"\s*:\s*"((?:[^"\\\n]|\\.){0,300})"')
_WORD = re.compile(r"[\w-]{1,30}")
_NAME_CHARS = re.compile(r"[^\w.\-/]+")
_NUMBERS = re.compile(r"\d+")
_AGGREGATE_FROM = 3  # an action repeated this often (numbers aside) is written once
_CAMEL = re.compile(r"([a-z])([A-Z])")
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

# How much of one message is read, at most.
_ASK_HEAD = 1_600
_ASK_TAIL = 400
_ITEM_CHARS = 200
_ARG_CHARS = 100
_COMMAND_CHARS = 120
_OUTPUT_HEAD = 800
_OUTPUT_TAIL = 1_200
_READ_ERROR_CHARS = 600  # a read's output this short may be the tool's own complaint
_EXIT_WINDOW = 300
_TEXT_SCAN = 1_500
_TEXT_TAIL = 600
_ARGS_SCAN = 4_000
_LAST_STATE_ENOUGH = 240  # shorter than this, the assistant text before it is added
_LAST_STATE_TEXTS = 3
# The work budget of one walk, in characters examined; each message also costs this much.
_WORK_BUDGET = 250_000
_WORK_PER_TARGET_CHAR = 16
_MESSAGE_COST = 100
_WORK_CEILING = 300_000  # a large target (a roomy budget) does not read without end
# The key-fact scan reads at most this many characters (more for a larger target).
_KEY_BUDGET = 400_000
_KEY_PER_TARGET_CHAR = 24
_KEY_CEILING = 450_000
_KEY_CHARS_PER_LINE = 200
# Sections whose fill stops the walk (tool groups and files only add up counts).
_BOUNDED = (dg.ASKS, dg.COMMANDS, dg.ERRORS, dg.DECISIONS)


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
        digest = extract(
            messages,
            # More items than this per section can never be written.
            cap=max(4, max_chars // 48),
            budget=min(_WORK_CEILING, max(_WORK_BUDGET, _WORK_PER_TARGET_CHAR * max_chars)),
        )
        _add_key_facts(digest, messages, max_chars)
        if previous and previous.strip():
            digest = dg.fold(dg.parse(previous), digest)
        return fit_exact(lambda limit: dg.layout(digest, limit), target_tokens)


def _add_key_facts(digest: dg.Digest, messages: Sequence[object], max_chars: int) -> None:
    """Add the span's most informative lines (:mod:`.salient`) not already said elsewhere."""
    said = "\n".join([*digest.sections[dg.ERRORS], *digest.sections[dg.DECISIONS]])
    errors = [item.rstrip("…") for item in digest.sections[dg.ERRORS]]

    def already_said(line: str) -> bool:
        """The same sentence, or an error line the Errors section shortened."""
        return line in said or any(error in line for error in errors)

    found = salient(
        messages,
        budget=min(_KEY_CEILING, max(_KEY_BUDGET, _KEY_PER_TARGET_CHAR * max_chars)),
        # About what the section can show: the scan's own ranking (rarity, one fact per
        # dump) chooses, the layout only trims.
        limit=max(6, max_chars // _KEY_CHARS_PER_LINE),
        skip=already_said,
    )
    for candidate in found:
        digest.add(dg.KEY, candidate.text)


def extract(messages: Sequence[object], *, cap: int, budget: int) -> dg.Digest:
    """Collect the facts of ``messages`` into a digest, newest first.

    At most ``cap`` distinct items per section; the walk stops when every bounded section
    is full or ``budget`` (characters examined plus a fixed cost per message) is spent.
    """
    found = _Collector(cap, budget)
    asks = _ask_positions(messages)
    positions = range(len(messages) - 1, -1, -1)
    for position, message in zip(positions, reversed(messages), strict=True):
        if found.full() or found.budget <= 0:
            break
        found.scanned += 1
        found.budget -= _MESSAGE_COST
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        if role == "tool":
            found.tool_output(message)
        elif role == "assistant":
            found.assistant(message)
        elif role == "user":
            if position in asks:
                found.ask(message.get("content"))
            else:  # a tool observation carried in a user message (SWE-agent style)
                found.errors(
                    *content_ends(message.get("content"), _OUTPUT_HEAD, _OUTPUT_TAIL), reads=False
                )
    found.flush()
    found.tool_names(messages[: len(messages) - found.scanned])
    first_ask = next(
        (
            text
            for position, message in enumerate(messages)
            if position in asks and isinstance(message, dict)
            if (text := _ask_text(message.get("content")))
        ),
        None,
    )
    return found.digest(len(messages), first_ask)


def _ask_positions(messages: Sequence[object]) -> set[int]:
    """The indices of the user messages that ask (not those carrying tool observations)."""
    positions: set[int] = set()
    first = True
    for position, message in enumerate(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            if not is_observation(message.get("content"), first=first):
                positions.add(position)
            first = False
    return positions


class _Collector:
    """Newest-first collection of items, bounded per section."""

    def __init__(self, cap: int, budget: int) -> None:
        self.cap = cap
        self.budget = budget
        self.scanned = 0
        self.items: dict[str, dict[str, int]] = {name: {} for name in dg.ITEM_SECTIONS}
        self.details: dict[str, dict[str, int]] = {}
        self.state: list[str] = []  # the newest assistant texts, newest first
        self.exit_codes: dict[str, int] = {}
        self.shapes: dict[str, list[int | str]] = {}
        # Tool outputs seen before their call (the walk is backwards): their errors are
        # read once the call tells whether the output is content or an outcome.
        self.outputs: dict[str, tuple[str, str]] = {}

    def full(self) -> bool:
        return self.state_done() and all(len(self.items[name]) >= self.cap for name in _BOUNDED)

    def state_done(self) -> bool:
        size = sum(len(text) for text in self.state)
        return size >= _LAST_STATE_ENOUGH or len(self.state) >= _LAST_STATE_TEXTS

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
                self.ids(text)

    def ids(self, text: str) -> None:
        for found in reversed(_ID.findall(text)):
            # A word like "deadbeef" or "line_discounts" is not an id.
            if not _HEX_OR_SNAKE.fullmatch(found):
                self.add(dg.IDS, found)

    def assistant(self, message: RawMessage) -> None:
        content = message.get("content")
        wants_state = not self.state_done()
        if wants_state or self.room(dg.DECISIONS):
            head, tail = content_ends(content, _TEXT_SCAN, _TEXT_TAIL)
            self.budget -= len(head) + len(tail)
            head, tail = strip_think(head), strip_think(tail)
            if head.strip():
                if wants_state:
                    self.state.append(f"{head}\n…\n{tail}".strip() if tail else head.strip())
                if self.room(dg.DECISIONS):
                    for decision in reversed(_decisions(head) + _decisions(tail)):
                        self.add(dg.DECISIONS, decision)
                self.ids(f"{head}\n{tail}")
        calls = message.get("tool_calls")
        if isinstance(calls, list):
            for call in reversed(calls):
                if isinstance(call, dict):
                    self.tool_call(call)

    def tool_call(self, call: RawMessage) -> None:
        function = call.get("function")
        if not isinstance(function, dict):
            return
        name = _NAME_CHARS.sub("_", one_line(str(function.get("name") or "?")))[:60] or "?"
        raw = function.get("arguments")
        self.budget -= min(len(raw), _ARGS_SCAN) if isinstance(raw, str) else _MESSAGE_COST
        args = _arguments(raw)
        call_id = str(call.get("id"))
        command = _command(name, args)
        output = self.outputs.pop(call_id, None)
        if output is not None:
            self.errors(*output, reads=_reads(name, args, command))
        code = self.exit_codes.get(call_id)
        ended = "" if code is None else f"→ exit {code}"
        if command is not None:
            item = clip(one_line(command), _COMMAND_CHARS)
            item = f"{item} {ended}" if ended else item
            self.shape(item)
            if self.room(dg.COMMANDS):
                self.add(dg.COMMANDS, item)
                self.ids(command[: _ITEM_CHARS * 2])
            for word in reversed(_path_words(command)):
                self.add(dg.FILES, word)
                self.shape(word, files=True)
            return
        group, detail = _call_group(name, args)
        self.add(dg.TOOLS, group)
        detail = f"{detail} {ended}".strip()
        details = self.details.setdefault(group, {})
        if detail and (detail in details or len(details) < self.cap):
            details[detail] = details.get(detail, 0) + 1
        for key in _PATH_KEYS:
            value = args.get(key)
            if isinstance(value, str) and _is_file(value.strip(), strict=False):
                self.add(dg.FILES, _normal_path(value.strip()))
                self.shape(_normal_path(value.strip()), files=True)

    def tool_output(self, message: RawMessage) -> None:
        head, tail = content_ends(message.get("content"), _OUTPUT_HEAD, _OUTPUT_TAIL)
        if not head:
            return
        self.budget -= len(head) + len(tail)  # read out of the content, whatever comes next
        call_id = message.get("tool_call_id")
        if not isinstance(call_id, str):
            self.errors(head, tail, reads=False)
            return
        for window in ((tail or head)[-_EXIT_WINDOW:], head[:_EXIT_WINDOW]):
            match = _hinted(window, _EXIT_HINTS) and _EXIT_CODE.search(window)
            if match:
                self.exit_codes[call_id] = int(match.group(1))
                break
        if self.room(dg.ERRORS):
            self.outputs[call_id] = (head, tail)

    def errors(self, head: str, tail: str, *, reads: bool) -> None:
        """Keep the error lines of a tool output; of a read, only the tool's own complaint."""
        if not self.room(dg.ERRORS):
            return
        windows: tuple[str, ...]
        if reads:
            # A file's or a search's content is data: only a short output that starts
            # like a failure ("Error: no such file", "HTTP 404") says the read failed.
            head = head.lstrip()
            if tail or len(head) > _READ_ERROR_CHARS or not _READ_FAILURE.match(head):
                return
            windows = ("\n".join(head.split("\n", 2)[:2]),)
        else:
            windows = (tail, head)
        for window in windows:
            for line in reversed(_error_lines(window)):
                self.add(dg.ERRORS, line)

    def tool_names(self, older: Sequence[object]) -> None:
        """Name the tools called in ``older`` (what the walk did not reach), newest
        first, without reading their arguments: every tool used gets named."""
        # a tool seen with an action (``editor(view)``) is not named again without one
        with_action = {group.split("(", 1)[0] for group in self.items[dg.TOOLS] if "(" in group}
        names: dict[str, str] = {}  # as called -> as written
        for message in reversed(older):
            if not isinstance(message, dict) or message.get("role") != "assistant":
                continue
            calls = message.get("tool_calls")
            for call in reversed(calls) if isinstance(calls, list) else ():
                function = call.get("function") if isinstance(call, dict) else None
                raw = function.get("name") if isinstance(function, dict) else None
                if not isinstance(raw, str) or not raw:
                    continue
                name = names.get(raw)
                if name is None:
                    name = names[raw] = _NAME_CHARS.sub("_", one_line(raw))[:60]
                if name not in with_action:
                    self.add(dg.TOOLS, name)

    def flush(self) -> None:
        """Read the errors of the outputs whose call was never seen."""
        outputs, self.outputs = self.outputs, {}
        for head, tail in outputs.values():
            self.errors(head, tail, reads=False)

    def shape(self, item: str, *, files: bool = False) -> None:
        """Count ``item`` under its shape (numbers left out): repeated actions aggregate."""
        key = ("file:" if files else "") + _NUMBERS.sub("#", item)
        seen = self.shapes.get(key)
        if seen is None:
            self.shapes[key] = [1, item, item]  # count, newest, oldest (walking backwards)
        else:
            seen[0] = int(seen[0]) + 1
            seen[2] = item

    def aggregated(self, items: dict[str, int], *, files: bool = False) -> dict[str, int]:
        """``items`` (newest first) with each action repeated with other numbers (``cat
        logs/part3611.log``, ``…part3612.log``…) as one item: oldest … newest, counted
        over the whole walk (not only the items the section could hold)."""
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

    def digest(self, messages: int, first_ask: str | None) -> dg.Digest:
        result = dg.Digest(messages=messages, last_state="\n".join(reversed(self.state)))
        if self.scanned < messages and self.budget <= 0:
            result.note = f"details from the newest {self.scanned:,}"
        self.items[dg.COMMANDS] = self.aggregated(self.items[dg.COMMANDS])
        self.items[dg.FILES] = self.aggregated(self.items[dg.FILES], files=True)
        for name, items in self.items.items():
            # Collected newest first; a digest keeps them oldest first.
            for item, count in reversed(items.items()):
                result.sections[name][item] = count
        for group, details in self.details.items():
            result.details[group] = dict(reversed(details.items()))
        asks = result.sections[dg.ASKS]
        if first_ask is not None and next(iter(asks), None) != first_ask:
            count = asks.pop(first_ask, 1)
            result.sections[dg.ASKS] = {first_ask: count, **asks}
        return result


def _hinted(window: str, hints: tuple[str, ...]) -> bool:
    return any(hint in window for hint in hints)


def _ask_text(content: Any) -> str:
    """An ask, its lines kept (they end sentences when it is condensed), bounded."""
    head, tail = content_ends(content, _ASK_HEAD, _ASK_TAIL)
    return (f"{head}\n…\n{tail}" if tail else head).strip()


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
    if isinstance(value, int | float):
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
    action = _action(args)
    words = re.split(r"[^a-z]+", _CAMEL.sub(r"\1_\2", name).lower())
    return action.lower() in _READ_WORDS or any(word in _READ_WORDS for word in words)


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
        text = _error_text(window[start:] if end < 0 else window[start:end])
        if text is None:
            continue
        if text.rstrip(":").upper() == "ERROR" and end >= 0:
            # A bare "ERROR:" label: the message is on the next line.
            following = window[end + 1 :].lstrip("\n").split("\n", 1)[0]
            text = f"{text} {following.strip()}"
        lines.append(clip(one_line(text), _ITEM_CHARS))
    return lines[-3:]


def _error_text(line: str) -> str | None:
    """The error a line states (its distinctive part), or ``None`` for any other line."""
    if _LISTING.match(line):
        return None
    text = _LEAD.sub("", line.strip()).strip()
    if not text or _CODE.match(text):
        return None
    summary = _PYTEST_SUMMARY.fullmatch(text)
    if summary:
        return summary.group(1)
    return text if _ERROR_LINE.match(text) else None


def _decisions(text: str) -> list[str]:
    """The sentences of ``text`` that state a finding or a decision."""
    found = []
    for sentence in _SENTENCE_BREAK.split(text):
        sentence = sentence.replace("**", "").strip().lstrip("-*>#• ").strip()
        if len(sentence) > 12 and (dg.PLAN.match(sentence) or dg.is_finding(sentence)):
            found.append(clip(one_line(sentence), _ITEM_CHARS))
    return found
