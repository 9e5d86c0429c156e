"""What a failure says: the distinctive part of an error line, and whose failure it is.

An output's error words (:mod:`condense.summarizers.scan`) point at lines; this module
reads such a line as a reader would: the error it states without the log's timestamp
(``ValueError: chunk header too large``, ``error[E0308]: mismatched types``, ``FAILED
tests/x.py::test_y``, ``HTTP 503``), or nothing for a line of code or a listing. A tool
that reads (a file, a search) shows content: its error-looking lines are data, and only
the tool's own complaint counts (:func:`failed_read`).
"""

from __future__ import annotations

import functools
import itertools
import re

from condense.summarizers._text import clip, one_line, remember
from condense.summarizers.scan import (
    DIGITS,
    FAILURE_STEMS,
    LISTED,
    SpanText,
    any_of,
    is_progress_bar,
)

ITEM_CHARS = 200  # an error as written: at most this many characters of it…
LINE_READ = 4 * ITEM_CHARS  # …chosen from at most this many of its line

_ERROR_LINE = re.compile(
    r"""(?x)
      (?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Interrupt|Exit|Fault|Failure)\b(?::.*)?$
    | [a-z_]\w*(?:\.[a-z_]\w*)*\.[A-Z]\w+:\ \S.*               # httpx.ReadTimeout: …
    | (?:error|Error|ERROR|fatal|Fatal|FATAL|panic)(?:\[[\w-]+\])?(?::|!|\s-)\s*\S.*
    | .*?[\s:\]](?:error|fatal|ERROR|FATAL)(?:\[[\w-]+\])?:\s+\S.*     # a.rs:1:2: error: …
    | (?:FAILED|FAIL|ERROR)\b.*\S | ---\ FAIL.* | .*::\S+\ FAILED\b.*
    | .*\b(?:ERROR|CRITICAL|FATAL)\b.* | .*\bnpm\ ERR!.* | [Cc]aused\ by:.*
    | .*(?:Segmentation\ fault|core\ dumped|command\ not\ found|No\ such\ file|Permission\ denied).*
    | .*\b(?:HTTP(?:/\d(?:\.\d)?)?|[Ss]tatus(?:\ code)?)[\s:=]{1,3}[45]\d\d\b.*
    | .*(?:No\ replacement\ was\ performed|[Cc]ould\ not\ |[Cc]annot\ |[Uu]nable\ to\ ).*
    | .*\blevel=(?:error|fatal|crit\w*)\b.*
    | Exception\ in\ thread\ .*                                       # Java's uncaught
    | (?:Unhandled|Uncaught)\ [Ee]xception\b.*                        # .NET's, PHP's
    | \*\*\ \([A-Z][\w.]*\)\ .*                                      # Elixir's raise
    """
)
# How a read itself fails: its output starts like this.
_READ_FAILURE = re.compile(
    r"""(?x)(?:[A-Za-z_][\w.]*)?(?:Error|Exception)\b|(?i:error|fatal)\b|No\ such\ file
    | Permission\ denied|HTTP(?:/[\d.]+)?\ [45]\d\d\b|[45]\d\d\ [A-Z]
    | \S+:\ (?:[Nn]o\ such|cannot)"""
)
_READ_ERROR_CHARS = 600  # a read's output this short may be the tool's own complaint
_PYTEST_SUMMARY = re.compile(r"=+ (.*\b\d+ (?:failed|errors?)\b.*?)(?: in [\d.]+s.*?)? =+")
# The frame an exception was raised in: Python's (before it), and the ``at`` frames of
# Java, JavaScript and C# (after it); read from this many bytes around the error's line.
_PYTHON_FRAME = re.compile(r'\s*File "[^"]+", line \d+')
_AT_FRAME = re.compile(r"\s+at \S.*[(:\s][^\s()]+:(?:line )?\d+")  # C#'s ``in F.cs:line 42``
_AT_LINE = re.compile(r"\s+at \S")  # a frame, with its place or not (``at System.Linq.…()``)
# A line that is only a place in a file, maybe marked and named: Rust's ``  -->
# src/lib.rs:88:17`` (right after the error), Go's ``\t/app/ledger/flush.go:77 +0x1d`` (a
# panic's first frame, after its ``goroutine 1 [running]:`` and the function's line),
# pytest's ``tests/test_tax.py:41: KeyError`` (after the ``E`` lines), Elixir's ``(ledger
# 0.1.0) lib/flush.ex:12: Ledger.Flush.run/1``, Ruby's ``from /app/a.rb:4:in `run'``.
_PLACE = r"[\w./\\-]*\w\.\w{1,8}:\d+(?::\d+)?"  # a file and a line (and a column)
PLACE = re.compile(_PLACE.encode())
_LOCATION = re.compile(
    rf"\s*(?:-->\s*|from\s+|\([\w-]+ [\w.-]+\)\s*)?{_PLACE}"
    r"(?:\s+\+0x[0-9a-f]+|:in `[^`\n]{0,80}'|:\s*[\w.]+(?:/\d+)?)?\s*"
)
_LOCATION_LINES = 4  # a place is looked for in this many lines after the error's
_FRAMES_READ = 8  # of a stack, this many frames nearest to the error are read
# A frame of a runtime's or a library's code, not the program's own: Node's, a package's
# (``node_modules``, ``site-packages``), the JVM's and its languages', and the common
# JVM libraries' (a driver, a pool, a framework: ``oracle.jdbc``, ``org.hibernate``).
_JVM_LIBRARIES = (
    "java|javax|jdk|sun|com\\.sun|kotlin|kotlinx|scala|oracle|org\\.(?:springframework|hibernate"
    "|apache|postgresql|h2|mariadb|junit|eclipse|glassfish|jboss)|com\\.(?:zaxxer|mysql"
    "|fasterxml|mchange)|io\\.(?:netty|grpc|micrometer)|reactor|okhttp3|retrofit2"
)
_LIBRARY_FRAME = re.compile(
    r"node:|[(\s]internal/|node_modules/|site-packages/|dist-packages/|<frozen "
    rf"|\((?:Native Method|Unknown Source)\)|\bat (?:{_JVM_LIBRARIES})\."
)
_FRAME_READ = 600
FRAME_CHARS = 160
# Advice, not a failure: ``Note however that you cannot use interactive commands``,
# a compiler's ``note:`` beside the error it explains.
_ADVICE = re.compile(r"(?i)(?:note|hint|tip|please|remember)\b")
# What leads an error on its line and is not it: pytest's ``E``, a quote's ``>``, a time,
# and BuildKit's step and seconds (``#7 12.41 ERROR: …``: not a comment, as ``#`` is in code)
_LEAD = re.compile(
    r"^(?:E\s+|[>|]\s*|#\d+\s+(?:\d+\.\d+\s+)?)*"
    r"(?:\[?\d{4}-\d\d-\d\d[T ][\d:.,]+(?:Z|[+-]\d\d:?\d\d)?\]?\s*)?"
)
_CODE = re.compile(
    r"(?:(?:async\s+)?def|class|except|raise|return|elif|else|if|for|while|import|from|try|with"
    r"|assert|catch|throw|throws|function|const|let|var|public|private|protected|static|func"
    r"|fn|pub|impl)\b|#|//|/\*|\*\s|@\w|\w+\s*[:+*/-]?=\s|[\"']"
)


