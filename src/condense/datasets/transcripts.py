"""Agent transcripts as training data: each context of a session becomes one record.

A Claude Code session or Codex rollout (:mod:`condense.formats.transcripts`) is read
whole, and each of its contexts, the model's last answer included, enters the dataset
job as one OpenAI ``messages`` record (the canonical messages: tool calls, thinking
blocks and Responses items kept as :mod:`condense.formats` carries them), with the
session's ``model``. The record stands at the line of the context's last event, so the
rejects, the resume point and the order of the output follow the file's own lines: an
unreadable line is rejected with its number, and ``--resume`` goes on after the last
context written.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import BinaryIO

from condense.datasets.sources import Line
from condense.formats import transcripts

__all__ = ["transcript_lines"]


def transcript_lines(
    job: int, handle: BinaryIO, *, source: str, offset: int = 0
) -> Iterator[Line] | None:
    """The dataset lines of the transcript open in ``handle`` (at its start), those that
    end after byte ``offset``; ``None`` when the file is not a transcript (``handle`` is
    then back at its start). FormatError when it is one that holds no conversation."""
    first = _first_filled(handle)
    handle.seek(0)
    kind = transcripts.first_kind([first]) if first is not None else None
    if kind is None:
        return None
    raw_lines = handle.read().split(b"\n")
    if raw_lines and not raw_lines[-1]:
        raw_lines.pop()  # the newline that ends the last line
    ends: list[int] = []
    position = 0
    for raw in raw_lines:
        position += len(raw) + 1
        ends.append(position)
    session = transcripts.read_transcript(transcripts.numbered(raw_lines), kind=kind, source=source)
    found: list[Line] = [
        Line(job, problem.line, raw_lines[problem.line - 1], ends[problem.line - 1])
        for problem in session.problems
    ]
    for conversation in transcripts.conversations(session, source=source, trajectories=True):
        number = conversation.line or len(raw_lines)
        record = _record(conversation.messages, conversation.dump())
        found.append(Line(job, number, record, ends[number - 1]))
    found.sort(key=lambda line: line.number)
    return iter([line for line in found if line.end > offset])


def _record(messages: Sequence[object], native: object) -> bytes:
    record: dict[str, object] = {}
    model = native.get("model") if isinstance(native, dict) else None
    if isinstance(model, str):
        record["model"] = model
    record["messages"] = messages
    return json.dumps(record, ensure_ascii=False).encode()


def _first_filled(handle: BinaryIO) -> object | None:
    for raw in handle:
        if raw.strip():
            try:
                first: object = json.loads(raw)
            except (ValueError, RecursionError):
                return None
            return first
    return None
