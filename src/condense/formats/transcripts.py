"""Agent transcripts as data: Claude Code session JSONL and Codex rollout JSONL.

A transcript is one agent session written as events, one JSON object a line, not a
request. It is read whole (its records refer to one another) into the requests the agent
sent, one per context: a session the agent compacted holds the context before each
compaction and the one after the last. Each request is an ordinary native body
(Anthropic Messages for Claude Code, OpenAI Responses for Codex), read by that format's
adapter into a :class:`~condense.formats.Conversation`:

- ``condense.load(path)`` gives the session's current request (its last context), what
  the agent would send next;
- ``condense.load_records(path)`` and ``condense compress-dataset`` give every context
  in order, each a trajectory of its own.

The readers (:mod:`condense.formats.claude_code`, :mod:`condense.formats.codex_rollout`)
say what each format holds and how a request is rebuilt from it. A line that is not a
JSON object is a :class:`LineProblem` naming its line; the rest of the file is still
read, so one torn line costs that event, not the session.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from condense._input import MAX_DEPTH, too_deep
from condense.exceptions import FormatError

if TYPE_CHECKING:
    from condense.formats.conversation import Conversation

__all__ = [
    "KINDS",
    "Event",
    "LineProblem",
    "Segment",
    "Transcript",
    "read_transcript",
    "transcript_kind",
]

KINDS = ("claude-code", "codex")
_CODEX_TYPES = frozenset(
    {"session_meta", "response_item", "turn_context", "event_msg", "compacted"}
)


@dataclass(frozen=True, slots=True)
class Event:
    """One record of a transcript: its parsed object and its 1-based line number."""

    line: int
    data: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class LineProblem:
    """A line of a transcript that could not be read, and why."""

    line: int
    reason: str
    text: str


@dataclass(frozen=True, slots=True)
class Segment:
    """One context of a session: the request the agent sent last in it.

    ``body`` is the native request, ``format`` its adapter (``anthropic`` or
    ``responses``), and ``line`` the line of the last event it holds. ``answer`` holds
    the model's answer to that request (native turns or items after the last input),
    which no request of the context carries but a training trajectory does.
    """

    body: dict[str, Any]
    format: str
    line: int
    answer: tuple[Any, ...] = ()

    @property
    def trajectory(self) -> dict[str, Any]:
        """The whole context: the request with the model's answer after it."""
        key = "input" if self.format == "responses" else "messages"
        return {**self.body, key: [*self.body[key], *self.answer]}


@dataclass(frozen=True, slots=True)
class Transcript:
    """A transcript read whole: its kind, its contexts in order, and its unreadable lines."""

    kind: str
    segments: tuple[Segment, ...]
    problems: tuple[LineProblem, ...]


Reader = Callable[[list[Event]], list[Segment]]


def transcript_kind(record: object) -> str | None:
    """``"claude-code"`` or ``"codex"`` when ``record`` (one parsed line) is an event of
    that transcript format, else ``None``."""
    if not isinstance(record, Mapping):
        return None
    kind = record.get("type")
    if kind in _CODEX_TYPES and "payload" in record and "timestamp" in record:
        return "codex"
    if not isinstance(kind, str):
        return None
    if "sessionId" in record and ("uuid" in record or "operation" in record):
        return "claude-code"
    if kind == "summary" and "leafUuid" in record:  # a resumed session's first line
        return "claude-code"
    if kind == "file-history-snapshot" and "snapshot" in record:
        return "claude-code"
    return None


def first_kind(records: Iterable[object]) -> str | None:
    """The transcript kind of the first of ``records`` that is an object, if any."""
    for record in records:
        if isinstance(record, Mapping):
            return transcript_kind(record)
    return None


def read_transcript(
    lines: Iterable[tuple[int, str | bytes]], *, kind: str, source: str
) -> Transcript:
    """Every context of a transcript of ``kind`` (see :data:`KINDS`), from its numbered
    lines; blank lines are skipped. FormatError when it holds no request at all."""
    events, problems = parse_events(lines)
    segments = _reader(kind)(events)
    if not segments:
        raise FormatError(f"is a {kind} transcript that holds no conversation", source=source)
    return Transcript(kind=kind, segments=tuple(segments), problems=tuple(problems))


def read_events(records: Iterable[object], *, kind: str, source: str) -> Transcript:
    """The same for records already parsed (a list of event objects)."""
    events = [Event(number, r) for number, r in enumerate(records, 1) if isinstance(r, Mapping)]
    segments = _reader(kind)(events)
    if not segments:
        raise FormatError(f"is a {kind} transcript that holds no conversation", source=source)
    return Transcript(kind=kind, segments=tuple(segments), problems=())


def parse_events(lines: Iterable[tuple[int, str | bytes]]) -> tuple[list[Event], list[LineProblem]]:
    """The events of numbered lines, and the lines that are not JSON objects."""
    events: list[Event] = []
    problems: list[LineProblem] = []
    for number, raw in lines:
        text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
        if not text.strip():
            continue
        reason = None
        try:
            record = json.loads(raw)
        except RecursionError:
            reason = f"is nested deeper than {MAX_DEPTH} levels"
        except ValueError as error:  # UnicodeDecodeError too
            reason = f"invalid JSON ({error}); expected one transcript event per line"
        else:
            if not isinstance(record, dict):
                reason = "expected a JSON object (one transcript event per line)"
            elif too_deep(record, limit=MAX_DEPTH + 2):
                reason = f"is nested deeper than {MAX_DEPTH} levels"
            else:
                events.append(Event(number, record))
                continue
        problems.append(LineProblem(number, reason, text.rstrip("\r\n")))
    return events, problems


def numbered(lines: Iterable[str | bytes]) -> Iterator[tuple[int, str | bytes]]:
    """``lines`` with their 1-based numbers."""
    return enumerate(lines, start=1)


def _reader(kind: str) -> Reader:
    if kind == "claude-code":
        from condense.formats import claude_code

        return claude_code.requests
    if kind == "codex":
        from condense.formats import codex_rollout

        return codex_rollout.requests
    from condense.exceptions import UnknownNameError

    raise UnknownNameError("transcript kind", kind, KINDS)


# -- as conversations ------------------------------------------------------------------


def conversations(
    transcript: Transcript, *, source: str | None, trajectories: bool = False
) -> list[Conversation]:
    """Each context of ``transcript`` as a Conversation of its request (or, with
    ``trajectories``, of the whole context, the model's last answer included), named by
    ``source`` and the line of the context's last event."""
    from condense.formats.conversation import Conversation

    return [
        Conversation.read(
            segment.trajectory if trajectories else segment.body,
            format=segment.format,
            source=source,
            line=segment.line,
        )
        for segment in transcript.segments
    ]


def sniff(lines: Iterator[str]) -> tuple[str | None, Iterator[str]]:
    """The transcript kind of a JSONL text's first non-blank line (``None`` when it is
    not a transcript or not JSON), and the same lines, none consumed."""
    taken: list[str] = []
    kind = None
    for line in lines:
        taken.append(line)
        if line.strip():
            try:
                kind = transcript_kind(json.loads(line))
            except (ValueError, RecursionError):
                kind = None
            break
    return kind, itertools.chain(taken, lines)


def first_problem(transcript: Transcript, source: str) -> FormatError | None:
    """The error for the first unreadable line of ``transcript``, if it has one."""
    if not transcript.problems:
        return None
    problem = transcript.problems[0]
    return FormatError(problem.reason, source=source, line=problem.line)