@functools.lru_cache(maxsize=4_096)  # logs repeat their error lines
def error_text(line: str) -> str | None:
    """The error a line states (its distinctive part), or ``None`` for any other line."""
    if LISTED.match(line):
        return None
    text = _LEAD.sub("", line.strip()).strip()
    if not text or _CODE.match(text) or _ADVICE.match(text):
        return None
    summary = _PYTEST_SUMMARY.fullmatch(text)
    if summary:
        return summary.group(1)
    return text if _ERROR_LINE.match(text) else None


remember(error_text.cache_clear)


def line_error(span: SpanText, start: int, end: int) -> tuple[str, str]:
    """The error the line ``start``–``end`` of the buffer states, whole on one line (at
    most :data:`LINE_READ` characters of it), and where it was raised
    (:func:`raised_at`, at most :data:`FRAME_CHARS`); ``("", "")`` for a line stating
    none. A bare ``ERROR:`` label takes the next line with it."""
    line = span.decode(start, min(end, start + LINE_READ))
    text = error_text(line)
    if text is None:
        return "", ""
    if text.rstrip(":").upper() == "ERROR":
        following = span.decode(end + 1, end + 1 + LINE_READ).lstrip("\n").split("\n", 1)
        text = f"{text} {following[0].strip()}"
    return one_line(text), clip(raised_at(span, start, end), FRAME_CHARS)


def raised_at(span: SpanText, start: int, end: int) -> str:
    """Where the error stated on the line ``start``–``end`` was raised, as its output
    tells it: in Python's traceback, the last ``File "…", line N, in f`` of the frames
    just before the line; in Java's, JavaScript's and C#'s, the first of the ``at …``
    lines after it; of those, the first in the program's own code when a runtime's or a
    library's is first (:data:`_LIBRARY_FRAME`: ``node:internal``, ``site-packages``,
    ``java.util``). Else a line that is only a place in a file among the
    :data:`_LOCATION_LINES` after it (:data:`_LOCATION`: Rust's ``--> src/lib.rs:88:17``,
    a Go panic's first frame, pytest's ``tests/x.py:41: KeyError``). Else the step of
    the output's list of steps it failed in (:func:`step_of`). ``""`` when no place is
    there."""
    piece = span.piece_of(start)
    first, last = span.starts[piece], span.piece_end(piece)
    before = span.decode(max(first, start - _FRAME_READ), start).split("\n")[:-1]
    frames: list[str] = []
    for line in reversed(before):  # the traceback's frames, the nearest first
        if _PYTHON_FRAME.match(line):
            frames.append(line)
        elif not line.startswith(" ") or len(frames) >= _FRAMES_READ:
            break
    if frames:
        return _own(frames).strip()
    following = span.decode(min(end + 1, last), min(last, end + 1 + _FRAME_READ))
    lines = following.split("\n", _FRAMES_READ)[:_FRAMES_READ]
    frames = [line for line in itertools.takewhile(_AT_LINE.match, lines) if _AT_FRAME.match(line)]
    if frames:
        return _own(frames).strip()
    located = (line.strip() for line in lines[:_LOCATION_LINES] if _LOCATION.fullmatch(line))
    return next(located, "") or step_of(span, start, end)


# The step a failure happened in: the nearest of this many lines above the failure's that
# is one of a list of steps (read from at most this many bytes above it).
_STEP_LINES = 6
_STEP_READ = 2_000
_STEP_CHARS = 8  # a step names what it does: a shorter line, or one of words alone, does not
_FRAME = re.compile(rf"{_PYTHON_FRAME.pattern}|{_AT_LINE.pattern}")
# A line with a time or a date near its start is a log's line: a record, never a step
_STAMPED = re.compile(rb"\d\d:\d\d|\d{4}-\d\d-\d\d")
_STAMP_READ = 32
_FAILING = any_of(stem.decode() for stem in FAILURE_STEMS)  # a line says it failed
_NAMES = re.compile(r"\d|[_./:(\[]\w")  # a step names what it works on: a version, a path…
_RULE = re.compile(r"\s*([=*~#-])\1{2,}$")  # a step's rule: ``== Add: migrating =====``


def step_of(span: SpanText, start: int, end: int) -> str:
    """The step the failure stated on the line ``start``–``end`` happened in, when its
    output lists steps, one a line, each led by the same word (:func:`_lead`: the first
    word, its digits left out): the nearest of the :data:`_STEP_LINES` lines above the
    failure whose lead an earlier line has too and the failure's has not. A migration's
    ``-- add_column(:refunds, :reason, :string)`` after the ``-- create_table(…)`` of the
    one before, a compiler's last ``Compiling ledger v0.3.1``; never a log's line (a
    time or a date near its start: ``2025-03-17T10:24:07Z INFO …`` above an ``ERROR``
    line, stamped or not), nor pytest's ``E`` lines explaining a failure (a lead of one
    character, a bullet's, is none). Its rule (``=====``) is left out.

    ``""`` when no line is such a step; when the nearest one says it failed (a failure
    word: the failure is its own), names nothing (no digit, path or name: ``done,
    nothing to report``) or holds a progress bar; or when a stack's frame comes first (a
    trace has no steps: a Java ``Caused by:`` under the frames of the exception it
    caused). A short line (``ok``) is none."""
    first = span.starts[span.piece_of(start)]
    low = max(first, start - _STEP_READ)
    lines = span.blob[low:start].split(b"\n")[:-1]  # the last is the failure's own start
    if low > first:
        lines = lines[1:]  # cut: the first line read may be a part of one
    leads = list(map(_lead, lines))
    failing = _lead(span.blob[start:end])
    for k in range(len(lines) - 1, max(-1, len(lines) - 1 - _STEP_LINES), -1):
        lead = leads[k]
        if len(lines[k].strip()) < _STEP_CHARS or len(lead) < 2 or lead == failing:
            continue  # short, or led by a mark (pytest's ``E`` lines, a bullet)
        if lead not in leads[:k] or _STAMPED.search(lines[k], 0, _STAMP_READ):
            continue  # led like no line before it, or a log's line (a time leads it)
        line = lines[k].decode("utf-8", "replace")
        step = _RULE.sub("", one_line(line))
        if _FRAME.match(line) or _LOCATION.fullmatch(line) or _FAILING.search(step.lower()):
            return ""  # a trace's frames, or a step that failed: its own failure
        return step if _NAMES.search(step) and not is_progress_bar(step) else ""
    return ""


def _lead(line: bytes) -> bytes:
    """What leads ``line``: its first word, without digits (``#7`` and ``#6`` alike)."""
    words = line.split(None, 1)
    return words[0].translate(None, DIGITS) if words else b""


# What a failing check expected and got, as a test runner prints it under the failure:
# Jest's ``Expected: 200`` and ``Received: 409``, RSpec's ``expected: …`` and ``got: …``,
# Go's ``got 409, want 200``; and the failing test's title (Jest's and Vitest's ``● suite
# › test``, ``✕ test``), read from this many lines after the failure's.
_CHECKED = re.compile(
    r"\s*(?:[Ee]xpected|Received|[Aa]ctual|got)\b[\w ]{0,20}:\s*\S.*|.*\bgot\b.{1,60}\bwant\b.*"
)
_TITLE = re.compile(r"\s*[●✕×] \S.*")
_CHECK_LINES = 12


def checked(span: SpanText, end: int) -> str:
    """What the failure stated on the line ending at byte ``end`` checked, as the lines
    after it tell: the failing test's title and the first expected and received values,
    on one line (``● refunds › returns the right status: Expected: 200, Received: 409``);
    ``""`` when they tell none."""
    last = span.piece_end(span.piece_of(end))
    following = span.decode(min(end + 1, last), min(last, end + 1 + _FRAME_READ))
    lines = following.split("\n", _CHECK_LINES)[:_CHECK_LINES]
    title = next((line.strip() for line in lines if _TITLE.fullmatch(line)), "")
    values = [line.strip() for line in lines if _CHECKED.fullmatch(line)][:2]
    return clip(": ".join(filter(None, (title, ", ".join(values)))), ITEM_CHARS)


def _own(frames: list[str]) -> str:
    """Of ``frames`` (the nearest to the error first), the first in the program's own
    code, or the first when none is."""
    return next((frame for frame in frames if not _LIBRARY_FRAME.search(frame)), frames[0])


def failed_read(span: SpanText, piece: int, line_start: int) -> bool:
    """Whether a read's output is the tool's own complaint ("Error: no such file", "HTTP
    404"): short, starting like a failure; only its first two lines count."""
    start, end = span.starts[piece], span.piece_end(piece)
    if end - start > _READ_ERROR_CHARS:
        return False
    head = span.decode(start, end).lstrip()
    if not _READ_FAILURE.match(head):
        return False
    first = span.blob.find(b"\n", start, end)
    second = span.blob.find(b"\n", first + 1, end) if first >= 0 else -1
    return second < 0 or line_start < second
